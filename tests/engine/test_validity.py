"""Is a view one the provider would accept? A failing and a passing example per API,
and the seed's own placement (a system message at the end of the view)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine import validity
from transcript_tools.engine import validity_prefixes as prefixes
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.validity import APIS, Violation, check_all, check_view


def sys_(text: str = "You are helpful.") -> SystemMessage:
    return SystemMessage(text)


def user(text: str = "hi") -> UserMessage:
    return UserMessage.text(text)


def asst(text: str = "ok", *calls: str) -> AssistantMessage:
    blocks = ((TextBlock(text),) if text else ()) + tuple(ToolUseBlock(c, "bash") for c in calls)
    return AssistantMessage(blocks)


def result(call: str, content: str = "out") -> ToolResultMessage:
    return ToolResultMessage(call, content)


# A clean agent exchange: system, user, a tool call answered, a final answer.
GOOD: list[Message] = [
    sys_(),
    user(),
    asst("", "t1", "t2"),
    result("t1"),
    result("t2"),
    asst("done"),
    user("thanks"),
]


def rules(view: list[Message], api: str) -> list[tuple[str, int]]:
    return [(v.rule, v.index) for v in check_view(view, api)]


@pytest.mark.parametrize("api", APIS)
def test_a_clean_view_passes_every_api(api: str) -> None:
    assert check_view(GOOD, api) == []


def test_seed_placement_is_a_violation_where_system_must_lead() -> None:
    """The seed's summary: one system message at the END of the focused view."""
    view = [*GOOD, SystemMessage("[上下文摘要] the summary")]
    found = check_all(view)
    for api in ("anthropic", "gemini", "strict"):
        assert ("system-not-leading", len(view) - 1) in [(v.rule, v.index) for v in found[api]], api
    assert found["openai"] == []  # Chat Completions takes a system message anywhere
    line = str(found["anthropic"][0])
    assert line.startswith("anthropic: message 7: system-not-leading: ") and "\n" not in line


def test_anthropic_failing_examples() -> None:
    # a tool result that answers nothing
    assert rules([user(), asst("a"), result("zz")], "anthropic") == [("result-orphan", 2)]
    # a call left without its result (the next user turn does not answer it)
    assert rules([user(), asst("", "t1"), user("next")], "anthropic") == [("call-unanswered", 1)]
    # the result must come first in its user turn (consecutive user messages are merged)
    assert rules([user(), asst("", "t1"), user("note"), result("t1")], "anthropic") == [
        ("result-not-first", 3)
    ]
    # empty text
    assert rules([user("  "), asst("a")], "anthropic") == [("empty-content", 0)]


def test_anthropic_merges_consecutive_turns_and_allows_an_empty_final_prefill() -> None:
    assert (
        check_view([sys_(), sys_("more"), user(), user("again"), asst("a"), asst("")], "anthropic")
        == []
    )


def test_openai_failing_and_passing_examples() -> None:
    assert rules([user(), result("t9")], "openai") == [("result-orphan", 1)]
    assert rules([user(), asst("", "t1", "t2"), result("t1"), user("go")], "openai") == [
        ("call-unanswered", 1)
    ]
    assert rules([user(), asst("", "t1")], "openai") == [("call-unanswered", 1)]
    # a result after an intervening message no longer answers the call
    assert ("result-orphan", 3) in rules(
        [user(), asst("", "t1"), user("x"), result("t1")], "openai"
    )
    # system messages anywhere are fine; so is an assistant first
    assert check_view([asst("a"), sys_(), user(), sys_("late")], "openai") == []


def test_gemini_failing_and_passing_examples() -> None:
    assert rules([sys_(), user(), asst("a"), sys_("late")], "gemini") == [("system-not-leading", 3)]
    assert rules([user(), asst("", "f1"), asst("more")], "gemini") == [("call-unanswered", 1)]
    assert rules([user(), asst("a"), result("f1")], "gemini") == [("result-orphan", 2)]
    assert rules([user(), AssistantMessage(())], "gemini") == [("empty-content", 1)]
    assert check_view([sys_(), user(), asst("", "f1"), result("f1"), asst("done")], "gemini") == []


