"""Work a policy's slot keeps between units changes no output (engine/policy_slot.py):
the head and kept messages' tokens kept for ``view_size``, the pre-pass walking only from
the outputs it may still clear (``compaction.oldest_clearable``), the messages shown
looked up in bulk (``compaction.shown_entries``), the placeholder's size found once,
and each message's estimate kept by identity (engine/tokens.py), each against the same
figure found afresh.
"""

from __future__ import annotations

import bisect
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine import tokens
from transcript_tools.engine.compaction import (
    cleared,
    is_tool_output,
    oldest_clearable,
    placeholder_tokens,
    prepass_selection,
    prepass_should_run,
    shown_entries,
)
from transcript_tools.engine.messages import (
    OBSERVATION,
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.policy import Keep, Policy, PrePass
from transcript_tools.engine.policy_slot import PolicySlot
from transcript_tools.engine.sizes import SizeModel
from transcript_tools.engine.tokens import estimate_message_tokens, estimates_kept

CALL_IDS = ["a", "b", "c", ""]  # few ids, an empty one: calls renamed, results before calls
TOOLS = ["Read", "Bash", "skill"]
CLEAR = "clear-tool-results"


def _message(kind: str, call_id: str, tool: str, size: int) -> Message:
    text = "w " * size
    if kind == "call":
        return AssistantMessage((TextBlock(text), ToolUseBlock(call_id, tool, {"p": text})))
    if kind == "result":
        return ToolResultMessage(call_id, text)
    if kind == "observation":
        return UserMessage((TextBlock(text),), OBSERVATION)
    if kind == "system":
        return SystemMessage(text)
    return UserMessage.text(text)


message_specs = st.tuples(
    st.sampled_from(
        ["call", "call", "result", "result", "result", "observation", "person", "system"]
    ),
    st.sampled_from(CALL_IDS),
    st.sampled_from(TOOLS),
    st.integers(0, 60),
    st.one_of(st.none(), st.floats(1, 400)),  # the billed size the log recorded, or none
)
units = st.lists(
    st.tuples(st.lists(message_specs, min_size=1, max_size=4), st.booleans()),
    min_size=1,
    max_size=25,
)
# placeholders of every character class (the slot sizes each cleared output by its own)
PLACEHOLDERS = ["[cleared]", "Old tool result content cleared", "已清除 42", "x"]
prepasses = st.builds(
    lambda newest, tokens_, turns, freed, tools, only, inputs, placeholder: PrePass(
        kind=CLEAR,
        keep_newest=newest,
        protect_tokens=tokens_,
        protect_turns=turns,
        min_freed_tokens=freed,
        exclude_tools=() if only else tools,
        only_tools=tools if only else (),
        clear_inputs=inputs,
        placeholder=placeholder,
    ),
    st.integers(0, 3),
    st.sampled_from([0, 0, 30, 100, 300]),
    st.integers(0, 2),
    st.sampled_from([0, 0, 20]),
    st.lists(st.sampled_from(TOOLS), max_size=2, unique=True).map(tuple),
    st.booleans(),
    st.booleans(),
    st.sampled_from(PLACEHOLDERS),
)
keeps = st.one_of(
    st.just(Keep(kind="none")),
    st.builds(lambda n: Keep(kind="messages", messages=n), st.integers(1, 4)),
    st.builds(lambda n: Keep(kind="turns", turns=n), st.integers(1, 2)),
    st.builds(lambda n: Keep(kind="user-messages", tokens=n), st.integers(5, 60)),
    st.builds(lambda f: Keep(kind="none", first_user=f, system=not f), st.booleans()),
)


class WalkFromSettled(PolicySlot):
    """The pre-pass as it was before the slot kept what it passed over: every unit it
    walks from the newest output it cleared (the whole region while messages are kept)."""

    def prepass(self, view_tokens: int) -> dict[str, Any] | None:
        prepass = self.policy.prepass
        kept_outputs = sum(1 for i in self.kept if is_tool_output(self.messages[i]))
        outputs = len(self._outputs) - bisect.bisect_left(self._outputs, self.base) + kept_outputs
        if not prepass_should_run(prepass, view_tokens, self.window, outputs):
            return None
        end = len(self.messages)
        if self.kept:
            region = self.region()
        else:
            keep = self.policy.keep
            region = [
                (i, message)
                for i, message in shown_entries(
                    self.messages, self.replaced, range(max(self._settled, self.base), end), end
                )
                if not (keep.system and type(self.messages[i]) is SystemMessage)
                and not (keep.first_user and i == self._first_person)
            ]
        chosen, freed = prepass_selection(
            region, prepass, self._names, self.sizes.of, self.replaced
        )
        if not chosen:
            return None
        self._settled = chosen[-1] + 1
        call_ids: set[str] = set()
        for index in chosen:
            message = self.messages[index]
            self._replace(index, cleared(message, prepass.placeholder), end)
            if type(message) is ToolResultMessage:
                call_ids.add(message.tool_call_id)
        if prepass.clear_inputs and call_ids:
            freed += self._clear_inputs(call_ids, end)
        return {
            "messages_cleared": len(chosen),
            "cleared": chosen,
            "view_tokens_before": view_tokens,
            "view_tokens_after": view_tokens - freed,
            "freed_tokens": freed,
        }


def _size_afresh(slot: PolicySlot, upto: int) -> tuple[int, int]:
    """``view_size(upto)`` summed message by message over ``view_entries(upto)``."""
    entries = slot.view_entries(upto)
    summary = iter(slot._summary_tokens)
    total = 0
    for index, _ in entries:
        if index is None:
            total += next(summary)
            continue
        replaced = slot.replaced.get(index)
        if replaced is not None and replaced[1] <= upto:
            total += replaced[2]
        else:
            total += slot.sizes.of(slot.messages[index])
    return len(entries), total


def _entries_afresh(slot: PolicySlot, upto: int) -> list[tuple[int | None, Message]]:
    """``view_entries(upto)`` message by message: the head, the kept messages and those
    from ``base``, each its replacement where one was made by ``upto``, the summary placed."""

    def shown(index: int) -> Message:
        replaced = slot.replaced.get(index)
        return replaced[0] if replaced is not None and replaced[1] <= upto else slot.messages[index]

    summary: list[tuple[int | None, Message]] = [(None, m) for m in slot.summary]
    position = slot.policy.placement.position
    return [
        *[(i, shown(i)) for i in slot.head],
        *(summary if position == "front" else []),
        *[(i, shown(i)) for i in slot.kept],
        *(summary if position == "end" else []),
        *[(i, shown(i)) for i in range(min(slot.base, upto), upto)],
        *(summary if position == "tail" else []),
    ]


def _run(
    specs: list[tuple[list[Any], bool]], prepass: PrePass, keep: Keep
) -> tuple[PolicySlot, PolicySlot, int]:
    """Both slots through the same units, pre-pass and summaries; every view size checked
    against the sum afresh after each unit. Returns the slots and the clearings made."""
    batches = [[_message(*spec[:4]) for spec in batch] for batch, _ in specs]
    recorded = {
        id(m): spec[4]
        for (batch, _), made in zip(specs, batches, strict=True)
        for spec, m in zip(batch, made, strict=True)
        if spec[4] is not None
    }
    sizes = SizeModel(recorded)
    policy = Policy(name="p", prepass=prepass, keep=keep)
    slot, afresh = PolicySlot(policy, 10_000, sizes), WalkFromSettled(policy, 10_000, sizes)
    clearings = 0
    for (_, summarize), batch in zip(specs, batches, strict=True):
        for one in (slot, afresh):
            one.append_messages(batch)
        view = slot.view_size()[1]
        done = slot.prepass(view)
        assert done == afresh.prepass(view)
        clearings += done is not None
        if summarize and slot.plan().dropped:
            for one in (slot, afresh):
                one.set_summary("summary text", one.plan())
        for upto in range(len(slot.messages) + 1):
            assert slot.view_size(upto) == afresh.view_size(upto) == _size_afresh(slot, upto)
            assert slot.view_entries(upto) == _entries_afresh(slot, upto)
        assert slot.load_messages() == afresh.load_messages()
        assert slot._placeholder in (None, placeholder_tokens(prepass, sizes.of))  # kept
    return slot, afresh, clearings


@settings(max_examples=300, deadline=None)
@given(units, prepasses, keeps)
def test_the_pre_pass_and_view_sizes_equal_the_walk_and_sums_afresh(
    specs: list[tuple[list[Any], bool]], prepass: PrePass, keep: Keep
) -> None:
    slot, afresh, _ = _run(specs, prepass, keep)
    assert slot.replaced == afresh.replaced


def test_a_pre_pass_that_can_clear_nothing_walks_only_what_came_since() -> None:
    """With only Read's results clearable and none read, the region walked is the unit
    just appended, its tool output only: the walk reads no call (the walk afresh: the
    whole history, every unit)."""
    prepass = PrePass(kind=CLEAR, only_tools=("Read",), placeholder="[cleared]")
    slot = PolicySlot(Policy(name="p", prepass=prepass, keep=Keep(kind="none")), 10_000)
    for n in range(5):
        slot.append_messages(
            [_message("call", f"c{n}", "Bash", 20), _message("result", f"c{n}", "", 20)]
        )
        assert slot.prepass(0) is None
    assert [i for i, _ in slot._unsettled_region()] == []
    slot.append_messages([_message("call", "c9", "Bash", 20), _message("result", "c9", "", 20)])
    assert [i for i, _ in slot._unsettled_region()] == [11]


def test_a_renamed_call_walks_its_result_again() -> None:
    """A result passed over as Bash's is cleared once a later call of the same id names
    Read (the walk from the start would clear it too)."""
    prepass = PrePass(kind=CLEAR, only_tools=("Read",), placeholder="[cleared]")
    slot = PolicySlot(Policy(name="p", prepass=prepass, keep=Keep(kind="none")), 10_000)
    slot.append_messages([_message("call", "x", "Bash", 5), _message("result", "x", "", 40)])
    assert slot.prepass(0) is None
    slot.append_messages([_message("call", "x", "Read", 5)])
    record = slot.prepass(0)
    assert record is not None and record["cleared"] == [1]


def test_the_oldest_clearable_output_skips_what_no_walk_can_clear() -> None:
    """Cleared already (0), no longer than the placeholder (1), of an excluded tool (2):
    the first clearable is the result of a call not named yet (3)."""
    small = ToolResultMessage("a", "")
    region: list[tuple[int, Message]] = [
        (0, ToolResultMessage("a", "w " * 30)),
        (1, small),
        (2, ToolResultMessage("s", "w " * 30)),
        (3, ToolResultMessage("new", "w " * 30)),
        (4, ToolResultMessage("a", "w " * 30)),
    ]
    prepass = PrePass(kind=CLEAR, exclude_tools=("skill",), placeholder="[cleared]")
    names = {"a": "Read", "s": "skill"}
    of = estimate_message_tokens
    assert oldest_clearable(region, prepass, names, of, {0}) == 3
    assert oldest_clearable(region[:3], prepass, names, of, {0}) is None
    assert oldest_clearable(region, prepass, names, of, set()) == 0
    # the walk afresh clears from there on what it may: 0, 3 and 4, never 1 or 2
    assert prepass_selection(region, prepass, names, of, ())[0] == [0, 3, 4]


@settings(max_examples=200, deadline=None)
@given(st.lists(message_specs, min_size=1, max_size=8))
def test_an_estimate_kept_by_identity_is_the_estimate_afresh(specs: list[Any]) -> None:
    messages = [_message(*spec[:4]) for spec in specs]
    afresh = [tokens._message_tokens(m) for m in messages]
    with estimates_kept():
        assert [estimate_message_tokens(m) for m in messages] == afresh
        assert [estimate_message_tokens(m) for m in messages] == afresh  # from the memo


def test_estimates_are_kept_inside_the_blocks_held_and_let_go_when_full_or_done(
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(tokens, "_MESSAGE_ESTIMATES", {})
    monkeypatch.setattr(tokens, "MESSAGE_ESTIMATES", 2)
    first, second, third = (UserMessage.text("x" * n) for n in (4, 8, 12))
    assert estimate_message_tokens(first) == 10  # 8 + int(4 x 0.255 + 0.999)
    assert tokens._MESSAGE_ESTIMATES == {}  # outside a block: nothing kept
    with estimates_kept():
        with estimates_kept():
            assert [estimate_message_tokens(m) for m in (first, second)] == [10, 11]
        assert tokens._MESSAGE_ESTIMATES[id(first)] == (first, 10)  # held: its id stays its own
        assert estimate_message_tokens(third) == 12  # a third: the memo is full, all go
        assert list(tokens._MESSAGE_ESTIMATES) == [id(third)]
    assert tokens._MESSAGE_ESTIMATES == {}  # the last block ended


@settings(max_examples=200, deadline=None)
@given(message_specs, st.one_of(st.sampled_from(PLACEHOLDERS), st.text(min_size=1)))
def test_a_cleared_output_is_the_size_of_its_placeholder(spec: Any, placeholder: str) -> None:
    """The slot sizes every output it clears once, by ``placeholder_tokens``: the size of
    the cleared copy itself, whatever the output was and whatever the log billed for it."""
    message = _message(*spec[:4])
    sizes = SizeModel({} if spec[4] is None else {id(message): spec[4]})
    prepass = PrePass(kind=CLEAR, placeholder=placeholder)
    copy = cleared(message, placeholder)
    assert sizes.of(copy) == placeholder_tokens(prepass, sizes.of)
    with estimates_kept():
        assert sizes.of(cleared(message, placeholder)) == placeholder_tokens(prepass, sizes.of)


def test_a_slot_without_a_pre_pass_keeps_no_figures_for_one_and_sizes_alike() -> None:
    """The tool names, outputs and turn starts only the pre-pass reads are noted under a
    pre-pass alone; either way every message is sized once into the same running sums
    (fails when a slot without a pre-pass notes them too)."""
    batch = [
        _message("person", "", "", 3),
        _message("call", "a", "Read", 5),
        _message("result", "a", "", 40),
        _message("observation", "", "", 9),
    ]
    plain = PolicySlot(Policy(name="p"), 10_000)
    clearing = PolicySlot(Policy(name="p", prepass=PrePass(kind=CLEAR)), 10_000)
    for slot in (plain, clearing):
        slot.append_messages(batch)
    assert (plain._names, plain._outputs, plain._turns, plain._first_person) == ({}, [], [], None)
    assert (clearing._outputs, clearing._turns, clearing._first_person) == ([2, 3], [0], 0)
    assert clearing._names == {"a": "Read"}
    sums = [sum(estimate_message_tokens(m) for m in batch[:n]) for n in range(5)]
    assert plain.token_prefix(4) == clearing.token_prefix(4) == sums
    assert clearing._output_tokens == [0, sums[3] - sums[2], sums[4] - sums[2]]
