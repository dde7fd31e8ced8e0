"""Work kept between two summaries of a session changes no output: the engine's
formatted history (``transcript.FormattedHistory``) and the offline summarizer's
per-content memo (``providers/offline/memo.py``) against the same work done afresh."""

from __future__ import annotations

import asyncio
import dataclasses
from bisect import bisect_right
from itertools import accumulate
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fakes import CallCounter
from tests.support.spies import spy
from transcript_tools.engine import formatting as transcript
from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.formatting import FormattedHistory, formatted_blocks
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.prompt import PromptTemplate
from transcript_tools.engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.tokens import estimate_text_tokens, text_counts
from transcript_tools.providers import offline
from transcript_tools.providers.offline import (
    OfflineProvider,
    idents,
    parse,
    prompt_tokens,
    summarize_blocks,
)
from transcript_tools.providers.offline.facts import PROSE_ROLES, letter_bounds
from transcript_tools.providers.offline.memo import Memo, ScanMemo, unpacked
from transcript_tools.providers.offline.parse import blocks_from_messages

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
    formatted = CallCounter(monkeypatch, transcript, "format_message")
    history: list[Message] = []
    kept = FormattedHistory(500, 1_000)
    for i in range(300):
        history.append(UserMessage.text(f"{i:04d}" + "x" * 90))
        kept.formatted_blocks(history)
    # afresh, each call would format the ~10 blocks that fit: ~3,000 calls
    assert formatted.calls == 300


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


@settings(max_examples=150, deadline=None)
@given(
    conversations,
    st.lists(st.integers(1, 5), min_size=1, max_size=10),
    st.sampled_from([40, 400, 30_000]),
    st.sampled_from([1 << 20, 100]),  # a small memo forgets (evicts) as it goes
    st.sampled_from([200, 1024]),
)
def test_the_memo_changes_no_summary(
    messages: list[Message], steps: list[int], max_chars: int, memo_chars: int, budget: int
) -> None:
    memo = ScanMemo(
        letters=Memo(memo_chars),
        bounds=Memo(memo_chars),
        tool_names=Memo(memo_chars),
        sentences=Memo(memo_chars),
        idents={1: Memo(memo_chars), 2: Memo(memo_chars)},
    )
    end = 0
    for step in steps:  # growing windows, as a session's summaries see them
        end = min(end + step, len(messages))
        blocks, cut = formatted_blocks(messages[:end], 500, max_chars)
        shown = messages[end - len(blocks) : end]
        kept = blocks_from_messages(shown, 500, max_chars, (blocks, cut))
        afresh = blocks_from_messages(shown, 500, max_chars)
        assert kept == afresh
        assert summarize_blocks(kept, budget, memo=memo) == summarize_blocks(afresh, budget)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(short, min_size=1, max_size=40),
    st.lists(st.integers(1, 5), min_size=2, max_size=10),
    st.sampled_from([40, 400, 30_000]),
    st.sampled_from([200, 1024]),
)
def test_a_provider_measuring_from_its_memo_answers_as_a_fresh_one(
    messages: list[Message], steps: list[int], max_chars: int, budget: int
) -> None:
    """A session's growing windows through one provider (from the second request on,
    the shown tokens, letters and prompt counts come from the messages' memo entries:
    ``_measured``) against a fresh provider for each request (none of it kept)."""
    provider = OfflineProvider()
    template = PromptTemplate("t", "Summarize.\n<messages>\n{{ messages }}\n</messages>")
    end = 0
    for step in steps:
        end = min(end + step, len(messages))
        blocks, cut = formatted_blocks(messages[:end], 500, max_chars)
        request = SummaryRequest(
            "s",
            end,
            template.render(blocks[0] if cut else "\n\n".join(blocks)),
            max_tokens=budget,
            messages=tuple(messages[:end]),
            max_tool_result_chars=500,
            max_transcript_chars=max_chars,
            formatted=tuple(blocks),
            formatted_cut=cut,
        )
        kept = asyncio.run(provider.complete_request(request, "extractive-v1"))
        assert kept == asyncio.run(OfflineProvider().complete_request(request, "extractive-v1"))
        # what it summed, against each text counted afresh
        memo = provider._memo
        shown = blocks_from_messages(messages[:end], 500, max_chars, (blocks, cut), memo.blocks)
        measured = offline._measured(shown, memo)
        assert measured is not None
        prose = [c for r, c in zip(shown.roles, shown.contents, strict=True) if r in PROSE_ROLES]
        assert unpacked(measured[0], 4) == (
            offline._shown_tokens(shown, None),
            *unpacked(letter_bounds("".join(prose)), 2),
            sum(map(parse.has_text, prose)),
        )
        assert unpacked(measured[1], 5) == text_counts("".join(blocks))


