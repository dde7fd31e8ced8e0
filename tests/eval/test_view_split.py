"""The action scorer's view as bits (eval/shown.py ``split_view``, ``set_bits``): what an
action removed and added, and the view's rest, are those the sets of indices give."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine.messages import Message, UserMessage
from transcript_tools.eval import policy_probes
from transcript_tools.eval.next_view import NextView
from transcript_tools.eval.policy_probes import SUMMARY, ActionScorer
from transcript_tools.eval.score import ConversationProbes
from transcript_tools.eval.shown import bits, set_bits, split_view, visible_text

# every message a request (two key terms or more): an action that hides one has probes
HISTORY: list[Message] = [UserMessage.text(f"rename module{n} then rebuild") for n in range(12)]

# A view entry: a history message itself, a copy of one (a placeholder or cut copy, its
# index kept) or a summary (index None); indices past the history's end included.
ENTRY = st.one_of(
    st.tuples(st.just("own"), st.integers(0, 11)),
    st.tuples(st.just("copy"), st.integers(0, 11)),
    st.tuples(st.just("summary"), st.just(0)),
)


def _entries(picks: list[tuple[str, int]]) -> list[tuple[int | None, Message]]:
    out: list[tuple[int | None, Message]] = []
    for what, i in picks:
        if what == "own":
            out.append((i, HISTORY[i]))
        elif what == "copy":
            out.append((i, UserMessage.text(f"[cleared {i}]")))
        else:
            out.append((None, UserMessage.text("[summary]")))
    return out


@given(st.integers(0, 1 << 70))
def test_set_bits_are_the_bits_set(bits: int) -> None:
    assert set_bits(bits) == [i for i in range(bits.bit_length()) if bits >> i & 1]


@given(st.lists(ENTRY, max_size=14))
def test_split_view_is_the_verbatim_bits_and_the_other_entries(
    picks: list[tuple[str, int]],
) -> None:
    entries = _entries(picks)
    mask, others = split_view(HISTORY, entries)
    verbatim = {i for i, m in entries if i is not None and HISTORY[i] is m}
    assert mask == sum(1 << i for i in verbatim)
    assert others == [(i, m) for i, m in entries if i is None or HISTORY[i] is not m]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(ENTRY, max_size=14), min_size=1, max_size=4),
    st.lists(st.integers(0, 12), min_size=4, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_removed_added_and_rest_are_those_of_the_index_sets(
    views: list[list[tuple[str, int]]], ends: list[int], summaries: list[bool]
) -> None:
    """Action after action, the scorer's bits give what the sets of indices gave: the
    messages removed (hidden now, not before), what was added (a summary, or an entry
    standing for a removed message) and the view's rest: its history messages (bits),
    its other parts and its text; the next view is built when there are probes to look
    for."""
    probes = ConversationProbes(HISTORY, 500)
    scorer = ActionScorer(probes, "l", "s", "p", 500)
    scorer.detail = False
    made: list[NextView] = []
    hidden: set[int] = set()
    policy_probes.NextView = lambda *args: made.append(NextView(*args)) or made[-1]  # type: ignore[assignment,misc]
    try:
        for picks, end, summary in zip(views, ends, summaries, strict=False):
            entries = _entries(picks)
            kind = SUMMARY if summary else "prepass"
            verbatim = {i for i, m in entries if i is not None and HISTORY[i] is m}
            now = set(range(end)) - verbatim
            removed, hidden = sorted(now - hidden), now
            gone = set(removed)
            added = [(i, m) for i, m in entries if (i is None and kind == SUMMARY) or i in gone]
            added_ids = {id(m) for _, m in added}
            kept = [(i, m) for i, m in entries if id(m) not in added_ids]

            alive, before = list(scorer.alive), len(made)
            scorer.score(kind, 0, entries, end, {})
            if len(made) == before:  # no probe to look for: the next view is not built
                assert not [p for i in removed for p in probes.message_probes(i)]
                assert kind != SUMMARY or not alive
                assert set_bits(scorer.hidden) == sorted(hidden)
                continue
            variants = made[-1]
            assert variants.removed == removed
            assert variants.added_raw == "\n\n".join(visible_text(m, 500) for _, m in added)
            rest = variants.rest
            assert rest._mask == bits(i for i, m in kept if i is not None and HISTORY[i] is m)
            assert [h.text for h in rest._extras] == [
                scorer._haystack(i, m).text for i, m in kept if i is None or HISTORY[i] is not m
            ]
            parts = [scorer._haystack(i, m).text for i, m in kept]
            assert rest.text == " ".join(t for t in parts if t)
            assert set_bits(scorer.hidden) == sorted(hidden)
    finally:
        policy_probes.NextView = NextView  # type: ignore[misc]