def test_strict_failing_and_passing_examples() -> None:
    assert rules([sys_(), user(), user("again"), asst("a")], "strict") == [
        ("roles-not-alternating", 2)
    ]
    assert rules([sys_(), asst("a"), user()], "strict") == [("roles-not-alternating", 1)]
    assert rules([user(), asst("a"), asst("b")], "strict") == [("roles-not-alternating", 2)]
    # an orphan result, and then two assistant messages with nothing valid between them
    assert rules([user(), asst("a"), result("t1"), asst("b")], "strict") == [
        ("result-orphan", 2),
        ("roles-not-alternating", 3),
    ]
    assert rules([sys_(), sys_("two"), user(), asst("a")], "strict") == [("system-not-leading", 1)]
    assert (
        check_view([sys_(), user(), asst("", "t1"), result("t1"), asst("b"), user()], "strict")
        == []
    )


def test_a_user_role_summary_after_a_user_turn_breaks_only_strict_endpoints() -> None:
    """Aider's shape: the summary (a user message) followed by a tail that starts with a user."""
    view = [sys_(), user("[summary] earlier work"), user("next task"), asst("ok")]
    found = check_all(view)
    assert found["strict"] == [
        Violation(
            "strict",
            "roles-not-alternating",
            2,
            "user message where the assistant must come: roles must alternate",
        )
    ]
    assert found["anthropic"] == found["openai"] == found["gemini"] == []


def test_unknown_api_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown API 'mistral'"):
        check_view(GOOD, "mistral")


# The view each preset's placement builds, by hand, on one small conversation: the system
# prompt, then (kept, summary) in the preset's order. Which APIs would refuse it.
SUMMARY_USER = UserMessage.text("[summary] the earlier work")
PLACED: dict[str, list[Message]] = {
    "seed": [sys_(), user("q2"), asst("a2"), SystemMessage("[上下文摘要] s")],
    "claude-code": [sys_(), SUMMARY_USER, asst("continuing")],
    "codex": [sys_(), user("q1"), user("q2"), SUMMARY_USER, asst("continuing")],
    "opencode": [sys_(), user("q2"), asst("a2"), user("[compaction requested]"), asst("summary")],
    "gemini-cli": [sys_(), SUMMARY_USER, asst("Understood."), user("q2"), asst("a2")],
    "aider": [sys_(), SUMMARY_USER, user("q2"), asst("a2")],
    "inspect-ai": [sys_(), user("the task"), SUMMARY_USER, asst("continuing")],
}
REFUSED_BY = {
    "seed": {"anthropic", "gemini", "strict"},
    "claude-code": set(),
    "codex": {"strict"},
    "opencode": set(),
    "gemini-cli": set(),
    "aider": {"strict"},
    "inspect-ai": {"strict"},
}


@pytest.mark.parametrize("name", sorted(PLACED))
def test_which_apis_refuse_each_presets_placement(name: str) -> None:
    found = check_all(PLACED[name])
    assert {api for api, violations in found.items() if violations} == REFUSED_BY[name]


def test_check_all_remembers_a_view_by_its_messages_not_by_its_shape() -> None:
    """check_all keeps its last views' results (one compaction's view is checked by
    several observers in a row): the same messages give the same result, which the
    caller may change without changing the next answer; another view of the same
    length and roles is checked afresh."""
    broken = [user(), asst("", "t1"), user("next")]  # the call is never answered
    first = check_all(broken)
    assert [(v.rule, v.index) for v in first["openai"]] == [("call-unanswered", 1)]
    first["openai"].clear()  # the caller's own list
    again = check_all(list(broken))  # another list, the same messages: remembered
    assert [(v.rule, v.index) for v in again["openai"]] == [("call-unanswered", 1)]
    answered = [broken[0], asst("", "t1"), result("t1")]  # same length, other messages
    assert check_all(answered)["openai"] == []
    assert check_all(broken)["openai"] == again["openai"]


