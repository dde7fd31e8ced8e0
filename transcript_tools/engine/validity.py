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
from collections.abc import Sequence
from dataclasses import dataclass

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

APIS = ("anthropic", "openai", "gemini", "strict")
_RECENT_LOCK = threading.Lock()  # a library caller may check views from several threads


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: the API, the rule's code, the message's index in the view, a line."""

    api: str
    rule: str
    index: int
    text: str

    def __str__(self) -> str:
        return f"{self.api}: message {self.index}: {self.rule}: {self.text}"


def role(message: Message) -> str:
    if type(message) is SystemMessage:
        return "system"
    if type(message) is AssistantMessage:
        return "assistant"
    if type(message) is ToolResultMessage:
        return "tool"
    return "user"


def _calls(message: Message) -> tuple[str, ...]:
    if type(message) is not AssistantMessage:
        return ()
    return tuple(b.id for b in message.blocks if type(b) is ToolUseBlock)


def _empty(message: Message) -> bool:
    """No content the API would accept: no block, or only blank text."""
    if type(message) is SystemMessage:
        return not message.text.strip()
    if type(message) is UserImageMessage or type(message) is ToolResultMessage:
        return False
    assert isinstance(message, (UserMessage, AssistantMessage))
    return all(type(b) is TextBlock and not b.text.strip() for b in message.blocks)


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


@dataclass(frozen=True, slots=True)
class _Facts:
    """What every API's rules read of each message of a view, found once per view (the
    four checks share it): its role, its calls' ids, whether it is empty, and how many
    system messages open the view."""

    roles: list[str]
    calls: list[tuple[str, ...]]
    empty: list[bool]
    leading_system: int

    @classmethod
    def of(cls, view: Sequence[Message]) -> _Facts:
        known = list(map(_MESSAGE_FACTS.get, map(id, view)))
        for i, entry in enumerate(known):
            if entry is None:
                known[i] = _message_facts(view[i])
        facts: list[tuple[Message, str, tuple[str, ...], bool]] = known  # type: ignore[assignment]  # no None left
        roles = [entry[1] for entry in facts]
        leading = 0
        while leading < len(roles) and roles[leading] == "system":
            leading += 1
        return cls(roles, [entry[2] for entry in facts], [entry[3] for entry in facts], leading)


def _misplaced_system(api: str, facts: _Facts, where: str) -> list[Violation]:
    roles = facts.roles
    return [
        Violation(
            api, "system-not-leading", i, f"a system message after the conversation began ({where})"
        )
        for i in range(facts.leading_system, len(roles))
        if roles[i] == "system"
    ]


def _empty_content(api: str, facts: _Facts, final_assistant_ok: bool) -> list[Violation]:
    found = []
    roles, last = facts.roles, len(facts.roles) - 1
    for i, empty in enumerate(facts.empty):
        if empty and not (final_assistant_ok and i == last and roles[i] == "assistant"):
            found.append(Violation(api, "empty-content", i, f"empty {roles[i]} message"))
    return found


def _turns(roles: list[str], start: int, merge: set[str]) -> list[list[int]]:
    """Indices of the conversation's turns after ``start``: consecutive messages whose
    roles fall in the same group are one turn (the API merges them)."""
    turns: list[list[int]] = []
    previous = None
    for i in range(start, len(roles)):
        group = "user" if roles[i] in merge else roles[i]
        if turns and group == previous:
            turns[-1].append(i)
        else:
            turns.append([i])
        previous = group
    return turns


def _paired_turns(api: str, view: Sequence[Message], facts: _Facts, noun: str) -> list[Violation]:
    """Calls answered in the very next user turn (Anthropic, Gemini): results only there.
    Only assistant messages make calls and only the user side holds results, so an
    assistant turn is checked for its calls and a user turn for its results."""
    found: list[Violation] = []
    calls_of, roles = facts.calls, facts.roles
    turns = _turns(roles, facts.leading_system, {"user", "tool", "system"})
    previous_calls: list[str] = []  # the calls of the turn before
    for n, turn in enumerate(turns):
        if roles[turn[0]] == "assistant":
            calls = [c for i in turn for c in calls_of[i]]
            if calls:
                after = turns[n + 1] if n + 1 < len(turns) else []
                answered = {
                    m.tool_call_id for m in (view[i] for i in after) if type(m) is ToolResultMessage
                }
                for call in calls:
                    if call not in answered:
                        index = max(i for i in turn if call in calls_of[i])
                        found.append(
                            Violation(
                                api,
                                "call-unanswered",
                                index,
                                f"{noun} call {call} has no result in the next turn",
                            )
                        )
            previous_calls = calls
            continue
        called = set(previous_calls)
        previous_calls = []
        seen_other = False
        for i in turn:
            kind = roles[i]
            if kind != "tool":
                seen_other = seen_other or kind != "system"
                continue
            message = view[i]
            assert type(message) is ToolResultMessage
            if message.tool_call_id not in called:
                found.append(
                    Violation(
                        api,
                        "result-orphan",
                        i,
                        f"{noun} result {message.tool_call_id} answers no call of the turn before",
                    )
                )
            elif seen_other and api == "anthropic":
                found.append(
                    Violation(
                        api,
                        "result-not-first",
                        i,
                        f"tool result {message.tool_call_id} after other content of its user turn",
                    )
                )
    return found


def _anthropic(view: Sequence[Message], facts: _Facts) -> list[Violation]:
    return (
        _misplaced_system("anthropic", facts, "only the top-level system parameter takes one")
        + _paired_turns("anthropic", view, facts, "tool_use")
        + _empty_content("anthropic", facts, final_assistant_ok=True)
    )


def _gemini(view: Sequence[Message], facts: _Facts) -> list[Violation]:
    return (
        _misplaced_system(
            "gemini", facts, "the system instruction is separate; contents are user/model"
        )
        + _paired_turns("gemini", view, facts, "function")
        + _empty_content("gemini", facts, final_assistant_ok=False)
    )


def _openai(view: Sequence[Message], facts: _Facts) -> list[Violation]:
    found: list[Violation] = []
    open_calls: dict[str, int] = {}  # id -> index of the assistant message that made the call
    answerable: set[str] = set()
    for i, message in enumerate(view):
        if type(message) is ToolResultMessage:
            if message.tool_call_id in answerable:
                answerable.discard(message.tool_call_id)
                open_calls.pop(message.tool_call_id, None)
            else:
                found.append(
                    Violation(
                        "openai",
                        "result-orphan",
                        i,
                        f"tool message {message.tool_call_id} answers no tool_calls id of the assistant message before it",
                    )
                )
            continue
        for call, index in open_calls.items():
            found.append(
                Violation(
                    "openai",
                    "call-unanswered",
                    index,
                    f"tool_call {call} not answered before the next non-tool message",
                )
            )
        open_calls = {call: i for call in facts.calls[i]}
        answerable = set(open_calls)
    for call, index in open_calls.items():
        found.append(
            Violation("openai", "call-unanswered", index, f"tool_call {call} never answered")
        )
    return sorted(found, key=lambda v: v.index)


def _strict(view: Sequence[Message], facts: _Facts) -> list[Violation]:
    found = _misplaced_system("strict", facts, "only one optional system message at the front")
    start, roles = facts.leading_system, facts.roles
    if start > 1:
        found.append(
            Violation(
                "strict", "system-not-leading", 1, "more than one system message at the front"
            )
        )
    expected = "user"
    calls: set[str] = set()
    for i in range(start, len(view)):
        message, kind = view[i], roles[i]
        if kind == "system":
            continue  # reported above
        if kind == "tool":
            if type(message) is ToolResultMessage and message.tool_call_id in calls:
                calls.discard(message.tool_call_id)
                expected = "assistant"
            else:
                found.append(
                    Violation(
                        "strict",
                        "result-orphan",
                        i,
                        "tool result not right after the assistant message that called it",
                    )
                )
            continue
        if calls:
            found.append(
                Violation(
                    "strict",
                    "call-unanswered",
                    i - 1,
                    f"tool call(s) {', '.join(sorted(calls))} not answered",
                )
            )
        if kind != expected:
            first = i == start or all(roles[j] == "system" for j in range(start, i))
            text = (
                "the conversation must start with a user message"
                if first
                else f"{kind} message where the {expected} must come: roles must alternate"
            )
            found.append(Violation("strict", "roles-not-alternating", i, text))
        calls = set(facts.calls[i])
        expected = "user" if kind == "assistant" else "assistant"
    if calls:
        found.append(
            Violation(
                "strict",
                "call-unanswered",
                len(view) - 1,
                f"tool call(s) {', '.join(sorted(calls))} not answered",
            )
        )
    return sorted(
        found + _empty_content("strict", facts, final_assistant_ok=False), key=lambda v: v.index
    )


CHECKS = {"anthropic": _anthropic, "openai": _openai, "gemini": _gemini, "strict": _strict}


def check_view(view: Sequence[Message], api: str, facts: _Facts | None = None) -> list[Violation]:
    """The violations of ``api``'s rules in ``view``, by message index (``facts``: the
    view's, when ``check_all`` found them once for every API)."""
    if api not in CHECKS:
        raise ValueError(f"unknown API {api!r} (known: {', '.join(APIS)})")
    return sorted(CHECKS[api](view, facts or _Facts.of(view)), key=lambda v: v.index)


