"""Would a provider accept this view? A pure check of a message list against each target
API's documented rules (docs/policies.md, "Is the view valid?", cites each rule's page).

``check_view(view, api)`` returns the ``Violation`` s, in message order. The APIs:

* ``anthropic`` — Messages API: the system prompt is the top-level ``system``
  parameter, so only the leading system messages can go there and a system message
  anywhere else has no place (the seed's summary at the end of the view is one);
  consecutive user (or assistant) turns are merged by the API, not refused, so every
  tool result must be in the user turn right after the assistant turn that called it,
  before any other content of that turn, and every call must be answered there;
  no empty text content (an empty final assistant message is a prefill, allowed).
* ``openai`` — Chat Completions: a ``tool`` message must answer a ``tool_calls`` id of
  the assistant message it follows, and every call must be answered before the next
  non-tool message. System messages may stand anywhere.
* ``gemini`` — ``generateContent``: the system instruction is separate (only the
  leading system messages), contents are ``user`` / ``model`` turns, a function
  response must answer a call of the model turn right before it, every call must be
  answered in the next turn, and no content may be empty.
* ``strict`` — an alternating-roles endpoint (Mistral's chat templates, and the
  templates of many open-weight models served by vLLM or llama.cpp): after an optional
  system message at the front, user and assistant strictly alternate, starting with a
  user; tool results only right after the assistant message that called them.

Roles of tsum's messages: system, user (text or image), assistant, tool (a tool result).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from operator import attrgetter

from . import validity_prefixes as prefixes
from . import validity_words as words
from .messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)
from .validity_stretches import Found, read_on
from .validity_words import Violation

APIS = ("anthropic", "openai", "gemini", "strict")
_RECENT_LOCK = threading.Lock()  # a library caller may check views from several threads


_ROLES = {SystemMessage: "system", AssistantMessage: "assistant", ToolResultMessage: "tool"}


def role(message: Message) -> str:
    return _ROLES.get(type(message), "user")


def _calls(message: Message) -> tuple[str, ...]:
    if type(message) is not AssistantMessage:
        return ()
    return tuple([b.id for b in message.blocks if type(b) is ToolUseBlock])


def _empty(message: Message) -> bool:
    """No content the API would accept: no block, or only blank text."""
    if type(message) is SystemMessage:
        return _blank(message.text)
    if type(message) is UserImageMessage or type(message) is ToolResultMessage:
        return False
    assert isinstance(message, (UserMessage, AssistantMessage))
    for block in message.blocks:  # a loop, not all() over a generator: a call less
        if type(block) is not TextBlock or not _blank(block.text):
            return False
    return True


def _blank(text: str) -> bool:
    """``not text.strip()``, no copy made: isspace (the same whitespace) stops early."""
    return not text or text.isspace()


# Each message's (message, role, calls, emptiness) by its identity: a grid's views are
# mostly the same history messages, view after view and configuration after
# configuration, and a message is frozen (engine/messages.py), so its facts are found
# once. The message is held, so no other object takes its id while it is here; all are
# let go once MESSAGE_FACTS are held: enough for one conversation's messages under every
# configuration of a grid (a sweep runs them one conversation at a time), and little
# beside the messages a streamed replay keeps alive (docs/performance.md).
_MESSAGE_FACTS: dict[int, tuple[Message, str, tuple[str, ...], bool]] = {}
MESSAGE_FACTS = 1 << 14


def _message_facts(message: Message) -> tuple[Message, str, tuple[str, ...], bool]:
    known = (message, role(message), _calls(message), _empty(message))
    with _RECENT_LOCK:
        if len(_MESSAGE_FACTS) >= MESSAGE_FACTS:
            _MESSAGE_FACTS.clear()
        _MESSAGE_FACTS[id(message)] = known
    return known


# The empty set and map most reads leave, made once (never changed in place: all share)
_NONE: frozenset[str] = frozenset()
_NO_WHERE: dict[str, int] = {}


def _moved(where: dict[str, int], by: int) -> dict[str, int]:
    """Call -> message index, every index moved ``by``."""
    return {call: at + by for call, at in where.items()} if where and by else where


class _Scan:
    """Every API's check read left to right: the state after a prefix of a view and what
    it breaks so far (a rule looks only at the messages before the one read, so a prefix
    has one state in every view starting with it); ``found`` adds what the view's end
    leaves open. Fields are immutable (dicts never changed once made): copies share."""

    __slots__ = (
        "n", "leading", "opened", "misplaced", "empty",
        "group", "turn_calls", "turn_where", "pending", "called", "answered", "seen_other",
        "paired", "open_calls", "answerable", "openai", "expected", "strict_calls", "strict",
    )  # fmt: skip

    def __init__(self) -> None:
        self.n = 0  # messages read
        self.leading = 0  # system messages before any other
        self.opened = False  # a message other than a system one was read
        self.misplaced: tuple[int, ...] = ()  # system messages after the conversation began
        self.empty: tuple[tuple[int, str], ...] = ()  # (index, role) of empty messages
        # Anthropic and Gemini: turns of merged roles, calls answered in the next turn
        self.group = ""  # the current turn's: "assistant", "user" (user, tool, system)
        self.turn_calls: tuple[str, ...] = ()  # the current assistant turn's calls
        self.turn_where: dict[str, int] = {}  # call -> the last message of the turn making it
        self.pending: tuple[tuple[str, ...], dict[str, int]] | None = None  # the turn before's
        self.called: frozenset[str] = frozenset()  # calls a result of this user turn may answer
        self.answered: frozenset[str] = frozenset()  # results of this user turn
        self.seen_other = False  # this user turn held other content before a result
        self.paired: Found = ()
        # OpenAI: results right after the assistant message that called
        self.open_calls: dict[str, int] = {}  # call -> index of the assistant message
        self.answerable: frozenset[str] = frozenset()
        self.openai: Found = ()
        self.expected = "user"  # strict: alternating roles
        self.strict_calls: frozenset[str] = frozenset()
        self.strict: Found = ()

    def copy(self) -> _Scan:
        """A twin to read on, each field named (a setattr per field costs a builtin call and
        a type lookup, for every node the prefix trees keep; a test checks every slot)."""
        twin = _Scan.__new__(_Scan)
        twin.n, twin.leading, twin.opened = self.n, self.leading, self.opened
        twin.misplaced, twin.empty, twin.group = self.misplaced, self.empty, self.group
        twin.turn_calls, twin.turn_where = self.turn_calls, self.turn_where
        twin.pending, twin.called, twin.answered = self.pending, self.called, self.answered
        twin.seen_other, twin.paired = self.seen_other, self.paired
        twin.open_calls, twin.answerable = self.open_calls, self.answerable
        twin.openai, twin.expected = self.openai, self.expected
        twin.strict_calls, twin.strict = self.strict_calls, self.strict
        return twin

    def carry(self, other: _Scan, by: int) -> None:
        """Take ``other``'s open state, its message indices moved ``by`` (the findings
        and ``n`` aside: validity_stretches._jump moves them)."""
        self.group, self.turn_calls, self.called = other.group, other.turn_calls, other.called
        self.answered, self.seen_other = other.answered, other.seen_other
        self.answerable, self.expected = other.answerable, other.expected
        self.strict_calls = other.strict_calls
        self.turn_where, self.open_calls = (
            _moved(other.turn_where, by),
            _moved(other.open_calls, by),
        )
        pending = other.pending
        self.pending = pending and (pending[0], _moved(pending[1], by))

    def read(self, message: Message) -> None:
        """The scan after one more message."""
        known = _MESSAGE_FACTS.get(id(message))
        _, kind, calls, empty = known if known is not None else _message_facts(message)
        i = self.n
        self.n = i + 1
        if empty:
            self.empty += ((i, kind),)
        if not self.opened:
            if kind == "system":  # the system prompt (or the parameter's parts)
                self.leading += 1
                return
            self.opened = True
        elif kind == "system":
            self.misplaced += (i,)
        self._paired(message, i, kind, calls)
        self._openai(message, i, kind, calls)
        self._strict(message, i, kind, calls)

    def _paired(self, message: Message, i: int, kind: str, calls: tuple[str, ...]) -> None:
        group = "assistant" if kind == "assistant" else "user"
        if group != self.group:
            if group == "user":  # the assistant turn before (if any) awaits this turn
                self.pending = (self.turn_calls, self.turn_where) if self.turn_calls else None
                self.called = frozenset(self.turn_calls) if self.turn_calls else _NONE
                self.answered, self.seen_other = _NONE, False
            else:
                self.paired += self._unanswered()
                self.pending, self.turn_calls, self.turn_where = None, (), _NO_WHERE
            self.group = group
        if group == "assistant":
            if calls:
                self.turn_calls += calls
                self.turn_where = {**self.turn_where, **dict.fromkeys(calls, i)}
        elif kind == "tool":
            assert type(message) is ToolResultMessage
            call = message.tool_call_id
            self.answered |= {call}
            if call not in self.called:
                self.paired += (("result-orphan", i, call),)
            elif self.seen_other:
                self.paired += (("result-not-first", i, call),)
        elif kind != "system":
            self.seen_other = True

    def _unanswered(self) -> Found:
        """The assistant turn before this user turn: its calls this turn did not answer
        (every call of an assistant turn that ends the view)."""
        if self.group == "assistant":
            calls, where, answered = self.turn_calls, self.turn_where, frozenset[str]()
        elif self.pending is not None:
            (calls, where), answered = self.pending, self.answered
        else:
            return ()
        return tuple(("call-unanswered", where[c], c) for c in calls if c not in answered)

    def _openai(self, message: Message, i: int, kind: str, calls: tuple[str, ...]) -> None:
        if kind == "tool":
            assert type(message) is ToolResultMessage
            call = message.tool_call_id
            if call in self.answerable:
                self.answerable -= {call}
                self.open_calls = {c: at for c, at in self.open_calls.items() if c != call}
            else:
                self.openai += (("result-orphan", i, call),)
            return
        if self.open_calls:
            self.openai += tuple(("call-unanswered", at, c) for c, at in self.open_calls.items())
        if calls:
            self.open_calls, self.answerable = dict.fromkeys(calls, i), frozenset(calls)
        else:
            self.open_calls, self.answerable = _NO_WHERE, _NONE

    def _strict(self, message: Message, i: int, kind: str, calls: tuple[str, ...]) -> None:
        if kind == "system":
            return  # reported as misplaced
        if kind == "tool":
            assert type(message) is ToolResultMessage
            if message.tool_call_id in self.strict_calls:
                self.strict_calls -= {message.tool_call_id}
                self.expected = "assistant"
            else:
                self.strict += (("result-orphan", i, ""),)
            return
        if self.strict_calls:
            self.strict += (("call-unanswered", i - 1, ", ".join(sorted(self.strict_calls))),)
        if kind != self.expected:
            text = (
                "the conversation must start with a user message"
                if i == self.leading  # the first message after the system prompt
                else f"{kind} message where the {self.expected} must come: roles must alternate"
            )
            self.strict += (("roles-not-alternating", i, text),)
        self.strict_calls = frozenset(calls) if calls else _NONE
        self.expected = "user" if kind == "assistant" else "assistant"

    def clean(self) -> bool:
        """Does every API find nothing (``found`` gives each an empty list)? Most views
        and histories break no rule: their answer is had without building one."""
        return not (
            self.misplaced or self.empty or self.paired or self.openai or self.strict
            or self.open_calls or self.strict_calls or self.leading > 1 or self._unanswered()
        )  # fmt: skip

    def found(self, api: str) -> list[Violation]:
        """``api``'s violations of the view read so far, by message index."""
        if api == "openai":
            found = [words.openai_violation(*entry) for entry in self.openai]
            found += [
                Violation("openai", "call-unanswered", at, f"tool_call {c} never answered")
                for c, at in self.open_calls.items()
            ]
            return sorted(found, key=attrgetter("index"))
        misplaced = words.MISPLACED[api]
        found = [Violation(api, "system-not-leading", i, misplaced) for i in self.misplaced]
        if api == "strict":
            if self.leading > 1:
                found.append(words.strict_violation("system-not-leading", 1, words.MORE_THAN_ONE))
            found += [words.strict_violation(*entry) for entry in self.strict]
            if self.strict_calls:
                calls = ", ".join(sorted(self.strict_calls))
                found.append(words.strict_violation("call-unanswered", self.n - 1, calls))
        else:
            noun = "tool_use" if api == "anthropic" else "function"
            for rule, i, call in self.paired + self._unanswered():
                if rule != "result-not-first" or api == "anthropic":
                    found.append(words.paired_violation(api, noun, rule, i, call))
        last = self.n - 1
        found += [
            Violation(api, "empty-content", i, f"empty {kind} message")
            for i, kind in self.empty
            if not (api == "anthropic" and i == last and kind == "assistant")
        ]
        return sorted(found, key=attrgetter("index"))


