"""The policy engine's rules, each pinned by a test that fails when a one-point edit
breaks it (a single-point mutation run, docs/testing.md, found these unpinned).

Each rule is checked through the smallest public function that carries it
(``policy_engine.policy_skip``, ``policy_slot.PolicySlot.prepass``, the pure functions
of ``compaction.py``, ``policy.Trigger``), on a few messages whose sizes are computed
by hand: the compaction functions take a ``tokens`` function, and here a message's
size is its character count (:func:`chars`). The test names say which rule each one
protects; the edit it fails under is in its docstring.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from transcript_tools.engine import config
from transcript_tools.engine.compaction import (
    NO_CAP,
    CompactionPlan,
    cleared,
    formatter_cap,
    is_tool_output,
    keep_plan,
    placed_summary,
    prepass_selection,
    prepass_should_run,
    summarizer_messages,
    tool_names,
    without_inputs,
)
from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.drive import drive_conversation, session_window
from transcript_tools.engine.messages import (
    INJECTED,
    OBSERVATION,
    SYNTHETIC_MODEL,
    AssistantMessage,
    Conversation,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserImageMessage,
    UserMessage,
)
from transcript_tools.engine.policy import (
    Keep,
    Placement,
    Policy,
    PrePass,
    SummarizerInput,
    SummarySpec,
    Trigger,
)
from transcript_tools.engine.policy_engine import (
    policy_skip,
    seed_shaped,
    summarized_span,
    with_policy,
)
from transcript_tools.engine.policy_lines import keep_budget_tokens, threshold_tokens
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.prompt import (
    PromptTemplate,
    builtin_template_names,
    builtin_template_source,
    load_template,
    template_from_config,
)
from transcript_tools.engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
from transcript_tools.engine.rules import Decision
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.tokens import estimate_message_tokens
from transcript_tools.engine.validity import APIS, check_all, check_view
from transcript_tools.errors import ConfigError, TemplateError

CLEAR = "clear-tool-results"


def chars(message: Message) -> int:
    """A message's size in these tests: the characters of its text (tool output included)."""
    if isinstance(message, ToolResultMessage):
        return len(message.content)
    if isinstance(message, SystemMessage):
        return len(message.text)
    if isinstance(message, (UserMessage, AssistantMessage)):
        return sum(len(b.text) for b in message.blocks if isinstance(b, TextBlock))
    return 0


def person(text: str) -> UserMessage:
    return UserMessage.text(text)  # a person's message: it starts a turn


def output(call: str, size: int) -> ToolResultMessage:
    return ToolResultMessage(call, "x" * size)


# ---- policy_engine ---------------------------------------------------------------------


def test_every_form_counts_units_since_the_last_summary_as_a_difference() -> None:
    """``every = 3``: units since the last summary are ``turn - last_summary_turn``
    (fails when that is ``turn + last_summary_turn``)."""
    policy = Policy(name="every-3", trigger=Trigger(threshold="every", every=3, debounce=0))

    def skip(turn: int, last: int) -> Decision | None:
        return policy_skip(policy.trigger, turn, last, 0.0, None, 0, False)

    assert skip(5, 3) is Decision.BELOW_THRESHOLD  # 5 - 3 = 2 units: not yet
    assert skip(6, 3) is None  # 3 units: fires
    assert skip(2, 0) is Decision.BELOW_THRESHOLD  # 2 - 0 = 2


# ---- policy_slot: the pre-pass's record and the view after it --------------------------


def test_prepass_record_view_tokens_after_is_before_minus_freed() -> None:
    """A pre-pass that clears one tool result and its call's input: the record's
    ``view_tokens_after`` is ``view_tokens_before - freed_tokens``, ``freed_tokens`` the
    result's tokens less the placeholder's plus the input's, and the slot's view shrinks
    by exactly that (fails on ``view_tokens + freed``, on a freed count with the wrong
    sign, and on a saving counted with the wrong sign in the view's size).

    Sizes by ``estimate_message_tokens``: 8 per message, a digit is 1 token, a tool
    call 32 more, the one-letter tool name 1 (docs/estimates.md)."""
    task = person("1")  # 8 + 1 = 9
    call = AssistantMessage((ToolUseBlock("c1", "b", "12345"),))  # 8 + 32 + 1 + 5 = 46
    result = ToolResultMessage("c1", "0" * 100)  # 8 + 100 = 108
    follow_up = person("2")  # 9
    assert [estimate_message_tokens(m) for m in (task, call, result, follow_up)] == [9, 46, 108, 9]
    policy = Policy(name="clear", prepass=PrePass(kind=CLEAR, placeholder="0", clear_inputs=True))
    slot = PolicySlot(policy, 100_000)
    slot.append_messages([task, call, result, follow_up])
    assert slot.view_size() == (4, 172)

    record = slot.prepass(172)

    # the result becomes "0": 108 - 9 = 99 freed; the call loses its "12345": 5 more
    assert record is not None
    assert record["cleared"] == [2]
    assert record["freed_tokens"] == 104
    assert record["view_tokens_before"] == 172
    assert record["view_tokens_after"] == 172 - 104 == 68
    assert slot.view_size() == (4, 68)
    assert sum(estimate_message_tokens(m) for m in slot.load_messages()) == 68


# ---- compaction: the pre-pass ----------------------------------------------------------


def test_prepass_protects_outputs_of_the_last_protect_turns_turns() -> None:
    """``protect_turns = 1``: a tool output of the newest person turn stays even with no
    token protection; an older one is cleared (fails when the two protections are joined
    by ``and``: then the newest is cleared too)."""
    region = [(0, person("a")), (1, output("c1", 100)), (2, person("b")), (3, output("c2", 100))]
    prepass = PrePass(kind=CLEAR, protect_turns=1, placeholder="p")
    chosen, freed = prepass_selection(region, prepass, {}, chars, ())
    assert chosen == [1]
    assert freed == 100 - 1  # the placeholder "p" is 1 character


def test_prepass_protects_outputs_within_the_newest_protect_tokens() -> None:
    """``protect_tokens = 50``: the newest output (the first 50 tokens of output walked)
    stays, the older one is cleared, with no turn protection."""
    region = [(0, person("a")), (1, output("c1", 100)), (2, output("c2", 100))]
    prepass = PrePass(kind=CLEAR, protect_tokens=50, placeholder="p")
    assert prepass_selection(region, prepass, {}, chars, ()) == ([1], 99)


def test_prepass_ratio_trigger_runs_at_exactly_window_times_ratio() -> None:
    """``trigger_ratio = 0.5`` of a 1,000-token window: the pre-pass runs from a view of
    500 tokens on, not at 499 (fails when the comparison is ``<=``)."""
    prepass = PrePass(kind=CLEAR, trigger_ratio=0.5)
    assert prepass_should_run(prepass, 500, 1000, 1) is True
    assert prepass_should_run(prepass, 499, 1000, 1) is False


def test_prepass_tokens_trigger_runs_at_exactly_trigger_tokens() -> None:
    prepass = PrePass(kind=CLEAR, trigger_tokens=500)
    assert prepass_should_run(prepass, 500, 1000, 1) is True
    assert prepass_should_run(prepass, 499, 1000, 1) is False


def test_prepass_needs_more_than_min_results_outputs() -> None:
    prepass = PrePass(kind=CLEAR, min_results=2)
    assert prepass_should_run(prepass, 0, 1000, 3) is True
    assert prepass_should_run(prepass, 0, 1000, 2) is False


# ---- compaction: what is kept verbatim -------------------------------------------------


