"""``tsum prompt FILE``: the rendered summary prompt at a turn."""

from __future__ import annotations

from typing import Any

import click

from .format_cmd import history_at, print_text, turn_options
from .help import TsumCommand, examples
from .settings import summary_options


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
    resolved, session_id, text, index = history_at(file, opts, turn, session)
    print_text(
        resolved.template.render(text, session_id=session_id, turn=index, previous_summary="")
    )
