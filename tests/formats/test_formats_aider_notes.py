"""Aider chat histories as unseen real ones are written: answers to
Aider's questions, mode switches, the /ask echo, the architect's handoff, bad UTF-8."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.corpus import FIXTURES, read
from transcript_tools.engine.messages import (
    INJECTED,
    PERSON,
    AssistantMessage,
    TextBlock,
    UserMessage,
)
from transcript_tools.engine.rules import turn_starts
from transcript_tools.errors import InputError

NOTES = FIXTURES / "edge_cases_aider_chat_notes.aider.chat.history.md"
BAD_UTF8 = FIXTURES / "malformed_aider_chat_invalid_utf8.aider.chat.history.md"


def users(path: Path, origin: str) -> list[str]:
    (conv,) = read(path, warn=lambda _: None)
    return [
        " ".join(b.text for b in m.blocks if isinstance(b, TextBlock))
        for m in conv.messages
        if isinstance(m, UserMessage) and m.origin == origin
    ]


def test_only_the_persons_prompts_start_turns() -> None:
    assert users(NOTES, PERSON) == [
        "Which files handle login?",
        "Is a per-IP limit enough behind our proxy?",  # /ask Q and its echo: one prompt
        "Add rate limiting to login, 5 tries a minute.",
    ]
    (conv,) = read(NOTES, warn=lambda _: None)
    assert len(turn_starts(conv.messages)) == 3


def test_answers_to_aiders_questions_are_left_out() -> None:
    (conv,) = read(NOTES, warn=lambda _: None)
    texts = [
        b.text for m in conv.messages for b in getattr(m, "blocks", ()) if isinstance(b, TextBlock)
    ]
    assert not any("(Y)es/(N)o" in t for t in texts)
    # the reply after "Add file to the chat? ... all" is the second call of the first turn
    kinds = [type(m).__name__ for m in conv.messages[:3]]
    assert kinds == ["UserMessage", "AssistantMessage", "AssistantMessage"]


def test_architect_handoff_is_an_injected_message() -> None:
    (handoff,) = users(NOTES, INJECTED)
    assert handoff.startswith("To add rate limiting to the login endpoint:")
    (conv,) = read(NOTES, warn=lambda _: None)
    index = next(
        i
        for i, m in enumerate(conv.messages)
        if isinstance(m, UserMessage) and m.origin == INJECTED
    )
    before, after = conv.messages[index - 1], conv.messages[index + 1]
    assert isinstance(before, AssistantMessage) and isinstance(after, AssistantMessage)
    assert after.usage is not None and after.usage.output_tokens == 210  # the editor's call


def test_bare_mode_switches_are_commands_left_out() -> None:
    (conv,) = read(NOTES, warn=lambda _: None)
    assert conv.warnings == [
        "2 Aider command(s) with no reply left out: instructions to Aider, not messages to"
        " the model (lines 26, 42)"
    ]


def test_a_prompt_like_the_last_reply_is_still_a_prompt(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(
        "# aider chat started at 2025-01-01 00:00:00\n\n#### hi  \n\nOk.\n\n"
        "> Tokens: 1k sent, 2 received.  \n\n#### Ok.  \n\nGood.\n"
    )
    assert users(path, PERSON) == ["hi", "Ok."]  # too short to be a handoff tail


def test_invalid_utf8_line_is_an_error_naming_it() -> None:
    with pytest.raises(InputError, match=r":9: invalid UTF-8 on this line \(--skip-bad-lines"):
        read(BAD_UTF8)


def test_invalid_utf8_line_is_skipped_with_skip_bad_lines() -> None:
    warnings: list[str] = []
    (conv,) = read(BAD_UTF8, skip_bad_lines=True, warn=warnings.append)
    assert warnings == [f"warning: {BAD_UTF8}:9: invalid UTF-8 on this line (skipped)"]
    prompts = [m for m in conv.messages if isinstance(m, UserMessage)]
    assert [p.blocks[0].text for p in prompts] == [  # type: ignore[union-attr]
        "Rename the cafe\u0301 module to cafe, Windows can't check it out.",
        "Also update the README.",
    ]
    assert [
        m.usage.input_tokens for m in conv.messages if isinstance(m, AssistantMessage) and m.usage
    ] == [2400, 2800]


def test_invalid_utf8_in_whole_file_json_is_read_past_with_skip_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(
        b'{"messages": [\n {"role": "user", "content": "caf\xe9?"},\n'
        b' {"role": "assistant", "content": "ok"}\n]}\n'
    )
    with pytest.raises(InputError, match=r":2: invalid UTF-8 on this line"):
        read(path)
    warnings: list[str] = []
    (conv,) = read(path, skip_bad_lines=True, warn=warnings.append)
    assert warnings == [
        f"warning: {path}:2: invalid UTF-8 on this line; its bad bytes read as U+FFFD"
    ]
    assert conv.messages[0].blocks == (TextBlock("caf\ufffd?"),)  # type: ignore[union-attr]


def test_a_one_shot_architect_prompt_hands_off_too(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(
        "# aider chat started at 2025-01-01 00:00:00\n\n"
        "#### /architect Split utils.py into io.py and text.py.  \n\n"
        "#### Split utils.py into io.py and text.py.  \n\n"
        "Move read_file and write_file to io.py, the rest to text.py.\n\n"
        "> Tokens: 1k sent, 20 received.  \n\n"
        "#### Move read_file and write_file to io.py, the rest to text.py.  \n\n"
        "io.py\n```python\n...\n```\n\n> Tokens: 1.2k sent, 90 received.  \n"
    )
    assert users(path, PERSON) == ["Split utils.py into io.py and text.py."]
    assert users(path, INJECTED) == ["Move read_file and write_file to io.py, the rest to text.py."]