def test_keep_token_budget_keeps_a_tail_of_exactly_the_budget() -> None:
    """``keep.tokens = 30`` over three 10-token messages: all three fit (10 + 10 + 10 is
    not over 30), a 29-token budget keeps two (fails when the budget check is ``>=``)."""
    region = [(i, person("x" * 10)) for i in range(3)]
    whole = keep_plan(region, Keep(kind="tokens", tokens=30, pairs_intact=False), 0, chars)
    assert [index for index, _ in whole.kept] == [0, 1, 2]
    assert whole.dropped == ()
    short = keep_plan(region, Keep(kind="tokens", tokens=29, pairs_intact=False), 0, chars)
    assert [index for index, _ in short.kept] == [1, 2]
    assert short.dropped == (0,)


def test_keep_fraction_starts_at_a_turn_with_exactly_the_fraction_before_it() -> None:
    """``fraction = 0.5`` over two 10-token turns: the older turn's 10 tokens are exactly
    (1 - 0.5) × 20 before the second, so the second turn is kept (fails when the rule is
    ``>``: nothing is kept)."""
    region = [(0, person("x" * 10)), (1, person("y" * 10))]
    plan = keep_plan(region, Keep(kind="fraction", fraction=0.5), 0, chars)
    assert [index for index, _ in plan.kept] == [1]
    assert plan.dropped == (0,)


# ---- compaction: what the summarizer is given ------------------------------------------


def test_dropped_tail_gives_the_newest_messages_within_tail_tokens() -> None:
    """``dropped-tail`` with ``tail_tokens = 25`` over three dropped 10-token messages:
    the newest two (20 tokens; the third would make 30). Fails when the walk subtracts
    a message's size instead of adding it (then every message fits)."""
    dropped = [person(c * 10) for c in "abc"]
    given = SummarizerInput(kind="dropped-tail", tail_tokens=25)
    assert summarizer_messages(given, [], [], dropped, chars) == dropped[1:]
    exact = SummarizerInput(kind="dropped-tail", tail_tokens=20)
    assert summarizer_messages(exact, [], [], dropped, chars) == dropped[1:]


# ---- policy: the ratio bounds ----------------------------------------------------------


def test_a_ratio_of_exactly_one_is_accepted_and_above_one_rejected() -> None:
    """Ratios are in (0, 1]: 1 is allowed (the whole window), 1.01 and 0 are not (fails
    when the upper bound is ``< 1``)."""
    assert Trigger(ratio=1.0).ratio == 1.0
    assert Keep(kind="tokens", tokens_ratio=1.0).tokens_ratio == 1.0
    with pytest.raises(ConfigError, match=r"trigger\.ratio: must be in \(0, 1\]"):
        Trigger(ratio=1.01)
    with pytest.raises(ConfigError, match=r"trigger\.ratio"):
        Trigger(ratio=0.0)


# ---- validity: the strict endpoint's first message -------------------------------------


def test_strict_names_a_first_message_that_is_not_the_users() -> None:
    """An alternating-roles endpoint: the first non-system message must be the user's,
    said as such; a later break says the roles must alternate (``validity._strict``)."""
    first = check_view([SystemMessage("s"), AssistantMessage.text("a")], "strict")
    assert [(v.rule, v.index, v.text) for v in first] == [
        ("roles-not-alternating", 1, "the conversation must start with a user message")
    ]
    later = check_view(
        [person("u"), AssistantMessage.text("a"), AssistantMessage.text("b")], "strict"
    )
    assert [(v.rule, v.index, v.text) for v in later] == [
        (
            "roles-not-alternating",
            2,
            "assistant message where the user must come: roles must alternate",
        )
    ]


# ---- policy_engine: which policies the seed's own engine path runs ---------------------


def test_seed_shaped_policies_differ_from_the_seed_only_in_its_own_settings() -> None:
    """The seed's path runs a policy that changes only what the seed's settings vary
    (ratio, debounce, kept turns, the summary's max_tokens 0 or 1024); any other
    trigger form, a floor or ceiling, another keep kind or max_tokens does not."""
    assert seed_shaped(Policy()) is True
    assert seed_shaped(Policy(trigger=Trigger(ratio=0.5, debounce=2))) is True
    assert seed_shaped(Policy(keep=Keep(turns=3))) is True
    assert seed_shaped(Policy(summary=SummarySpec(max_tokens=0))) is True
    assert seed_shaped(Policy(trigger=Trigger(floor_tokens=1_000))) is False
    assert seed_shaped(Policy(trigger=Trigger(ceiling_tokens=5_000))) is False
    assert seed_shaped(Policy(trigger=Trigger(threshold="tokens", tokens=5_000))) is False
    assert seed_shaped(Policy(summary=SummarySpec(max_tokens=2_048))) is False
    assert seed_shaped(Policy(keep=Keep(kind="messages", messages=4))) is False
    assert seed_shaped(Policy(summarizer_input=SummarizerInput(max_tool_result_chars=0))) is False
    assert seed_shaped(Policy(summarizer_input=SummarizerInput(max_transcript_chars=0))) is False


def test_no_policy_clears_a_policy_from_the_settings() -> None:
    plain = ReplaySettings(summary=SummaryConfig())
    assert with_policy(plain, None) is plain
    given = replace(plain, policy=Policy(name="x", keep=Keep(kind="messages", messages=2)))
    assert with_policy(given, None).policy is None


def test_a_policys_window_is_the_runs_when_the_run_names_none_or_asks_auto() -> None:
    """``trigger.window = 200,000``: the run's window unless the run named its own (and
    did not ask ``--max-context-tokens auto``)."""
    policy = Policy(name="w", trigger=Trigger(window=200_000, ratio=0.5))
    plain = ReplaySettings(summary=SummaryConfig(max_context_tokens=50_000))

    def window(settings: ReplaySettings, given: bool) -> int:
        summary = with_policy(settings, policy, window_given=given).summary
        assert summary is not None
        return summary.max_context_tokens

    assert window(plain, given=True) == 50_000
    assert window(plain, given=False) == 200_000
    assert window(replace(plain, auto_window=True), given=True) == 200_000


def test_a_policy_keeps_its_turns_and_at_least_one() -> None:
    plain = ReplaySettings(summary=SummaryConfig())
    assert with_policy(plain, Policy(keep=Keep(turns=3))).keep_recent_turns == 3
    messages = Policy(name="m", keep=Keep(kind="messages", messages=2, turns=0))
    assert with_policy(plain, messages).keep_recent_turns == 1


# ---- policy: each part's checks at their boundaries ------------------------------------

ACCEPTED = [
    lambda: Trigger(tokens=0),
    lambda: Trigger(threshold="tokens", tokens=1),
    lambda: Trigger(threshold="reserve", reserve_tokens=1),
    lambda: Trigger(threshold="every", every=1),
    lambda: Trigger(threshold="messages", messages=1),
    lambda: Trigger(floor_tokens=10, ceiling_tokens=10),
    lambda: Trigger(floor_tokens=10, ceiling_tokens=0),  # 0: no ceiling
    lambda: PrePass(trigger_ratio=0),
    lambda: PrePass(trigger_tokens=5),
    lambda: PrePass(placeholder=""),  # no pre-pass: no placeholder needed
    lambda: PrePass(kind=CLEAR, exclude_tools=("skill",)),
    lambda: Keep(turns=1),
    lambda: Keep(kind="messages", messages=1),
    lambda: Keep(kind="tokens", tokens=1),
    lambda: Keep(kind="user-messages", tokens_ratio=0.1),
    lambda: Keep(kind="fraction", fraction=0.5),
    lambda: Keep(
        fraction=1.0
    ),  # a fraction of 1 is a number in range; only kind = fraction needs < 1
    lambda: Keep(floor_tokens=10, ceiling_tokens=10),
    lambda: SummarizerInput(kind="dropped-tail", tail_tokens=1),
    lambda: Placement(role="assistant", lead_in="Here is the summary:"),
    lambda: Placement(role="user", acknowledgement="ok"),
    lambda: SummarySpec(max_tokens=0),
]

