"""``tsum sweep``: evaluate trigger settings over a corpus, offline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..cost.prices import pricer_for
from ..engine.config import AUTO, Checkpoint, Measure, SlotMode
from ..engine.seed_defaults import SUMMARY_MAX_TOKENS
from ..sweep.tables import SORT_KEYS, render_csv, render_json, render_table
from ..sweep.workflow import DEFAULT_REPORT_SAMPLE, DEFAULT_SORT, sweep_paths
from ..terminal import echo
from .help import TsumCommand
from .outcome import finish
from .progress import RunStderr, warnings_option
from .setting_options import (
    cached_summary_options,
    cost_options,
    scale_options,
    setting_option,
    sweep_list_option,
)
from .settings import config_option, format_option, resolve

SORT_CHOICES = list(SORT_KEYS) + ["-" + k for k in SORT_KEYS if k != "config"]


def _split(values: tuple[str, ...], name: str, convert: Callable[[str], Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                out.append(convert(part))
            except ValueError:
                raise click.BadParameter(
                    f"{part!r} is not a valid value", param_hint=name
                ) from None
    return out


def _window(text: str) -> int | str:
    """A --max-context-tokens value: an integer, or auto (per conversation, from its log)."""
    return AUTO if text == AUTO else int(text)


def _policy(spec: str) -> Any:
    """One ``--policy`` value: a preset's name or a policy file (a bad one: usage error)."""
    from .policies_cmd import PolicyParam

    try:
        return PolicyParam().convert(spec, None, None)
    except click.BadParameter as exc:
        raise click.BadParameter(exc.message, param_hint="'--policy'") from None


EPILOG = """\b
Examples:
  tsum sweep corpus/ --ratio 0.5,0.75,0.9 --max-context-tokens 32000,128000 --debounce 1,3,5
  tsum sweep corpus/ --ratio 0.6 --debounce 5 --measure cumulative,current --report sweep.html
  tsum sweep corpus/ --json > sweep.json        (or --csv)

With the cumulative measure (usage recorded or estimated) or in Full mode the schedule
cannot depend on summary text: it is computed from the token series alone and no provider
is called. Otherwise (--measure current in Focused mode, or a prompt that shows the
previous summary) the real engine runs with the offline summarizer, or with cached
responses of a real provider (--provider NAME --cache FILE; misses fall back to offline).
The output says which."""


