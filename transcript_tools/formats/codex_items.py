"""The parts of a Codex rollout's items: content parts, reasoning, tool arguments and output."""

from __future__ import annotations

from typing import Any

import orjson

from ..engine.messages import Block, OtherBlock, TextBlock, ToolUseBlock
from .source import Warn


def int_value(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def content_blocks(content: Any, warn: Warn | None = None) -> list[Block]:
    if isinstance(content, str):
        return [TextBlock(content)]
    blocks: list[Block] = []
    for i, part in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(part, dict) or not part.get("type"):
            if warn is not None:
                warn(f"content[{i}] is not a content part ({str(part)[:60]!r}); skipped")
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            blocks.append(TextBlock(part["text"]))
        elif kind in ("input_image", "image"):
            blocks.append(OtherBlock("image", part))
        else:
            blocks.append(OtherBlock(str(kind), part))
    return blocks


def text(blocks: list[Block]) -> str:
    return "\n".join(
        b.text if isinstance(b, TextBlock) else f"[{b.kind}]"
        for b in blocks
        if not isinstance(b, ToolUseBlock)
    )


def reasoning(payload: dict[str, Any]) -> OtherBlock:
    parts = []
    for key in ("summary", "content"):
        for part in payload.get(key) or ():
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
    return OtherBlock("thinking", "\n".join(parts))


def arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value  # free-form input (apply_patch) or broken JSON: keep the text
    return value


def output(payload: dict[str, Any]) -> tuple[str, bool]:
    output = payload.get("output")
    if isinstance(output, dict):
        content = output.get("content", output.get("output", ""))
        return (content if isinstance(content, str) else text(content_blocks(content))), output.get(
            "success"
        ) is False
    if isinstance(output, list):
        return text(content_blocks(output)), False
    return ("" if output is None else str(output)), False


def user_texts(history: list[Any]) -> list[str]:
    """The text of each user message of a ``compacted`` item's ``replacement_history``
    (its parts were read, and warned of, as items already)."""
    return [
        text(content_blocks(item.get("content"), lambda _: None))
        for item in history
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user"
    ]
