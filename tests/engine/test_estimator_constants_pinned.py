"""The token estimator's rates per character class and its fixed sizes (docs/estimates.md),
pinned against one-point edits (a single-point mutation run, docs/testing.md, found these
unpinned). The estimate is int(sum of count x rate + 0.999); each expected value below is
that sum done by hand.
"""

from __future__ import annotations

from transcript_tools.engine.messages import (
    OtherBlock,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)
from transcript_tools.engine.tokens import (
    ascii_letter_count,
    assumed_summary_tokens,
    cjk_count,
    estimate_block_tokens,
    estimate_message_tokens,
    estimate_text_tokens,
    text_counts,
)


def test_a_digit_costs_a_token_and_the_classes_add_up() -> None:
    assert estimate_text_tokens("2026") == 4  # int(4 x 1.0 + 0.999)
    assert estimate_text_tokens(" " * 10) == 1  # int(10 x 0.1 + 0.999) = int(1.999)
    assert estimate_text_tokens("a1") == 2  # int(0.255 + 1.0 + 0.999) = int(2.254)
    assert estimate_text_tokens("a1.\n日") == 3  # int(0.255 + 1 + 0.49 + 0.1 + 3 x 0.27 + 0.999)


def test_punctuation_costs_049_tokens_a_byte() -> None:
    assert estimate_text_tokens("!" * 10) == 5  # int(10 x 0.49 + 0.999) = int(5.899)


def test_a_non_ascii_byte_costs_027_tokens() -> None:
    assert estimate_text_tokens("日本語") == 3  # 9 UTF-8 bytes: int(9 x 0.27 + 0.999) = 3


def test_every_byte_from_0x80_on_is_counted_as_non_ascii() -> None:
    """ "Ѐ" is D0 80 in UTF-8: two non-ASCII bytes, the lowest one included (fails when the
    deleted range starts at 0x81: 0x80 would count as a letter)."""
    assert text_counts("Ѐ") == (0, 0, 0, 0, 2)
    assert text_counts("") == (0, 0, 0, 0, 0)
    assert text_counts("a1. ") == (1, 1, 1, 1, 0)


def test_a_tool_call_costs_32_tokens_besides_its_name_and_arguments() -> None:
    block = ToolUseBlock("c1", "bash", None)  # no arguments
    assert estimate_block_tokens(block) == 32 + estimate_text_tokens("bash")
    assert estimate_text_tokens("bash") == 2  # int(4 x 0.255 + 0.999) = int(2.019)


def test_an_image_costs_1000_tokens() -> None:
    assert estimate_block_tokens(OtherBlock("image")) == 1000


def test_cjk_ranges_count_from_their_first_to_their_last_code_point() -> None:
    """Each range of CJK_RANGES (kana 3040-30FF, Han extension A 3400-4DBF, Han
    4E00-9FFF, Hangul AC00-D7AF, compatibility F900-FAFF) counts its two ends and not
    the code points just outside (fails when any bound moves by one)."""
    ranges = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF))
    for first, last in (*ranges, (0xF900, 0xFAFF)):
        assert cjk_count(chr(first) + chr(last)) == 2, hex(first)
        assert cjk_count(chr(first - 1) + chr(last + 1)) == 0, hex(first)
    assert cjk_count("日本語 and Hangul 한") == 4
    assert cjk_count("plain ascii") == 0


def test_ascii_letters_are_counted_alone() -> None:
    assert ascii_letter_count("ab1 日c!") == 3


def test_the_size_of_a_summary_not_yet_written_and_of_an_image_message() -> None:
    """8 (message overhead) + the marker's estimate + the assumed summary tokens; an
    image message is 8 + 1,000."""
    assert assumed_summary_tokens("[S]", 1024) == 8 + 2 + 1024  # "[S]": int(3 x 0.49 + 0.999)
    assert estimate_message_tokens(UserImageMessage()) == 1008


class _QuotedResult(ToolResultMessage):
    __slots__ = ()


class _QuotedUser(UserMessage):
    __slots__ = ()


def test_a_message_subclass_is_estimated_as_its_base() -> None:
    """8 + the content's estimate, through the isinstance chain the exact-type fast paths
    leave to subclasses; a block of no known kind is 0 and a payload-less other block 1."""
    hello = estimate_text_tokens("hello")
    assert estimate_message_tokens(_QuotedResult("c", "hello")) == 8 + hello
    assert estimate_message_tokens(_QuotedUser((TextBlock("hello"),))) == 8 + hello
    assert estimate_block_tokens(object()) == 0
    assert estimate_block_tokens(OtherBlock("thinking")) == 1
