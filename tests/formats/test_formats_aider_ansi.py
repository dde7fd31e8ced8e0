"""Aider logs keep the terminal's colour codes; the readers drop them (formats/aider/common.py)."""

from __future__ import annotations

from pathlib import Path

from transcript_tools.engine.messages import AssistantMessage, Conversation, UserMessage
from transcript_tools.formats import read_conversations
from transcript_tools.formats.aider.common import strip_ansi
from transcript_tools.formats.source import Source

BOLD, YELLOW, RESET = "\x1b[1m", "\x1b[1;33m", "\x1b[0m"
LINT = f"{BOLD}tests/test_names.py{RESET}:3:1: {YELLOW}warning{RESET} unused import"
CLEAN = "tests/test_names.py:3:1: warning unused import"


def texts(conv: Conversation) -> list[str]:
    return [
        block.text
        for message in conv.messages
        if isinstance(message, UserMessage | AssistantMessage)
        for block in message.blocks
        if hasattr(block, "text")
    ]


def test_strip_ansi_drops_sgr_osc_and_two_byte_escapes_only() -> None:
    assert strip_ansi(LINT) == CLEAN
    assert strip_ansi("\x1b]0;title\x07a\x1b[38;5;12mb\x1b[mc\x1b(Bd") == "abcd"
    assert strip_ansi("no escapes [1m here") == "no escapes [1m here"  # text stays text


def test_llm_history_messages_carry_no_colour_codes(tmp_path: Path) -> None:
    log = tmp_path / "x.aider.llm.history"
    log.write_text(
        "TO LLM 2025-01-31T11:21:36\n"
        "-------\n"
        "SYSTEM Act as an expert software developer.\n"
        "-------\n"
        f"USER fix the lint: {LINT}\n"
        "LLM RESPONSE 2025-01-31T11:21:41\n"
        f"ASSISTANT Removed the import from {BOLD}tests/test_names.py{RESET}.\n"
    )
    (conv,) = read_conversations(Source(str(log)))
    assert texts(conv) == [
        f"fix the lint: {CLEAN}",
        "Removed the import from tests/test_names.py.",
    ]


def test_chat_history_messages_carry_no_colour_codes(tmp_path: Path) -> None:
    log = tmp_path / "x.aider.chat.history.md"
    log.write_text(
        "\n# aider chat started at 2025-01-31 11:20:00\n\n"
        f"#### fix {BOLD}tests/test_names.py{RESET}  \n\n"
        f"Done: {YELLOW}removed{RESET} the import.\n"
    )
    (conv,) = read_conversations(Source(str(log)))
    joined = "\n".join(texts(conv))
    assert "\x1b" not in joined and "[1m" not in joined
    assert "fix tests/test_names.py" in joined and "Done: removed the import." in joined
