"""Rules a careless one-point edit could break with every other test still passing
(the survivors of a mutation run over the spec's rules). Each test below
names the edit it fails under."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.engine import formatting as transcript
from transcript_tools.engine.config import Checkpoint, ReplaySettings, SlotMode, SummaryConfig
from transcript_tools.engine.formatting import (
    format_message,
    format_messages_as_text,
    format_transcript,
)
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.prompt import PromptTemplate
from transcript_tools.engine.requests import SummaryOutcome
from transcript_tools.engine.rules import (
    Decision,
    compaction_turn,
    fixed_cadence,
    focused_window_start,
    last_call_end,
    split_units,
    unit_starts,
)
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.slot import ContextSlot, FocusedConfig
from transcript_tools.engine.tokens import estimate_message_tokens, estimate_text_tokens
from transcript_tools.eval.baseline import score_summaries
from transcript_tools.eval.haystack import Haystack
from transcript_tools.eval.probes import Probe
from transcript_tools.eval.score import COVERAGE_THRESHOLD, ConversationProbes, covers, recall_of
from transcript_tools.providers.base import SummaryResponse
from transcript_tools.sweep.config import SweepConfig
from transcript_tools.sweep.simulate import ConversationSeries, decisions

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def pair(i: int) -> list[Message]:
    return [
        UserMessage.text(f"question {i} about the parser"),
        AssistantMessage((TextBlock(f"answer {i}"),)),
    ]


# ---- Full mode never changes the slot config (seed: summary_not_injected_in_full_mode) ----


def test_full_mode_never_exposes_a_summary_override() -> None:
    """Fails if ``summary_override`` reads the Focused config whatever the mode."""
    slot = ContextSlot(mode=SlotMode.FULL, focused=FocusedConfig(summary_override="stale"))
    slot.append_messages(pair(0))
    assert slot.summary_override is None
    assert slot.load_messages() == slot.messages
    assert slot.snapshot()["summary_override"] is None


def test_set_summary_in_full_mode_changes_no_config_but_saves() -> None:
    """Fails if ``set_summary`` writes the override in Full mode, or if it stops saving
    there (the seed's ``slot.save()`` is outside its Focused-only block)."""
    slot = ContextSlot(mode=SlotMode.FULL)
    slot.append_messages(pair(0) + pair(1))
    slot.set_summary("S1")
    assert slot.focused.summary_override is None and slot.summary_override is None
    assert slot.load_messages() == slot.messages
    assert slot.saves == 1
    slot.set_summary("S2")
    assert slot.saves == 2


def fake(text: str) -> SummaryOutcome:
    return SummaryOutcome(SummaryResponse(text, "fake-model"))


@pytest.mark.parametrize("mode", list(SlotMode))
def test_slot_saves_after_several_summaries_and_the_snapshot_record(mode: SlotMode) -> None:
    """``slot_saves`` counts every successful summary in both modes; the snapshot record's
    fields are the slot's config as persisted."""
    cfg = SummaryConfig(0.01, 1, debounce_turns=1, summary_marker="[S]")
    settings = ReplaySettings(summary=cfg, mode=mode, keep_recent_turns=2)
    engine = SessionEngine("s", settings)
    for i in range(5):
        request = engine.submit_turn(pair(i))
        if request is not None:
            engine.complete_summary(fake(f"summary {i}" if i != 3 else " "))  # 3 fails
    assert [s["status"] for s in engine.summaries] == ["ok", "ok", "failed", "ok"]
    snaps = engine.snapshots
    assert [s["slot_saves"] for s in snaps] == [1, 2, 3]
    assert [s["turn"] for s in snaps] == [1, 2, 4]
    assert [s["history_messages"] for s in snaps] == [4, 6, 10]
    last = snaps[-1]["slot"]
    assert last == {
        "slot_id": "main",
        "mode": mode.value,
        "keep_recent_turns": 2 if mode is SlotMode.FOCUSED else None,
        "summary_override": "summary 4" if mode is SlotMode.FOCUSED else None,
        "marker": "[S]",
    }
    if mode is SlotMode.FOCUSED:  # two kept turns + the summary
        assert snaps[-1]["view_messages"] == 5
    else:
        assert snaps[-1]["view_messages"] == 10


# ---- the empty-history guard (seed: summary_skipped_for_empty_messages) --------------------


def test_empty_history_formats_to_nothing() -> None:
    assert format_transcript([]) == ("", 0)
    assert format_messages_as_text([]) == ""


def test_sweep_fast_path_skips_an_empty_history() -> None:
    """Fails if the fast path drops the empty-history flag of ``rules.skip_reason``."""
    profile = ConversationSeries(
        0,
        "s",
        "p",
        2,
        cost=[50, 50],
        view=[50, 50],
        history_end=[0, 0],
        all_recorded=True,
        compaction_turns=[],
    )
    cfg = SweepConfig(0.5, 10, 0)
    assert decisions(profile, cfg) == [Decision.SKIPPED_EMPTY, Decision.SKIPPED_EMPTY]


# ---- the formatter ---------------------------------------------------------------------------


class LoggedToolResult(ToolResultMessage):
    """A subclass: takes ``format_message``'s general path, not its exact-type fast path."""


def test_tool_error_label_on_the_general_path() -> None:
    error = LoggedToolResult("c1", "boom" * 200, is_error=True)
    ok = LoggedToolResult("c2", "fine")
    assert format_message(error, 5) == "Tool Error [c1]: boomb"
    assert format_message(ok) == "Tool Result [c2]: fine"


def test_the_formatters_tool_result_default_is_the_configs() -> None:
    """Every restated copy of the 500-character default (seed F1) agrees."""
    default = SummaryConfig().max_tool_result_chars
    assert default == 500
    result = ToolResultMessage("c", "x" * 600)
    assert format_message(result) == "Tool Result [c]: " + "x" * 500
    assert format_messages_as_text([result]) == "Tool Result [c]: " + "x" * 500
    for fn in (
        transcript.format_message,
        transcript.format_messages_as_text,
        transcript.format_transcript,
        transcript.formatted_blocks,
        transcript.FormattedHistory,
    ):
        assert inspect.signature(fn).parameters["max_tool_result_chars"].default == default


def test_surrogate_pairs_are_never_split_by_the_cuts() -> None:
    """Strings built with ``surrogatepass`` may hold a pair: the head cut (tool results)
    and the tail cut (30K) keep one code point less rather than half a pair."""
    pair_ = "\ud83d\ude00"  # one emoji as two surrogates
    result = ToolResultMessage("c", "ab" + pair_ + "cd")
    assert format_message(result, 3) == "Tool Result [c]: ab"
    assert format_message(result, 4) == "Tool Result [c]: ab" + pair_
    assert format_message(result, 2) == "Tool Result [c]: ab"
    tail_text = "User: " + "ab" + pair_ + "cd"
    message = UserMessage.text(tail_text[len("User: ") :])
    assert format_messages_as_text([message], max_chars=3) == "cd"
    assert format_messages_as_text([message], max_chars=4) == pair_ + "cd"
    assert format_messages_as_text([message], max_chars=5) == "b" + pair_ + "cd"


@pytest.mark.parametrize("pair_", ["\ud800\udc00", "\udbff\udfff", "\ud83d\ude00"])
def test_surrogate_guards_at_the_ranges_ends(pair_: str) -> None:
    """U+10000 and U+10FFFF (the ranges' first and last surrogates) are pairs too."""
    assert format_message(ToolResultMessage("c", "a" + pair_ + "b"), 2) == "Tool Result [c]: a"
    message = UserMessage.text("a" + pair_ + "b")
    assert format_messages_as_text([message], max_chars=2) == "b"


def test_lone_surrogates_are_not_pairs() -> None:
    """Only a high surrogate followed by a low one is a pair: a lone one is cut as any
    code point (the general path cuts even a text no longer than the limit)."""
    assert format_message(ToolResultMessage("c", "ab\udc00"), 2) == "Tool Result [c]: ab"
    assert format_message(LoggedToolResult("c", "a\ud800"), 2) == "Tool Result [c]: a\ud800"
    message = UserMessage.text("\ud800ab")
    assert format_messages_as_text([message], max_chars=2) == "ab"


def test_bad_arguments_and_blocks_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="max_chars must be >= 0, got -1"):
        format_transcript([], max_chars=-1)
    with pytest.raises(ValueError, match="max_tool_result_chars must be >= 0, got -2"):
        format_transcript([], max_tool_result_chars=-2)
    with pytest.raises(TypeError, match="unknown content block object"):
        format_message(UserMessage((TextBlock("a"), object())))  # type: ignore[arg-type]


