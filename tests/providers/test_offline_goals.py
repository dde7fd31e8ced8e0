"""The offline summary's "Goals and requests" section and its length: every request while
they fit, the ones that set a rule kept, the requests an earlier summary carried, no IDE
boilerplate; and a summary well shorter than the conversation it is shown."""

from __future__ import annotations

import asyncio

from transcript_tools.engine.formatting import format_transcript
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
)
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.requests import SummaryRequest
from transcript_tools.engine.tokens import estimate_text_tokens
from transcript_tools.providers.offline import OfflineProvider
from transcript_tools.providers.offline.goals import previous_requests


def summary(
    messages: list[Message],
    *,
    template: str = "en",
    previous: str = "",
    max_tokens: int = 1024,
    max_chars: int = 30_000,
) -> str:
    """The summary the engine's request would get: the prompt holds the newest messages
    that fit ``max_chars``, and the previous summary when the template passes it."""
    text, kept = format_transcript(messages, 500, max_chars)
    prompt = load_template(template).render(text, previous_summary=previous)
    request = SummaryRequest(
        "s",
        0,
        prompt,
        max_tokens=max_tokens,
        messages=tuple(messages[len(messages) - kept :]),
        max_transcript_chars=max_chars,
    )
    return asyncio.run(OfflineProvider().complete_request(request, "extractive-v1")).text


def turns(requests: list[str], reply: str = "Done.") -> list[Message]:
    out: list[Message] = []
    for text in requests:
        out += [UserMessage.text(text), AssistantMessage.text(reply)]
    return out


def goals(text: str) -> list[str]:
    lines = text.split("\n")
    start = lines.index("Goals and requests:") + 1
    end = lines.index("", start)
    return lines[start:end]


ASKS = [
    "Find out why the nightly export job fails since Monday",
    "Read the cron logs of the exporter host",
    "Check the cache metadata table for the version key",
    "Look at migration 0042 and what it pins",
    "Read the version from the settings module instead",
    "Open a pull request with the fix",
]


def test_every_request_is_listed_while_they_fit() -> None:
    # Before: the earliest and the three latest only; the middle ones were lost.
    listed = goals(summary(turns(ASKS)))
    assert listed[0] == f"- Earliest: {ASKS[0]}"
    assert listed[1:-1] == [f"- {ask}" for ask in ASKS[1:-1]]
    assert listed[-1] == f"- Latest: {ASKS[-1]}"


def test_a_request_that_sets_a_rule_stays_listed_when_older_ones_are_left_out() -> None:
    asks = [f"Step {i}: rerun the export for shard {i}" for i in range(20)]
    asks[3] = "Fix the factory, and keep the old signature working"
    listed = goals(summary(turns(asks)))
    assert listed[0] == f"- Earliest: {asks[0]}"
    assert "- Fix the factory, and keep the old signature working" in listed
    assert listed[-1] == f"- Latest: {asks[-1]}"
    shown = len(listed) - 1  # one line counts the others
    assert f"- … {20 - shown} other requests not shown" in listed
    assert "- Step 4: rerun the export for shard 4" not in listed  # an old, plain one


def test_the_ides_context_around_a_request_is_left_out() -> None:
    wrapped = (
        "<ide_opened_file>The user opened the file /Users/dev/site/tokenizer.html in the IDE. "
        "This may or may not be related to the current task.</ide_opened_file> "
        "Please fill in the readme"
    )
    text = summary([UserMessage.text(wrapped), AssistantMessage.text("Done.")])
    assert "- Request: Please fill in the readme" in text
    assert "may or may not be related" not in text


def long_session() -> list[Message]:
    """The first request, then enough tool output to push it out of a 4,000-character
    window; then a second request."""
    messages: list[Message] = [
        UserMessage.text("Port the billing exporter to ClickHouse and keep the CSV layout"),
        AssistantMessage.text("Starting with the exporter."),
    ]
    for i in range(12):
        messages.append(ToolResultMessage(f"c{i}", f"row {i} " + "x" * 480))
    messages += [UserMessage.text("Now add a retry around the upload step")]
    return messages


def test_requests_of_the_previous_summary_are_carried_over() -> None:
    messages = long_session()
    first = summary(messages[:2], max_chars=4_000)
    assert "Port the billing exporter to ClickHouse" in first
    # The next summary's window no longer shows the first request.
    window, _ = format_transcript(messages, 500, 4_000)
    assert "Port the billing exporter" not in window
    carried = summary(messages, previous=first, max_chars=4_000)
    assert goals(carried) == [
        "- Earliest: Port the billing exporter to ClickHouse and keep the CSV layout",
        "- Latest: Now add a retry around the upload step",
    ]
    # The seed's template passes no previous summary: nothing to carry it from.
    seed = summary(messages, template="zh", previous=first, max_chars=4_000)
    assert "Port the billing exporter" not in seed


def test_only_this_providers_own_summary_is_read_back() -> None:
    ours = summary(turns(ASKS[:2]))
    prompt = load_template("en").render("User: hi", previous_summary=ours)
    assert previous_requests(prompt) == [ASKS[0], ASKS[1]]
    foreign = "Goals and requests:\n- Earliest: something a model wrote\n"
    assert previous_requests(load_template("en").render("User: hi", previous_summary=foreign)) == []
    # A summary quoted inside the conversation is not the previous summary.
    assert previous_requests(load_template("en").render(f"User: {ours}")) == []


def test_the_summary_stays_within_a_third_of_a_long_enough_conversation() -> None:
    messages: list[Message] = []
    for i in range(16):
        messages += [
            UserMessage.text(f"{ASKS[i % 6]} for shard {i}, then report the row counts"),
            AssistantMessage.text(
                f"I decided to rerun shard {i} with the settings module; we should compare "
                f"the row counts of shard {i} before and after the change (src/shard_{i}.py)."
            ),
        ]
    shown = sum(estimate_text_tokens(m.blocks[0].text) for m in messages)  # type: ignore[union-attr]
    assert 300 < shown // 3 < 1024  # the share binds, not the floor nor the budget
    text = summary(messages)
    assert estimate_text_tokens(text) <= shown // 3
    # the most detailed level would have been longer: the share chose a shorter one
    assert len(goals(text)) < 11
    # a short conversation is not squeezed under the floor of 300 tokens
    short = messages[:8]
    shown = sum(estimate_text_tokens(m.blocks[0].text) for m in short)  # type: ignore[union-attr]
    assert shown // 3 < estimate_text_tokens(summary(short)) <= 300
