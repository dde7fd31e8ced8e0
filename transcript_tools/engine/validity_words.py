"""The words of validity.py's findings: a ``Violation`` per broken rule, and its line in
each API's own terms (docs/policies.md, "Is the view valid?")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: the API, the rule's code, the message's index in the view, a line."""

    api: str
    rule: str
    index: int
    text: str

    def __str__(self) -> str:
        return f"{self.api}: message {self.index}: {self.rule}: {self.text}"


MORE_THAN_ONE = "more than one system message at the front"
MISPLACED = {
    api: f"a system message after the conversation began ({where})"
    for api, where in (
        ("anthropic", "only the top-level system parameter takes one"),
        ("gemini", "the system instruction is separate; contents are user/model"),
        ("strict", "only one optional system message at the front"),
    )
}


def paired_violation(api: str, noun: str, rule: str, i: int, call: str) -> Violation:
    if rule == "call-unanswered":
        return Violation(api, rule, i, f"{noun} call {call} has no result in the next turn")
    if rule == "result-orphan":
        return Violation(api, rule, i, f"{noun} result {call} answers no call of the turn before")
    return Violation(api, rule, i, f"tool result {call} after other content of its user turn")


def openai_violation(rule: str, i: int, call: str) -> Violation:
    if rule == "result-orphan":
        text = f"tool message {call} answers no tool_calls id of the assistant message before it"
    else:
        text = f"tool_call {call} not answered before the next non-tool message"
    return Violation("openai", rule, i, text)


def strict_violation(rule: str, i: int, text: str) -> Violation:
    if rule == "result-orphan":
        text = "tool result not right after the assistant message that called it"
    elif rule == "call-unanswered":
        text = f"tool call(s) {text} not answered"
    return Violation("strict", rule, i, text)
