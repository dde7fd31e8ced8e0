"""engine/person_fates.py's "partly kept" rule, each part pinned by a test that fails on
the one-point edit its docstring names (a mutation run, docs/testing.md): a message is
partly kept when it is longer than twice ``EDGE`` (40) characters and either the summary
holds both its first and its last 40 characters, or a *shorter* kept message begins and
ends as it does."""

from __future__ import annotations

from transcript_tools.engine.messages import UserMessage
from transcript_tools.engine.person_fates import EDGE, person_fates

# 100 characters: its first 40 (all "h"), a middle of 20 "m", its last 40 (all "t")
TEXT = "h" * 40 + "m" * 20 + "t" * 40
NOTHING = {"kept": 0, "partly": 0, "dropped": 0, "resupplied": 0}


def _fates(kept: list[str], summary: str = "") -> dict[str, int]:
    return person_fates([UserMessage.text(TEXT)], kept, [], summary)


def test_a_summary_holding_both_ends_of_a_message_of_100_characters_keeps_it_partly() -> None:
    """``len(text) <= 2 * EDGE`` -> ``3 * EDGE``: 100 > 80, so the ends count (under the
    edit, 100 <= 120 and the message would be dropped)."""
    assert EDGE == 40 and len(TEXT) == 100
    summary = "the person asked: " + "h" * 40 + " ... " + "t" * 40 + "."
    assert _fates([], summary) == {**NOTHING, "partly": 1}


def test_a_summary_holding_neither_end_does_not_keep_a_message() -> None:
    """``summary and head in summary and tail in summary`` -> ``or``: a summary that
    exists but holds neither end keeps nothing."""
    assert _fates([], "a summary about something else entirely") == {**NOTHING, "dropped": 1}
    assert _fates([], "h" * 40) == {**NOTHING, "dropped": 1}  # its head alone is not enough


def test_only_a_shorter_kept_message_with_both_ends_keeps_a_message_partly() -> None:
    """``len(k) < len(text) and k.startswith(head) and k.endswith(tail)``: ``<`` -> ``<=``
    counts a kept message as long as the original with another middle; ``and`` -> ``or``
    counts any shorter kept message."""
    cut = "h" * 40 + "…" + "t" * 40  # 81 characters: the middle cut out
    assert _fates([cut]) == {**NOTHING, "partly": 1}
    same_length = "h" * 40 + "x" * 20 + "t" * 40  # 100 characters, another middle
    assert _fates([same_length]) == {**NOTHING, "dropped": 1}
    assert _fates(["fix the bug"]) == {**NOTHING, "dropped": 1}  # shorter, neither end


def test_a_message_of_at_most_80_characters_is_never_partly_kept() -> None:
    """``len(text) <= 2 * EDGE``: ``<=`` -> ``<`` at exactly 80 characters, ``*`` -> ``/``
    at 60; the summary holds each message's first and last 40 characters, not the whole."""
    eighty = "h" * 40 + "t" * 40
    sixty = "a" * 20 + "b" * 20 + "c" * 20
    summary = "h" * 40 + " ... " + "t" * 40 + " and " + "a" * 20 + "b" * 20 + " ... " + "b" * 20
    summary += "c" * 20
    before = [UserMessage.text(eighty), UserMessage.text(sixty)]
    assert eighty not in summary and sixty not in summary
    assert person_fates(before, [], [], summary) == {**NOTHING, "dropped": 2}
