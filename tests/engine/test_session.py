"""The seed's twelve tests (Step 16.5), against the engine with a scripted fake provider."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fakes import FakeProvider, drive, turn
from transcript_tools.engine.config import Measure, ReplaySettings, SlotMode, SummaryConfig
from transcript_tools.engine.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.session import SessionEngine
from transcript_tools.errors import ConfigError, ProviderError, TsumError


def engine(mode: SlotMode = SlotMode.FOCUSED, **cfg: object) -> SessionEngine:
    return SessionEngine("s1", ReplaySettings(summary=SummaryConfig(**cfg), mode=mode))


def decisions(e: SessionEngine) -> list[str]:
    return [d["decision"] for d in e.decisions]


# 1 summary_config_defaults
def test_summary_config_defaults() -> None:
    cfg = SummaryConfig()
    assert cfg.trigger_token_ratio == 0.75
    assert cfg.max_context_tokens == 32_000
    assert cfg.debounce_turns == 3
    assert cfg.summary_model is None
    assert cfg.max_tool_result_chars == 500
    assert "{{ messages }}" in cfg.summary_prompt and "<messages>" in cfg.summary_prompt
    assert cfg.max_transcript_chars == 30_000
    assert cfg.summary_marker == "[上下文摘要]"
    assert cfg.threshold == 24_000


@pytest.mark.parametrize(
    "field,value",
    [
        ("trigger_token_ratio", 0.0),
        ("trigger_token_ratio", 1.5),
        ("max_context_tokens", 0),
        ("debounce_turns", -1),
        ("max_tool_result_chars", -1),
    ],
)
def test_summary_config_validation(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=field):
        SummaryConfig(**{field: value})


# 2 summary_not_generated_below_threshold
def test_summary_not_generated_below_threshold() -> None:
    e, p = engine(), FakeProvider()
    drive(e, [turn(f"msg {i}", usage=Usage(10, 5)) for i in range(10)], p)
    assert p.prompts == []
    assert set(decisions(e)) == {"below_threshold"}
    assert e.get_conversation_summary() is None


# 3 summary_generated_above_threshold
def test_summary_generated_above_threshold() -> None:
    e, p = engine(max_context_tokens=20, trigger_token_ratio=0.5), FakeProvider(["the summary"])
    drive(e, [turn(f"msg {i}") for i in range(4)], p)
    # 15 tokens per turn crosses 10 at once; the seed's last_summary_turn=0 start means turn 3 first
    assert decisions(e) == ["debounced", "debounced", "debounced", "summarized"]
    assert len(p.prompts) == 1 and "msg 3" in p.prompts[0]
    assert e.summaries[0]["text"] == "the summary"


# 4 summary_debounce_works
def test_summary_debounce_works() -> None:
    e, p = engine(max_context_tokens=20, trigger_token_ratio=0.5), FakeProvider()
    drive(e, [turn(f"msg {i}") for i in range(10)], p)
    fired = [d["turn"] for d in e.decisions if d["decision"] == "summarized"]
    assert fired == [3, 6, 9]
    assert decisions(e)[4:6] == ["debounced", "debounced"]


# 5 summary_injected_into_focused
def test_summary_injected_into_focused() -> None:
    e, p = engine(max_context_tokens=20, trigger_token_ratio=0.5), FakeProvider(["S1"])
    drive(e, [turn(f"msg {i}") for i in range(5)], p)
    view = e.load_messages()
    assert view[-1] == SystemMessage("[上下文摘要] S1")
    assert e.slot.summary_override == "S1" and e.slot.saves == 1
    # keep_recent_turns=3: turns 2,3,4 kept (two messages each), then the summary
    assert len(view) == 7


# 6 summary_written_to_session_memory
def test_summary_written_to_session_memory() -> None:
    e, p = engine(max_context_tokens=20, trigger_token_ratio=0.5), FakeProvider(["first", "second"])
    drive(e, [turn(f"msg {i}") for i in range(7)], p)
    assert e.memory.get("conversation_summary") == "second"
    assert e.get_conversation_summary() == "second"


# 7 summary_not_injected_in_full_mode
def test_summary_not_injected_in_full_mode() -> None:
    e, p = (
        engine(SlotMode.FULL, max_context_tokens=20, trigger_token_ratio=0.5),
        FakeProvider(["S"]),
    )
    turns = [turn(f"msg {i}") for i in range(4)]
    drive(e, turns, p)
    assert e.slot.summary_override is None
    assert e.load_messages() == [m for t in turns for m in t]
    assert e.get_conversation_summary() == "S"  # F5 still written in every mode


# 8 summary_failure_does_not_block
def test_summary_failure_does_not_block() -> None:
    e = engine(max_context_tokens=20, trigger_token_ratio=0.5)
    p = FakeProvider([ProviderError("HTTP 500"), "recovered"])
    drive(e, [turn(f"msg {i}") for i in range(6)], p)
    assert decisions(e) == [
        "debounced",
        "debounced",
        "debounced",
        "failed",
        "summarized",
        "debounced",
    ]
    assert e.decisions[3]["error"] == "HTTP 500"
    assert e.summaries[0]["status"] == "failed" and e.summaries[0]["text"] is None
    assert e.get_conversation_summary() == "recovered"
    assert e.turn_index == 6  # every turn went through


def test_empty_summary_changes_nothing() -> None:
    e = engine(max_context_tokens=20, trigger_token_ratio=0.5)
    drive(e, [turn(f"msg {i}") for i in range(4)], FakeProvider(["   "]))
    assert decisions(e)[-1] == "failed"
    assert e.slot.summary_override is None and e.last_summary_turn == 0


# 9 summary_stream_path
def test_summary_stream_path() -> None:
    e, p = engine(max_context_tokens=20, trigger_token_ratio=0.5), FakeProvider()
    drive(e, [turn(f"msg {i}") for i in range(7)], p, path="stream")
    fired = [d["turn"] for d in e.decisions if d["decision"] == "summarized"]
    assert fired == [3, 6]  # not one turn early
    assert e.last_summary_turn == 6 and e.turn_index == 7


def test_stream_path_requires_order() -> None:
    e = engine()
    with pytest.raises(TsumError):
        e.finalize_turn()


# 10 summary_format_messages
def test_summary_format_messages() -> None:
    from transcript_tools.engine.formatting import format_messages_as_text

    msgs = [
        SystemMessage("你是一个翻译助手"),
        UserMessage.text("把这段英文翻译成中文"),
        AssistantMessage((TextBlock("请提供英文文本"), ToolUseBlock("c1", "translate", {"x": 1}))),
        ToolResultMessage("c1", "这是中文翻译"),
    ]
    text = format_messages_as_text(msgs, 500)
    assert text == (
        "System: 你是一个翻译助手\n\nUser: 把这段英文翻译成中文\n\n"
        "Assistant: 请提供英文文本 [Tool: translate]\n\nTool Result [c1]: 这是中文翻译"
    )


# 11 summary_skipped_for_empty_messages
def test_summary_skipped_for_empty_messages() -> None:
    cfg = SummaryConfig(max_context_tokens=1, trigger_token_ratio=1.0, debounce_turns=0)
    e = SessionEngine("s1", ReplaySettings(summary=cfg, measure=Measure.CURRENT))
    p = FakeProvider()
    drive(e, [[]], p)
    assert p.prompts == []


# 12 summary_not_generated_if_max_context_unreachable
def test_summary_not_generated_if_max_context_unreachable() -> None:
    e, p = engine(max_context_tokens=10**9), FakeProvider()
    drive(e, [turn(f"msg {i}", usage=Usage(50_000, 5_000)) for i in range(30)], p)
    assert p.prompts == [] and set(decisions(e)) == {"below_threshold"}


def test_no_summary_config_is_zero_behaviour_change() -> None:
    e, p = SessionEngine("s", ReplaySettings(summary=None)), FakeProvider()
    turns = [turn(f"msg {i}", usage=Usage(10**6, 10)) for i in range(20)]
    drive(e, turns, p)
    assert p.prompts == [] and set(decisions(e)) == {"disabled"}
    assert e.load_messages() == [m for t in turns for m in t]


def test_estimated_usage_when_none_recorded() -> None:
    e, p = engine(), FakeProvider()
    drive(e, [turn("hello " * 40, "world " * 40, usage=None) for _ in range(3)], p)
    assert {d["tokens"] for d in e.decisions} == {"estimated"}
    costs = [d["cost_so_far"] for d in e.decisions]
    assert costs[0] > 0 and costs[0] < costs[1] < costs[2]
    # each call sees the whole view so far: the increments grow
    assert costs[2] - costs[1] > costs[1] - costs[0]


# ---- property: both paths give identical schedules --------------------------------

turn_strategy = st.lists(
    st.tuples(st.integers(0, 400), st.integers(0, 200), st.booleans()), min_size=0, max_size=40
)


@settings(max_examples=150, deadline=None)
@given(
    turns=turn_strategy,
    ratio=st.floats(0.05, 1.0),
    window=st.integers(50, 3000),
    debounce=st.integers(0, 6),
    fail_every=st.integers(0, 4),
    mode=st.sampled_from(list(SlotMode)),
    measure=st.sampled_from(list(Measure)),
)
def test_sync_and_stream_paths_agree(
    turns, ratio, window, debounce, fail_every, mode, measure
) -> None:
    def build() -> SessionEngine:
        cfg = SummaryConfig(
            trigger_token_ratio=ratio, max_context_tokens=window, debounce_turns=debounce
        )
        return SessionEngine("p", ReplaySettings(summary=cfg, mode=mode, measure=measure))

    def script() -> FakeProvider:
        replies = [
            ProviderError("boom") if fail_every and i % fail_every == 0 else f"sum {i}"
            for i in range(60)
        ]
        return FakeProvider(replies)

    messages = [
        turn(f"u{i}", "a" * (n_in // 3 + 1), Usage(n_in, n_out) if recorded else None)
        for i, (n_in, n_out, recorded) in enumerate(turns)
    ]
    sync_engine, stream_engine = build(), build()
    drive(sync_engine, messages, script(), "sync")
    drive(stream_engine, messages, script(), "stream")
    assert sync_engine.decisions == stream_engine.decisions
    assert sync_engine.summaries == stream_engine.summaries
    assert sync_engine.load_messages() == stream_engine.load_messages()
    fired = [d["turn"] for d in sync_engine.decisions if d["decision"] == "summarized"]
    assert all(b - a >= debounce for a, b in zip(fired, fired[1:], strict=False))
    if fired:
        assert fired[0] >= debounce
