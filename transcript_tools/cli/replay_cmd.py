"""``tsum replay``, ``tsum format``, ``tsum prompt`` and ``tsum prompts``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..engine.config import OUT_FORMATS, RunSettings
from ..terminal import echo
from .help import TsumCommand, examples
from .outcome import finish
from .progress import COMMANDLINE, SUMMARY, RunStderr, warnings_option
from .setting_options import NonEmptyPath, cost_options, provider_options, scale_options
from .settings import resolve, summary_options

# --cost with --dry-run prices views no summary call made: said, not left to be read as a
# policy that saves nothing (docs/cost.md, "Outputs")
DRY_RUN_COST_NOTE = (
    "tsum: note: --cost with --dry-run prices the views of a run without summary calls: "
    "the seed's views keep the whole history (no summary is written, so its cost is the "
    "original run's), a --policy's hold an assumed summary, and no summarizer is priced"
)

if TYPE_CHECKING:
    from ..replay.run import ReplayResult

# The library (readers, engine, asyncio, providers) is imported inside the commands:
# `tsum replay --help` needs only the options.

__all__ = ["exit_for", "replay_command", "replay_paths", "summary_options"]


@click.command(
    cls=TsumCommand,
    epilog=examples(
        "tsum replay samples/long_session.jsonl                  a readable report",
        "tsum replay ~/.claude/projects/ --max-context-tokens 200000 --measure current",
        "tsum replay corpus/ --out out/ --provider anthropic       JSONL records",
        "tsum replay corpus/ --dry-run --workers 4                decisions only",
    )
    + "\n\n"
    + "Outputs with --out DIR: decisions.jsonl, summaries.jsonl, prompts.jsonl, slots.jsonl, "
    "compressed/<session>.jsonl, run.json, manifest.json (see README).",
)
@click.argument("paths", nargs=-1, required=True)
@summary_options
@provider_options
@click.option(
    "--out",
    "out_dir",
    type=NonEmptyPath(file_okay=False),
    help="Write JSONL records here instead of a report on stdout.",
)
@click.option(
    "--out-format",
    type=click.Choice(OUT_FORMATS),
    default="native",
    show_default=True,
    help="Format of compressed/<session>: tsum's native JSONL, or an ATIF trajectory (.json).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Decisions only: no summary calls (fired checkpoints are recorded as would_summarize).",
)
@click.option(
    "--silent", is_flag=True, help="No progress bar, warnings or end-of-run summary on stderr."
)
@warnings_option
@scale_options
@cost_options
def replay_command(
    paths: tuple[str, ...],
    out_dir: Path | None,
    out_format: str,
    dry_run: bool,
    silent: bool,
    workers: int | None,
    ray_address: str | None,
    cost: bool,
    prices_file: str | None,
    warnings_mode: str,
    **opts: Any,
) -> None:
    """Replay transcripts (files, directories, globs, or - for stdin) turn by turn through the checkpoint.

    --workers and --ray spread a --dry-run over processes or a Ray cluster; a replay that
    makes summary calls runs them with --concurrency instead.
    """
    from ..cost.prices import pricer_for
    from ..formats.atif_write import check_out_format
    from ..parallel.pool import backend_for, refuse_summaries_on_ray

    if dry_run and opts.get("batch") and _on_command_line("batch"):
        raise click.UsageError(
            "--dry-run makes no summary calls and --batch sends them: drop one of the two"
        )
    resolved = resolve({**opts, "workers": workers}, dry_run=dry_run)
    check_out_format(out_dir, out_format, resolved.settings.dry_run)
    if not dry_run:
        refuse_summaries_on_ray(
            ray_address, "a replay that makes summary calls (add --dry-run for decisions only)"
        )
    backend = backend_for(resolved.values.get("workers"), ray_address)
    pricer = pricer_for(cost, prices_file, resolved.provider.get("price_per_mtok"))
    result = replay_paths(
        list(paths),
        resolved,
        out_dir=out_dir,
        silent=silent,
        backend=backend,
        cost=pricer,
        warnings_mode=warnings_mode,
    )
    if cost and dry_run and not silent:
        echo(DRY_RUN_COST_NOTE, err=True)
    if out_format != "native":
        from ..formats.atif_write import write_out_format

        write_out_format(out_dir, out_format)
    exit_for(result)


def _on_command_line(name: str) -> bool:
    return click.get_current_context().get_parameter_source(name) is COMMANDLINE


def replay_paths(
    paths: list[str],
    resolved: RunSettings,
    *,
    out_dir: Path | None,
    silent: bool,
    backend: Any = None,
    cost: Any = None,
    warnings_mode: str = SUMMARY,
) -> ReplayResult:
    """The library's run with the CLI's stderr: warnings, errors, progress, the end-of-run line."""
    from ..replay.run import replay_paths as run_paths

    reporter = ReplayStderr(paths, resolved, silent=silent, warnings_mode=warnings_mode)
    report = None if out_dir is not None else sys.stdout
    return run_paths(
        paths,
        resolved,
        out_dir=out_dir,
        report=report,
        reporter=reporter,
        backend=backend,
        cost=cost,
    )


class ReplayStderr(RunStderr):
    """A replay's stderr: at the end, the bar gone, the run's line and the window tip."""

    def __init__(
        self, paths: list[str], resolved: RunSettings, *, silent: bool, warnings_mode: str
    ) -> None:
        super().__init__(paths, desc="replay", silent=silent, warnings_mode=warnings_mode)
        self.resolved = resolved

    def end(self, result: Any, state: str) -> None:
        from ..replay.tips import window_tip

        self.close()
        if not self.silent or state != "complete":
            echo(result.summary_line(state), err=True)
        stats = result.stats
        fired = stats.summaries_ok + stats.summaries_failed + stats.would_summarize
        if not self.silent and (tip := window_tip(stats.model_room, self.resolved, fired)):
            echo(tip, err=True)


def exit_for(result: ReplayResult) -> None:
    """The run's status as the exit code (bad input was already reported line by line)."""
    from ..replay.run import RunStatus

    if (fatal := result.could_not_run()) is not None:
        raise fatal
    finish(
        failed=result.status is not RunStatus.OK,
        error=result.message if result.status is RunStatus.NO_SESSIONS else None,
    )
