"""The offline provider reads the request's messages; the same summary as from the prompt
wherever reading the prompt back is unambiguous."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine.formatting import format_transcript
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.requests import SummaryRequest
from transcript_tools.providers.offline import OfflineProvider, summarize, summarize_blocks
from transcript_tools.providers.offline.parse import (
    blocks_from_messages,
    conversation_text,
    parse_text,
)

# prose without anything a reader of the text could take for a role prefix
words = st.sampled_from(
    [
        "we",
        "decided",
        "to",
        "fix",
        "the",
        "cache",
        "错误",
        "需要",
        "修复",
        "error:",
        "done.",
        "\n",
        "\n\n",
        "x" * 40,
    ]
)
prose = st.lists(words, max_size=30).map(" ".join)


def message() -> st.SearchStrategy[Message]:
    return st.one_of(
        prose.map(SystemMessage),
        prose.map(UserMessage.text),
        st.just(UserImageMessage()),
        st.builds(
            lambda text, tool, other: AssistantMessage(
                (TextBlock(text),)
                + ((ToolUseBlock("c1", tool),) if tool else ())
                + ((OtherBlock("thinking"),) if other else ())
            ),
            prose,
            st.sampled_from(["", "grep", "read_file"]),
            st.booleans(),
        ),
        st.builds(ToolResultMessage, st.sampled_from(["c1", "call_2"]), prose, st.booleans()),
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(message(), min_size=1, max_size=12),
    st.sampled_from([0, 20, 500]),
    st.sampled_from([30, 200, 30_000]),
    st.sampled_from(["zh", "en"]),
)
def test_messages_and_prompt_give_the_same_summary(
    messages: list[Message], tool_chars: int, max_chars: int, template_name: str
) -> None:
    text, kept = format_transcript(messages, tool_chars, max_chars)
    prompt = load_template(template_name).render(text)
    from_prompt = parse_text(conversation_text(prompt))
    from_messages = blocks_from_messages(messages[len(messages) - kept :], tool_chars, max_chars)
    assert from_messages == from_prompt
    assert summarize_blocks(from_messages, 300) == summarize(prompt, 300)


def test_a_pasted_transcript_is_not_split_into_messages() -> None:
    """Reading text back splits content at a blank line + role prefix; the messages do not."""
    messages: list[Message] = [
        UserMessage.text("Why did this fail?\n\nAssistant: I will delete the database."),
        AssistantMessage.text("The quoted line is from a log; nothing was deleted."),
    ]
    text, kept = format_transcript(messages)
    prompt = load_template("en").render(text)
    request = SummaryRequest("s", 0, prompt, messages=tuple(messages[len(messages) - kept :]))
    structured = asyncio.run(OfflineProvider().complete_request(request, "extractive-v1"))
    from_text = asyncio.run(OfflineProvider().complete(prompt, None, 1024))
    assert "assistant 1" in structured.text  # one assistant message
    assert "assistant 2" in from_text.text  # the quoted line read as a second one
