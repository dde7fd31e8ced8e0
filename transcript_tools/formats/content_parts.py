"""Typed content parts (``[{"type": "text", "text": …}, …]``) as message blocks: the one
mapping the readers of part-list formats share (ATIF, pi, OpenTelemetry, inspect_ai),
each naming its own type and field names."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from ..engine.messages import Block, OtherBlock, TextBlock, ToolUseBlock


@dataclass(frozen=True, slots=True)
class PartNames:
    """A format's names: the text part and its field, the reasoning part and its field,
    the tool-call part (its id, name and arguments fields)."""

    text: tuple[str, str] = ("text", "text")
    thinking: tuple[str, str] | None = None
    tool_call: tuple[str, str, str, str] | None = None  # (type, id, name, arguments)


def parts_to_blocks(content: Any, names: PartNames = PartNames()) -> list[Block]:
    """A string (one text block, none when empty) or a list of parts; any other part type
    is kept as an ``OtherBlock`` of its type."""
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    out: list[Block] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == names.text[0]:
            out.append(TextBlock(str(part.get(names.text[1]) or "")))
        elif names.thinking is not None and kind == names.thinking[0]:
            out.append(OtherBlock("thinking", part.get(names.thinking[1]) or ""))
        elif names.tool_call is not None and kind == names.tool_call[0]:
            _, id_key, name_key, args_key = names.tool_call
            name = str(part.get(name_key) or "unknown")
            out.append(ToolUseBlock(str(part.get(id_key) or ""), name, part.get(args_key)))
        else:
            out.append(OtherBlock(str(kind or "unknown"), part))
    return out


def text_of(blocks: Iterable[Block], sep: str = "\n", kinds: bool = False) -> str:
    """The text blocks' text joined by ``sep``; with ``kinds``, every other block but a tool
    call as ``[kind]``."""
    if not kinds:
        return sep.join(b.text for b in blocks if isinstance(b, TextBlock))
    return sep.join(
        b.text if isinstance(b, TextBlock) else f"[{b.kind}]"
        for b in blocks
        if not isinstance(b, ToolUseBlock)
    )


def json_or_text(raw: Any) -> Any:
    """A value some formats store as a JSON string (tool arguments): parsed when it is
    JSON, else as it is."""
    if isinstance(raw, str):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
    return raw