REJECTED = [
    (lambda: Trigger(tokens=-1), "trigger.tokens: must be an integer >= 0, got -1"),
    (lambda: Trigger(tokens=True), "trigger.tokens: must be an integer >= 0, got True"),
    (lambda: Trigger(ratio=True), "trigger.ratio: must be a number"),
    (lambda: Trigger(ratio="0.5"), "trigger.ratio: must be a number"),
    (
        lambda: Trigger(threshold="tokens"),
        "trigger.tokens: must be >= 1 with threshold = tokens, got 0",
    ),
    (
        lambda: Trigger(threshold="reserve"),
        "trigger.reserve_tokens: must be >= 1 with threshold = reserve, got 0",
    ),
    (
        lambda: Trigger(threshold="every"),
        "trigger.every: must be >= 1 with threshold = every, got 0",
    ),
    (
        lambda: Trigger(threshold="messages"),
        "trigger.messages: must be >= 1 with threshold = messages, got 0",
    ),
    (
        lambda: Trigger(floor_tokens=10, ceiling_tokens=9),
        "trigger.ceiling_tokens: must be 0 or >= floor_tokens, got 9",
    ),
    (lambda: PrePass(trigger_ratio=1.5), "prepass.trigger_ratio: must be in (0, 1] or 0"),
    (lambda: PrePass(trigger_tokens=5, trigger_ratio=0.5), "prepass.trigger_ratio: set"),
    (lambda: PrePass(min_results=-1), "prepass.min_results"),
    (lambda: PrePass(protect_turns=-1), "prepass.protect_turns"),
    (lambda: PrePass(min_freed_tokens=-1), "prepass.min_freed_tokens"),
    (lambda: PrePass(placeholder=3), "prepass.placeholder: must be a string"),
    (
        lambda: PrePass(kind=CLEAR, placeholder=""),
        "prepass.placeholder: must not be empty (an empty tool result is invalid for most APIs), got ''",
    ),
    (lambda: PrePass(exclude_tools=["skill"]), "prepass.exclude_tools: must be a list"),
    (lambda: PrePass(exclude_tools=("skill", 1)), "prepass.exclude_tools: must be a list"),
    (lambda: PrePass(clear_inputs=1), "prepass.clear_inputs: must be true or false"),
    (lambda: Keep(turns=0), "keep.turns: must be >= 1 with kind = turns, got 0"),
    (lambda: Keep(kind="messages"), "keep.messages: must be >= 1 with kind = messages, got 0"),
    (
        lambda: Keep(kind="tokens"),
        "keep.tokens: or keep.tokens_ratio must be set with kind = tokens, got 0",
    ),
    (lambda: Keep(kind="user-messages"), "keep.tokens: or keep.tokens_ratio must be set"),
    (lambda: Keep(kind="fraction", fraction=1.0), "keep.fraction: must be in (0, 1) with"),
    (lambda: Keep(kind="fraction"), "keep.fraction: must be in (0, 1) with"),
    (
        lambda: Keep(floor_tokens=10, ceiling_tokens=9),
        "keep.ceiling_tokens: must be 0 or >= floor_tokens, got 9",
    ),
    (lambda: Keep(pairs_intact=1), "keep.pairs_intact: must be true or false"),
    (
        lambda: SummarizerInput(kind="dropped-tail"),
        "summarizer_input.tail_tokens: must be >= 1 with kind = dropped-tail, got 0",
    ),
    (lambda: Placement(role="user", lead_in="x"), "placement.lead_in: needs role = assistant"),
    (lambda: Placement(acknowledgement="ok"), "placement.acknowledgement: needs role = user"),
    (
        lambda: SummarySpec(template=" "),
        "summary.template: must name a built-in template or a file, got ''",
    ),
    (lambda: SummarySpec(max_tokens=-1), "summary.max_tokens: must be an integer >= 0"),
    (lambda: Policy(name=" "), "name: must not be empty"),
    (lambda: Policy(description=3), "description: must be a string"),
    (lambda: Policy(trigger=PrePass()), "trigger: must be a Trigger"),
    (
        lambda: Policy(trigger=Trigger(threshold="never")),
        "trigger.threshold: is never and there is no prepass: the policy does nothing, got 'never'",
    ),
]


@pytest.mark.parametrize("make", ACCEPTED)
def test_a_policy_part_at_its_boundary_is_accepted(make: Callable[[], object]) -> None:
    assert make() is not None