def check_view(view: Sequence[Message], api: str, scan: _Scan | None = None) -> list[Violation]:
    """The violations of ``api``'s rules in ``view``, by message index (``scan``: the
    view's, when ``check_all`` read it once for every API)."""
    if api not in APIS:
        raise ValueError(f"unknown API {api!r} (known: {', '.join(APIS)})")
    return (scan or _scan(view, remember=False)).found(api)


def _answers(view: Sequence[Message], scan: _Scan) -> dict[str, list[Violation]]:
    """Every API's violations of ``view``, whose ``scan`` it is."""
    if scan.clean():
        return {api: [] for api in APIS}
    return {api: check_view(view, api, scan) for api in APIS}


prefixes.ROOT.scan = _Scan()  # the scan of no message, where every tree starts


def _scan(
    view: Sequence[Message], remember: bool, path: list[prefixes.Node] | None = None
) -> _Scan:
    """The scan of ``view``: from the longest prefix of it the trees hold
    (validity_prefixes.py), the rest read (and kept in the trees when ``remember``;
    ``path``: given the node after each message)."""
    node, done = prefixes.deepest(view, path)
    scan = node.scan.copy()

    def kept(message: Message) -> None:  # the message just read, as the next node
        nonlocal node
        node = prefixes.keep(node, message, scan.copy(), id(view[0]))
        if path is not None:
            path.append(node)

    read_on(scan, view, done, kept if remember else None)  # the rest, by known stretches
    return scan


