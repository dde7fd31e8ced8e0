"""What a compaction keeps verbatim (engine/compaction.py ``keep_plan``), pinned against
one-point edits (docs/testing.md): the ``at_least`` token walk stops once the kept messages
reach the budget, and a person's message that a cut would keep whole stays uncut. Sizes
in these tests are the characters of a message's text, so every expected value is a sum
of lengths.
"""

from __future__ import annotations

from transcript_tools.engine.compaction import keep_plan
from transcript_tools.engine.messages import Message, TextBlock, UserMessage
from transcript_tools.engine.policy import Keep


def chars(message: Message) -> int:
    """A message's size here: the characters of its text blocks."""
    if isinstance(message, UserMessage):
        return sum(len(b.text) for b in message.blocks if isinstance(b, TextBlock))
    return 0


def _region(*texts: str) -> list[tuple[int, Message]]:
    return [(i, UserMessage.text(text)) for i, text in enumerate(texts)]


def test_an_at_least_walk_stops_once_the_kept_tail_reaches_exactly_the_budget() -> None:
    """Cline walks back "until cumulative >= preserveRecentTokens": three 10-token
    messages and a budget of 20 keep the newest two (10 + 10 = 20 reaches it; fails on
    ``total > budget``: the walk goes on and keeps all three)."""
    region = _region("a" * 10, "b" * 10, "c" * 10)
    keep = Keep(kind="tokens", tokens=20, at_least=True, pairs_intact=False)
    plan = keep_plan(region, keep, 0, chars)
    assert [index for index, _ in plan.kept] == [1, 2]
    assert plan.dropped == (0,)


def test_an_at_least_walk_keeps_the_message_that_crosses_the_budget() -> None:
    """A budget of 15 over the same three: 10 is below it, so the second message is kept
    too (20, past the budget); without ``at_least`` only the newest (10 + 10 > 15)."""
    region = _region("a" * 10, "b" * 10, "c" * 10)
    crossing = keep_plan(
        region, Keep(kind="tokens", tokens=15, at_least=True, pairs_intact=False), 0, chars
    )
    assert [index for index, _ in crossing.kept] == [1, 2]
    within = keep_plan(region, Keep(kind="tokens", tokens=15, pairs_intact=False), 0, chars)
    assert [index for index, _ in within.kept] == [2]


def test_a_person_message_whose_cut_keeps_all_its_text_is_kept_uncut() -> None:
    """``user-messages`` with a budget of 1 token over a 2-character message (2 tokens
    here): the cut keeps at least 2 characters, here all of them, so the message stays as
    written (fails on ``chars > len(text)``: "a", a note of 1 token truncated, "b")."""
    plan = keep_plan(_region("ab"), Keep(kind="user-messages", tokens=1), 0, chars)
    [(index, message)] = plan.kept
    assert index == 0
    assert message == UserMessage.text("ab")


def test_a_person_message_over_the_budget_keeps_its_two_ends_around_a_note() -> None:
    """A 10-character message, a budget of 4 tokens: 10 x 4 // 10 = 4 characters kept,
    2 from each end, around a note of the 10 - 4 = 6 tokens cut."""
    plan = keep_plan(_region("abcdefghij"), Keep(kind="user-messages", tokens=4), 0, chars)
    [(_, message)] = plan.kept
    assert message == UserMessage.text("ab…6 tokens truncated…ij")


def test_a_person_message_cut_keeps_at_least_two_characters_one_from_each_end() -> None:
    """A budget of 1 token over a 10-character message: 10 x 1 // 10 = 1 character, raised
    to the floor of 2, one from each end (fails on a floor of 3: "a", the note, "ij")."""
    plan = keep_plan(_region("abcdefghij"), Keep(kind="user-messages", tokens=1), 0, chars)
    [(_, message)] = plan.kept
    assert message == UserMessage.text("a…9 tokens truncated…j")
