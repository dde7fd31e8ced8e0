"""Aider's chat history (Markdown) and request log (plain text): sessions, turns, usage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.corpus import CORPUS, FIXTURES, needs_corpus, read
from tests.support.detection import detect_format
from transcript_tools.engine.messages import (
    INJECTED,
    OBSERVATION,
    PERSON,
    AssistantMessage,
    Conversation,
    TextBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.rules import split_turns
from transcript_tools.errors import InputError
from transcript_tools.formats import read_conversations
from transcript_tools.formats.inputs import expand_inputs
from transcript_tools.formats.source import Source

CHAT = FIXTURES / "representative_aider_chat.aider.chat.history.md"
LLM = FIXTURES / "representative_aider.aider.llm.history"
REAL_LLM = CORPUS / "aider" / "friendly_names.aider.llm.history"

# What Aider itself writes as a user message (its prompts in aider/coders/*_prompts.py),
# listed here apart from the reader's own list so the test can catch it missing one.
AIDER_WRITES = (
    "I am working with you on code",
    "Here are summaries of some files",
    "I have *added these files to the chat*",
    "I made those changes to the files.",
    "I committed the changes with git hash",
    "I added these files to the chat:",
    "I ran this command:",
    "I spoke to you previously",
)


def assistants(conv: Conversation) -> list[AssistantMessage]:
    return [m for m in conv.messages if isinstance(m, AssistantMessage)]


def recorded(convs: list[Conversation]) -> int:
    return sum(m.usage.total_tokens for c in convs for m in assistants(c) if m.usage)


# ---- chat history -------------------------------------------------------------------------


def chat_counts(path: Path) -> dict[str, int]:
    """Counted from the raw Markdown with plain string handling."""
    sessions = path.read_text().split("# aider chat started at ")[1:]
    turns = calls = tokens = 0
    kept = 0
    multiplier = {"k": 1000, "M": 1_000_000, "": 1}
    for chunk in sessions:
        prompts: list[str] = []
        previous_was_prompt = False
        for line in chunk.splitlines():
            if line == "####" or line.startswith("#### "):
                if not previous_was_prompt:
                    prompts.append(line[5:].strip())
                previous_was_prompt = True
                continue
            previous_was_prompt = False
            if line.startswith("> Tokens:"):
                calls += 1
                for number, unit in re.findall(r"([\d.,]+)([kM]?) (?:sent|received)", line):
                    tokens += round(float(number.replace(",", "")) * multiplier[unit])
        # /add and /run got no reply in these files: commands to Aider, not prompts
        person = [p for p in prompts if not p.startswith(("/add", "/run"))]
        turns += len(person)
        kept += bool(person)
    return {"sessions": kept, "turns": turns, "calls": calls, "tokens": tokens}


@pytest.mark.parametrize(
    "path", [CHAT, FIXTURES / "edge_cases_aider_chat.md"], ids=lambda p: p.name
)
def test_chat_history_counts_match_the_raw_text(path: Path) -> None:
    convs = read(path, warn=lambda _: None)
    want = chat_counts(path)
    assert {c.format for c in convs} == {"aider-chat"}
    assert len(convs) == want["sessions"]
    assert sum(len(split_turns(c.messages)) for c in convs) == want["turns"]
    assert sum(1 for c in convs for m in assistants(c) if m.usage) == want["calls"]
    assert recorded(convs) == want["tokens"]


def test_chat_history_sessions_prompts_and_usage() -> None:
    warnings: list[str] = []
    first, second = read(CHAT, warn=warnings.append)
    # numbered by position in the file: the empty second session keeps its number
    assert [first.session_id, second.session_id] == [
        "representative_aider_chat#1",
        "representative_aider_chat#3",
    ]
    assert first.line == 2 and second.line == 74
    assert first.messages[0] == UserMessage.text(
        "add a function that returns a random adjective-noun name"
    )
    assert first.messages[2] == UserMessage.text(
        "also make the separator configurable\nand default it to a dash"
    )
    replies = assistants(first)
    assert replies[0].usage == Usage(3200, 222) and replies[0].model == "claude-3-5-sonnet-20241022"
    assert replies[0].blocks[0].text.startswith("I'll add `random_name()`")  # type: ignore[union-attr]
    # the lint fix after the first Tokens note is a second call in the same turn
    assert replies[1].usage == Usage(12000, 310, cache_read_tokens=8300, cache_creation_tokens=1100)
    assert replies[2].usage == Usage(1_500_000, 95)
    assert [m.role for m in first.messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "assistant",
    ]
    # /ask keeps its question; /run with no reply is not a message
    assert second.messages[0] == UserMessage.text("what does random_name return?")
    assert assistants(second)[0].usage == Usage(2345, 15)
    assert assistants(second)[1].usage is None  # no Tokens note: estimated
    assert first.warnings == [
        "1 Aider command(s) with no reply left out: instructions to Aider, not messages to the"
        " model (line 11)"
    ]
    assert warnings == [
        f"warning: {CHAT}: 1 session(s) with no message to the model skipped (Aider started"
        " and quit; line 69)"
    ]


def test_chat_history_usage_with_no_reply_text() -> None:
    (conv,) = read(FIXTURES / "edge_cases_aider_chat.md")
    assert conv.session_id == "edge_cases_aider_chat"
    assert conv.messages[-1] == AssistantMessage((), Usage(900, 0))


# ---- request log ---------------------------------------------------------------------------


def llm_counts(path: Path) -> dict[str, int]:
    """Sessions, calls and person prompts from the raw log, by a method of its own: a message
    is known by its role and FIRST line (Aider appends its reminder after a newline), and a
    request continues a conversation whose messages it starts with."""
    requests: list[list[tuple[str, str]]] = []
    responses: list[list[tuple[str, str]]] = []
    target = requests
    for line in path.read_text().splitlines():
        if line.startswith("TO LLM "):
            target = requests
            target.append([])
        elif line.startswith("LLM RESPONSE "):
            target = responses
            target.append([])
        elif line == "-------":
            target[-1].append(("", ""))  # marks a new message
        else:
            role, _, text = line.partition(" ")
            msgs = target[-1]
            if not msgs or msgs[-1][0] not in ("", role):
                msgs.append((role, text))
            elif msgs[-1][0] == "":
                msgs[-1] = (role, text)

    def dialogue(msgs: list[tuple[str, str]]) -> list[tuple[str, str]]:
        out, skip = [], False
        for role, first in msgs:
            if skip:
                skip = False
            elif role == "USER" and first.startswith(AIDER_WRITES[:3]):
                skip = True  # the context Aider rebuilds for each request, and its "Ok"
            elif role != "SYSTEM":
                out.append((role, first))
        return out

    sessions: list[list[tuple[str, str]]] = []  # what each conversation's next request starts with
    last_requests: dict[int, list[tuple[str, str]]] = {}
    for request, response in zip(requests, responses, strict=True):
        d = dialogue(request)
        match = next(
            (
                i
                for i in reversed(range(len(sessions)))
                if d[: len(sessions[i])] == sessions[i] and len(d) > len(sessions[i])
            ),
            None,
        )
        if match is None:
            sessions.append([])
            match = len(sessions) - 1
        sessions[match] = d + response
        last_requests[match] = d
    person = sum(
        1
        for d in last_requests.values()
        for role, first in d
        if role == "USER" and not first.startswith(AIDER_WRITES)
    )
    return {"sessions": len(sessions), "calls": len(responses), "turns": person}


@pytest.mark.parametrize(
    "path",
    [LLM, FIXTURES / "edge_cases_aider_llm.log", pytest.param(REAL_LLM, marks=needs_corpus)],
    ids=lambda p: p.name,
)
def test_request_log_counts_match_the_raw_text(path: Path) -> None:
    convs = read(path)
    want = llm_counts(path)
    assert {c.format for c in convs} == {"aider-llm"}
    assert len(convs) == want["sessions"]
    # every response is one model call, in exactly one session; the canned "Ok." are not
    assert sum(len(assistants(c)) for c in convs) == want["calls"]
    assert sum(len(split_turns(c.messages)) for c in convs) == want["turns"]
    assert recorded(convs) == 0  # the log records no usage


@needs_corpus
def test_real_request_log_sessions() -> None:
    convs = read(REAL_LLM)
    # the /ask→/code chat, the architect's chat, the editor's ten separate calls, and the
    # conversations after the history was cleared (hand-checked against the log)
    assert len(convs) == 16 and sum(len(assistants(c)) for c in convs) == 33
    architect = convs[1]
    assert architect.line == 1504 and len(assistants(architect)) == 13


def test_request_log_rebuilds_the_conversation() -> None:
    first, editor, summarized = read(LLM)
    assert [c.session_id for c in (first, editor, summarized)] == [
        "representative_aider#1",
        "representative_aider#2",
        "representative_aider#3",
    ]
    assert [first.line, editor.line, summarized.line] == [1, 142, 166]
    roles = [(m.role, getattr(m, "origin", None)) for m in first.messages]
    assert roles == [
        ("system", None),
        ("user", INJECTED),  # repository map (its "Ok, I won't…" left out)
        ("user", PERSON),
        ("assistant", None),
        ("user", PERSON),
        ("assistant", None),
        ("user", INJECTED),  # "I committed the changes…" (its "Ok." left out)
        ("user", INJECTED),  # the files' contents
        ("user", OBSERVATION),  # "I ran this command: …"
        ("user", PERSON),
        ("assistant", None),
    ]
    # the system prompt and context of the LAST request; earlier replies kept from the chain
    assert first.messages[0].text.startswith("Act as an expert software developer")  # type: ignore[union-attr]
    assert first.messages[4] == UserMessage.text("add a separator option")
    assert first.warnings == [
        "4 canned replies Aider wrote itself ('Ok.' …) left out: no model call made them"
    ]
    assert isinstance(summarized.messages[1], UserMessage)
    assert summarized.messages[1].origin == INJECTED
    assert summarized.messages[-1] == AssistantMessage(
        (TextBlock("Create `src/cli.py` with an argparse entry point."),)
    )


def test_request_log_errors_name_the_line() -> None:
    path = FIXTURES / "malformed_aider.aider.llm.history"
    with pytest.raises(InputError) as info:
        read(path)
    line = path.read_text().splitlines().index("a stray line that is not role-prefixed") + 1
    assert (
        info.value.location_text()
        == f"{path}:{line}: not a SYSTEM/USER/ASSISTANT line (--skip-bad-lines skips it)"
    )
    warnings: list[str] = []
    (conv,) = read(path, skip_bad_lines=True, warn=warnings.append)
    assert len(assistants(conv)) == 1
    assert len(warnings) == 2 and "a response without its request" in warnings[1]


# ---- detection and directory walks ------------------------------------------------------


def test_detected_by_content_under_any_name(tmp_path: Path) -> None:
    renamed = tmp_path / "notes.txt"
    renamed.write_bytes(b"\xef\xbb\xbf" + LLM.read_bytes())  # with a byte-order mark
    assert detect_format(Source(str(renamed))) == "aider-llm"
    assert len(read(renamed)) == 3
    assert detect_format(Source(str(FIXTURES / "edge_cases_aider_chat.md"))) == "aider-chat"


def test_forced_format_and_invalid_utf8(tmp_path: Path) -> None:
    bad = tmp_path / ".aider.chat.history.md"
    bad.write_bytes(b"# aider chat started at 2025-01-01 00:00:00\n\n#### hi \xff\n")
    with pytest.raises(InputError, match=r":3: invalid UTF-8 on this line"):
        read(bad)
    (conv,) = read_conversations(Source(str(FIXTURES / "edge_cases_aider_chat.md")), "aider-chat")
    assert conv.format == "aider-chat"


def test_directory_walk_finds_aider_logs(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in (
        ".aider.chat.history.md",
        ".aider.llm.history",
        "x.aider.llm.history",
        "README.md",
    ):
        (project / name).write_text("")
    found = sorted(Path(f.path).name for f in expand_inputs([str(tmp_path)]))
    assert found == [".aider.chat.history.md", ".aider.llm.history", "x.aider.llm.history"]


def test_forcing_an_aider_format_on_another_file_says_so() -> None:
    json_file = Source(str(FIXTURES / "representative_gemini.jsonl"))
    with pytest.raises(InputError, match=r":1: not an Aider chat history"):
        list(read_conversations(json_file, "aider-chat"))
    with pytest.raises(InputError, match=r":1: text before the first 'TO LLM' line"):
        list(read_conversations(json_file, "aider-llm"))


def test_a_live_request_log_cut_mid_line_is_a_warning(tmp_path: Path) -> None:
    live = tmp_path / ".aider.llm.history"
    text = LLM.read_text()
    live.write_text(text + "TO LLM 2025-01-31T12:01:00\n-------\nSYSTEM Act as\n---")
    warnings: list[str] = []
    convs = read(live, warn=warnings.append)
    assert len(convs) == 4  # the request being written is read as far as it goes
    line = text.count("\n") + 4
    assert warnings == [
        f"warning: {live}:{line}: incomplete last line (the writer may still be running) (skipped)"
    ]
