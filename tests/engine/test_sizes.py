"""A policy's size model: billed sizes where the log recorded them, the hidden prefix,
estimates for new text; the seed's path never reads it."""

from __future__ import annotations

from transcript_tools.engine.config import Checkpoint, Measure, ReplaySettings, SummaryConfig
from transcript_tools.engine.drive import drive_without_summaries
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.policy_engine import with_policy
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.rules import UnitCounter
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.sizes import SizeModel
from transcript_tools.engine.tokens import estimate_message_tokens


def _messages() -> list[Message]:
    out: list[Message] = [UserMessage.text("fix it")]
    for i in range(4):
        out.append(AssistantMessage((ToolUseBlock(f"t{i}", "read", {}),)))
        out.append(ToolResultMessage(f"t{i}", "short text"))
    return out


def test_keep_budget_reads_billed_sizes_and_new_text_its_estimate() -> None:
    messages = _messages()
    # the log billed each tool result 8,000 tokens (its text stands for far more)
    billed = {id(m): 8_000.0 for m in messages if isinstance(m, ToolResultMessage)}
    model = SizeModel(billed, hidden=15_000)
    policy = preset("cline")  # keep at least 20,000 and the latest user turn
    slot = PolicySlot(policy, 200_000, model, units=UnitCounter(Checkpoint.CALL))
    slot.append_messages(messages)
    assert slot.tokens_between(2, 3) == 8_000  # a result, as billed
    assert slot.tokens_between(1, 2) == estimate_message_tokens(messages[1])  # not recorded
    assert slot.hidden_tokens == 15_000
    plain = PolicySlot(policy, 200_000, units=UnitCounter(Checkpoint.CALL))
    plain.append_messages(messages)
    assert plain.tokens_between(2, 3) == estimate_message_tokens(messages[2])
    assert plain.hidden_tokens == 0


def _engine(policy_name: str | None, sizes: SizeModel | None) -> SessionEngine:
    settings = ReplaySettings(summary=SummaryConfig(max_context_tokens=200_000), dry_run=True)
    settings = with_policy(settings, preset(policy_name) if policy_name else None)
    return SessionEngine("s", settings=settings, sizes=sizes)


def test_current_measure_before_any_recorded_call_adds_the_hidden_prefix() -> None:
    messages = _messages()  # no usage recorded
    engine = _engine("claude-code", SizeModel({}, hidden=15_000))
    conv = Conversation("s", "p", "native", messages)
    drive_without_summaries(conv, engine)
    first = engine.decisions[0]
    size = sum(estimate_message_tokens(m) for m in messages[:3])  # the first call unit
    assert first["watermark"] == size + 15_000


def test_the_seed_never_reads_a_size_model() -> None:
    messages = _messages()
    conv = Conversation("s", "p", "native", messages)
    with_model = _engine(None, SizeModel({id(messages[2]): 99_999.0}, hidden=50_000))
    without = _engine(None, None)
    drive_without_summaries(conv, with_model)
    drive_without_summaries(conv, without)
    assert with_model.decisions == without.decisions


def test_codex_budgets_the_persons_messages_by_their_text() -> None:
    # Codex counts a kept user message's text (approx_token_count: openai/codex
    # codex-rs/core/src/truncate.rs), so a growth-sized 30,000 does not crowd it out
    messages: list[Message] = []
    for i in range(3):
        messages.append(UserMessage.text(f"request {i}"))
        messages.append(AssistantMessage.text("done"))
    billed = {id(m): 30_000.0 for m in messages if isinstance(m, UserMessage)}
    slot = PolicySlot(preset("codex"), 258_400, SizeModel(billed, 0), units=UnitCounter())
    slot.append_messages(messages)
    plan = slot.plan()
    assert [i for i, _ in plan.kept] == [0, 2, 4]  # all three, each a few tokens of text


def _recorded(prompt: int) -> AssistantMessage:
    return AssistantMessage((ToolUseBlock("t", "read", {}),), Usage(prompt, 0))


def test_the_view_floors_the_measure_only_after_a_recorded_compaction() -> None:
    # The log's messages were billed 50,000 each, but the last call's prompt says 60,000:
    # its runtime dropped part of them (Codex drops earlier reasoning). Until a recorded
    # compaction the recorded prompt is the measure; after one, tsum's slot still holds
    # what the runtime compacted away, and the view is the floor.
    first = UserMessage.text("go")
    big = AssistantMessage.text("thinking")
    call = _recorded(60_000)
    billed = {id(first): 50_000.0, id(big): 50_000.0}
    conv = Conversation("s", "p", "native", [first, big, call])
    engine = _engine("claude-code", SizeModel(billed, 0))
    drive_without_summaries(conv, engine)
    # the recorded output (0) is below the reply's own estimate: the estimate is its size
    assert engine.decisions[-1]["watermark"] == 60_000 + estimate_message_tokens(call)
    restarted = _engine("claude-code", SizeModel(billed, 0, frozenset({id(big)})))
    drive_without_summaries(conv, restarted)
    floor = 50_000 + 50_000 + estimate_message_tokens(call)
    assert restarted.decisions[-1]["watermark"] == floor


def test_a_streamed_replys_recorded_output_is_never_below_its_own_estimate() -> None:
    # Claude Code records the usage of a reply's first streamed event: a 2,256-character
    # tool call reads output 2 (a 2.0.1 log; docs/fidelity.md, "Sizes")
    reply = AssistantMessage((ToolUseBlock("t", "Write", {"content": "x = 1\n" * 376}),))
    size = estimate_message_tokens(reply)
    assert size > 100
    recorded = SizeModel({id(reply): 1.0})
    assert recorded.output_of(reply, 2) == size  # the snapshot: the estimate instead
    assert recorded.output_of(reply, size + 500) == size + 500  # a real count stands
    assert SizeModel().output_of(reply, 2) == 2  # nothing recorded: the figure as read


def test_a_policy_measures_a_streamed_reply_by_its_estimate_and_the_seed_by_its_record() -> None:
    first = UserMessage.text("go")
    reply = AssistantMessage(
        (ToolUseBlock("t", "Write", {"content": "x = 1\n" * 376}),), Usage(150_000, 2)
    )
    conv = Conversation("s", "p", "native", [first, reply])
    policy = _engine("claude-code", SizeModel({id(first): 10.0}, 0))
    drive_without_summaries(conv, policy)
    assert policy.decisions[-1]["watermark"] == 150_000 + estimate_message_tokens(reply)
    settings = ReplaySettings(
        summary=SummaryConfig(max_context_tokens=200_000), dry_run=True, measure=Measure.CURRENT
    )
    seed = SessionEngine("s", settings=settings)
    drive_without_summaries(conv, seed)
    assert seed.decisions[-1]["watermark"] == 150_002  # the seed's rule: prompt + output