def test_a_plain_template_replaces_every_placeholder() -> None:
    template = PromptTemplate("plain", "A:{messages}|B:{messages}")
    assert template.kind == "plain"
    assert template.render("M") == "A:M|B:M"


# ---- the estimator ---------------------------------------------------------------------------


def test_message_overhead_is_eight_tokens() -> None:
    """docs/estimates.md: each message adds the chat template's role markers (8 tokens)."""
    for message in (SystemMessage("hello there"), ToolResultMessage("c", "hello there")):
        assert estimate_message_tokens(message) == 8 + estimate_text_tokens("hello there")


def test_an_estimated_call_counts_the_whole_history_before_it() -> None:
    """Fails if an estimated call's input counts only its own turn."""
    engine = SessionEngine("s")
    first, second = pair(0), pair(1)
    engine.submit_turn(first)
    engine.submit_turn(second)
    before = sum(estimate_message_tokens(m) for m in first + second[:1])
    record = engine.decisions[1]
    assert record["input_tokens"] == before
    assert record["output_tokens"] == estimate_message_tokens(second[1])


# ---- the focused view's size -----------------------------------------------------------------


def test_view_size_over_a_prefix_honours_its_end() -> None:
    slot = ContextSlot(focused=FocusedConfig(keep_recent_turns=1))
    slot.append_messages([SystemMessage("be brief"), *pair(0), *pair(1), *pair(2)])
    sizes = [estimate_message_tokens(m) for m in slot.messages]
    assert slot.view_size(3) == (3, sum(sizes[:3]))  # no summary: the prefix itself
    slot.set_summary("S")
    summary = estimate_message_tokens(SystemMessage(f"{slot.marker} S"))
    # window: the last turn (messages 5-6), the system message before it, the summary
    assert slot.view_size() == (4, sizes[0] + sizes[5] + sizes[6] + summary)
    assert slot.view_size(6) == (3, sizes[0] + sizes[5] + summary)


