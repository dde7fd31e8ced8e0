"""``tsum compare``: policies against a baseline over a corpus, paired per conversation."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from ..compare.figures import ORIGINAL
from ..compare.replicates import Replicates
from ..compare.table import COLUMN_KEYS, COLUMNS, SORT_KEYS, render
from ..compare.workflow import CompareRun, compare_paths
from ..engine.config import AUTO
from ..terminal import echo
from ..writable import check_output_file
from .help import TsumCommand
from .outcome import finish
from .progress import RunStderr, warnings_option
from .setting_options import cached_summary_options, prices_option
from .settings import config_option, format_option, resolve
from .sweep_cmd import _policy, _split, _window

if TYPE_CHECKING:
    from ..compare.canaries import CanaryResult

LEGEND = "\n".join(f"  {c.key}: {c.legend}" for c in COLUMNS)

EPILOG = f"""\b
Examples:
  tsum compare ../shared/corpus/real --policy seed,claude-code,codex,aider,cline
  tsum compare corpus/ --policy codex,opencode --baseline codex --sort recall
  tsum compare corpus/ --policy seed,codex --columns policy,verdict,recall,pareto
  tsum compare corpus/ --policy seed,codex,aider --report compare.html --drift --canaries
  tsum compare corpus/ --policy seed,codex,aider --json > comparison.json

Every policy runs at the window each log records (--max-context-tokens auto: the log's,
else its model's documented window); conversations on which the policies would run at
different windows are left out and counted (--fallback-window N runs a log naming no
window at N under every policy). Each change is paired per conversation, with a
95% percentile interval of 2,000 paired bootstrap resamples (a fixed seed); the verdict
says "no difference" when the interval spans 0. Recall names the summarizer: the offline
provider is an extractive baseline, not a model. Runs in one process (no --workers).

\b
Columns (--columns, comma list):
{LEGEND}"""


def _replicates(
    count: int | None, temperature: float | None, provider: str, cache: Path | None
) -> Replicates | None:
    if count is None:
        if temperature is not None:
            raise click.BadParameter(
                "the temperature of --replicates' calls: give --replicates N too",
                param_hint="'--temperature'",
            )
        return None
    if provider == "offline":
        raise click.BadParameter(
            "the offline provider is deterministic: every replicate would be the same; "
            "--provider anthropic or openai",
            param_hint="'--replicates'",
        )
    return Replicates(count, temperature, cache)


def _write_report(
    path: Path, done: CompareRun, sort: str, paths: tuple[str, ...], planted: str | None
) -> None:
    from ..compare.report import write_page

    budget = done.budget_table()
    sections = [] if budget is None else [("Recall at a matched budget", budget)]
    drifted = done.drift_table()
    if drifted is not None:
        sections.append(("Drift over repeated compactions", drifted))
    if planted is not None:
        sections.append(("Planted canaries", planted))
    spread = done.replicates_table()
    if spread is not None:
        sections.append(("Recall by replicate", spread))
    write_page(
        path,
        done.comparison,
        done.header(),
        warnings=done.warnings(),
        sections=sections,
        sort=sort,
        title=", ".join(paths),
    )


def _one_window(window: str, fallback_window: int | None) -> int | str:
    """--max-context-tokens as one window (or AUTO), checked with --fallback-window."""
    windows = _split((window,), "--max-context-tokens", _window)
    if len(windows) != 1:
        raise click.BadParameter(
            "one window: a comparison runs every policy at the same one",
            param_hint="'--max-context-tokens'",
        )
    if fallback_window is not None and windows[0] != AUTO:
        raise click.BadParameter(
            "a fallback for the logs naming no window: only with --max-context-tokens auto",
            param_hint="'--fallback-window'",
        )
    return windows[0]


def _budget_windows(text: str | None) -> list[int]:
    """--budget-windows: two windows or more, each checked before anything runs (the
    comparison runs first, and would be lost to a bad window after it)."""
    windows = _split((text or "",), "--budget-windows", int)
    if len(windows) == 1:
        raise click.BadParameter(
            "a curve needs two windows or more", param_hint="'--budget-windows'"
        )
    bad = [str(w) for w in windows if w < 1]
    if bad:
        raise click.BadParameter(
            f"{', '.join(bad)}: a window is a number of tokens, 1 or more",
            param_hint="'--budget-windows'",
        )
    return windows


def _columns(text: str | None, cost: bool) -> list[str] | None:
    """--columns' keys, checked; a money column with --no-cost would be '-' on every row."""
    if not text:
        return None
    keys = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in keys if k not in COLUMN_KEYS]
    if bad:
        raise click.BadParameter(
            f"{', '.join(bad)}: not a column ({', '.join(COLUMN_KEYS)})", param_hint="'--columns'"
        )
    money = [k for k in keys if k in ("cost", "dusd", "verdict")]
    if money and not cost:
        raise click.BadParameter(
            f"{', '.join(money)}: money column(s), and --no-cost prices nothing",
            param_hint="'--columns'",
        )
    return keys


