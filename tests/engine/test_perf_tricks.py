"""The performance tricks kept (benchmarks/PROFILE.md) give what their plain forms give."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine.formatting import _join_blocks, format_message
from transcript_tools.engine.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
    _fast_init,
)
from transcript_tools.engine.tokens import (
    CJK_RANGES,
    MESSAGE_OVERHEAD_TOKENS,
    _block_tokens,
    cjk_count,
    estimate_message_tokens,
    estimate_text_tokens,
)

_CJK = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in CJK_RANGES) + "]")


@settings(max_examples=300)
@given(st.text(alphabet=st.characters(max_codepoint=0x10FFFF, exclude_categories=("Cs",))))
def test_cjk_tables_count_what_a_regex_counts(text: str) -> None:
    assert cjk_count(text) == len(_CJK.findall(text))


def test_cjk_tables_at_every_range_edge() -> None:
    for low, high in CJK_RANGES:
        for cp in (low - 1, low, low + 1, high - 1, high, high + 1):
            assert cjk_count(chr(cp)) == len(_CJK.findall(chr(cp)))


def test_fast_init_behaves_like_a_frozen_dataclass() -> None:
    usage = Usage(3, 4)
    assert usage == Usage(input_tokens=3, output_tokens=4, cache_read_tokens=0)
    assert hash(usage) == hash(Usage(3, 4, 0, 0)) and repr(usage).startswith("Usage(input_tokens=3")
    assert [f.name for f in dataclasses.fields(Usage)] == [
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
        "cache_write_1h_tokens",  # of cache_creation_tokens, the 1-hour writes (docs/cost.md)
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        usage.input_tokens = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        TextBlock()  # type: ignore[call-arg]
    assert ToolUseBlock("c1", "grep").input is None


class _PostInit:
    x: int

    def __post_init__(self) -> None:
        pass


class _WithInitVar:
    x: int
    y: dataclasses.InitVar[int] = 0


class _NotInInit:
    x: int = dataclasses.field(default=0, init=False)


class _DefaultFactory:
    x: list[int] = dataclasses.field(default_factory=list)


@pytest.mark.parametrize(
    "cls, error",
    [
        (_PostInit, "defines __post_init__"),
        (_WithInitVar, "is not .*InitVar"),
        (_NotInInit, "init=False"),
        (_DefaultFactory, "default_factory"),
    ],
    ids=["post_init", "InitVar", "init-False", "default_factory"],
)
def test_fast_init_refuses_a_class_whose_init_must_do_more(cls: type, error: str) -> None:
    # _fast_init's __init__ only stores the fields: a class needing more fails at import.
    with pytest.raises(TypeError, match=error):
        _fast_init(dataclasses.dataclass(frozen=True, slots=True)(cls))


def test_fast_init_refuses_a_class_that_is_not_frozen_and_slotted() -> None:
    for options in ({"slots": True}, {"frozen": True}):

        @dataclasses.dataclass(**options)  # type: ignore[call-overload]
        class C:
            x: int

        with pytest.raises(TypeError, match="frozen, slotted"):
            _fast_init(C)


texts = st.text(max_size=60)


@settings(max_examples=200)
@given(texts, texts, st.booleans(), st.integers(0, 80))
def test_fast_paths_equal_the_general_code(a: str, b: str, error: bool, limit: int) -> None:
    result = ToolResultMessage("c1", a, error)
    user = UserMessage((TextBlock(a),))
    assistant = AssistantMessage((TextBlock(b),), Usage(1, 1))
    label = "Tool Error" if error else "Tool Result"
    assert format_message(result, limit) == f"{label} [c1]: {a[:limit]}"
    assert format_message(user, limit) == "User: " + _join_blocks(user.blocks)
    assert format_message(assistant, limit) == "Assistant: " + _join_blocks(assistant.blocks)
    assert estimate_message_tokens(result) == MESSAGE_OVERHEAD_TOKENS + estimate_text_tokens(a)
    for message in (user, assistant):
        general = MESSAGE_OVERHEAD_TOKENS + sum(_block_tokens(x) for x in message.blocks)
        assert estimate_message_tokens(message) == general
