"""Token estimates for transcripts that record no usage.

A character-class estimate, no tokenizer download. BPE tokenizers spend about
one token per four letters of a word, about one per digit (DeepSeek, Claude and
Llama-style tokenizers split numbers into digits or short groups), about one
per two punctuation characters (code, JSON, paths), little on whitespace (runs
of spaces merge), and on CJK text between 0.6 (DeepSeek, Qwen) and 1.2
(cl100k, Claude) tokens per character. Every message adds the chat template's
role markers, every tool call its name and JSON wrapper.

The weights were fitted on the recorded prompt tokens of the mini-swe-agent
runs in ``shared/corpus/real/chat-completions`` and cross-checked on the
Claude Code logs; docs/estimates.md has the method and the errors.

The count is C-level work only: one ``encode``, one ``bytes.translate`` that
maps every ASCII byte to its class (and drops the non-ASCII bytes, whose number
is then a length difference), and three ``bytes.count`` -- a few linear passes
with a small constant, no Python loop over characters.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from .messages import (
    AssistantMessage,
    Message,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)

# Tokens per byte of each class (fitted; docs/estimates.md).
LETTER_TOKENS = 0.255  # ASCII letters: ~4 per token
DIGIT_TOKENS = 1.0  # ASCII digits: numbers are split into digits
PUNCT_TOKENS = 0.49  # ASCII punctuation and symbols: ~2 per token
SPACE_TOKENS = 0.1  # whitespace: runs of spaces and newlines merge
NON_ASCII_BYTE_TOKENS = 0.27  # UTF-8 bytes >= 0x80: a CJK character (3 bytes) ~0.8 tokens
MESSAGE_OVERHEAD_TOKENS = 8  # role markers and separators of a chat template
TOOL_CALL_OVERHEAD = 32  # a tool call's name, id and JSON wrapper in the template
IMAGE_TOKENS = 1000  # a typical image in a vision model's prompt


def _class_table() -> bytes:
    table = bytearray(b"." * 256)  # punctuation and symbols
    for byte in range(256):
        char = chr(byte)
        if byte >= 0x80:
            table[byte] = ord("u")  # never looked up: non-ASCII bytes are deleted first
        elif char.isdigit():
            table[byte] = ord("0")
        elif char.isalpha():
            table[byte] = ord("a")
        elif char.isspace():
            table[byte] = ord(" ")
    return bytes(table)


_CLASSES = _class_table()
_NON_ASCII = bytes(range(0x80, 0x100))


def estimate_text_tokens(text: str) -> int:
    """Estimated tokens of ``text``: its UTF-8 bytes counted by character class."""
    return _utf8_tokens(text.encode("utf-8", "surrogatepass")) if text else 0


# The counts of each class, in ``tokens_from_counts``' order: letters, digits,
# punctuation, whitespace, non-ASCII bytes. The counts of a concatenation are the sums
# of its parts' counts (so a text's estimate can be made from its parts').
Counts = tuple[int, int, int, int, int]


def text_counts(text: str) -> Counts:
    """The class counts of ``text``'s UTF-8 bytes (``estimate_text_tokens``)."""
    return _utf8_counts(text.encode("utf-8", "surrogatepass")) if text else (0, 0, 0, 0, 0)


def tokens_from_counts(letters: int, digits: int, punct: int, spaces: int, high: int) -> int:
    """The estimate of a text with these class counts."""
    return int(
        letters * LETTER_TOKENS
        + digits * DIGIT_TOKENS
        + punct * PUNCT_TOKENS
        + spaces * SPACE_TOKENS
        + high * NON_ASCII_BYTE_TOKENS
        + 0.999
    )


def _utf8_tokens(raw: bytes) -> int:
    """``estimate_text_tokens`` of the text whose UTF-8 encoding is ``raw``."""
    return tokens_from_counts(*_utf8_counts(raw)) if raw else 0