@click.command(cls=TsumCommand, epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--policy",
    "policies",
    multiple=True,
    required=True,
    metavar="NAME|FILE,...",
    help="The policies to compare (comma list or repeated; tsum policies list).",
)
@click.option(
    "--baseline",
    default=ORIGINAL,
    show_default=True,
    metavar="original|NAME",
    help="What every change is measured against: the original run, or one of --policy.",
)
@click.option(
    "--max-context-tokens",
    "window",
    default=AUTO,
    show_default=True,
    metavar="N|auto",
    help="The one window every policy runs at; auto: each log's own (its record, else its "
    "model's documented window).",
)
@click.option(
    "--fallback-window",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --max-context-tokens auto: the window of every policy on a log that names "
    "none (no recorded window, no known model), said in the header; without it such a "
    "log is left out and counted (each policy would fall back to its own).",
)
@click.option(
    "--budget-windows",
    "budget_windows_text",
    metavar="N,N[,...]",
    help="Also run every policy at these windows (two or more) and print view recall (the "
    "history's probes the whole next view carries, kept verbatim too) at a matched budget, "
    "read off each policy's curve of view recall against retained tokens.",
)
@click.option(
    "--drift",
    is_flag=True,
    help="Also print recall and the tokens freed and kept by the k-th compaction of a "
    "conversation (drift over repeated compactions).",
)
@click.option(
    "--canaries",
    is_flag=True,
    help="Also plant typed facts (a safety rule, a goal, a file path, a preference, a value "
    "later superseded) into a copy of each log and print their survival by compaction, "
    "each type's cliff and the stale value (offline summaries, a fixed seed).",
)
@click.option(
    "--replicates",
    type=click.IntRange(min=2),
    metavar="N",
    help="Also make every summary N times with --provider anthropic|openai (live calls; "
    "each replicate cached apart) and print the spread of each policy's recall, per model.",
)
@click.option(
    "--temperature",
    type=float,
    help="Sampling temperature of --replicates' calls (default: the API's own).",
)
@click.option(
    "--cost/--no-cost",
    default=True,
    show_default=True,
    help="Price every run with the cost model (docs/cost.md); --no-cost compares tokens.",
)
@prices_option
@click.option(
    "--columns",
    "columns_text",
    metavar="KEY,...",
    help=f"Columns to show ({', '.join(COLUMN_KEYS)}); default: those that fit the terminal.",
)
@click.option(
    "--sort",
    type=click.Choice(SORT_KEYS),
    default="cost",
    show_default=True,
    help="Row order: cost (dollars when priced, else retained tokens), recall (highest "
    "first), retained, or policy (as given).",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write a self-contained HTML report: the table (sortable by a click on a "
    "header) and the trade-off chart, every Pareto point labelled with its policy.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the comparison as one JSON document instead of the tables: the header's "
    "facts, every row's figures with their intervals, and each section asked for "
    '(docs/compare.md, "--json").',
)
@click.option(
    "--width",
    type=click.IntRange(min=20),
    help="Table width in characters (default: the terminal's, else 100).",
)
@cached_summary_options
@config_option
@format_option
@click.option(
    "--skip-bad-lines", is_flag=True, help="Warn about bad lines and use the rest of the file."
)
@click.option("--silent", is_flag=True, help="No progress or end-of-run line on stderr.")
@warnings_option
def compare_command(
    paths: tuple[str, ...],
    policies: tuple[str, ...],
    baseline: str,
    window: str,
    fallback_window: int | None,
    budget_windows_text: str | None,
    drift: bool,
    canaries: bool,
    replicates: int | None,
    temperature: float | None,
    cost: bool,
    prices_file: str | None,
    columns_text: str | None,
    sort: str,
    width: int | None,
    as_json: bool,
    report_path: Path | None,
    cache_path: Path | None,
    silent: bool,
    warnings_mode: str,
    **opts: Any,
) -> None:
    """Compare policies against a baseline: cost, recall, retained tokens, with intervals."""
    columns = _columns(columns_text, cost)
    one_window = _one_window(window, fallback_window)
    chosen = _split(policies, "--policy", _policy)
    budget_windows = _budget_windows(budget_windows_text)
    if report_path is not None:
        check_output_file(report_path, "--report")  # before the comparison, not after it
    auto = {"max_context_tokens": AUTO} if one_window == AUTO else None
    resolved = resolve(opts, overrides=auto)
    pricer = None
    if cost:
        from ..cost.prices import pricer_for

        pricer = pricer_for(True, prices_file, None)
    with RunStderr(
        list(paths), desc="compare", silent=silent, warnings_mode=warnings_mode
    ) as stderr:
        done = compare_paths(
            list(paths),
            resolved,
            chosen,
            baseline=baseline,
            window=one_window,
            pricer=pricer,
            cache=cache_path,
            reporter=stderr,
            budget_windows=budget_windows,
            drift=drift,
            replicates=_replicates(replicates, temperature, opts["provider"], cache_path),
            view_recall=columns is not None and "vrecall" in columns,
            fallback_window=fallback_window or 0,
        )
    if done.comparison.conversations:
        for line in done.warnings():
            echo(f"tsum: warning: {line}", err=True)
        found = planted = None
        if canaries:
            from ..compare.canaries import canary_paths, render_canaries

            fallback = fallback_window or 0
            found = canary_paths(
                list(paths), resolved, chosen, one_window, fallback_window=fallback
            )
            planted = render_canaries(found)
        if as_json:
            _print_json(done, sort, found)
        else:
            shown = width or shutil.get_terminal_size((100, 24)).columns
            _print_tables(done, sort, shown, columns, planted)
        if report_path is not None:
            _write_report(report_path, done, sort, paths, planted)
    _finish(done)


def _print_json(done: CompareRun, sort: str, found: CanaryResult | None) -> None:
    """--json: the comparison as one JSON document (compare/as_json.py)."""
    from ..compare.as_json import comparison_json

    document = comparison_json(done, sort, found)
    echo(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())


def _print_tables(
    done: CompareRun, sort: str, width: int, columns: list[str] | None, planted: str | None
) -> None:
    """The comparison's table at ``width``, then each section asked for."""
    echo(render(done.comparison, done.header(), width=width, columns=columns, sort=sort), nl=False)
    for table in (done.budget_table(), done.drift_table(), planted, done.replicates_table()):
        if table is not None:
            echo("\n" + table, nl=False)


def _finish(done: CompareRun) -> None:
    """The run's last line and exit code: nothing compared, or inputs that failed."""
    if not done.comparison.conversations:
        if done.comparison.mixed:  # the only reason: said even when --silent
            echo(f"tsum: {done.left_out()}", err=True)
        said = done.comparison.mixed or done.result.errors or done.result.conversations
        why = "(the lines above say why)" if said else "found in the given paths"
        finish(failed=True, error=f"no conversation to compare {why}")
    if done.failed:
        errors = len(done.result.errors)
        finish(failed=True, error=f"{errors} input error(s), left out of the comparison (above)")