def test_dropped_tokens_on_a_slot_never_measured() -> None:
    """The prefix sums are extended on demand: asked first, it still counts."""
    slot = ContextSlot()
    messages = [SystemMessage("rules"), *pair(0), *pair(1)]
    slot.append_messages(messages)
    sizes = [estimate_message_tokens(m) for m in messages]
    assert slot.dropped_tokens(1) == 0  # the system message is kept
    fresh = ContextSlot()
    fresh.append_messages(messages)
    assert fresh.tokens_between(0, 1) == sizes[0]
    assert slot.dropped_tokens(2) == sizes[1]
    assert slot.dropped_tokens(3) == sizes[1] + sizes[2]
    assert slot.dropped_tokens(5) == sum(sizes[1:])


def test_split_units_per_call() -> None:
    """With ``--checkpoint call`` a new unit starts at each later model call (and turn)."""
    messages = [
        UserMessage.text("go"),
        AssistantMessage((TextBlock("a"), ToolUseBlock("c1", "grep"))),
        ToolResultMessage("c1", "hit"),
        AssistantMessage((TextBlock("b"),)),
        UserMessage.text("next"),
        AssistantMessage((TextBlock("c"),)),
    ]
    units = split_units(messages, Checkpoint.CALL)
    assert [start for start, _ in units] == unit_starts(messages, Checkpoint.CALL)
    assert [len(unit) for _, unit in units] == [3, 1, 2]  # a call and the results it got
    assert [start for start, _ in split_units(messages)] == [0, 4]


def test_system_tokens_before_the_window_are_all_counted() -> None:
    """Two system messages (and more) before the focused window: each is kept and counted,
    in the view's size and in what the window drops."""
    slot = ContextSlot(focused=FocusedConfig(keep_recent_turns=1))
    messages = [
        SystemMessage("one"),
        *pair(0),
        SystemMessage("two two"),
        *pair(1),
        SystemMessage("three three three"),
        *pair(2),
    ]
    slot.append_messages(messages)
    slot.set_summary("S")
    sizes = [estimate_message_tokens(m) for m in messages]
    view = slot.load_messages()
    assert [m for m in view if isinstance(m, SystemMessage)][:3] == [
        messages[0],
        messages[3],
        messages[6],
    ]
    assert slot.view_size() == (len(view), sum(estimate_message_tokens(m) for m in view))
    start = 7  # the last turn
    system = sizes[0] + sizes[3] + sizes[6]
    assert slot.dropped_tokens(start) == sum(sizes[:start]) - system
    # each message of the view with its history index, the summary's None
    entries = slot.view_entries()
    assert [m for _, m in entries] == view
    assert [i for i, _ in entries] == [0, 3, 6, 7, 8, None]
    assert all(slot.messages[i] is m for i, m in entries if i is not None)
    assert [i for i, _ in slot.view_entries(upto=8)] == [0, 3, 6, 7, None]


def test_set_summary_covered_end_widens_the_window() -> None:
    """A summary made from fewer messages than the history keeps every turn after them."""
    slot = ContextSlot(focused=FocusedConfig(keep_recent_turns=1))
    slot.append_messages(pair(0) + pair(1) + pair(2) + pair(3))
    slot.set_summary("S", covered_end=2)  # made after turn 0
    assert slot.kept_start() == 2
    assert slot.load_messages()[:-1] == slot.messages[2:]
    slot.set_summary("S", covered_end=None)  # made from all of them
    assert slot.kept_start() == 6


