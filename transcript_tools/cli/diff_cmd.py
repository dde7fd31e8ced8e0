"""``tsum diff OLD NEW`` and ``tsum check --baseline DIR PATH...``.

stdout carries the diff (text, ``--markdown`` or ``--json``); the one-line
verdict and the replay's end-of-run summary go to stderr. Exit codes: 0 no
differences, 1 differences, 3 could not compare (EXIT_CODES_HELP).
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..cost.gate import COST_FILE, compare_costs, read_costs
from ..diff.baseline import cache_only_message, cache_only_misses, seed_cache, update_baseline
from ..diff.compare import ReplayOutput, RunDiff, diff_outputs, load_output
from ..diff.render import (
    DEFAULT_MAX_DIFF_LINES,
    render_json,
    render_markdown,
    render_text,
    verdict_line,
)
from ..errors import ConfigError, ExitCode, TsumError
from ..providers.cache import CacheMode
from ..providers.factory import build_executor
from ..providers.retry import public_url
from ..replay.run import RunStatus
from ..terminal import echo
from .cost_options import pricer_for
from .main import EXIT_CODES_HELP
from .provider_options import provider_options
from .replay_cmd import replay_paths
from .settings import Resolved, resolve, summary_options

F = TypeVar("F", bound=Callable[..., Any])
OWN_OPTIONS = ("as_json", "markdown", "context", "max_diff_lines")


def diff_output_options(func: F) -> F:
    """--json / --markdown / --context / --max-diff-lines, shared by diff and check."""
    options = [
        click.option(
            "--json", "as_json", is_flag=True, help="Print the diff as JSON (for machines)."
        ),
        click.option(
            "--markdown",
            is_flag=True,
            help="Print the diff as Markdown (for a pull-request comment).",
        ),
        click.option(
            "--context",
            type=click.IntRange(min=0),
            default=3,
            show_default=True,
            help="Lines of context around each change in the unified diffs.",
        ),
        click.option(
            "--max-diff-lines",
            type=click.IntRange(min=1),
            default=DEFAULT_MAX_DIFF_LINES,
            show_default=True,
            help="Cut each unified diff after N lines.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _render(diff: RunDiff, as_json: bool, markdown: bool, max_diff_lines: int) -> str:
    if as_json and markdown:
        raise ConfigError("--json and --markdown cannot be combined: choose one")
    if as_json:
        return render_json(diff)
    if markdown:
        return render_markdown(diff, max_diff_lines=max_diff_lines)
    return render_text(diff, max_diff_lines=max_diff_lines)


def _finish(ctx: click.Context, diff: RunDiff, opts: dict[str, Any], silent: bool) -> None:
    echo(_render(diff, opts["as_json"], opts["markdown"], opts["max_diff_lines"]), nl=False)
    if not silent:
        echo(verdict_line(diff), err=True)
    ctx.exit(int(ExitCode.OK if diff.identical else ExitCode.DIFFERENCES))


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("old_dir", type=click.Path(path_type=Path))
@click.argument("new_dir", type=click.Path(path_type=Path))
@diff_output_options
@click.option("--silent", is_flag=True, help="No verdict line on stderr.")
@click.pass_context
def diff_command(
    ctx: click.Context, /, old_dir: Path, new_dir: Path, silent: bool, **opts: Any
) -> None:
    """Compare two `tsum replay --out` directories, per session and turn.

    Shows changes of the trigger schedule (summaries added, removed, moved),
    the rendered prompts and the summary texts (unified diffs), the template
    (by hash) and other settings in run.json, and token deltas. manifest.json
    (timings) is ignored.
    """
    if opts["as_json"] and opts["markdown"]:
        raise ConfigError("--json and --markdown cannot be combined: choose one")
    old, new = load_output(old_dir), load_output(new_dir)
    diff = diff_outputs(
        old, new, old_label=str(old_dir), new_label=str(new_dir), context=opts["context"]
    )
    _finish(ctx, diff, opts, silent)


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--baseline",
    "baseline_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    envvar="TSUM_BASELINE",
    show_envvar=True,
    help="The committed baseline: a replay output directory (diffable files only).",
)
@click.option(
    "--update",
    is_flag=True,
    help="Bless: replace the baseline with this run's outputs (never automatic; review the diff first).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep this run's outputs here (default: a temporary directory, removed at the end).",
)
@diff_output_options
@summary_options
@provider_options
@click.option(
    "--silent", is_flag=True, help="No progress, replay summary or verdict line on stderr."
)
@click.option(
    "--max-drop",
    type=click.FloatRange(min=0, max=1),
    default=0.05,
    show_default=True,
    help="Fail when the summaries' artifact recall (tsum eval) drops by more than this "
    "(0.05 = five percentage points); the lost probes are named.",
)
@click.option(
    "--max-cost-increase",
    type=click.FloatRange(min=0),
    help="Price the run (replay --cost) and fail when its cost exceeds the baseline's by "
    "more than this share (0.05 = 5%); the baseline needs costs.jsonl (--update with this "
    "option writes it). Prices: --price-per-mtok, else genai-prices (docs/cost.md).",
)
@click.pass_context
def check_command(
    ctx: click.Context,
    /,
    paths: tuple[str, ...],
    baseline_dir: Path,
    update: bool,
    out_dir: Path | None,
    silent: bool,
    **opts: Any,
) -> None:
    """Replay PATHS and diff the outputs against a baseline, in one step (a CI gate).

    Summaries come from the response cache, so an unchanged prompt reproduces
    exactly and costs nothing; with --cache-only (CI without API keys) a
    changed prompt whose response was never recorded fails (exit 3) naming the
    sessions and turns and the command that records them. --update rewrites
    the baseline with this run's outputs.
    """
    own = {name: opts.pop(name) for name in OWN_OPTIONS}
    max_drop = opts.pop("max_drop")
    max_cost_increase = opts.pop("max_cost_increase")
    if own["as_json"] and own["markdown"]:
        raise ConfigError("--json and --markdown cannot be combined: choose one")
    if out_dir is not None and out_dir.resolve() == baseline_dir.resolve():
        raise ConfigError(
            "--out must not be the --baseline directory (use --update to rewrite the baseline)"
        )
    resolved = resolve(opts)  # a bad setting fails before anything is read or paid for
    baseline = None
    if baseline_dir.exists() or not update:
        try:
            baseline = load_output(baseline_dir)  # fail before paying for a replay
        except TsumError as exc:
            if not update:
                raise TsumError(
                    f"baseline: {exc}\n(create or rewrite it with: {_command(ctx, add='--update')})"
                ) from None
            if not silent:
                echo(f"tsum: warning: baseline unreadable, it will be replaced: {exc}", err=True)

    if baseline is not None:
        seeded = _seed(baseline, resolved)
        if seeded and not silent:
            echo(
                f"tsum: {seeded} summary response(s) taken from the baseline into the cache",
                err=True,
            )

    with tempfile.TemporaryDirectory(prefix="tsum-check-") as tmp:
        fresh_dir = out_dir if out_dir is not None else Path(tmp) / "fresh"
        replay_error = _replay(paths, fresh_dir, silent, resolved, max_cost_increase)
        missing = cache_only_misses(fresh_dir) if opts.get("cache_only") else []
        fresh = None
        if replay_error is None or missing:
            try:
                fresh = load_output(fresh_dir)
            except TsumError:
                if replay_error is None:
                    raise
        diff = None
        if baseline is not None and fresh is not None:
            diff = diff_outputs(
                baseline,
                fresh,
                old_label=str(baseline_dir),
                new_label="this run",
                context=own["context"],
            )
        if missing:
            raise TsumError(cache_only_message(missing, diff, _command(ctx, drop=("cache_only",))))
        if replay_error is not None:
            raise replay_error
        assert fresh is not None
        from ..eval.baseline import gate  # tsum eval's recall gate (docs/eval.md)

        scores = gate(
            list(paths),
            fresh_dir,
            baseline_dir if baseline else None,
            max_drop=max_drop,
            fmt=opts.get("fmt"),
        )
        if update:
            failed = sum(
                1
                for r in fresh.sessions.values()
                for s in r.summaries.values()
                if s["status"] != "ok"
            )
            if failed:
                raise TsumError(
                    f"--update refused: {failed} summary call(s) failed in this run "
                    "(see summaries.jsonl); a baseline must not record failures"
                )
            if diff is not None:
                echo(
                    _render(diff, own["as_json"], own["markdown"], own["max_diff_lines"]), nl=False
                )
            update_baseline(fresh_dir, baseline_dir)
            for kept in ("eval.json", COST_FILE):  # the gates' stored figures
                if (fresh_dir / kept).is_file():
                    shutil.copyfile(fresh_dir / kept, baseline_dir / kept)
            if not silent:
                if diff is None:
                    what = "written (new baseline)"
                elif diff.identical:
                    what = "rewritten (no differences)"
                else:
                    what = "updated (" + verdict_line(diff).removeprefix("tsum: ") + ")"
                echo(f"tsum: baseline {baseline_dir} {what}", err=True)
            return
        assert diff is not None
        costs = None
        if max_cost_increase is not None:
            costs = compare_costs(
                read_costs(baseline_dir), read_costs(fresh_dir) or {}, max_cost_increase
            )
        for line in scores.lines if scores is not None and not silent else ():
            click.echo(f"tsum: {line}", err=True)
        for line in costs.lines if costs is not None and not silent else ():
            click.echo(f"tsum: {line}", err=True)
        gate_failed = (scores is not None and scores.failed) or (costs is not None and costs.failed)
        if gate_failed and diff.identical:
            ctx.exit(int(ExitCode.DIFFERENCES))
        _finish(ctx, diff, own, silent)


class _ReplayFailed(TsumError):
    """The replay inside check could not run (its errors are already on stderr)."""


def _replay(
    paths: tuple[str, ...],
    out: Path,
    silent: bool,
    resolved: Resolved,
    max_cost_increase: float | None = None,
) -> TsumError | None:
    """Replay PATHS into OUT through the library, as ``tsum replay`` would (with --cost
    when the cost gate is on); its failure, if any."""
    pricer = pricer_for(
        max_cost_increase is not None, None, resolved.provider.get("price_per_mtok")
    )
    result = replay_paths(list(paths), resolved, out_dir=out, silent=silent, cost=pricer)
    if result.status is RunStatus.OK:
        return None
    if result.status in (RunStatus.CACHE_MISS, RunStatus.ALL_SUMMARIES_FAILED):
        return TsumError(result.message or result.status.value)
    if result.status is RunStatus.NO_SESSIONS:
        echo(f"tsum: error: {result.message}", err=True)
    # bad input: each error is already on stderr
    return _ReplayFailed(
        "the replay failed (see above): nothing compared, the baseline is unchanged"
    )


def _seed(baseline: ReplayOutput, resolved: Resolved) -> int:
    """The baseline's summaries into the cache this run reads (none: no cache, or --refresh)."""
    executor = build_executor(resolved.provider)
    try:
        if executor.cache is None or executor.cache_mode is CacheMode.REFRESH:
            return 0
        return seed_cache(baseline, executor.cache, executor.provider)
    finally:
        executor.close()


def _command(ctx: click.Context, *, drop: tuple[str, ...] = (), add: str = "") -> str:
    """This command line, rebuilt from the options actually given (command line or env).

    Environment-set options become flags, so CI's command can be pasted locally.
    """
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    words = ["tsum", ctx.info_name or "check"]
    args: list[str] = []
    for param in ctx.command.params:
        name = param.name or ""
        if name in drop or name in OWN_OPTIONS or name in ("update", "silent", "out_dir"):
            continue
        value = ctx.params.get(name)
        if isinstance(param, click.Argument):
            args.extend(str(v) for v in (value or ()))
            continue
        if ctx.get_parameter_source(name) not in given or value is None:
            continue
        flag = next((o for o in param.opts if o.startswith("--")), param.opts[0])
        if isinstance(param, click.Option) and param.is_flag:
            if value:
                words.append(flag)
        elif name == "base_url":
            words.extend([flag, public_url(str(value))])  # never echo credentials in a URL
        else:
            words.extend([flag, str(value)])
    words.extend(args)
    if add:
        words.append(add)
    return shlex.join(words)