def _utf8_counts(raw: bytes) -> Counts:
    # The translate drops the non-ASCII bytes in the same pass: their count is the
    # length difference. Letters, the most frequent class, are the remainder:
    # counting a byte that matches often and at random is ~3x slower (branch misses).
    classes = raw.translate(_CLASSES, _NON_ASCII)
    digits = classes.count(b"0")
    spaces = classes.count(b" ")
    punct = classes.count(b".")
    letters = len(classes) - digits - spaces - punct
    return letters, digits, punct, spaces, len(raw) - len(classes)


def _arguments_tokens(args: object) -> int:
    """Tokens of a tool call's arguments as the model wrote them: a string as is,
    anything else as its JSON (counted on orjson's UTF-8 bytes, no decode and
    re-encode), ``repr`` if it is not JSON-serialisable."""
    if isinstance(args, str):
        return estimate_text_tokens(args)
    if args is None:
        return 0
    try:
        raw = orjson.dumps(args)
    except TypeError:
        return estimate_text_tokens(repr(args))
    return _utf8_tokens(raw)


def _block_tokens(block: object) -> int:
    if isinstance(block, TextBlock):
        return estimate_text_tokens(block.text)
    if isinstance(block, ToolUseBlock):
        return (
            TOOL_CALL_OVERHEAD + estimate_text_tokens(block.name) + _arguments_tokens(block.input)
        )
    if isinstance(block, OtherBlock):
        if block.kind == "image":
            return IMAGE_TOKENS
        if isinstance(block.data, str):
            return estimate_text_tokens(block.data)
        return 1
    return 0


def estimate_block_tokens(block: object) -> int:
    """Estimated tokens of one content block (text, tool call, image, thinking, ...)."""
    return _block_tokens(block)


def assumed_summary_tokens(marker: str, summary_tokens: int) -> int:
    """Estimated tokens of the summary message ``{marker} {summary}`` when no summary text
    is at hand, the summary assumed ``summary_tokens`` long (by default the call's
    ``max_tokens``): the sweep's fast path and a dry run under ``--measure current``."""
    return MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(marker) + summary_tokens


# Each message's estimate by its identity, while a caller keeps them (``estimates_kept``):
# every configuration of a grid, the profile and the size model of one conversation size
# the same history messages, and a message is frozen (engine/messages.py), so each is
# estimated once. The message is held, so no other object takes its id while it is here
# (at most MESSAGE_ESTIMATES, as engine/validity.py holds its message facts); all are let
# go when the last caller's block ends. Outside one nothing is kept: holding every message
# a streamed run reads costs its collector more than estimating each once saves.
_MESSAGE_ESTIMATES: dict[int, tuple[Message, int]] = {}
MESSAGE_ESTIMATES = 1 << 14
_keepers = [0]  # the blocks open, in every thread
_KEEPERS_LOCK = threading.Lock()


@contextmanager
def estimates_kept() -> Iterator[None]:
    """Inside the block each message's estimate is kept by its identity (a sweep: one
    conversation under every configuration); let go when the last such block ends."""
    with _KEEPERS_LOCK:
        _keepers[0] += 1
    try:
        yield
    finally:
        with _KEEPERS_LOCK:
            _keepers[0] -= 1
            if not _keepers[0]:
                _MESSAGE_ESTIMATES.clear()


def estimate_message_tokens(message: Message) -> int:
    """Estimated tokens of one message as a model would be sent it."""
    if not _keepers[0]:
        return _message_tokens(message)
    known = _MESSAGE_ESTIMATES.get(id(message))
    if known is not None and known[0] is message:
        return known[1]
    tokens = _message_tokens(message)
    if len(_MESSAGE_ESTIMATES) >= MESSAGE_ESTIMATES:
        _MESSAGE_ESTIMATES.clear()
    _MESSAGE_ESTIMATES[id(message)] = (message, tokens)
    return tokens