def test_check_all_forgets_its_oldest_views_beyond_the_messages_it_may_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(validity, "RECENT_MESSAGES", 6)  # three views of two messages
    monkeypatch.setattr(validity, "_RECENT", {})
    monkeypatch.setattr(validity, "_held", [0])
    views = [[user(f"q{n}"), asst("", "t1")] for n in range(5)]
    for view in views:
        assert [v.rule for v in check_all(view)["openai"]] == ["call-unanswered"]
    assert [key for key in validity._RECENT] == [tuple(map(id, v)) for v in views[2:]]
    assert validity._held == [6]


def test_check_all_from_several_threads_gives_each_its_views_violations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A library caller may check views from threads: the memo's evictions (tiny here,
    so they happen all the time) never break a call nor mix two views' answers."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(validity, "RECENT_MESSAGES", 5)
    monkeypatch.setattr(validity, "_RECENT", {})
    monkeypatch.setattr(validity, "_held", [0])
    views = [[user(f"q{n}"), asst("", f"t{n}")] for n in range(200)]
    expected = [[str(v) for v in check_all(view)["openai"]] for view in views]

    def check(n: int) -> list[str]:
        return [str(v) for v in check_all(views[n])["openai"]]

    with ThreadPoolExecutor(4) as pool:
        for _ in range(5):
            assert list(pool.map(check, range(len(views)))) == expected
    assert validity._held[0] == sum(len(entry[0]) for entry in validity._RECENT.values()) <= 5


# Views with every rule broken somewhere (and the clean one), for the facts memo below.
MIXED: list[list[Message]] = [
    GOOD,
    [user(), asst("", "t1"), user("next")],
    [sys_(), user(), asst("", "t1"), user("first"), result("t1"), sys_("late"), asst("")],
    [asst("hi"), result("t9"), user(""), user("x"), asst("", "a", "b"), result("b")],
    [sys_(), sys_(), user(), asst("ok"), asst("again"), result("t1")],
]


def _afresh(view: list[Message]) -> dict[str, list[Violation]]:
    """Every API's violations of ``view`` found with no memo: copies of its messages
    (other objects: no fact, prefix or view any memo holds is theirs)."""
    import copy

    return {api: check_view([copy.copy(m) for m in view], api) for api in APIS}


