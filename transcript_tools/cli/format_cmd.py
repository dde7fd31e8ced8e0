"""``tsum format FILE``, and what it shares with ``tsum prompt``: the history at a turn,
the exact text out."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..engine.config import RunSettings
from ..errors import ConfigError, InputError
from ..terminal import echo, for_stream
from .help import TsumCommand, examples
from .settings import resolve, summary_options

F = TypeVar("F", bound=Callable[..., Any])


def turn_options(func: F) -> F:
    """``--turn`` and ``--session``: which checkpoint of which session (format and prompt)."""
    func = click.option(
        "--session", help="The session to use when the file holds several. [default: the first]"
    )(func)
    return click.option(
        "--turn", type=int, help="The turn whose checkpoint is shown (0-based). [default: the last]"
    )(func)


def history_at(
    path: str, opts: dict[str, Any], turn: int | None, session: str | None
) -> tuple[RunSettings, str, str, int]:
    """The run's settings, and at ``turn`` of ``session``: its id, the formatted history
    and the turn (format and prompt show the seed's summarizer input; a policy's depends
    on its earlier compactions, which only a replay makes)."""
    from ..engine.formatting import format_messages_as_text
    from ..engine.rules import split_turns
    from ..formats import read_conversations
    from ..formats.source import Source
    from ..reporter import session_warning

    resolved = resolve(opts)
    if resolved.settings.policy is not None:
        raise click.UsageError(
            f"--policy {resolved.settings.policy.name}: format and prompt show the seed's "
            "input; a policy's prompts are in prompts.jsonl of "
            "`tsum replay FILE --policy NAME --out DIR`"
        )
    cfg = resolved.settings.summary
    assert cfg is not None
    source = Source(path, skip_bad_lines=resolved.skip_bad_lines, warn=lambda m: echo(m, err=True))
    for conv in read_conversations(source, resolved.fmt):
        if session is not None and conv.session_id != session:
            continue
        for warning in conv.warnings:  # what its reader dropped or ignored, as replay says
            echo(session_warning(path, conv.session_id, warning), err=True)
        turns = split_turns(conv.messages)
        if not turns:
            raise InputError(path, None, f"session {conv.session_id} has no messages")
        index = len(turns) - 1 if turn is None else turn
        if not 0 <= index < len(turns):
            raise ConfigError(
                f"--turn {turn}: session {conv.session_id} has turns 0..{len(turns) - 1}"
            )
        history = conv.messages[: turns[index][0] + len(turns[index][1])]
        text = format_messages_as_text(history, cfg.max_tool_result_chars, cfg.max_transcript_chars)
        return resolved, conv.session_id, text, index
    if session:
        raise ConfigError(f"--session {session}: no such session in {path}")
    raise InputError(path, None, "no conversations in this file")


@click.command(
    cls=TsumCommand,
    epilog=examples(
        "tsum format samples/long_session.jsonl                 the last turn",
        "tsum format samples/long_session.jsonl --turn 5",
        "tsum format corpus/run.jsonl --session SESSION_ID --max-tool-result-chars 2000",
    ),
)
@click.argument("file")
@turn_options
@summary_options
def format_command(file: str, turn: int | None, session: str | None, **opts: Any) -> None:
    """Print the formatted history the summary prompt gets at a turn (only that text, on stdout)."""
    print_text(history_at(file, opts, turn, session)[2] + "\n")


def print_text(text: str) -> None:
    """format/prompt: their text is the product, exact to a pipe or a file (``color=True``:
    click would otherwise strip colour codes); escaped on a terminal (``terminal``)."""
    click.echo(for_stream(text, sys.stdout), nl=False, color=True)
