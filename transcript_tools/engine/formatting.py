"""``format_messages_as_text``: the conversation as the text that fills ``{messages}``.

Rules (docs/spec.md, "format_messages_as_text"; seed "消息格式化"), pinned by the golden
snapshots in ``tests/engine/__snapshots__/test_transcript/``:

- one block per message, ``Role: text``, blocks separated by one blank line;
- ``System:`` / ``User:`` / ``Assistant:``; the parts of a message (text blocks,
  ``[Tool: {name}]`` for a tool call, ``[{kind}]`` for any other block) joined by
  one space; a user image message is ``User: [image]``;
- ``Tool Result [{id}]: {content}`` / ``Tool Error [{id}]: {content}``, the content
  cut to its first ``max_tool_result_chars`` code points (Rust ``chars().take(n)``);
- the whole text at most ``max_chars`` code points: whole messages dropped from the
  front, newest kept; a newest message longer than that keeps its last
  ``max_chars`` code points.

Cost is O(the returned text), not O(history): messages are formatted newest first
and formatting stops at the first one that no longer fits (docs/spec.md, "Linear
cost": no per-turn re-formatting of the whole history).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any

from .messages import (
    AssistantMessage,
    Block,
    Message,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)
from .rules import suffix_cut
from .seed_defaults import DEFAULT_MAX_TOOL_RESULT_CHARS, DEFAULT_MAX_TRANSCRIPT_CHARS

MESSAGE_SEPARATOR = "\n\n"  # seed: "每条消息一行，空行分隔"
_ROLE_PREFIX = {AssistantMessage: "Assistant: ", UserMessage: "User: "}


def _is_high_surrogate(ch: str) -> bool:
    return "\ud800" <= ch <= "\udbff"


def _is_low_surrogate(ch: str) -> bool:
    return "\udc00" <= ch <= "\udfff"


def _head(text: str, n: int) -> str:
    """The first ``n`` code points of ``text``, never ending between a surrogate pair."""
    if len(text) <= n:
        return text
    head = text[:n]
    # A str decoded normally never holds surrogates; one built with
    # "surrogatepass" could, and must not lose half of a pair.
    if head and _is_high_surrogate(head[-1]) and _is_low_surrogate(text[n]):
        head = head[:-1]
    return head


def _tail(text: str, n: int) -> str:
    """The last ``n`` code points of ``text``, never starting between a surrogate pair."""
    if len(text) <= n:
        return text
    if n <= 0:
        return ""
    tail = text[-n:]
    if _is_low_surrogate(tail[0]) and _is_high_surrogate(text[-n - 1]):
        tail = tail[1:]
    return tail


def _block_part(block: Block) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ToolUseBlock):
        return f"[Tool: {block.name}]"  # never the arguments (seed)
    if isinstance(block, OtherBlock):
        return f"[{block.kind}]"
    raise TypeError(f"unknown content block {type(block).__name__}")


def _join_blocks(blocks: Sequence[Block]) -> str:
    # Empty text blocks are skipped so that e.g. ``content: ""`` next to a tool
    # call does not leave a double space; whitespace-only text is kept verbatim.
    return " ".join(_block_part(b) for b in blocks if not (isinstance(b, TextBlock) and not b.text))


def format_message(
    message: Message, max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS
) -> str:
    """One message as one block of text, without the separator.

    - ``System: {text}``; ``User: {parts}``; ``Assistant: {parts}``, where the parts
      are text blocks verbatim, ``[Tool: {name}]`` per tool call and ``[{kind}]``
      per other block, joined by one space (empty text blocks skipped).
    - A message with no parts keeps its role and the space after the colon:
      ``Assistant: ``. So does a tool result whose content is empty or cut to
      nothing (``max_tool_result_chars=0``): ``Tool Result [{id}]: ``. Every block
      therefore starts with the same prefix whatever its content.
    - ``UserImageMessage`` is ``User: [image]``.
    - ``Tool Result [{id}]: {content}`` or ``Tool Error [{id}]: {content}``, the
      content cut to its first ``max_tool_result_chars`` code points. Grapheme
      clusters (ZWJ emoji, flags, combining marks) may be split, exactly as Rust's
      ``chars().take(n)`` splits them; a surrogate pair (only present in strings
      built with ``surrogatepass``) never is: the cut then keeps one code point less.
    """
    # Fast paths by exact type for the common shapes (a tool result; a user or
    # assistant message holding one text block); same text as the general code below.
    cls = type(message)
    fast: Any = message  # the exact type is checked by hand, not narrowed
    if cls is ToolResultMessage and max_tool_result_chars >= 0:
        content = fast.content
        if len(content) > max_tool_result_chars:
            content = _head(content, max_tool_result_chars)
        return (
            f"{'Tool Error' if fast.is_error else 'Tool Result'} [{fast.tool_call_id}]: {content}"
        )
    if cls in _ROLE_PREFIX:
        blocks = fast.blocks
        if len(blocks) == 1 and type(blocks[0]) is TextBlock and max_tool_result_chars >= 0:
            return _ROLE_PREFIX[cls] + blocks[0].text
    if max_tool_result_chars < 0:
        raise ValueError(f"max_tool_result_chars must be >= 0, got {max_tool_result_chars}")
    if isinstance(message, ToolResultMessage):
        label = "Tool Error" if message.is_error else "Tool Result"
        content = _head(message.content, max_tool_result_chars)
        return f"{label} [{message.tool_call_id}]: {content}"
    if isinstance(message, AssistantMessage):
        return "Assistant: " + _join_blocks(message.blocks)
    if isinstance(message, UserMessage):
        return "User: " + _join_blocks(message.blocks)
    if isinstance(message, SystemMessage):
        return "System: " + message.text
    if isinstance(message, UserImageMessage):
        return "User: [image]"
    raise TypeError(f"unknown message {type(message).__name__}")


def format_messages_as_text(
    messages: Sequence[Message],
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
    max_chars: int = DEFAULT_MAX_TRANSCRIPT_CHARS,
) -> str:
    """The conversation as text: one block per message, blocks separated by ``"\\n\\n"``.

    See :func:`format_message` for one block. The result is at most ``max_chars``
    code points (separators included): whole messages are dropped from the front
    and the newest kept; if the newest message alone is longer than ``max_chars``,
    the result is its last ``max_chars`` code points (one less if that would start
    inside a surrogate pair). An older message that does not fit is dropped even if
    a still older, shorter one would fit: only a suffix of the history is kept.

    Messages are formatted newest first and the loop stops at the first message
    that does not fit, so the cost is O(returned text + one message), whatever the
    length of the history. An empty list, or ``max_chars=0``, gives ``""``.
    """
    return format_transcript(messages, max_tool_result_chars, max_chars)[0]


def format_transcript(
    messages: Sequence[Message],
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
    max_chars: int = DEFAULT_MAX_TRANSCRIPT_CHARS,
) -> tuple[str, int]:
    """``format_messages_as_text``, and how many of the newest messages the text holds."""
    if max_chars < 0:
        raise ValueError(f"max_chars must be >= 0, got {max_chars}")
    if max_tool_result_chars < 0:
        raise ValueError(f"max_tool_result_chars must be >= 0, got {max_tool_result_chars}")
    if not messages or max_chars == 0:
        return "", 0
    blocks, cut = formatted_blocks(messages, max_tool_result_chars, max_chars)
    return (blocks[0] if cut else MESSAGE_SEPARATOR.join(blocks)), len(blocks)


def formatted_blocks(
    messages: Sequence[Message],
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
    max_chars: int = DEFAULT_MAX_TRANSCRIPT_CHARS,
) -> tuple[list[str], bool]:
    """The blocks ``format_messages_as_text`` joins, oldest first: those of the newest
    messages that fit ``max_chars`` (``rules.suffix_cut``); and whether the only block
    is the newest message cut to its last ``max_chars`` code points."""
    return FormattedHistory(max_tool_result_chars, max_chars).formatted_blocks(messages)


class FormattedHistory:
    """``formatted_blocks`` of a history that only grows (a session's), each message
    formatted once.

    The blocks of the messages the latest cut kept are remembered: the cut's start only
    moves forward as messages are appended (a longer history's kept suffix never
    starts earlier), so the next call formats only the messages appended since, newest
    first, and stops at the first one that does not fit, as ``formatted_blocks`` does.
    A history that did not grow from the remembered one (shorter, or another last
    message) is formatted afresh. Memory: the kept blocks, at most ``max_chars``
    characters (or the newest message when it alone is longer)."""

    __slots__ = ("max_tool_result_chars", "max_chars", "_blocks", "_end", "_last")

    def __init__(
        self,
        max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
        max_chars: int = DEFAULT_MAX_TRANSCRIPT_CHARS,
    ) -> None:
        self.max_tool_result_chars = max_tool_result_chars
        self.max_chars = max_chars
        self._blocks: list[str] = []  # of messages[_end - len(_blocks) : _end], oldest first
        self._end = 0
        self._last: Message | None = None  # messages[_end - 1] when the blocks were made

    def formatted_blocks(self, messages: Sequence[Message]) -> tuple[list[str], bool]:
        """``formatted_blocks(messages, max_tool_result_chars, max_chars)``."""
        max_chars, max_tool = self.max_chars, self.max_tool_result_chars
        end = len(messages)
        if self._end > end or (self._end and messages[self._end - 1] is not self._last):
            self._blocks, self._end = [], 0  # not the history remembered: start again
        known = self._blocks
        fresh: list[str] = []  # of the messages appended since, newest first
        if max_chars <= 0:
            return [], False

        def fresh_lengths() -> Iterator[int]:
            for index in range(end - 1, self._end - 1, -1):
                block = format_message(messages[index], max_tool)
                fresh.append(block)
                yield len(block)

        lengths = chain(fresh_lengths(), map(len, reversed(known)))
        kept, _ = suffix_cut(lengths, max_chars, len(MESSAGE_SEPARATOR))
        if kept <= len(fresh):
            blocks = fresh[:kept]
            blocks.reverse()
        else:
            blocks = known[len(known) - (kept - len(fresh)) :]
            blocks += reversed(fresh)
        self._blocks, self._end = blocks, end
        self._last = messages[end - 1] if end else None
        if kept == 1 and len(blocks[0]) > max_chars:  # the newest alone is too long: its tail
            return [_tail(blocks[0], max_chars)], True
        return blocks[:], False
