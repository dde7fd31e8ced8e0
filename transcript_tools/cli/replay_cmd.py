"""``tsum replay``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import ExitCode, TsumError
from ..terminal import echo
from .provider_options import provider_options
from .scale_options import refuse_summaries_on_ray, resolve_backend, scale_options
from .settings import ResolvedSettings, resolve, summary_options

if TYPE_CHECKING:
    from ..replay.run import ReplayResult

# The library (readers, engine, asyncio, providers) is imported inside the commands:
# `tsum replay --help` needs only the options.

__all__ = ["exit_for", "replay_command", "replay_paths", "summary_options"]


@click.command(
    epilog="Outputs with --out DIR: decisions.jsonl, summaries.jsonl, prompts.jsonl, slots.jsonl, "
    "compressed/<session>.jsonl, run.json, manifest.json (see README)."
)
@click.argument("paths", nargs=-1, required=True)
@summary_options
@provider_options
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write JSONL records here instead of a report on stdout.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Decisions only: no summary calls (fired checkpoints are recorded as would_summarize).",
)
@click.option(
    "--silent", is_flag=True, help="No progress bar, warnings or end-of-run summary on stderr."
)
@scale_options
def replay_command(
    paths: tuple[str, ...],
    out_dir: Path | None,
    dry_run: bool,
    silent: bool,
    workers: int | None,
    ray_address: str | None,
    **opts: Any,
) -> None:
    """Replay transcripts (files, directories, globs, or - for stdin) turn by turn through the checkpoint.

    --workers and --ray spread a --dry-run over processes or a Ray cluster; a replay that
    makes summary calls runs them with --concurrency instead.
    """
    resolved = resolve({**opts, "workers": workers}, dry_run=dry_run)
    if not dry_run:
        refuse_summaries_on_ray(
            ray_address, "a replay that makes summary calls (add --dry-run for decisions only)"
        )
    backend = resolve_backend(resolved.values.get("workers"), ray_address)
    result = replay_paths(list(paths), resolved, out_dir=out_dir, silent=silent, backend=backend)
    exit_for(result)


def replay_paths(
    paths: list[str],
    resolved: ResolvedSettings,
    *,
    out_dir: Path | None,
    silent: bool,
    backend: Any = None,
) -> ReplayResult:
    """The library's run with the CLI's stderr: warnings, errors, progress, the end-of-run line."""
    from ..replay.run import run_replay

    def warn(message: str) -> None:
        if not silent:
            echo(message, err=True)

    def error(message: str) -> None:
        echo(message, err=True)

    progress = _progress(silent)

    def on_end(result: ReplayResult, state: str) -> None:
        if progress is not None:
            progress.close()
        if not silent or state != "complete":
            echo(result.summary_line(state), err=True)

    return run_replay(
        paths,
        resolved.settings,
        template=resolved.template,
        provider=resolved.provider["provider"],
        provider_options=resolved.provider,
        out_dir=out_dir,
        report=None if out_dir is not None else sys.stdout,
        fmt=resolved.fmt,
        skip_bad_lines=resolved.skip_bad_lines,
        concurrency=resolved.concurrency,
        warn=warn,
        error=error,
        on_session=(lambda _r: progress.update(1)) if progress is not None else None,
        on_end=on_end,
        batch=batch_setup(resolved, silent) if resolved.provider.get("batch") else None,
        price_per_mtok=resolved.provider.get("price_per_mtok"),
        backend=backend,
    )


def batch_setup(resolved: ResolvedSettings, silent: bool) -> Any:
    """``--batch``: the driver factory ``run_replay`` calls with its executor."""
    from .batch_cmd import BatchSetup

    return lambda executor: BatchSetup(resolved.provider, executor, silent=silent)


def exit_for(result: ReplayResult) -> None:
    """The run's status as the exit code (bad input was already reported line by line)."""
    from ..replay.run import RunStatus

    if result.status in (RunStatus.CACHE_MISS, RunStatus.ALL_SUMMARIES_FAILED):
        raise TsumError(result.message or result.status.value)
    if result.status is RunStatus.NO_SESSIONS:
        echo(f"tsum: error: {result.message}", err=True)
    if result.status is not RunStatus.OK:
        sys.exit(int(ExitCode.FAILED))


def _progress(silent: bool) -> Any:
    if silent or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(unit="session", file=sys.stderr, leave=False)