def test_the_message_facts_memo_gives_every_check_of_fresh_facts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message's role, calls and emptiness are found once (validity._message_facts) and
    reused by every view that holds it: each API's violations are those of facts found
    afresh from each message (no memo), whether the memo is cold, warm, or warmed by
    other views of the same messages."""
    monkeypatch.setattr(validity, "_MESSAGE_FACTS", {})
    views = MIXED + [view[::-1] for view in MIXED]  # the same messages in other views
    for _ in ("cold", "warm"):
        for view in views:
            assert {api: check_view(view, api) for api in APIS} == _afresh(view)
    held = {id(m) for view in MIXED for m in view}
    assert held <= set(validity._MESSAGE_FACTS)
    assert sum(len(v) for view in views for v in _afresh(view).values()) > 10


# Messages to build histories of: each rule can break somewhere in them.
PARTS: list[Message] = [
    sys_(),
    sys_("late"),
    user(),
    user(""),
    asst("ok"),
    asst(""),
    asst("", "t1"),
    asst("x", "t1", "t2"),
    result("t1"),
    result("t2"),
    result("t9"),
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, len(PARTS) - 1), max_size=14),
    st.lists(st.integers(0, len(PARTS) - 1), max_size=6),
    st.integers(0, 14),
)
def test_a_history_checked_prefix_by_prefix_is_checked_as_from_scratch(
    picks: list[int], view_picks: list[int], cut: int
) -> None:
    """check_all(prefix=True) keeps the scan of every prefix of a history (validity._scan)
    and starts the next, longer one where it stopped; a view that shares a kept prefix
    starts from it too. Every answer is the one found with no memo."""
    history = [PARTS[p] for p in picks]
    for end in range(len(history) + 1):
        assert check_all(history[:end], prefix=True) == _afresh(history[:end])
    view = history[:cut] + [PARTS[p] for p in view_picks]  # a history prefix, then others
    assert check_all(view) == _afresh(view)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, len(PARTS) - 1), min_size=1, max_size=16),
    st.lists(st.tuples(st.integers(0, 16), st.integers(0, 16), st.integers(-1, 10)), max_size=4),
)
def test_a_view_read_by_known_stretches_is_checked_as_from_scratch(
    picks: list[int], cuts: list[tuple[int, int, int]]
) -> None:
    """A view made of the history's stretches in new places (a slice dropped, a message put
    in) takes each stretch it holds at a quiet point whole (validity_stretches.py), its
    findings shifted to where it now stands: every answer is the one found with no memo."""
    history = [PARTS[p] for p in picks]
    for end in range(len(history) + 1):
        assert check_all(history[:end], prefix=True) == _afresh(history[:end])
    view = list(history)
    for start, stop, put in cuts:
        view[start:stop] = [] if put < 0 else [PARTS[put]]
        for _ in ("read", "again"):  # the second time from the stretches the first kept
            assert {api: check_view(view, api) for api in APIS} == _afresh(view)


def _fresh_reads(monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    """Every message a check reads from now on, with no history's prefix tree kept yet."""
    reads: list[Message] = []
    read = validity._Scan.read
    monkeypatch.setattr(validity._Scan, "read", lambda scan, m: reads.append(m) or read(scan, m))
    monkeypatch.setattr(prefixes, "ROOT", prefixes.Node(None, validity._Scan(), {}))
    monkeypatch.setattr(prefixes, "sizes", {})
    monkeypatch.setattr(prefixes, "_spine", [prefixes._NO_SPINE])
    return reads


