"""``tsum replay``, ``tsum format``, ``tsum prompt`` and ``tsum prompts``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import ConfigError, ExitCode, InputError, TsumError
from ..terminal import echo, for_stream
from .cost_options import cost_options, pricer_for
from .provider_options import provider_options
from .scale_options import refuse_summaries_on_ray, resolve_backend, scale_options
from .settings import Resolved, resolve, summary_options

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
@cost_options
def replay_command(
    paths: tuple[str, ...],
    out_dir: Path | None,
    dry_run: bool,
    silent: bool,
    workers: int | None,
    ray_address: str | None,
    cost: bool,
    prices_file: str | None,
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
    pricer = pricer_for(cost, prices_file, resolved.provider.get("price_per_mtok"))
    result = replay_paths(
        list(paths), resolved, out_dir=out_dir, silent=silent, backend=backend, cost=pricer
    )
    exit_for(result)


def replay_paths(
    paths: list[str],
    resolved: Resolved,
    *,
    out_dir: Path | None,
    silent: bool,
    backend: Any = None,
    cost: Any = None,
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
        cost=cost,
    )


def batch_setup(resolved: Resolved, silent: bool) -> Any:
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


# ---- format / prompt ---------------------------------------------------------------


def _history_at(
    path: str, resolved: Resolved, turn: int | None, session: str | None
) -> tuple[str, list[Any], int]:
    from ..engine.rules import split_turns
    from ..formats import read_conversations
    from ..formats.source import Source

    source = Source(path, skip_bad_lines=resolved.skip_bad_lines, warn=lambda m: echo(m, err=True))
    for conv in read_conversations(source, resolved.fmt):
        if session is not None and conv.session_id != session:
            continue
        turns = split_turns(conv.messages)
        if not turns:
            raise InputError(path, None, f"session {conv.session_id} has no messages")
        index = len(turns) - 1 if turn is None else turn
        if not 0 <= index < len(turns):
            raise ConfigError(
                f"--turn {turn}: session {conv.session_id} has turns 0..{len(turns) - 1}"
            )
        end = turns[index][0] + len(turns[index][1])
        return conv.session_id, conv.messages[:end], index
    if session:
        raise ConfigError(f"--session {session}: no such session in {path}")
    raise InputError(path, None, "no conversations in this file")


@click.command()
@click.argument("file")
@click.option(
    "--turn", type=int, help="The turn whose checkpoint is shown (0-based). [default: the last]"
)
@click.option(
    "--session", help="The session to use when the file holds several. [default: the first]"
)
@summary_options
def format_command(file: str, turn: int | None, session: str | None, **opts: Any) -> None:
    """Print the formatted history the summary prompt gets at a turn (only that text, on stdout)."""
    from ..engine.formatting import format_messages_as_text

    resolved = resolve(opts)
    cfg = resolved.settings.summary
    assert cfg is not None
    _, history, _ = _history_at(file, resolved, turn, session)
    _print_text(
        format_messages_as_text(history, cfg.max_tool_result_chars, cfg.max_transcript_chars) + "\n"
    )


@click.command()
@click.argument("file")
@click.option(
    "--turn", type=int, help="The turn whose checkpoint is shown (0-based). [default: the last]"
)
@click.option(
    "--session", help="The session to use when the file holds several. [default: the first]"
)
@summary_options
def prompt_command(file: str, turn: int | None, session: str | None, **opts: Any) -> None:
    """Print the rendered summary prompt at a turn (previous_summary empty; see replay --out for real ones)."""
    from ..engine.formatting import format_messages_as_text

    resolved = resolve(opts)
    cfg, template = resolved.settings.summary, resolved.template
    assert cfg is not None
    session_id, history, index = _history_at(file, resolved, turn, session)
    text = format_messages_as_text(history, cfg.max_tool_result_chars, cfg.max_transcript_chars)
    _print_text(template.render(text, session_id=session_id, turn=index, previous_summary=""))


def _print_text(text: str) -> None:
    """format/prompt: their text is the product, exact to a pipe or a file (``color=True``:
    click would otherwise strip colour codes); escaped on a terminal (``terminal``)."""
    click.echo(for_stream(text, sys.stdout), nl=False, color=True)


@click.group()
def prompts_group() -> None:
    """The built-in summary prompt templates."""


@prompts_group.command("list")
def prompts_list() -> None:
    """List built-in templates."""
    from ..engine.prompt import builtin_template_names, builtin_template_source

    for name in builtin_template_names():
        first = builtin_template_source(name).strip().splitlines()[0]
        echo(f"{name}\t{first[:70]}")


@prompts_group.command("show")
@click.argument("name")
def prompts_show(name: str) -> None:
    """Print a built-in template's source."""
    from ..engine.prompt import builtin_template_source

    echo(builtin_template_source(name), nl=False)
