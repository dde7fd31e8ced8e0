"""The prefix trees' spine (engine/validity_prefixes.py): a history checked as a prefix is
found from the last one checked, and its answer kept on its node; every answer is the
one found with no memo, whatever the order of the histories, views and evictions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine import validity
from transcript_tools.engine import validity_prefixes as prefixes
from transcript_tools.engine.messages import Message
from transcript_tools.engine.validity import check_all

from .test_validity import PARTS, _afresh, asst, result, sys_, user


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty trees, no spine, no views remembered."""
    monkeypatch.setattr(prefixes, "ROOT", prefixes.Node(None, validity._Scan(), {}))
    monkeypatch.setattr(prefixes, "sizes", {})
    monkeypatch.setattr(prefixes, "_spine", [prefixes._NO_SPINE])
    monkeypatch.setattr(validity, "_RECENT", {})
    monkeypatch.setattr(validity, "_held", [0])


# Each step: (which log, prefix length, as a history or as a view cut at another length)
STEP = st.tuples(st.integers(0, 2), st.integers(0, 12), st.booleans(), st.integers(-1, 12))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, len(PARTS) - 1), max_size=12), min_size=3, max_size=3),
    st.integers(0, 6),
    st.lists(STEP, max_size=25),
    st.sampled_from([(4, 1 << 15), (2, 1 << 15), (2, 7), (1, 3)]),
)
def test_histories_and_views_in_any_order_are_checked_as_from_scratch(
    picks: list[list[int]],
    shared: int,
    steps: list[tuple[int, int, bool, int]],
    bounds: tuple[int, int],
) -> None:
    """Three logs (the last two starting with the first's first ``shared`` messages, as
    a grid's logs may not, and its configurations' histories do), checked as histories
    and as views in any order, the trees' bounds tiny or not: each answer is the one
    found with no memo, and a history's answer, asked again, is the same."""
    logs = [[PARTS[p] for p in picks[0]]]
    logs += [logs[0][:shared] + [PARTS[p] for p in log] for log in picks[1:]]
    saved = (prefixes.ROOT, dict(prefixes.sizes), prefixes._spine[0])
    prefixes.PREFIX_TREES, prefixes.PREFIX_NODES = bounds
    prefixes.ROOT = prefixes.Node(None, validity._Scan(), {})
    prefixes.sizes.clear()
    prefixes._spine[0] = prefixes._NO_SPINE
    try:
        for which, end, as_history, cut in steps:
            log = logs[which]
            view = list(log[:end])
            if as_history:
                assert check_all(view, prefix=True) == _afresh(view)
                assert check_all(view, prefix=True) == _afresh(view)
            else:
                if cut >= 0:
                    view = view[:cut] + [user("[summary]")] + view[cut + 1 :]
                assert check_all(view) == _afresh(view)
        assert sum(prefixes.sizes.values()) <= max(bounds[1], 12)
    finally:
        prefixes.PREFIX_TREES, prefixes.PREFIX_NODES = 4, 1 << 15
        prefixes.ROOT, prefixes._spine[0] = saved[0], saved[2]
        prefixes.sizes.clear()
        prefixes.sizes.update(saved[1])


def test_a_history_the_spine_holds_is_neither_walked_nor_read_and_answered_once(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grid's next configuration checks the same log's history at other turns: each
    prefix of the last history checked is answered from its node (no message read, no
    step through the trees) and its violations are found once, whoever asks."""
    history: list[Message] = [sys_(), user("q1"), asst("", "t1"), result("t1"), asst("a1")]
    history += [user("q2"), asst("", "t9"), user("q3")]  # t9 never answered
    for end in (2, 4, 8):  # the first configuration's actions
        check_all(history[:end], prefix=True)
    assert prefixes._spine[0][0] == history
    expected = {end: _afresh(history[:end]) for end in (3, 5, 8)}
    reads: list[Message] = []
    read = validity._Scan.read
    monkeypatch.setattr(validity._Scan, "read", lambda scan, m: reads.append(m) or read(scan, m))
    answers: list[int] = []
    answer = validity._answers
    monkeypatch.setattr(
        validity, "_answers", lambda v, scan: answers.append(len(v)) or answer(v, scan)
    )
    monkeypatch.setattr(prefixes, "deepest", None)  # the spine alone answers
    for end in (3, 8, 5, 3):  # the next one's
        got = check_all(list(history[:end]), prefix=True)
        assert got == expected[end]
        got["openai"].append(got["openai"][0] if got["openai"] else None)  # the caller's own
    assert reads == []
    assert answers == [3, 5]  # once each; 8's kept from before


def test_a_longer_history_reads_only_what_the_spine_does_not_hold(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history one action later reads its new messages only, and becomes the spine;
    a history of another log starts a tree and a spine of its own."""
    history: list[Message] = [sys_(), user("q1"), asst("", "t1"), result("t1"), asst("a1")]
    check_all(history[:3], prefix=True)
    expected = _afresh(history)
    reads: list[Message] = []
    read = validity._Scan.read
    monkeypatch.setattr(validity._Scan, "read", lambda scan, m: reads.append(m) or read(scan, m))
    assert check_all(history, prefix=True) == expected
    assert reads == history[3:]
    assert prefixes._spine[0][0] == history
    other = [user("another log"), asst("a")]
    assert check_all(other, prefix=True) == _afresh(other)
    assert prefixes._spine[0][0] == other
    assert len(prefixes.ROOT.after) == 2


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(0, len(PARTS) - 1), max_size=10))
def test_a_clean_scan_is_one_every_api_finds_nothing_in(picks: list[int]) -> None:
    """``validity._answers`` skips the per-API answers of a view that breaks no rule: it is
    clean exactly when each API's ``found`` is empty, and its answers are theirs."""
    view = [PARTS[p] for p in picks]
    scan = validity._Scan()
    for message in view:
        scan.read(message)
    plain = {api: scan.found(api) for api in validity.APIS}
    assert scan.clean() == (not any(plain.values()))
    assert validity._answers(view, scan) == plain


def test_a_clean_history_is_answered_without_its_found(monkeypatch: pytest.MonkeyPatch) -> None:
    clean: list[Message] = [sys_(), user("q1"), asst("", "t1"), result("t1"), asst("a1")]
    monkeypatch.setattr(validity._Scan, "found", None)
    assert check_all(clean) == {api: [] for api in validity.APIS}


def test_a_growing_spine_grows_its_index_and_another_log_gets_its_own(fresh: None) -> None:
    """spine_run finds a view's messages on the spine by an index of its ids: the next
    history is mostly the last one grown, so its index is the last one's, the new
    messages added (not all made again); a spine that does not start with the indexed
    one gets an index of its own, and an index entry past a spine's end is not its."""
    history = [sys_(), user("q1"), asst("", "t1"), result("t1"), asst("a1"), user("q2")]
    history += [asst("a2"), user("q3"), asst("a3")]
    check_all(history[:6], prefix=True)
    nodes = prefixes._spine[0][1]
    assert prefixes.spine_run(history, 5) == (nodes[4].scan, nodes[5].scan, 1)
    index = prefixes._index[0][1]
    check_all(history, prefix=True)
    assert prefixes.spine_run(history, 5)[2] == 4
    assert prefixes._index[0][1] is index and len(index) == len(history)
    other = [sys_(), user("other"), asst("b")]
    check_all(other, prefix=True)
    assert prefixes.spine_run([*other, *history], 1) is not None
    assert prefixes._index[0][1] is not index
    assert prefixes.spine_run(history, 5) is None  # not on this spine
