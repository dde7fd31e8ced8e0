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
maps every byte to its class, and four ``bytes.count`` -- a few linear passes
with a small constant, no Python loop over characters.
"""

from __future__ import annotations

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
            table[byte] = ord("u")
        elif char.isdigit():
            table[byte] = ord("0")
        elif char.isalpha():
            table[byte] = ord("a")
        elif char.isspace():
            table[byte] = ord(" ")
    return bytes(table)


_CLASSES = _class_table()


def estimate_text_tokens(text: str) -> int:
    if not text:
        return 0
    classes = text.encode("utf-8", "surrogatepass").translate(_CLASSES)
    # Letters, the most frequent class, are the remainder: counting a byte that
    # matches often and at random is ~3x slower (branch misses) than a rare one.
    digits = classes.count(b"0")
    spaces = classes.count(b" ")
    high = classes.count(b"u") if not text.isascii() else 0
    punct = classes.count(b".")
    letters = len(classes) - digits - spaces - high - punct
    return int(
        letters * LETTER_TOKENS
        + digits * DIGIT_TOKENS
        + punct * PUNCT_TOKENS
        + spaces * SPACE_TOKENS
        + high * NON_ASCII_BYTE_TOKENS
        + 0.999
    )


def _arguments_text(args: object) -> str:
    if isinstance(args, str):
        return args
    if args is None:
        return ""
    try:
        return orjson.dumps(args).decode()  # as the model wrote them: JSON
    except TypeError:
        return repr(args)


def _block_tokens(block: object) -> int:
    if isinstance(block, TextBlock):
        return estimate_text_tokens(block.text)
    if isinstance(block, ToolUseBlock):
        return (
            TOOL_CALL_OVERHEAD
            + estimate_text_tokens(block.name)
            + estimate_text_tokens(_arguments_text(block.input))
        )
    if isinstance(block, OtherBlock):
        if block.kind == "image":
            return IMAGE_TOKENS
        if isinstance(block.data, str):
            return estimate_text_tokens(block.data)
        return 1
    return 0


def estimate_message_tokens(message: Message) -> int:
    """Estimated tokens of one message as a model would be sent it."""
    if isinstance(message, SystemMessage):
        return MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(message.text)
    if isinstance(message, ToolResultMessage):
        return MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(message.content)
    if isinstance(message, UserImageMessage):
        return MESSAGE_OVERHEAD_TOKENS + IMAGE_TOKENS
    if isinstance(message, (UserMessage, AssistantMessage)):
        return MESSAGE_OVERHEAD_TOKENS + sum(_block_tokens(b) for b in message.blocks)
    return MESSAGE_OVERHEAD_TOKENS