# ---- the schedule ----------------------------------------------------------------------------


def test_fixed_cadence_needs_gaps_of_exactly_the_debounce() -> None:
    s, d = Decision.SUMMARIZED, Decision.DEBOUNCED
    assert fixed_cadence([s, d, d, s, d, d, s], 3)
    assert not fixed_cadence([s, s, d, s], 3)  # gaps shorter than the debounce
    assert not fixed_cadence([s, d, d, d, s], 3)  # longer


def test_last_call_end_is_just_after_the_last_model_call() -> None:
    call = AssistantMessage((TextBlock("done"),))
    after = ToolResultMessage("c", "final observation")
    assert last_call_end([UserMessage.text("go"), call, after]) == 2
    assert last_call_end([UserMessage.text("go"), call]) == 2
    assert last_call_end([UserMessage.text("go"), after]) == 2  # no call: measured whole
    later = AssistantMessage((TextBlock("again"),))
    assert last_call_end([UserMessage.text("go"), call, after, later]) == 4


def test_focused_window_keeps_everything_while_the_history_has_keep_turns() -> None:
    """Messages before the first turn's start (none in a real split, but the rule's
    contract) stay while the history holds no more than ``keep_recent_turns`` turns."""
    assert focused_window_start([3, 5], 2, 2, None) == 0
    assert focused_window_start([3, 5, 8], 3, 2, None) == 5


def test_a_compaction_at_message_1_is_reported_at_turn_0() -> None:
    """``message_index`` is the first message after the compaction: the agent compacted
    after the turn that started before it."""
    assert compaction_turn([0, 1, 4], 1) == 0
    assert compaction_turn([0, 1, 4], 4) == 1
    assert compaction_turn([0, 1, 4], 5) == 2
    assert compaction_turn([0, 1, 4], 0) == 0


# ---- eval ------------------------------------------------------------------------------------


def test_truncation_floor_keeps_a_block_that_fills_the_budget_exactly() -> None:
    messages = pair(0)
    probes = ConversationProbes(messages, 500, frozenset())
    budget = probes.block_tokens(0)
    floor = probes.truncation_haystack(0, 2, budget)
    assert floor.head.text  # a whole block: the head every checkpoint keeping it shares
    assert probes.truncation(0, 2, budget) == probes.block(0)


def test_coverage_threshold_is_half_the_key_terms() -> None:
    assert COVERAGE_THRESHOLD == 0.5
    probe = Probe("request", 0, 0, "t", "k", ("parser", "tokens", "cache", "schema"))
    assert covers(Haystack("the parser and the tokens"), probe)  # 2 of 4
    assert not covers(Haystack("the parser only"), probe)  # 1 of 4


def test_replaced_span_of_a_summary() -> None:
    """Summary after turn 4, keep 3: it replaces turns 0-1, the view keeps turns 2-5."""
    messages = [m for i in range(6) for m in pair(i)]
    conv = Conversation("s", "p", "native", messages)
    [record] = score_summaries(conv, [{"turn": 4, "text": "a summary", "status": "ok"}], keep=3)
    assert record["replaced_messages"] == [0, 4]
    assert record["kept_messages"] == [4, 10]


def test_no_artifact_probe_is_no_recall_not_zero() -> None:
    assert recall_of({})["artifact"] is None
    assert recall_of({"request": [1, 2]})["artifact"] is None
    assert recall_of({"request": [1, 2]})["request"] == 0.5


# ---- which turn path ran ---------------------------------------------------------------------


def test_run_json_records_the_path_that_ran(tmp_path: Path) -> None:
    """Both paths give the same schedule by design: only run.json's path_ran shows that
    ``--path stream`` went through submit_turn_stream + finalize_turn."""
    sample = str(SAMPLES / "long_session.jsonl")
    runner = CliRunner()
    for path in ("sync", "stream"):
        result = runner.invoke(
            cli, ["replay", sample, "--path", path, "--out", str(tmp_path / path)]
        )
        assert result.exit_code == 0, result.stderr
    sync = json.loads((tmp_path / "sync" / "run.json").read_text())
    stream = json.loads((tmp_path / "stream" / "run.json").read_text())
    assert "path_ran" not in sync and sync["path"] == "sync"
    assert stream["path_ran"] == "stream" and stream["path"] == "stream"
    for name in ("decisions.jsonl", "summaries.jsonl", "slots.jsonl"):
        assert (tmp_path / "sync" / name).read_bytes() == (tmp_path / "stream" / name).read_bytes()
