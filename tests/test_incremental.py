"""Work kept between two summaries of a session changes no output: the engine's
formatted history (``transcript.FormattedHistory``) and the offline summarizer's
per-content memo (``providers/offline/memo.py``) against the same work done afresh."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools import transcript
from transcript_tools.config import ReplaySettings, SummaryConfig
from transcript_tools.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.providers.base import SummaryOutcome, SummaryResponse
from transcript_tools.session import SessionEngine
from transcript_tools.transcript import FormattedHistory, formatted_blocks

# prose with what the summarizer looks for: cue words, identifiers, CJK, errors
words = st.sampled_from(
    [
        "we",
        "decided",
        "should",
        "the",
        "cache.",
        "需要",
        "修复。",
        "src/app.py",
        "./run.sh",
        "https://example.org/a?b=1",
        "`make test`",
        "#58",
        "ValueError: bad value",
        "Traceback",
        "v1.2.3",
        "v2.0",
        "deadbeef12",
        "1234567",
        "[Tool: grep]",
        "\n",
        "\n\n",
        "x" * 60,
    ]
)
prose = st.lists(words, max_size=25).map(" ".join)


def message() -> st.SearchStrategy[Message]:
    return st.one_of(
        prose.map(SystemMessage),
        prose.map(UserMessage.text),
        st.builds(
            lambda text, tool, args: AssistantMessage(
                (TextBlock(text),) + ((ToolUseBlock("c1", tool, args),) if tool else ())
            ),
            prose,
            st.sampled_from(["", "bash", "read_file"]),
            st.sampled_from([None, {"command": "pytest -q tests/a.py"}, {"path": "src/b.py"}]),
        ),
        st.builds(ToolResultMessage, st.sampled_from(["c1", "c2"]), prose, st.booleans()),
    )


conversations = st.lists(message(), min_size=1, max_size=40)


short = st.one_of(
    st.text(max_size=50).map(UserMessage.text),
    st.text(max_size=50).map(AssistantMessage.text),
    st.builds(ToolResultMessage, st.just("c1"), st.text(max_size=80), st.booleans()),
    message(),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(short, min_size=1, max_size=40),
    st.lists(st.integers(0, 6), min_size=1, max_size=12),
    st.sampled_from([0, 20, 500]),
    st.sampled_from([0, 1, 30, 100, 250, 30_000]),
)
def test_formatted_history_equals_formatting_afresh(
    messages: list[Message], steps: list[int], max_tool: int, max_chars: int
) -> None:
    history: list[Message] = []
    kept = FormattedHistory(max_tool, max_chars)
    remaining = iter(messages)
    for step in steps:
        history += [m for _, m in zip(range(step), remaining, strict=False)]
        assert kept.formatted_blocks(history) == formatted_blocks(history, max_tool, max_chars)
    # another history (not grown from the remembered one: its messages are other objects)
    other = [dataclasses.replace(m) for m in reversed(messages)]
    assert kept.formatted_blocks(other) == formatted_blocks(other, max_tool, max_chars)
    assert kept.formatted_blocks(other[:1]) == formatted_blocks(other[:1], max_tool, max_chars)


def test_formatted_history_formats_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real = transcript.format_message

    def counting(message: Message, max_tool_result_chars: int = 500) -> str:
        nonlocal calls
        calls += 1
        return real(message, max_tool_result_chars)

    monkeypatch.setattr(transcript, "format_message", counting)
    history: list[Message] = []
    kept = FormattedHistory(500, 1_000)
    for i in range(300):
        history.append(UserMessage.text(f"{i:04d}" + "x" * 90))
        kept.formatted_blocks(history)
    # afresh, each call would format the ~10 blocks that fit: ~3,000 calls
    assert calls == 300


def test_the_summary_request_carries_the_formatted_blocks_of_its_messages() -> None:
    cfg = SummaryConfig(max_context_tokens=400, debounce_turns=1, max_transcript_chars=700)
    engine = SessionEngine("s", ReplaySettings(summary=cfg))
    requests = 0
    for turn in range(30):
        user = UserMessage.text(f"turn {turn}: please fix src/app.py " + "y" * 80)
        reply = AssistantMessage.text("We decided to fix it. " * (1 + turn % 3))
        request = engine.submit_turn([user, reply])
        if request is None:
            continue
        requests += 1
        assert request.messages is not None and request.formatted is not None
        blocks, cut = formatted_blocks(request.messages, cfg.max_tool_result_chars, 700)
        assert (list(request.formatted), request.formatted_cut) == (blocks, cut)
        text = blocks[0] if cut else "\n\n".join(blocks)
        assert text in request.prompt
        response = SummaryResponse(text=f"summary {turn}", model="m")
        engine.complete_summary(SummaryOutcome(response))
    assert requests > 5