def _message_tokens(message: Message) -> int:
    """``estimate_message_tokens``, computed."""
    # Hot path (every message of a transcript without usage): exact-type checks for
    # the common shapes, no generator; subclasses take the isinstance chain below.
    cls = type(message)
    fast: Any = message  # the exact type is checked by hand, not narrowed
    if cls is ToolResultMessage:
        return MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(fast.content)
    if cls is AssistantMessage or cls is UserMessage:
        total = MESSAGE_OVERHEAD_TOKENS
        for block in fast.blocks:
            if type(block) is TextBlock:
                text = block.text
                if text:
                    total += estimate_text_tokens(text)
            else:
                total += _block_tokens(block)
        return total
    if isinstance(message, SystemMessage):
        return MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(message.text)
    if isinstance(message, ToolResultMessage):
        return MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(message.content)
    if isinstance(message, UserImageMessage):
        return MESSAGE_OVERHEAD_TOKENS + IMAGE_TOKENS
    if isinstance(message, (UserMessage, AssistantMessage)):
        return MESSAGE_OVERHEAD_TOKENS + sum(_block_tokens(b) for b in message.blocks)
    return MESSAGE_OVERHEAD_TOKENS  # type: ignore[unreachable]  # (a Message subclass)


# ---- recorded usage ------------------------------------------------------------------------

# ---- character counts for the offline summarizer's language guess ----------------
# Same idea as the estimate: C-level passes over the encoded text, no regex scan.

# What counts as CJK: kana, Han (with extension A), Hangul syllables, compatibility
# ideographs. All in the BMP.
CJK_RANGES = (
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
)
_ASCII_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def conversation_tokens(messages: Iterable[Message]) -> int:
    """The estimated size of the conversation messages alone: every message but the
    system ones (a policy's ``conversation`` measure, engine/policy.py ``Trigger``)."""
    return sum(estimate_message_tokens(m) for m in messages if not isinstance(m, SystemMessage))


def ascii_letter_count(text: str) -> int:
    """The number of ASCII letters: what deleting them removes from the ASCII bytes."""
    ascii_bytes = text.encode("ascii", "ignore")
    return len(ascii_bytes) - len(ascii_bytes.translate(None, _ASCII_LETTERS))


def _cjk_tables() -> tuple[bytes, bytes]:
    """Per-byte tables over UTF-16 code units, from ``CJK_RANGES``.

    High byte: 0x80 when its whole 256-code-point block is CJK, a bit of its own
    (1, 2, 4, ...) when only part of the block is, 0 otherwise. Low byte: the bits of
    the partial blocks in which that code point is CJK. A code unit is then CJK iff
    its high byte is 0x80, or its high byte's bit is set in its low byte's.
    """
    hi, lo = bytearray(256), bytearray(256)
    bit = 1
    for block in range(256):
        first, last = block << 8, block << 8 | 0xFF
        spans = [
            (max(a, first) & 0xFF, min(b, last) & 0xFF)
            for a, b in CJK_RANGES
            if a <= last and b >= first
        ]
        if not spans:
            continue
        if sum(end - start + 1 for start, end in spans) == 256:
            hi[block] = 0x80
            continue
        assert bit < 0x80, "more partial blocks than bits"
        hi[block] = bit
        for start, end in spans:
            for low in range(start, end + 1):
                lo[low] |= bit
        bit <<= 1
    return bytes(hi), bytes(lo)


_CJK_HI, _CJK_LO = _cjk_tables()


def cjk_count(text: str) -> int:
    """The number of code points in ``CJK_RANGES``, with C-level passes only.

    Over UTF-16 code units (all ranges are in the BMP; astral characters become
    surrogates, which no range holds): the high bytes classify most code units by
    themselves, and for the few blocks the ranges cut through, the low bytes decide,
    through one AND of two big integers (a bitwise AND of byte strings, in C).
    """
    if text.isascii():
        return 0
    units = text.encode("utf-16-le", "surrogatepass")
    hi = units[1::2].translate(_CJK_HI)
    count = hi.count(0x80)
    if hi.translate(None, b"\x00\x80"):  # some code unit in a partial block
        lo = units[0::2].translate(_CJK_LO)
        count += (int.from_bytes(hi, "little") & int.from_bytes(lo, "little")).bit_count()
    return count
