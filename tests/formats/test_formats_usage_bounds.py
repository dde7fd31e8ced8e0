"""Usage that cannot be true is a warning and ignored, like a non-number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.corpus import FIXTURES, read
from transcript_tools.engine.messages import AssistantMessage, Usage
from transcript_tools.formats.source import MAX_TOKENS_PER_CALL, count_field


@pytest.mark.parametrize(
    "value,expected",
    [
        (0, 0),
        (MAX_TOKENS_PER_CALL, MAX_TOKENS_PER_CALL),
        (MAX_TOKENS_PER_CALL + 1, 0),
        (-1, 0),
        (10**30, 0),
        (1e30, 0),
        (-2.5, 0),
        ("-7", 0),
        ("12", 12),
    ],
)
def test_count_field_bounds(value: object, expected: int) -> None:
    heard: list[str] = []
    assert count_field(value, "usage.input_tokens", heard.append) == expected
    assert len(heard) == (0 if type(value) is int and expected == value else 1)


def test_impossible_claude_code_usage_is_ignored_with_its_line() -> None:
    path = FIXTURES / "malformed_claude_code_impossible_usage.jsonl"
    warnings: list[str] = []
    (conv,) = read(path, warn=warnings.append)
    assert warnings == [
        f"warning: {path}:2: usage.input_tokens is -5000000, which cannot be true (negative);"
        " ignored",
        f"warning: {path}:4: usage.output_tokens is 1e+30, which cannot be true (more than"
        " 100,000,000 in one call); ignored",
    ]
    usages = [m.usage for m in conv.messages if isinstance(m, AssistantMessage)]
    assert usages == [
        Usage(0 + 500 + 7000, 25, 7000, 500),
        Usage(3 + 80 + 7600, 0, 7600, 80),
        Usage(3 + 40 + 7700, 6, 7700, 40),
    ]


def test_impossible_chat_completions_usage_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "hello",
            "usage": {"prompt_tokens": -40, "completion_tokens": 3},
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    warnings: list[str] = []
    (conv,) = read(path, warn=warnings.append)
    assert conv.messages[1].usage == Usage(0, 3)  # type: ignore[union-attr]
    assert warnings == [
        f"warning: {path}:2: usage.prompt_tokens is -40, which cannot be true (negative); ignored"
    ]
