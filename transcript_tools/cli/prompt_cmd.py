"""``tsum prompt FILE``: the rendered summary prompt at a turn."""

from __future__ import annotations

from typing import Any

import click

from .format_cmd import history_at, print_text, refuse_policy, turn_options
from .help import TsumCommand, examples
from .settings import resolve, summary_options


@click.command(
    cls=TsumCommand,
    epilog=examples(
        "tsum prompt samples/incident_tool_result.json --prompt en",
        "tsum prompt samples/long_session.jsonl --turn 5 --prompt my_prompt.j2",
        "tsum prompt samples/long_session.jsonl --prompt claude-code    (a built-in template)",
    ),
)
@click.argument("file")
@turn_options
@summary_options
def prompt_command(file: str, turn: int | None, session: str | None, **opts: Any) -> None:
    """Print the rendered summary prompt at a turn (previous_summary empty; see replay --out for real ones)."""
    from ..engine.formatting import format_messages_as_text

    resolved = resolve(opts)
    refuse_policy(resolved)
    cfg, template = resolved.settings.summary, resolved.template
    assert cfg is not None
    session_id, history, index = history_at(file, resolved, turn, session)
    text = format_messages_as_text(history, cfg.max_tool_result_chars, cfg.max_transcript_chars)
    print_text(template.render(text, session_id=session_id, turn=index, previous_summary=""))
