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

from collections.abc import Callable
from dataclasses import replace

import pytest

from transcript_tools.engine.compaction import (
    keep_plan,
    prepass_selection,
    prepass_should_run,
    summarizer_messages,
)
from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
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
    keep_budget_tokens,
    threshold_tokens,
)
from transcript_tools.engine.policy_engine import policy_skip, seed_shaped, with_policy
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.rules import Decision
from transcript_tools.engine.tokens import estimate_message_tokens
from transcript_tools.engine.validity import check_view
from transcript_tools.errors import ConfigError

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
        return policy_skip(policy, turn, last, 0.0, 100_000, 0, False)

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
    (lambda: Trigger(tokens=-1), "trigger.tokens: must be an integer >= 0"),
    (lambda: Trigger(tokens=True), "trigger.tokens: must be an integer >= 0"),
    (lambda: Trigger(ratio=True), "trigger.ratio: must be a number"),
    (lambda: Trigger(ratio="0.5"), "trigger.ratio: must be a number"),
    (lambda: Trigger(threshold="tokens"), "trigger.tokens: must be >= 1 with threshold = tokens"),
    (lambda: Trigger(threshold="reserve"), "trigger.reserve_tokens: must be >= 1"),
    (lambda: Trigger(threshold="every"), "trigger.every: must be >= 1"),
    (lambda: Trigger(threshold="messages"), "trigger.messages: must be >= 1"),
    (lambda: Trigger(floor_tokens=10, ceiling_tokens=9), "trigger.ceiling_tokens: must be 0 or"),
    (lambda: PrePass(trigger_ratio=1.5), "prepass.trigger_ratio: must be in (0, 1] or 0"),
    (lambda: PrePass(trigger_tokens=5, trigger_ratio=0.5), "prepass.trigger_ratio: set"),
    (lambda: PrePass(min_results=-1), "prepass.min_results"),
    (lambda: PrePass(protect_turns=-1), "prepass.protect_turns"),
    (lambda: PrePass(min_freed_tokens=-1), "prepass.min_freed_tokens"),
    (lambda: PrePass(placeholder=3), "prepass.placeholder: must be a string"),
    (lambda: PrePass(kind=CLEAR, placeholder=""), "prepass.placeholder: must not be empty"),
    (lambda: PrePass(exclude_tools=["skill"]), "prepass.exclude_tools: must be a list"),
    (lambda: PrePass(exclude_tools=("skill", 1)), "prepass.exclude_tools: must be a list"),
    (lambda: PrePass(clear_inputs=1), "prepass.clear_inputs: must be true or false"),
    (lambda: Keep(turns=0), "keep.turns: must be >= 1 with kind = turns"),
    (lambda: Keep(kind="messages"), "keep.messages: must be >= 1 with kind = messages"),
    (lambda: Keep(kind="tokens"), "keep.tokens: or keep.tokens_ratio must be set"),
    (lambda: Keep(kind="user-messages"), "keep.tokens: or keep.tokens_ratio must be set"),
    (lambda: Keep(kind="fraction", fraction=1.0), "keep.fraction: must be in (0, 1) with"),
    (lambda: Keep(kind="fraction"), "keep.fraction: must be in (0, 1) with"),
    (lambda: Keep(floor_tokens=10, ceiling_tokens=9), "keep.ceiling_tokens: must be 0 or"),
    (lambda: Keep(pairs_intact=1), "keep.pairs_intact: must be true or false"),
    (lambda: SummarizerInput(kind="dropped-tail"), "summarizer_input.tail_tokens: must be >= 1"),
    (lambda: Placement(role="user", lead_in="x"), "placement.lead_in: needs role = assistant"),
    (lambda: Placement(acknowledgement="ok"), "placement.acknowledgement: needs role = user"),
    (lambda: SummarySpec(template=" "), "summary.template: must name a built-in template"),
    (lambda: SummarySpec(max_tokens=-1), "summary.max_tokens: must be an integer >= 0"),
    (lambda: Policy(name=" "), "name: must not be empty"),
    (lambda: Policy(description=3), "description: must be a string"),
    (lambda: Policy(trigger=PrePass()), "trigger: must be a Trigger"),
    (lambda: Policy(trigger=Trigger(threshold="never")), "trigger.threshold: is never and"),
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
