"""A summary request is its prompt and settings (engine/requests.py): the messages behind
the prompt and their formatted blocks ride along for providers that read structure (the
offline one) but are not part of what determines a response, so two requests that differ
only there are equal, and a request's repr leaves them out (a repr of a request stays
short whatever the history). Pinned against ``compare=False`` / ``repr=False`` ->
``True`` (a mutation run, docs/testing.md)."""

from __future__ import annotations

from transcript_tools.engine.messages import UserMessage
from transcript_tools.engine.requests import SummaryRequest


def test_requests_differing_only_in_the_messages_behind_the_prompt_are_equal() -> None:
    one = SummaryRequest("s", 3, "the prompt", messages=(UserMessage.text("a"),))
    other = SummaryRequest(
        "s",
        3,
        "the prompt",
        messages=(UserMessage.text("b"),),
        formatted=("b",),
        formatted_cut=True,
    )
    assert one == other
    assert one != SummaryRequest("s", 3, "another prompt")


def test_a_requests_repr_leaves_out_the_messages_and_their_blocks() -> None:
    request = SummaryRequest(
        "s",
        3,
        "the prompt",
        messages=(UserMessage.text("a"),),
        formatted=("a",),
        formatted_cut=True,
    )
    text = repr(request)
    assert "the prompt" in text
    assert "messages=" not in text and "formatted=" not in text and "formatted_cut" not in text
