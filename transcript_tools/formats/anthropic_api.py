"""The Anthropic Messages API's shapes → the Message model.

Content blocks, usage, and one request's ``messages`` list; shared by the readers of
Anthropic Messages conversations (``anthropic``), claude-trace captures
(``claude_trace``) and Claude Code logs (``claude_code``).

Blocks: text; tool_use / server_tool_use → ToolUseBlock; tool_result → ToolResultMessage
(``is_error`` kept; a user message holding tool results never starts a turn, and any text
beside the results is appended to the last result); thinking / redacted_thinking →
``OtherBlock("thinking")``; image / document and anything else → ``OtherBlock(type)``; a
user message that is a single image → UserImageMessage. Usage: ``input_tokens`` is
input + cache creation + cache read (the whole prompt), cache fields kept as subsets.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..engine.messages import (
    AssistantMessage,
    Block,
    Message,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserImageMessage,
    UserMessage,
)
from .fields import str_or_none
from .source import Warn, count_field

# Block types that only the Anthropic API uses (OpenAI has tool_calls / role "tool").
SPECIFIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document", "server_tool_use"}
)
OPENAI_ROLES = frozenset({"system", "developer", "tool", "function"})


USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation",
)


def usage_from_anthropic(usage: Any, warn: Warn | None = None) -> Usage | None:
    """Anthropic's ``usage`` → Usage; ``input_tokens`` becomes the whole prompt size
    (input + cache creation + cache read, ``messages.Usage``).

    The one mapping for the readers (Anthropic Messages, claude-trace, Claude Code) and
    the provider: a JSON object from a log, or the SDK's object. ``warn`` hears about
    fields that are not numbers (read if numeric strings)."""
    if usage is None:
        return None
    if not isinstance(usage, dict) and hasattr(usage, "input_tokens"):  # the SDK's pydantic object
        usage = {f: v for f in USAGE_FIELDS if (v := getattr(usage, f, None)) is not None}
    if not isinstance(usage, dict):
        if warn is not None:
            warn(f"usage is not an object ({type(usage).__name__}); ignored")
        return None
    if "input_tokens" not in usage and "output_tokens" not in usage:
        return None
    created = count_field(
        usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens", warn
    )
    read = count_field(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens", warn)
    return Usage(
        count_field(usage.get("input_tokens"), "usage.input_tokens", warn) + created + read,
        count_field(usage.get("output_tokens"), "usage.output_tokens", warn),
        read,
        created,
        min(created, _one_hour_writes(usage.get("cache_creation"), warn)),
    )


def _one_hour_writes(split: Any, warn: Warn | None) -> int:
    """``usage.cache_creation.ephemeral_1h_input_tokens``: the cache writes with a 1-hour
    lifetime (the rest, ``ephemeral_5m_input_tokens``, live 5 minutes and cost less:
    platform.claude.com/docs/en/build-with-claude/prompt-caching#1-hour-cache-duration).
    Absent (older logs, the SDK without the split): every write is a 5-minute one."""
    if split is None:
        return 0
    if not isinstance(split, dict) and hasattr(split, "ephemeral_1h_input_tokens"):  # the SDK's
        split = {"ephemeral_1h_input_tokens": split.ephemeral_1h_input_tokens}
    if not isinstance(split, dict):
        if warn is not None:
            warn(f"usage.cache_creation is not an object ({type(split).__name__}); ignored")
        return 0
    field = "usage.cache_creation.ephemeral_1h_input_tokens"
    return count_field(split.get("ephemeral_1h_input_tokens"), field, warn)


def block_from_anthropic(block: Any) -> Block | None:
    """One non-tool-result content block → Block (None for empty / unusable)."""
    if isinstance(block, str):
        return TextBlock(block)
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return TextBlock(text) if isinstance(text, str) else None
    if kind in ("tool_use", "server_tool_use"):
        return ToolUseBlock(
            str(block.get("id", "")), str(block.get("name") or "unknown"), block.get("input")
        )
    if kind == "thinking":
        return OtherBlock("thinking", block.get("thinking") or "")
    if kind == "redacted_thinking":
        return OtherBlock("thinking", None)
    return OtherBlock(str(kind or "unknown"), block)


def blocks_from_anthropic(content: Any, warn: Warn | None = None) -> list[Block]:
    """Content (a string or a list of blocks) → Blocks; ``warn`` hears of unreadable ones."""
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    if not isinstance(content, list):
        return []
    out = []
    for i, raw in enumerate(content):
        block = block_from_anthropic(raw)
        if block is not None:
            out.append(block)
        elif warn is not None:
            warn(f"content[{i}] is not a readable block ({_preview(raw)}); skipped")
    return out


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def tool_result_text(content: Any) -> str:
    """The content of a tool_result block as text; non-text parts become ``[kind]``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return str(content)
    parts = []
    for part in content:
        if isinstance(part, dict):
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                parts.append(f"[{part.get('type', 'unknown')}]")
        elif isinstance(part, str):
            parts.append(part)
    return "\n".join(parts)


def tool_results(content: list[Any]) -> list[Message]:
    """A user content list holding tool_result blocks → ToolResultMessages.

    Text beside the results (reminders the client appended) is added to the last result:
    it reached the model in the same user message, which never starts a turn.
    """
    out: list[Message] = []
    extra: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            out.append(
                ToolResultMessage(
                    str(block.get("tool_use_id", "")),
                    tool_result_text(block.get("content")),
                    block.get("is_error") is True,
                )
            )
        else:
            b = block_from_anthropic(block)
            if isinstance(b, TextBlock):
                extra.append(b.text)
            elif isinstance(b, OtherBlock):
                extra.append(f"[{b.kind}]")
    if extra and out:
        last = out[-1]
        assert isinstance(last, ToolResultMessage)
        out[-1] = dataclasses.replace(last, content="\n".join([last.content, *extra]))
    return out


def has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def user_message(blocks: list[Block]) -> Message:
    """User blocks → UserImageMessage when they are one image, else UserMessage."""
    if len(blocks) == 1 and isinstance(blocks[0], OtherBlock) and blocks[0].kind == "image":
        data = blocks[0].data
        source = data.get("source") if isinstance(data, dict) else None
        if isinstance(source, dict):
            payload = source.get("data", source.get("url", source))
            return UserImageMessage(str(source.get("media_type", "")), payload)
        return UserImageMessage("", data)
    return UserMessage(tuple(blocks))


def system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(
            b.get("text", "") if isinstance(b, dict) else str(b) for b in system if b is not None
        )
    return ""


def anthropic_messages(msgs: Any) -> bool:
    """Messages that use Anthropic-only block types and no OpenAI-only fields."""
    if not isinstance(msgs, list):
        return False
    specific = False
    for msg in msgs:
        if not isinstance(msg, dict):
            return False
        if msg.get("role") in OPENAI_ROLES or "tool_calls" in msg:
            return False
        content = msg.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    kind = block.get("type")
                    if kind in SPECIFIC_BLOCKS or (kind == "image" and "source" in block):
                        specific = True
    return specific


class BadMessage(ValueError):
    """A message that cannot be read; the reader names its record."""

    pass


def convert_messages(
    msgs: list[Any], system: Any, out: list[Message], warn: Warn | None = None
) -> list[int]:
    """Append the messages of a request to ``out``; return, per request message, the index
    in ``out`` of the first Message it produced."""
    starts: list[int] = []
    text = system_text(system)
    if text:
        out.append(SystemMessage(text))
    for i, msg in enumerate(msgs):
        starts.append(len(out))
        if not isinstance(msg, dict):
            raise BadMessage(f"messages[{i}]: a message must be an object")
        out.extend(message_from_anthropic(msg, f"messages[{i}]: ", warn))
    return starts


def _at(where: str, warn: Warn | None) -> Warn | None:
    """``warn`` with the message's place (``messages[3]: ``) in front."""
    if warn is None or not where:
        return warn
    return lambda message: warn(where + message)


def message_from_anthropic(
    msg: dict[str, Any], where: str = "", warn: Warn | None = None
) -> list[Message]:
    role = msg.get("role")
    content = msg.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise BadMessage(f"{where}content must be a string or an array of blocks")
    if role == "assistant":
        return [
            AssistantMessage(
                tuple(blocks_from_anthropic(content, _at(where, warn))),
                usage_from_anthropic(msg.get("usage"), _at(where, warn)),
                str_or_none(msg.get("model")),
            )
        ]
    if role == "user":
        if has_tool_result(content):
            assert isinstance(content, list)
            return tool_results(content)
        return [user_message(blocks_from_anthropic(content, _at(where, warn)))]
    if role == "system":
        return [SystemMessage(system_text(content))]
    raise BadMessage(f"{where}unknown role {role!r} (expected user or assistant)")