# The last views check_all saw, by their messages' identities, each with its messages
# (held, so no other object can take one of their ids while it is here) and its result.
# One compaction's views are checked by several observers in a row (the session's
# summary record, the sweep's counts, the action scorer), and a sweep's configurations
# check the same history prefixes of a conversation one after another: each is found
# once. Messages are frozen (engine/messages.py), so the same objects in the same order
# are the same view. Bounded by the messages held (a few MB at most).
_RECENT: dict[tuple[int, ...], tuple[tuple[Message, ...], dict[str, list[Violation]]]] = {}
RECENT_MESSAGES = 1 << 16
_held = [0]  # messages held by _RECENT's views


def check_all(view: Sequence[Message]) -> dict[str, list[Violation]]:
    """Every API's violations of ``view`` (an API with none maps to an empty list)."""
    key = tuple(map(id, view))
    known = _RECENT.get(key)
    if known is None:
        facts = _Facts.of(view)
        found = {api: check_view(view, api, facts) for api in APIS}
        known = (tuple(view), found)
        with _RECENT_LOCK:
            while _RECENT and _held[0] + len(key) > RECENT_MESSAGES:
                _held[0] -= len(_RECENT.pop(next(iter(_RECENT)))[0])  # the oldest
            if key not in _RECENT:
                _RECENT[key] = known
                _held[0] += len(key)
    return {api: list(found) for api, found in known[1].items()}  # the caller's own lists