def test_each_message_of_a_growing_history_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A history checked at every action, one prefix longer each time and again by the
    next configuration, reads each of its messages once (not once per prefix); a view
    starting with a kept prefix reads only what follows it; the trees of the last
    PREFIX_TREES histories are kept, all let go at PREFIX_NODES."""
    reads = _fresh_reads(monkeypatch)
    monkeypatch.setattr(validity, "_RECENT", {})
    monkeypatch.setattr(validity, "_held", [0])
    history = [sys_(), user("q1"), asst("", "t1"), result("t1"), asst("a1"), user("q2")]
    for _ in ("a configuration", "the next one"):
        for end in range(1, len(history) + 1):
            check_all(history[:end], prefix=True)
    assert reads == history
    reads.clear()
    summary = user("[summary]")
    check_all([*history[:2], summary, *history[4:]])
    assert reads == [summary, *history[4:]]
    others = [[user(f"log {n}"), asst("a")] for n in range(prefixes.PREFIX_TREES)]
    for other in others:  # the first history's tree is the oldest: let go
        check_all(other, prefix=True)
    assert list(prefixes.sizes.values()) == [2] * prefixes.PREFIX_TREES
    reads.clear()
    validity._RECENT.clear()  # the views' memo aside: the trees alone
    check_all(history, prefix=True)
    assert reads == history
    monkeypatch.setattr(prefixes, "PREFIX_NODES", 9)
    check_all([user("other"), *history], prefix=True)
    assert list(prefixes.sizes.values()) == [7]  # all let go at 9 nodes, then this one kept


def test_an_unanswered_call_is_named_in_each_apis_own_words() -> None:
    # Anthropic calls it a tool_use block, Gemini a functionCall: the line says which.
    view: list[Message] = [user(), asst("", "t1"), user("next")]
    said = {
        api: [v.text for v in check_view(view, api) if v.rule == "call-unanswered"]
        for api in ("anthropic", "gemini")
    }
    assert said == {
        "anthropic": ["tool_use call t1 has no result in the next turn"],
        "gemini": ["function call t1 has no result in the next turn"],
    }


def test_each_broken_pairing_has_its_own_line() -> None:
    # A result answering nothing, and a result after other content of its user turn.
    orphan: list[Message] = [user(), asst("ok"), result("zz")]
    late: list[Message] = [user(), asst("", "t1"), user("note"), result("t1")]
    said = {
        (api, name): [(v.rule, v.text) for v in check_view(view, api) if v.rule != "empty-content"]
        for api in ("anthropic", "openai")
        for name, view in (("orphan", orphan), ("late", late))
    }
    assert said[("anthropic", "orphan")] == [
        ("result-orphan", "tool_use result zz answers no call of the turn before")
    ]
    assert said[("anthropic", "late")] == [
        ("result-not-first", "tool result t1 after other content of its user turn")
    ]
    assert said[("openai", "orphan")] == [
        (
            "result-orphan",
            "tool message zz answers no tool_calls id of the assistant message before it",
        )
    ]
    assert ("call-unanswered", "tool_call t1 not answered before the next non-tool message") in (
        said[("openai", "late")]
    )


def test_a_scans_copy_holds_every_field_of_it() -> None:
    """_Scan.copy names each field (a slot's store, not a setattr per name): a field
    added to the scan and left out of copy would make a twin read on from a default."""
    from transcript_tools.engine.validity import _Scan

    scan = _Scan()
    marks = {name: object() for name in _Scan.__slots__}
    for name, mark in marks.items():
        setattr(scan, name, mark)
    twin = scan.copy()
    assert {name: getattr(twin, name) for name in _Scan.__slots__} == marks
    assert twin is not scan


@pytest.mark.parametrize("text", ["", " ", "\n\t ", "\u3000\u2028", "\x1c\x1f", "x", " x\n", "\n."])
def test_a_blank_text_is_one_strip_would_empty(text: str) -> None:
    """Emptiness asks isspace, not strip (no copy of a text ending in a newline): the
    same whitespace, so a message is empty exactly where strip leaves nothing."""
    view: list[Message] = [user(), asst(text), user(), sys_(text)]
    empty = [v.index for v in check_view(view, "gemini") if v.rule == "empty-content"]
    assert empty == [i for i in (1, 3) if not text.strip()]


def test_a_view_ending_in_the_historys_last_turns_reads_none_of_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A compaction's view holds the history's last turns behind a new summary: from the
    first quiet point in them it takes the history's own scan of them (the spine's),
    moved to where they now stand, even where they end mid-turn (no known stretch ends
    there); only the new messages and the turn's opening are read."""
    reads = _fresh_reads(monkeypatch)
    history = [sys_(), user("q1"), asst("", "t1"), result("t1"), asst("a1"), user("q2")]
    history += [asst("", "t2", "t3"), result("t2"), user(""), result("t3"), asst("", "t4")]
    check_all(history, prefix=True)
    late = sys_("[summary at the end]")
    for tail in (history[5:], [*history[5:], late], history[5:8]):
        summary, ack = user("[summary]"), asst("noted")  # each compaction's own
        view = [history[0], summary, ack, *tail]
        expected = _afresh(view)
        reads.clear()
        assert check_all(view) == expected
        assert reads == [summary, ack, history[5], *view[9:]]
    assert any(check_all(view).values())  # findings moved, not only a clean run


def test_the_kept_answer_is_shared_and_check_all_gives_each_caller_a_copy() -> None:
    """new_violations reads the answer as kept (validity.kept_answer: no copy per check);
    check_all's lists are the caller's own, so changing them leaves the kept one whole."""
    from transcript_tools.engine.validity import kept_answer

    view: list[Message] = [user(), asst("", "t1"), user("next"), sys_("late")]
    kept = kept_answer(view)
    assert kept_answer(view) is kept and kept["anthropic"]
    mine = check_all(view)
    assert mine == kept
    mine["anthropic"].clear()
    assert kept_answer(view)["anthropic"] == check_all(view)["anthropic"] != []
    history = [*GOOD, result("t9")]  # a history answer is kept on its node the same way
    assert kept_answer(history, prefix=True) is kept_answer(history, prefix=True)