def test_the_provider_keeps_one_memo_across_requests() -> None:
    provider = OfflineProvider()
    engine = SessionEngine("s", ReplaySettings(summary=SummaryConfig(max_context_tokens=300)))
    texts = []
    for turn in range(20):
        user = UserMessage.text(f"Run `make test` on src/mod{turn}.py, we should fix #1{turn}.")
        request = engine.submit_turn([user, AssistantMessage.text("Fixed: ValueError: x.")])
        if request is None:
            continue
        response = asyncio.run(provider.complete_request(request, "extractive-v1"))
        assert (
            response.text
            == asyncio.run(OfflineProvider().complete_request(request, "extractive-v1")).text
        )
        texts.append(response.text)
        engine.complete_summary(SummaryOutcome(response))
    assert len(texts) > 3 and len(provider._memo.bounds) > 0


def test_a_memo_holds_at_most_its_characters_oldest_out() -> None:
    memo: Memo[str, int] = Memo(10)
    for key in ("aaaa", "bbbb", "cc"):
        memo.put(key, len(key))
    assert [memo.get(k) for k in ("aaaa", "bbbb", "cc")] == [4, 4, 2]
    memo.put("ddd", 3)  # 13 characters: the oldest go, down to 3/4 of the bound
    assert memo.get("aaaa") is None and memo.get("bbbb") is None
    assert memo.get("cc") == 2 and memo.get("ddd") == 3 and len(memo) == 2
    assert memo.lookup("eeeeeeeeeeee", len) == 12  # longer than the bound: not kept
    assert len(memo) == 0
    sized: Memo[int, str] = Memo(10)
    sized.put(1, "x", size=6)
    sized.put(2, "y", size=6)  # sizes as given: the first goes
    assert sized.get(1) is None and sized.get(2) == "y"


@settings(max_examples=200, deadline=None)
@given(st.lists(prose, max_size=12), st.lists(st.booleans(), max_size=12), st.sampled_from([1, 2]))
def test_identifiers_come_in_the_order_of_one_scan_of_the_texts_joined(
    texts: list[str], seen_before: list[bool], weight: int
) -> None:
    memo: Memo[str, idents._Found] = Memo()
    earlier = [t for t, seen in zip(texts, seen_before, strict=False) if seen]
    idents._found_in(earlier, weight, memo)  # some texts were scanned by a request before
    joined = idents._JOIN.join(texts)
    starts = list(accumulate((len(t) + len(idents._JOIN) for t in texts), initial=0))
    expected = [
        (bisect_right(starts, offset) - 1, which, text)
        for offset, _, which, text in idents._scan(joined, weight)
    ]
    assert list(idents._finds(idents._found_in(texts, weight, memo))) == expected


def test_a_block_from_the_memo_is_that_of_the_same_message_and_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memo: Memo[int, Any] = Memo()
    result = ToolResultMessage("c1", "0123456789" * 10)
    calls = [
        AssistantMessage((ToolUseBlock("c1", "bash", {"command": f"make {n}"}),)) for n in "ab"
    ]
    history: list[Message] = [UserMessage.text("go"), *calls, result]
    for max_tool in (500, 20, 500):  # the same messages formatted with another setting
        formatted = formatted_blocks(history, max_tool, 30_000)
        kept = blocks_from_messages(history, max_tool, 30_000, formatted, memo)
        assert kept == blocks_from_messages(history, max_tool, 30_000)
        assert [value for _, _, value in kept.tool_args] == ["make a", "make b"]  # same text
    history.append(UserMessage.text("more"))
    formatted = formatted_blocks(history, 500, 30_000)
    made = spy(monkeypatch, parse, "_block")
    blocks_from_messages(history, 500, 30_000, formatted, memo)
    assert len(made) == 1  # only the new message's block


@settings(max_examples=200, deadline=None)
@given(
    st.lists(short, min_size=1, max_size=12),
    st.sampled_from([20, 200, 30_000]),
    st.sampled_from(
        [
            "{{ messages }}",
            "Summarize.\n<messages>\n{{ messages }}\n</messages>\n{{ previous_summary }}",
            "{{ messages }} and again: {{ messages }}",  # shown twice
            "{{ messages | upper }}",  # not shown as is: the whole prompt is counted
            "User: {{ previous_summary }}\n\n{{ messages }}",  # a look-alike before it
        ]
    ),
    prose,
)
def test_prompt_tokens_equal_the_estimate_of_the_prompt(
    messages: list[Message], max_chars: int, source: str, previous: str
) -> None:
    blocks, cut = formatted_blocks(messages, 500, max_chars)
    text = blocks[0] if cut else "\n\n".join(blocks)
    prompt = PromptTemplate("t", source).render(text, previous_summary=previous)
    memo: Memo[str, Any] = Memo()
    for _ in range(2):  # counts from the memo the second time
        assert prompt_tokens(prompt, blocks, cut, memo) == estimate_text_tokens(prompt)