@pytest.mark.parametrize(("make", "message"), REJECTED)
def test_a_policy_part_past_its_boundary_is_rejected(
    make: Callable[[], object], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        make()
    assert str(caught.value).startswith(message)


def test_only_a_never_trigger_makes_a_policy_that_never_summarizes() -> None:
    assert Policy().summarizes is True
    masking = Policy(name="mask", trigger=Trigger(threshold="never"), prepass=PrePass(kind=CLEAR))
    assert masking.summarizes is False


def test_threshold_tokens_of_each_form() -> None:
    """ratio: window × ratio within [floor, ceiling]; tokens; reserve: window - reserve,
    not below 0; the counting forms have none."""
    assert threshold_tokens(Trigger(ratio=0.5), 1_000) == 500.0
    assert threshold_tokens(Trigger(ratio=0.5, floor_tokens=600), 1_000) == 600.0
    assert threshold_tokens(Trigger(ratio=0.5, ceiling_tokens=400), 1_000) == 400.0
    assert (
        threshold_tokens(Trigger(ratio=0.5, floor_tokens=400, ceiling_tokens=600), 1_000) == 500.0
    )
    assert threshold_tokens(Trigger(threshold="tokens", tokens=700), 1_000) == 700.0
    assert threshold_tokens(Trigger(threshold="reserve", reserve_tokens=300), 1_000) == 700.0
    assert threshold_tokens(Trigger(threshold="reserve", reserve_tokens=1_200), 1_000) == 0.0
    assert threshold_tokens(Trigger(threshold="every", every=3), 1_000) is None


def test_keep_budget_tokens_of_each_form() -> None:
    """``tokens``; else window × ``tokens_ratio`` (whole tokens) within [floor, ceiling]."""
    assert keep_budget_tokens(Keep(kind="tokens", tokens=500, tokens_ratio=0.5), 1_001) == 500
    assert keep_budget_tokens(Keep(kind="tokens", tokens_ratio=0.25), 1_001) == 250
    assert (
        keep_budget_tokens(Keep(kind="tokens", tokens_ratio=0.25, floor_tokens=300), 1_001) == 300
    )
    assert (
        keep_budget_tokens(Keep(kind="tokens", tokens_ratio=0.25, ceiling_tokens=200), 1_001) == 200
    )
    assert keep_budget_tokens(Keep(), 1_001) is None


# ---- compaction: the small rules, one by one -------------------------------------------


def observation(text: str) -> UserMessage:
    return UserMessage((TextBlock(text),), OBSERVATION)


def call(call_id: str, name: str = "bash", arguments: object = "ls") -> AssistantMessage:
    return AssistantMessage((TextBlock("run"), ToolUseBlock(call_id, name, arguments)), None, "m")


def test_a_policy_cap_of_zero_is_no_cap_for_the_formatter() -> None:
    assert formatter_cap(0) == NO_CAP == 1 << 40
    assert (formatter_cap(1), formatter_cap(5_000)) == (1, 5_000)


def test_tool_outputs_are_tool_results_and_observations() -> None:
    assert is_tool_output(output("c1", 3)) is True
    assert is_tool_output(observation("ls: 3 files")) is True
    assert is_tool_output(person("ls")) is False
    assert is_tool_output(AssistantMessage.text("ls")) is False
    assert tool_names([person("x"), call("c1", "bash"), call("c2", "skill")]) == {
        "c1": "bash",
        "c2": "skill",
    }


def test_a_cleared_output_keeps_its_role_call_and_error_flag() -> None:
    assert cleared(ToolResultMessage("c1", "long", True), "p") == ToolResultMessage("c1", "p", True)
    assert cleared(observation("long"), "p") == observation("p")


def test_clearing_inputs_clears_only_the_named_calls_arguments() -> None:
    message = AssistantMessage(
        (ToolUseBlock("c1", "bash", "ls"), ToolUseBlock("c2", "bash", "pwd")), Usage(1, 2), "m"
    )
    assert without_inputs(message, {"c1"}) == AssistantMessage(
        (ToolUseBlock("c1", "bash", None), ToolUseBlock("c2", "bash", "pwd")), Usage(1, 2), "m"
    )


def test_prepass_needs_a_kind_and_counts_outputs_strictly_above_min_results() -> None:
    assert prepass_should_run(PrePass(), 10**9, 1_000, 10**6) is False  # kind none
    assert prepass_should_run(PrePass(kind=CLEAR), 0, 1_000, 1) is True
    assert prepass_should_run(PrePass(kind=CLEAR), 0, 1_000, 0) is False


def test_prepass_keeps_the_newest_and_counts_them_toward_protect_tokens() -> None:
    """Outputs of 100 characters, oldest first at 1, 2, 3: ``keep_newest = 1`` keeps 3,
    whose 100 tokens fill ``protect_tokens = 100``: 2 and 1 are cleared (99 each, the
    placeholder being 1). With ``protect_tokens = 101`` the 2nd is protected too."""
    region = [
        (0, person("a")),
        (1, output("c1", 100)),
        (2, output("c2", 100)),
        (3, output("c3", 100)),
    ]
    kept_one = PrePass(kind=CLEAR, keep_newest=1, protect_tokens=100, placeholder="p")
    assert prepass_selection(region, kept_one, {}, chars, ()) == ([1, 2], 198)
    more = PrePass(kind=CLEAR, keep_newest=1, protect_tokens=101, placeholder="p")
    assert prepass_selection(region, more, {}, chars, ()) == ([1], 99)
    two = PrePass(kind=CLEAR, keep_newest=2, placeholder="p")
    assert prepass_selection(region, two, {}, chars, ()) == ([1], 99)


def test_prepass_skips_excluded_tools_cleared_outputs_and_small_ones() -> None:
    """c1 is an excluded tool's, c2 was cleared already (it counts toward nothing), c3
    is no longer than the placeholder; only the observation at 4 (100) is cleared."""
    region = [
        (0, person("a")),
        (1, output("c1", 100)),
        (2, output("c2", 100)),
        (3, output("c3", 5)),
        (4, observation("o" * 100)),
        (5, output("c5", 100)),
    ]
    prepass = PrePass(kind=CLEAR, keep_newest=1, exclude_tools=("skill",), placeholder="12345")
    names = {"c1": "skill", "c2": "bash", "c3": "bash", "c5": "bash"}
    assert prepass_selection(region, prepass, names, chars, {2}) == ([4], 95)


def test_prepass_clears_nothing_that_frees_less_than_min_freed_tokens() -> None:
    region = [(0, person("a")), (1, output("c1", 100)), (2, output("c2", 100))]
    exact = PrePass(kind=CLEAR, placeholder="p", min_freed_tokens=198)
    assert prepass_selection(region, exact, {}, chars, ()) == ([1, 2], 198)
    over = PrePass(kind=CLEAR, placeholder="p", min_freed_tokens=199)
    assert prepass_selection(region, over, {}, chars, ()) == ([], 0)


def _kept(plan: object) -> list[int]:
    return [index for index, _ in plan.kept]  # type: ignore[attr-defined]


def test_keep_kinds_none_messages_and_turns() -> None:
    """Region: a turn (0 person, 1 call, 2 result), a turn (3 person, 4 reply)."""
    region = [
        (0, person("a")),
        (1, call("c1")),
        (2, output("c1", 4)),
        (3, person("b")),
        (4, AssistantMessage.text("r")),
    ]
    nothing = keep_plan(region, Keep(kind="none"), 0, chars)
    assert (_kept(nothing), nothing.dropped) == ([], (0, 1, 2, 3, 4))
    assert _kept(keep_plan(region, Keep(kind="messages", messages=2), 0, chars)) == [3, 4]
    assert _kept(keep_plan(region, Keep(kind="messages", messages=9), 0, chars)) == [0, 1, 2, 3, 4]
    assert _kept(keep_plan(region, Keep(turns=1), 0, chars)) == [3, 4]
    assert _kept(keep_plan(region, Keep(turns=2), 0, chars)) == [0, 1, 2, 3, 4]
    assert _kept(keep_plan(region, Keep(turns=5), 0, chars)) == [0, 1, 2, 3, 4]


def test_keep_never_starts_at_a_result_whose_call_it_drops() -> None:
    """The last 3 messages start at the result 2: with ``pairs_intact`` the cut moves on
    to 3; without, the result is kept alone."""
    region = [
        (0, person("a")),
        (1, call("c1")),
        (2, output("c1", 4)),
        (3, person("b")),
        (4, AssistantMessage.text("r")),
    ]
    intact = Keep(kind="messages", messages=3)
    assert _kept(keep_plan(region, intact, 0, chars)) == [3, 4]
    split = Keep(kind="messages", messages=3, pairs_intact=False)
    assert _kept(keep_plan(region, split, 0, chars)) == [2, 3, 4]


def test_keep_user_messages_newest_first_within_the_budget_cutting_the_oldest() -> None:
    """Person messages of 10, 10 and 10 characters, a 25-token budget: the two newest
    whole, the oldest cut in its middle as Codex cuts it (compaction._cut_user_message):
    5 of its 10 characters stay, 2 from the head and 3 from the tail, joined by a note of
    the 10 - 5 = 5 tokens cut; the assistant's and observations go."""
    region = [
        (0, person("0123456789")),
        (1, AssistantMessage.text("reply")),
        (2, person("abcdefghij")),
        (3, observation("seen")),
        (4, person("ABCDEFGHIJ")),
    ]
    plan = keep_plan(region, Keep(kind="user-messages", tokens=25), 0, chars)
    cut = person("01…5 tokens truncated…789")
    assert plan.kept == ((0, cut), (2, person("abcdefghij")), (4, person("ABCDEFGHIJ")))
    assert plan.dropped == (1, 3)
    one_left = keep_plan(region, Keep(kind="user-messages", tokens=21), 0, chars)
    # 1 token left: at least 2 characters stay, the first and the last; 9 tokens cut
    assert one_left.kept[0] == (0, person("0…9 tokens truncated…9"))
    exact = keep_plan(region, Keep(kind="user-messages", tokens=20), 0, chars)
    assert _kept(exact) == [2, 4] and exact.dropped == (0, 1, 3)
    # a message that fits exactly is kept as itself, not as a cut copy (policy_slot
    # replaces a kept message that is not the one it holds)
    assert exact.kept[0][1] is region[2][1]


def test_keep_fraction_starts_at_a_person_turn_never_the_first_message() -> None:
    """Sizes 10, 30 (an observation: not a turn start), 10: the newest 25% of 50 starts
    where at least 37.5 came before, at a person's message: position 2."""
    region = [(0, person("x" * 10)), (1, observation("y" * 30)), (2, person("z" * 10))]
    assert _kept(keep_plan(region, Keep(kind="fraction", fraction=0.25), 0, chars)) == [2]
    assert _kept(keep_plan(region, Keep(kind="fraction", fraction=0.9), 0, chars)) == [2]
    one = [(0, person("x" * 10))]
    assert _kept(keep_plan(one, Keep(kind="fraction", fraction=0.9), 0, chars)) == []


def test_summarizer_input_kinds() -> None:
    history, view, dropped = [person("h")], [person("v")], [person("d")]
    given = {
        kind: summarizer_messages(
            SummarizerInput(kind=kind, tail_tokens=1), history, lambda: view, dropped, chars
        )
        for kind in ("history", "since-last-summary", "dropped", "dropped-tail")
    }
    assert given == {
        "history": history,
        "since-last-summary": view,
        "dropped": dropped,
        "dropped-tail": dropped,
    }


def test_the_summary_is_placed_in_its_role_with_its_marker_lead_in_and_acknowledgement() -> None:
    assert placed_summary(Placement(marker="[S]"), "text") == (SystemMessage("[S] text"),)
    assert placed_summary(Placement(marker=""), "text") == (SystemMessage("text"),)
    assert placed_summary(Placement(role="user", marker="", acknowledgement="ok"), "t") == (
        UserMessage((TextBlock("t"),), INJECTED),
        AssistantMessage((TextBlock("ok"),), None, SYNTHETIC_MODEL),
    )
    assert placed_summary(Placement(role="user", marker=""), "t") == (
        UserMessage((TextBlock("t"),), INJECTED),
    )
    assert placed_summary(Placement(role="assistant", marker="", lead_in="so far:"), "t") == (
        UserMessage((TextBlock("so far:"),), INJECTED),
        AssistantMessage((TextBlock("t"),), None, SYNTHETIC_MODEL),
    )
    assert placed_summary(Placement(role="assistant", marker=""), "t") == (
        AssistantMessage((TextBlock("t"),), None, SYNTHETIC_MODEL),
    )


# ---- validity: each API's rules on small views, every violation listed -----------------


def answer(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(call_id, "out")


def asks(*calls: str) -> AssistantMessage:
    return AssistantMessage(tuple(ToolUseBlock(c, "bash") for c in calls))


def found(view: list[Message], api: str) -> list[tuple[str, int]]:
    return [(v.rule, v.index) for v in check_view(view, api)]


def test_empty_content_where_each_api_refuses_it() -> None:
    """A blank system message is empty; a final empty assistant message (a prefill) is
    allowed by Anthropic only; an image or a call alone is content."""
    assert found([SystemMessage(" "), person("u"), AssistantMessage.text("a")], "anthropic") == [
        ("empty-content", 0)
    ]
    mid = [person("u"), AssistantMessage(()), person("x")]
    assert found(mid, "anthropic") == found(mid, "strict") == [("empty-content", 1)]
    final = [person("u"), asks("t1"), answer("t1"), AssistantMessage(())]
    assert found(final, "anthropic") == []
    assert found(final, "gemini") == found(final, "strict") == [("empty-content", 3)]
    assert (
        found(
            [person("u"), UserImageMessage("image/png", "..."), asks("t1"), answer("t1")],
            "anthropic",
        )
        == []
    )


def test_a_result_after_other_content_of_its_turn_and_an_unanswered_call() -> None:
    view = [person("u"), asks("t1"), answer("t1"), asks("t2"), person("x"), answer("t2")]
    assert found(view, "anthropic") == [("result-not-first", 5)]
    assert found(view, "gemini") == []
    assert found(view, "openai") == [("call-unanswered", 3), ("result-orphan", 5)]
    assert found(view, "strict") == [("call-unanswered", 3), ("result-orphan", 5)]


def test_a_turn_of_two_assistant_messages_must_answer_both_calls() -> None:
    view = [person("u"), asks("t1"), asks("t2"), answer("t1"), AssistantMessage.text("done")]
    assert found(view, "anthropic") == found(view, "gemini") == [("call-unanswered", 2)]


def test_a_result_answers_only_the_turn_right_before_it() -> None:
    view = [person("u"), asks("t1"), answer("t1"), AssistantMessage.text("b"), answer("t1")]
    assert found(view, "anthropic") == [("result-orphan", 4)]


def test_a_system_message_before_a_result_is_not_other_content() -> None:
    view = [person("u"), asks("t1"), SystemMessage("note"), answer("t1")]
    assert found(view, "anthropic") == [("system-not-leading", 2)]


def test_openai_answers_a_call_once_and_names_a_call_never_answered() -> None:
    assert found([person("u"), asks("t1"), answer("t1"), answer("t1")], "openai") == [
        ("result-orphan", 3)
    ]
    (never,) = check_view([person("u"), asks("t1", "t2"), answer("t2")], "openai")
    assert str(never) == "openai: message 1: call-unanswered: tool_call t1 never answered"


def test_an_unknown_api_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown API 'bedrock'"):
        check_view([], "bedrock")


# ---- policy_slot: the view a summary leaves, and what the view was before a pre-pass ---


def _summarized(placement: Placement, **keep: object) -> tuple[PolicySlot, list[Message]]:
    """A slot over [system, person 1, reply, person 2, reply], summarized keeping the last
    turn, then two messages appended; the history is returned too."""
    history: list[Message] = [
        SystemMessage("s"),
        person("1"),
        AssistantMessage.text("2"),
        person("3"),
        AssistantMessage.text("4"),
    ]
    policy = Policy(name="p", keep=Keep(turns=1, **keep), placement=placement)  # type: ignore[arg-type]
    slot = PolicySlot(policy, 100_000)
    slot.append_messages(history)
    slot.set_summary("sum")
    more: list[Message] = [person("5"), AssistantMessage.text("6")]
    slot.append_messages(more)
    return slot, history + more


@pytest.mark.parametrize(
    ("position", "order"),
    [
        ("tail", [0, 3, 4, 5, 6, "summary"]),
        ("front", [0, "summary", 3, 4, 5, 6]),
        ("end", [0, 3, 4, "summary", 5, 6]),
    ],
)
def test_the_view_after_a_summary_in_each_position(position: str, order: list[object]) -> None:
    """The head (the system message), the summary where its position says, the kept last
    turn (3, 4) and what came after (5, 6); sizes: 8 + 1 per digit, "sum" 8 + 1."""
    slot, history = _summarized(Placement(marker="", position=position))
    summary = SystemMessage("sum")
    expected = [summary if i == "summary" else history[i] for i in order]  # type: ignore[index]
    assert slot.load_messages() == expected
    assert slot.view_size() == (6, sum(estimate_message_tokens(m) for m in expected))
    assert slot.view_size()[1] == 6 * 9
    # the view before the messages appended after the summary
    assert slot.load_messages(upto=5) == [m for m in expected if m not in history[5:]]
    assert slot.view_size(upto=5) == (4, 4 * 9)


def test_keep_first_user_keeps_the_task_in_the_head() -> None:
    slot, history = _summarized(Placement(marker=""), first_user=True)
    assert slot.load_messages() == [*history[:2], *history[3:], SystemMessage("sum")]
    assert slot.snapshot() == {
        "slot_id": "main",
        "policy": "p",
        "placement": "system@tail",
        "summary_override": "sum",
        "marker": "",
        "kept_messages": 2,
        "cleared_messages": 0,
    }


def test_a_dry_run_summary_counts_as_its_assumed_tokens() -> None:
    """``assumed_tokens`` replaces the summary's own size; with a lead-in, the summary is
    the second message placed (the lead-in keeps its size: 8 + 2 letters' 1)."""
    policy = Policy(name="p", placement=Placement(role="assistant", marker="", lead_in="so"))
    slot = PolicySlot(policy, 100_000)
    slot.append_messages([person("1"), AssistantMessage.text("2")])
    slot.set_summary("", assumed_tokens=500)
    lead_in = estimate_message_tokens(UserMessage((TextBlock("so"),), INJECTED))
    assert lead_in == 9
    assert slot.view_size() == (4, 9 + 9 + 9 + 500)


def test_the_view_before_a_pre_pass_shows_what_it_later_cleared() -> None:
    """The pre-pass of the earlier test ran at 4 messages: the view over the first
    three still shows the result and the call's input (9 + 46 + 108)."""
    task = person("1")
    call_message = AssistantMessage((ToolUseBlock("c1", "b", "12345"),))
    result = ToolResultMessage("c1", "0" * 100)
    policy = Policy(name="clear", prepass=PrePass(kind=CLEAR, placeholder="0", clear_inputs=True))
    slot = PolicySlot(policy, 100_000)
    slot.append_messages([task, call_message, result, person("2")])
    assert slot.prepass(172) is not None
    assert slot.view_size(upto=3) == (3, 163)
    assert slot.load_messages(upto=3) == [task, call_message, result]
    assert slot.view_size(upto=4) == (4, 68)
    assert slot.snapshot()["cleared_messages"] == 2  # the result and the call


def test_a_summary_record_names_the_dropped_messages_as_ranges() -> None:
    plan = CompactionPlan(
        kept=((9, person("k")),),
        dropped=tuple((i, person("d")) for i in (0, 1, 2, 5, 7, 8)),
        summarizer_input=(person("a"), person("b")),
        history_end=10,
        view_tokens_before=1_234,
    )
    assert summarized_span(plan) == {
        "messages_summarized": 2,
        "messages_dropped": 6,
        "dropped": [[0, 3], [5, 6], [7, 9]],
        "messages_kept": 1,
        "view_tokens_before": 1_234,
    }


def test_a_policys_default_parts_are_the_seeds_and_do_nothing_more() -> None:
    """Every part's defaults are the seed's (docs/spec.md, F1: ratio 0.75, debounce 3;
    the focused view's 3 turns, its marker; the formatter's 30,000 and 500 characters;
    the summary call's 1,024 tokens, the "zh" template), and the parts the seed has not
    (a pre-pass, a floor, a fraction) are off."""
    assert Trigger() == Trigger(
        measure="cumulative",
        threshold="ratio",
        ratio=0.75,
        tokens=0,
        reserve_tokens=0,
        floor_tokens=0,
        ceiling_tokens=0,
        every=0,
        messages=0,
        debounce=3,
        unit="turn",
        window=0,
    )
    assert PrePass() == PrePass(
        kind="none",
        trigger_tokens=0,
        trigger_ratio=0.0,
        min_results=0,
        keep_newest=0,
        protect_tokens=0,
        protect_turns=0,
        min_freed_tokens=0,
        placeholder="[tool result cleared]",
        exclude_tools=(),
        clear_inputs=False,
    )
    assert Keep() == Keep(
        kind="turns",
        turns=3,
        messages=0,
        tokens=0,
        tokens_ratio=0.0,
        floor_tokens=0,
        ceiling_tokens=0,
        fraction=0.0,
        pairs_intact=True,
        system=True,
        first_user=False,
    )
    assert SummarizerInput() == SummarizerInput(
        kind="history", tail_tokens=0, max_transcript_chars=30_000, max_tool_result_chars=500
    )
    assert Placement() == Placement(
        role="system", position="tail", marker="[上下文摘要]", lead_in="", acknowledgement=""
    )
    assert SummarySpec() == SummarySpec(template="zh", max_tokens=1024)


def test_prepass_protect_turns_counts_person_turns_one_by_one() -> None:
    """``protect_turns = 2`` over three turns: the outputs of the last two stay."""
    region = [
        (0, person("a")),
        (1, output("c1", 100)),
        (2, person("b")),
        (3, output("c2", 100)),
        (4, person("c")),
        (5, output("c3", 100)),
    ]
    prepass = PrePass(kind=CLEAR, protect_turns=2, placeholder="p")
    assert prepass_selection(region, prepass, {}, chars, ()) == ([1], 99)


def test_dropped_tail_walks_back_one_message_at_a_time() -> None:
    """Dropped sizes 30, 5, 20 and ``tail_tokens = 25``: 20, then 5 (25), not 30."""
    dropped = [person("a" * 30), person("b" * 5), person("c" * 20)]
    given = SummarizerInput(kind="dropped-tail", tail_tokens=25)
    assert summarizer_messages(given, [], [], dropped, chars) == dropped[1:]


def test_a_tool_result_opening_the_history_can_be_cleared_and_saves_count() -> None:
    """A log that starts with a tool result (108 tokens): the pre-pass clears it too."""
    slot = PolicySlot(Policy(name="clear", prepass=PrePass(kind=CLEAR, placeholder="0")), 100_000)
    slot.append_messages([ToolResultMessage("c0", "0" * 100), person("1")])
    record = slot.prepass(117)
    assert record is not None and record["cleared"] == [0] and record["freed_tokens"] == 99
    assert slot.saves == 0
    slot.set_summary("s")
    assert slot.saves == 1


def test_keep_first_user_leaves_the_task_out_of_the_pre_pass_walk() -> None:
    """With ``keep.first_user`` the task is in the head, not the region the pre-pass
    walks: an output before it is one person turn ("next") back, protected by
    ``protect_turns = 2`` and not by 1; an observation after the task is an output."""
    keep = Keep(first_user=True)

    def cleared_by(protect_turns: int, history: list[Message]) -> list[int] | None:
        prepass = PrePass(kind=CLEAR, placeholder="0", protect_turns=protect_turns)
        slot = PolicySlot(Policy(name="p", keep=keep, prepass=prepass), 100_000)
        slot.append_messages(history)
        record = slot.prepass(10_000)
        return None if record is None else record["cleared"]

    before = [ToolResultMessage("c0", "0" * 100), person("task"), person("next")]
    assert cleared_by(2, before) is None
    assert cleared_by(1, before) == [0]
    after = [person("task"), observation("o" * 100), person("next")]
    assert cleared_by(0, after) == [1]


def test_a_kept_message_the_pre_pass_cleared_counts_as_its_placeholder() -> None:
    """Task 9, call 46, result 108, person 9, reply 9. The pre-pass clears the result
    (to "0": 9), then a summary keeps both turns: the view is the five kept messages
    (9 + 46 + 9 + 9 + 9) and the summary "s" (9): 91, from the summary's point on."""
    history: list[Message] = [
        person("1"),
        AssistantMessage((ToolUseBlock("c1", "b", "12345"),)),
        ToolResultMessage("c1", "0" * 100),
        person("2"),
        AssistantMessage.text("3"),
    ]
    policy = Policy(
        name="p",
        prepass=PrePass(kind=CLEAR, placeholder="0"),
        keep=Keep(turns=2),
        placement=Placement(marker=""),
    )
    slot = PolicySlot(policy, 100_000)
    slot.append_messages(history)
    record = slot.prepass(181)
    assert record is not None and record["view_tokens_after"] == 181 - 99
    slot.set_summary("s")
    assert slot.view_size() == (6, 91)
    assert slot.view_size(upto=5) == (6, 91)
    assert slot.kept == [0, 1, 2, 3, 4]


def test_a_second_summary_drops_what_the_first_kept_and_keeps_one_task() -> None:
    """``keep.first_user`` and the last turn kept, no system message. The first summary
    keeps the task (head) and the turn 2-3; after the turn 4-5, the second summary drops
    2-3, keeps 4-5, and the head is still the task alone."""
    history: list[Message] = [
        person("1"),
        AssistantMessage.text("2"),
        person("3"),
        AssistantMessage.text("4"),
    ]
    policy = Policy(name="p", keep=Keep(turns=1, first_user=True), placement=Placement(marker=""))
    slot = PolicySlot(policy, 100_000)
    slot.append_messages(history)
    first = slot.plan()
    assert ([i for i, _ in first.kept], [i for i, _ in first.dropped]) == ([2, 3], [1])
    slot.set_summary("a", first)
    later: list[Message] = [person("5"), AssistantMessage.text("6")]
    slot.append_messages(later)
    second = slot.plan()
    assert ([i for i, _ in second.kept], [i for i, _ in second.dropped]) == ([4, 5], [2, 3])
    slot.set_summary("b", second)
    assert slot.head == [0]
    assert slot.load_messages() == [history[0], *later, SystemMessage("b")]


def test_keep_turns_counts_a_person_message_that_ends_the_region() -> None:
    region = [(0, person("a")), (1, AssistantMessage.text("r")), (2, person("b"))]
    assert _kept(keep_plan(region, Keep(turns=1), 0, chars)) == [2]
    assert _kept(keep_plan(region, Keep(turns=2), 0, chars)) == [0, 1, 2]


def test_keep_user_messages_with_budget_to_spare_keeps_each_once() -> None:
    region = [(0, person("a" * 10)), (1, AssistantMessage.text("r")), (2, person("b" * 10))]
    plan = keep_plan(region, Keep(kind="user-messages", tokens=100), 0, chars)
    assert (plan.kept, plan.dropped) == ((region[0], region[2]), (1,))


def test_without_keep_first_user_the_task_is_a_turn_of_the_pre_pass_walk() -> None:
    """The output before the task is two person turns back ("next", then the task)."""
    prepass = PrePass(kind=CLEAR, placeholder="0", protect_turns=2)
    slot = PolicySlot(Policy(name="p", prepass=prepass), 100_000)
    slot.append_messages([ToolResultMessage("c0", "0" * 100), person("task"), person("next")])
    record = slot.prepass(10_000)
    assert record is not None and record["cleared"] == [0]


def test_a_later_pre_pass_walks_on_from_the_newest_output_it_cleared() -> None:
    """First pass: the newest output (2) is kept, 1 cleared. After a new output (4), the
    second pass clears 2: it walks from the output after the one it cleared."""
    prepass = PrePass(kind=CLEAR, placeholder="0", keep_newest=1)
    slot = PolicySlot(Policy(name="p", prepass=prepass), 100_000)
    slot.append_messages([person("a"), output("c1", 100), output("c2", 100), person("b")])
    first = slot.prepass(10_000)
    assert first is not None and first["cleared"] == [1]
    slot.append_messages([output("c4", 100), person("c")])
    second = slot.prepass(10_000)
    assert second is not None and second["cleared"] == [2]


def test_a_call_message_cleared_twice_is_counted_once_in_the_view() -> None:
    """The assistant message 1 makes two calls ("11111", "22222": 8 + 2 × (32 + 1 + 5)
    = 84). The first pass clears result 2 and c1's input (84 -> 79), the second result 3
    and c2's input (79 -> 74): the view's size is always the sum of what it shows,
    9 + 74 + 9 + 9 + 9 + 42 + 108 + 9 = 269 at the end."""
    calls = AssistantMessage((ToolUseBlock("c1", "b", "11111"), ToolUseBlock("c2", "b", "22222")))
    prepass = PrePass(kind=CLEAR, placeholder="0", keep_newest=1, clear_inputs=True)
    slot = PolicySlot(Policy(name="p", prepass=prepass), 100_000)
    slot.append_messages(
        [
            person("1"),
            calls,
            ToolResultMessage("c1", "0" * 100),
            ToolResultMessage("c2", "0" * 100),
            person("2"),
        ]
    )
    assert slot.view_size()[1] == 318
    first = slot.prepass(318)
    assert first is not None and (first["cleared"], first["view_tokens_after"]) == ([2], 214)
    assert slot.view_size()[1] == 214
    slot.append_messages(
        [
            AssistantMessage((ToolUseBlock("c3", "b", "3"),)),
            ToolResultMessage("c3", "0" * 100),
            person("3"),
        ]
    )
    second = slot.prepass(373)
    assert second is not None and (second["cleared"], second["view_tokens_after"]) == ([3], 269)
    assert slot.view_size()[1] == 269
    assert sum(estimate_message_tokens(m) for m in slot.load_messages()) == 269


def test_a_summary_applies_the_plan_made_when_it_was_requested() -> None:
    """Planned at 4 messages, applied after two more: the view keeps the plan's last
    turn (2, 3) and shows both new messages after it."""
    history: list[Message] = [
        person("1"),
        AssistantMessage.text("2"),
        person("3"),
        AssistantMessage.text("4"),
    ]
    slot = PolicySlot(Policy(name="p", keep=Keep(turns=1), placement=Placement(marker="")), 100_000)
    slot.append_messages(history)
    plan = slot.plan()
    later: list[Message] = [person("5"), AssistantMessage.text("6")]
    slot.append_messages(later)
    slot.set_summary("s", plan)
    assert slot.load_messages() == [*history[2:], *later, SystemMessage("s")]
    assert slot.view_size() == (5, 45)


def test_an_output_right_after_a_summary_cleared_shrinks_the_view() -> None:
    """After a summary at 4 (kept 2, 3; summary 9), an output of 108 at 4 and a person
    message: 5 messages, 144 tokens. The pre-pass clears the output (to 9): 45."""
    policy = Policy(
        name="p",
        keep=Keep(turns=1),
        prepass=PrePass(kind=CLEAR, placeholder="0"),
        placement=Placement(marker=""),
    )
    slot = PolicySlot(policy, 100_000)
    slot.append_messages(
        [person("1"), AssistantMessage.text("2"), person("3"), AssistantMessage.text("4")]
    )
    slot.set_summary("s")
    slot.append_messages([ToolResultMessage("c9", "0" * 100), person("5")])
    assert slot.view_size() == (5, 144)
    record = slot.prepass(144)
    assert record is not None and record["cleared"] == [4]
    assert slot.view_size() == (5, 45)
    assert sum(estimate_message_tokens(m) for m in slot.load_messages()) == 45


def test_a_dry_run_summary_without_a_lead_in_is_the_first_message_placed() -> None:
    slot = PolicySlot(Policy(name="p", placement=Placement(marker="")), 100_000)
    slot.append_messages([person("1"), AssistantMessage.text("2")])
    slot.set_summary("", assumed_tokens=500)
    assert slot.view_size() == (3, 9 + 9 + 500)


def test_a_view_of_a_system_message_only_and_an_empty_last_user_message() -> None:
    assert check_all([SystemMessage("s")]) == {api: [] for api in APIS}
    last_user = [person("u"), AssistantMessage.text("a"), person(" ")]
    assert found(last_user, "anthropic") == [("empty-content", 2)]


def test_adjacent_person_messages_are_each_a_turn_and_each_kept() -> None:
    region = [(0, AssistantMessage.text("r")), (1, person("a")), (2, person("b"))]
    assert _kept(keep_plan(region, Keep(turns=2), 0, chars)) == [1, 2]
    both = keep_plan(region, Keep(kind="user-messages", tokens=100), 0, chars)
    assert _kept(both) == [1, 2]


def test_results_are_checked_against_the_turn_before_only_from_the_second_turn() -> None:
    """A view that opens with a result answers nothing, even if the last turn makes that
    call; one that opens with the call is answered in the next turn."""
    opens_with_result = [answer("t1"), person("u"), asks("t1")]
    assert found(opens_with_result, "anthropic") == [("result-orphan", 0), ("call-unanswered", 2)]
    assert found([asks("t1"), answer("t1")], "gemini") == []


def test_keep_fraction_counts_the_tokens_before_each_turn_from_zero() -> None:
    """Sizes 9 and 10, ``fraction = 0.5``: 9 tokens come before the second turn, less than
    half of 19: nothing is kept."""
    region = [(0, person("x" * 9)), (1, person("y" * 10))]
    assert _kept(keep_plan(region, Keep(kind="fraction", fraction=0.5), 0, chars)) == []


def test_the_pre_pass_counts_the_outputs_the_view_shows_against_min_results() -> None:
    """A summary keeps the last turn (2, 3, 4) and drops 0, 1: the view shows one output
    (3), the dropped one (1) is not counted. ``min_results = 0``: the pre-pass runs and
    clears it; ``min_results = 1``: it does not run."""
    history: list[Message] = [
        person("1"),
        output("c1", 100),
        person("2"),
        output("c2", 100),
        AssistantMessage.text("3"),
    ]

    def after_summary(min_results: int) -> list[int] | None:
        prepass = PrePass(kind=CLEAR, placeholder="0", min_results=min_results)
        slot = PolicySlot(Policy(name="p", keep=Keep(turns=1), prepass=prepass), 100_000)
        slot.append_messages(history)
        slot.set_summary("s")
        assert slot.kept == [2, 3, 4]
        record = slot.prepass(10_000)
        return None if record is None else record["cleared"]

    assert after_summary(0) == [3]
    assert after_summary(1) is None


def test_strict_names_a_call_left_unanswered_at_the_end() -> None:
    assert found([person("u"), asks("t1")], "strict") == [("call-unanswered", 1)]
    assert found([person("u"), asks("t1"), answer("t1"), asks("t2")], "strict") == [
        ("call-unanswered", 3)
    ]


# ---- drive: the recorded window, and what the executor is told -------------------------


def test_auto_window_takes_the_window_the_log_records() -> None:
    settings = ReplaySettings(summary=SummaryConfig(max_context_tokens=32_000), auto_window=True)
    logged = Conversation("s", "x.jsonl", "codex", [person("a")], context_window=200_000)
    chosen, fields = session_window(logged, settings)
    assert chosen.summary is not None and chosen.summary.max_context_tokens == 200_000
    assert fields == {"max_context_tokens": 200_000, "max_context_tokens_from": "log"}
    plain = Conversation("s", "x.jsonl", "test", [person("a")])
    assert session_window(plain, settings) == (
        settings,
        {"max_context_tokens": 32_000, "max_context_tokens_from": "default"},
    )
    assert session_window(logged, replace(settings, auto_window=False)) == (
        replace(settings, auto_window=False),
        None,
    )


def test_the_executor_is_told_how_many_units_are_left_counting_its_own() -> None:
    """Every unit over a 1-token line with no debounce summarizes: the request at unit n
    of 3 is told 3 - n units are left (3, 2, 1)."""
    conv = Conversation("s", "x.jsonl", "test", [person("a"), AssistantMessage.text("b")] * 3)
    settings = ReplaySettings(
        summary=SummaryConfig(max_context_tokens=1, trigger_token_ratio=1.0, debounce_turns=0)
    )
    engine = SessionEngine("s", settings)
    told: list[int] = []

    async def execute(request: SummaryRequest, left: int) -> SummaryOutcome:
        told.append(left)
        return SummaryOutcome(SummaryResponse("sum", "fake"))

    asyncio.run(drive_conversation(conv, engine, execute))
    assert told == [3, 2, 1]


def test_a_clearing_between_a_summarys_request_and_its_reply_is_kept() -> None:
    """Planned at 4 messages; an output appended at 4 and cleared (108 -> 9) before the
    summary is applied: the view after it counts the cleared size: 9 × 5 = 45."""
    policy = Policy(
        name="p",
        keep=Keep(turns=1),
        prepass=PrePass(kind=CLEAR, placeholder="0"),
        placement=Placement(marker=""),
    )
    slot = PolicySlot(policy, 100_000)
    slot.append_messages(
        [person("1"), AssistantMessage.text("2"), person("3"), AssistantMessage.text("4")]
    )
    plan = slot.plan()
    slot.append_messages([ToolResultMessage("c9", "0" * 100), person("5")])
    record = slot.prepass(10_000)
    assert record is not None and record["cleared"] == [4]
    slot.set_summary("s", plan)
    assert slot.view_size() == (5, 45)
    assert sum(estimate_message_tokens(m) for m in slot.load_messages()) == 45


# ---- config: SummaryConfig's checks at their boundaries (docs/spec.md, F1) -------------


def test_summary_config_accepts_each_setting_at_its_bound() -> None:
    config = SummaryConfig(
        trigger_token_ratio=1.0,
        max_context_tokens=1,
        debounce_turns=0,
        max_tool_result_chars=0,
        max_transcript_chars=1,
        summary_model="m",
    )
    assert (config.max_tool_result_chars, config.max_transcript_chars) == (0, 1)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"trigger_token_ratio": 1.01}, "trigger_token_ratio must be in (0, 1], got 1.01"),
        ({"max_context_tokens": 0}, "max_context_tokens must be > 0, got 0"),
        ({"debounce_turns": -1}, "debounce_turns must be >= 0, got -1"),
        ({"max_tool_result_chars": -1}, "max_tool_result_chars must be >= 0, got -1"),
        ({"max_transcript_chars": 0}, "max_transcript_chars must be > 0, got 0"),
        ({"summary_prompt": " "}, "summary_prompt must be a non-empty template"),
        ({"summary_prompt": 3}, "summary_prompt must be a non-empty template"),
        ({"summary_model": ""}, "summary_model must be a model name or unset"),
        ({"summary_model": 3}, "summary_model must be a model name or unset"),
    ],
)
def test_summary_config_refuses_each_setting_past_its_bound(
    changes: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        SummaryConfig(**changes)  # type: ignore[arg-type]
    assert str(caught.value) == message


# ---- prompt: which template a text is, and what check() warns about --------------------


def test_a_config_prompt_is_named_after_the_built_in_it_is_or_custom() -> None:
    assert template_from_config(builtin_template_source("zh")).name == "zh"
    assert template_from_config("Summarize: {messages}").name == "custom"
    assert template_from_config("Summarize: {messages}", "mine").name == "mine"


def test_the_built_in_names_are_the_summary_templates_shipped() -> None:
    names = builtin_template_names()
    assert "zh" in names and names == sorted(names)
    assert all(builtin_template_source(name).strip() for name in names)


def test_check_warns_about_a_template_that_never_sees_the_messages() -> None:
    plain_ok = PromptTemplate("p", "Summarize: {messages}")
    assert plain_ok.check() == []
    assert plain_ok.render("M", turn=3) == "Summarize: M"
    assert PromptTemplate("p", "Summarize.").check() == ["prompt p: no {messages} placeholder"]
    jinja_ok = PromptTemplate("j", "Turn {{ turn }}: {{ messages }}")
    assert jinja_ok.check() == []
    assert jinja_ok.render("M", turn=3) == "Turn 3: M"
    assert jinja_ok.render("M") == "Turn 0: M"
    blind = PromptTemplate("j", "Turn {{ turn }}")
    assert blind.check() == [
        "prompt j: the template never uses `messages`, so summaries see no conversation"
    ]


# ---- requests: what a summary request is equal by, and an outcome's defaults -----------


def test_a_summary_request_is_equal_by_what_determines_its_response() -> None:
    """The prompt decides the response; the messages it was formatted from, their blocks
    and the cut are carried for providers that read structure, and left out of equality
    and of the request's repr (they may be large)."""
    plain = SummaryRequest("s", 1, "p")
    carried = SummaryRequest(
        "s", 1, "p", messages=(person("a"),), formatted=("User: a",), formatted_cut=True
    )
    assert carried == plain
    assert "messages=" not in repr(carried) and "formatted" not in repr(carried)
    assert "prompt='p'" in repr(carried)


def test_a_summary_outcome_is_ok_with_a_response_and_starts_uncached_and_untried() -> None:
    failed = SummaryOutcome(None, error="timeout")
    assert (failed.ok, failed.cached, failed.attempts) == (False, False, 0)
    assert SummaryOutcome(SummaryResponse("s", "m")).ok is True


def test_the_run_defaults_docs_providers_states() -> None:
    """docs/providers.md: ``-j/--concurrency`` 8, an attempt's timeout 60 s (600 s for a
    local server), a call tried 4 times (the first and three retries)."""
    assert (config.DEFAULT_CONCURRENCY, config.DEFAULT_TIMEOUT_S, config.LOCAL_TIMEOUT_S) == (
        8,
        60.0,
        600.0,
    )
    assert config.DEFAULT_MAX_ATTEMPTS == 4


def test_an_empty_prompt_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.j2"
    path.write_text("  \n")
    with pytest.raises(TemplateError, match="empty prompt"):
        load_template(str(path))
