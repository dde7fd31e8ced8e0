"""The seed's view measured in a log's billed sizes (engine/sized_view.py): the same view
its slot sends, sized as a policy slot sizes its own; the seed's schedule untouched."""

from __future__ import annotations

from transcript_tools.engine.config import Measure, ReplaySettings, SummaryConfig
from transcript_tools.engine.drive import drive_without_summaries
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.policy_engine import with_policy
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.sized_view import SizedView, measuring
from transcript_tools.engine.sizes import ESTIMATES, SizeModel
from transcript_tools.engine.slot import ContextSlot
from transcript_tools.engine.tokens import estimate_message_tokens


def _log() -> list[Message]:
    out: list[Message] = [SystemMessage("you are an agent")]
    for i in range(4):  # four turns, each a call and its tool result
        out.append(UserMessage.text(f"fix part {i}"))
        out.append(AssistantMessage((ToolUseBlock(f"t{i}", "read", {}),), Usage(2_000 * i, 5)))
        out.append(ToolResultMessage(f"t{i}", "short text"))
    return out


def _billed(messages: list[Message]) -> SizeModel:
    # the log billed each tool result 3,000 tokens (its text stands for far more)
    return SizeModel({id(m): 3_000.0 for m in messages if isinstance(m, ToolResultMessage)})


def _seed(conv: Conversation) -> SessionEngine:
    settings = ReplaySettings(
        summary=SummaryConfig(max_context_tokens=10**9), dry_run=True, measure=Measure.CURRENT
    )
    engine = SessionEngine("s", settings=settings)
    drive_without_summaries(conv, engine)
    return engine


def test_the_seeds_view_is_sized_message_by_message_summary_by_its_estimate() -> None:
    messages = _log()
    model = _billed(messages)
    slot = ContextSlot()
    slot.focused.keep_recent_turns = 1
    slot.append_messages(messages)
    sized = SizedView(slot, model)
    assert sized.view_size() == (len(messages), sum(model.of(m) for m in messages))
    slot.set_summary("what happened so far")
    shown = slot.load_messages()
    assert len(shown) < len(messages) and isinstance(shown[0], SystemMessage)
    assert sized.view_size() == (len(shown), sum(model.of(m) for m in shown))
    assert sized.view_size()[1] != slot.view_size()[1]  # the seed's own: estimates
    assert slot.view_size()[1] == sum(estimate_message_tokens(m) for m in shown)


def test_the_seeds_measure_through_billed_sizes_is_a_policys_on_the_same_view() -> None:
    messages = _log()
    conv = Conversation("s", "p", "native", messages)
    model = _billed(messages)
    seed = _seed(conv)
    own = seed.accounting.current_context_tokens()
    # through the estimates its slot sizes with: the seed's own measure, exactly
    assert seed.accounting.current_context_tokens(through=SizedView(seed.slot, ESTIMATES)) == own
    # through billed sizes: what a policy that never acts measures on the same history
    settings = ReplaySettings(summary=SummaryConfig(max_context_tokens=10**9), dry_run=True)
    policy = SessionEngine("s", settings=with_policy(settings, preset("codex")), sizes=model)
    drive_without_summaries(conv, policy)
    billed = policy.accounting.current_context_tokens()
    assert billed != own
    sized, measure = measuring(seed, model)
    assert isinstance(sized, SizedView) and measure() == billed
    assert sized.view_size() == policy.slot.view_size()
    assert measuring(seed, None) == (seed.slot, seed.accounting.current_context_tokens)
    # a policy slot: its own size model, whatever is given
    assert measuring(policy, ESTIMATES) == (policy.slot, policy.accounting.current_context_tokens)
