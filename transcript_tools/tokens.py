"""Token estimates for transcripts that record no usage.

A character-class estimate, no tokenizer download: ASCII text costs about one
token per 4 characters; other scripts (CJK above all) cost about one token per
character or two. It is computed with C-level string operations only
(``len``, ``encode``), so estimating costs O(text) with a small constant.
"""

from __future__ import annotations

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

ASCII_CHARS_PER_TOKEN = 4.0
NON_ASCII_TOKENS_PER_CHAR = 0.8
MESSAGE_OVERHEAD_TOKENS = 4  # role markers and separators of a chat template
IMAGE_TOKENS = 1000  # a typical image in a vision model's prompt
TOOL_CALL_OVERHEAD = 8


def estimate_text_tokens(text: str) -> int:
    if not text:
        return 0
    n = len(text)
    if text.isascii():
        return int(n / ASCII_CHARS_PER_TOKEN + 0.999)
    # UTF-8 bytes beyond one per character measure how much is non-ASCII: a
    # CJK character adds 2, so (bytes - chars) / 2 approximates their count.
    extra = len(text.encode("utf-8", "surrogatepass")) - n
    non_ascii = min(n, extra // 2 or 1)
    ascii_part = n - non_ascii
    return int(ascii_part / ASCII_CHARS_PER_TOKEN + non_ascii * NON_ASCII_TOKENS_PER_CHAR + 0.999)


def _block_tokens(block: object) -> int:
    if isinstance(block, TextBlock):
        return estimate_text_tokens(block.text)
    if isinstance(block, ToolUseBlock):
        args = block.input
        text = args if isinstance(args, str) else ("" if args is None else repr(args))
        return TOOL_CALL_OVERHEAD + estimate_text_tokens(block.name) + estimate_text_tokens(text)
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