@click.command(cls=TsumCommand, epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--policy",
    "policies",
    multiple=True,
    metavar="NAME|FILE,...",
    help="Compaction policies to compare (comma list or repeated; tsum policies list): a "
    "grid dimension beside --max-context-tokens; --ratio and --debounce, where given, "
    "override each policy's own values; every row names its policy.",
)
@sweep_list_option(
    "trigger_token_ratio", "ratios", "trigger_token_ratio values (comma list or repeated)."
)
@sweep_list_option(
    "max_context_tokens",
    "max_tokens",
    "max_context_tokens values; auto: the window each log records (Codex), else its "
    "model's documented window, else the policy's, else the default.",
)
@sweep_list_option("debounce_turns", "debounces", "debounce_turns values.")
@sweep_list_option("mode", "modes", "Slot modes.", prefix="")
@sweep_list_option(
    "measure",
    "measures",
    "Watermarks: the seed's cumulative cost_so_far, or the current context size.",
    prefix="",
)
@sweep_list_option(
    "checkpoint",
    "checkpoints",
    "Checkpoint after each user turn (the seed) or each model call (debounce counts calls).",
)
@setting_option(
    "path",
    help="Turn path of the engine runs: submit_turn (sync) or submit_turn_stream + "
    "finalize_turn (stream); the schedule is the same.",
)
@config_option
@setting_option("prompt", help="Summary prompt (built-in name or file).")
@setting_option("keep_recent_turns")
@setting_option("max_tool_result_chars", help="Per tool result in the summary prompt.")
@setting_option("max_transcript_chars")
@format_option
@click.option(
    "--skip-bad-lines", is_flag=True, help="Warn about bad lines and use the rest of the file."
)
@click.option(
    "--sort",
    "sort",
    type=click.Choice(SORT_CHOICES),
    default=DEFAULT_SORT,
    show_default=True,
    help="Row order: a figure (ascending; prefix - for descending) or config (grid order).",
)
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout instead of the table.")
@click.option("--csv", "as_csv", is_flag=True, help="CSV on stdout instead of the table.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a self-contained HTML report (charts + table) to this file.",
)
@click.option(
    "--chart",
    is_flag=True,
    help="With --report: add the trade-off chart, artifact recall against cost (the mean "
    "view with summaries), its Pareto front labelled.",
)
@click.option(
    "--report-sample",
    type=click.IntRange(min=1),
    default=DEFAULT_REPORT_SAMPLE,
    show_default=True,
    help="Conversations charted in the report (a deterministic sample; recorded compactions first).",
)
@click.option(
    "--price-per-mtok",
    type=click.FloatRange(min=0),
    help="Summarizer input price per million tokens: adds money.",
)
@click.option(
    "--summary-tokens",
    type=click.IntRange(min=0),
    default=SUMMARY_MAX_TOKENS,
    show_default=True,
    help="Assumed summary length where no summary is written (fast path): the call's max_tokens.",
)
@cached_summary_options
@click.option("--silent", is_flag=True, help="No progress or end-of-run line on stderr.")
@warnings_option
@scale_options
@cost_options
def sweep_command(
    paths: tuple[str, ...],
    policies: tuple[str, ...],
    ratios: tuple[str, ...],
    max_tokens: tuple[str, ...],
    debounces: tuple[str, ...],
    modes: tuple[str, ...],
    measures: tuple[str, ...],
    checkpoints: tuple[str, ...],
    sort: str,
    as_json: bool,
    as_csv: bool,
    report_path: Path | None,
    chart: bool,
    report_sample: int,
    price_per_mtok: float | None,
    summary_tokens: int,
    cache_path: Path | None,
    silent: bool,
    warnings_mode: str,
    workers: int | None,
    ray_address: str | None,
    cost: bool,
    prices_file: str | None,
    **opts: Any,
) -> None:
    """Evaluate every combination of trigger settings on every conversation (no LLM where none is needed)."""
    if as_json and as_csv:
        raise click.UsageError("--json and --csv cannot be combined: choose one")
    if chart and report_path is None:
        raise click.UsageError("--chart draws into the HTML report: give --report FILE too")
    windows = _split(max_tokens, "--max-context-tokens", _window)
    # auto given here: its fallback is replay's for auto given (the default, not the file's)
    auto = {"max_context_tokens": AUTO} if AUTO in windows else None
    resolved = resolve({**opts, "workers": workers}, overrides=auto)
    axes: dict[str, Any] = dict(
        ratios=_split(ratios, "--ratio", float),
        max_context_tokens=windows,
        debounces=_split(debounces, "--debounce", int),
        modes=_split(modes, "--mode", SlotMode),
        measures=_split(measures, "--measure", Measure),
        checkpoints=_split(checkpoints, "--checkpoint", Checkpoint),
        policies=_split(policies, "--policy", _policy),
    )

    with RunStderr(list(paths), desc="sweep", silent=silent, warnings_mode=warnings_mode) as stderr:
        done = sweep_paths(
            list(paths),
            resolved,
            **axes,
            cache=cache_path,
            ray=ray_address,
            summary_tokens=summary_tokens,
            price_per_mtok=price_per_mtok,
            pricer=pricer_for(cost, prices_file, price_per_mtok),
            report_path=report_path,
            report_sample=report_sample,
            sort=sort,
            chart=chart,
            reporter=stderr,
        )
    render = render_json if as_json else render_csv if as_csv else render_table
    if done.result.conversations:  # nothing read: no table of zeros, only the error below
        echo(render(done.result, sort), nl=False)
    if not silent:
        echo(done.summary_line(), err=True)
    why = (
        "could be read (the errors above say why)"
        if done.result.errors
        else "found in the given paths"
    )
    finish(
        failed=done.failed,
        error=f"no conversations {why}" if done.failed and not done.result.conversations else None,
    )