def _history(view: Sequence[Message]) -> dict[str, list[Violation]]:
    """``check_all(view, prefix=True)``'s answer, kept on the node after the view: the
    spine holds most histories whole (validity_prefixes.py); one it does not is read
    into the trees and becomes the spine."""
    node = prefixes.on_spine(view)
    if node is None:
        path: list[prefixes.Node] = []
        _scan(view, True, path)
        prefixes.follow(view, path)
        node = path[-1] if path else prefixes.ROOT
    found = node.found
    if found is None:
        found = node.found = _answers(view, node.scan)
    return found


# The last views check_all saw, by their messages' identities, each with its messages
# (held, so no other object can take one of their ids while it is here) and its result:
# one compaction's view is checked by several observers in a row (the session's summary
# record, the sweep's counts, the action scorer). Bounded by the messages held.
_RECENT: dict[tuple[int, ...], tuple[tuple[Message, ...], dict[str, list[Violation]]]] = {}
RECENT_MESSAGES = 1 << 16
_held = [0]  # messages held by _RECENT's views


def check_all(view: Sequence[Message], *, prefix: bool = False) -> dict[str, list[Violation]]:
    """Every API's violations of ``view`` (an API with none maps to an empty list).
    ``prefix``: ``view`` is a log's history up to now, which later calls extend (its
    scan and answer are kept for them in the trees: ``_history``)."""
    return {api: list(found) for api, found in kept_answer(view, prefix=prefix).items()}


def kept_answer(
    view: Sequence[Message], *, prefix: bool = False
) -> Mapping[str, Sequence[Violation]]:
    """``check_all``'s answer as it is kept for the next caller that asks (not a copy:
    read it, never change it)."""
    if prefix:
        return _history(view)
    key = tuple(map(id, view))
    known = _RECENT.get(key)
    if known is None:
        scan = _scan(view, False)
        known = (tuple(view), _answers(view, scan))
        with _RECENT_LOCK:
            while _RECENT and _held[0] + len(key) > RECENT_MESSAGES:
                _held[0] -= len(_RECENT.pop(next(iter(_RECENT)))[0])  # the oldest
            if key not in _RECENT:
                _RECENT[key] = known
                _held[0] += len(key)
    return known[1]
