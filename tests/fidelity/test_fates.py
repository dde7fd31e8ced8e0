"""Each earlier person message after a recorded compaction: kept, partly, dropped,
re-supplied (docs/fidelity.md, "Per compaction")."""

from __future__ import annotations

from pathlib import Path

from transcript_tools.engine.messages import INJECTED, AssistantMessage, UserMessage
from transcript_tools.engine.person_fates import person_fates
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source

FIXTURE = Path(__file__).parents[1] / "fixtures" / "formats" / "representative_codex.jsonl"

LONG = "start of a long request " * 5 + "the middle part " * 20 + "and how it ends " * 5


def test_each_earlier_person_message_has_one_fate() -> None:
    before = [
        UserMessage.text("fix the login bug"),
        AssistantMessage.text("done"),
        UserMessage.text(LONG),
        UserMessage.text("also rename the config flag"),
        UserMessage.text("and add a test for it"),
        UserMessage.text("x"),
    ]
    cut = LONG[:60] + " …truncated… " + LONG[-60:]
    kept = ["fix the login bug", cut]
    after = [UserMessage.text("as I said: also rename the config flag, please")]
    fates = person_fates(before, kept, after)
    # kept verbatim: 1; its middle cut: 1; dropped: the flag, the test, "x"; the flag
    # written again after the compaction
    assert fates == {"kept": 1, "partly": 1, "dropped": 3, "resupplied": 1}


def test_injected_messages_are_not_the_persons() -> None:
    before = [UserMessage(UserMessage.text("AGENTS.md").blocks, origin=INJECTED)]
    assert person_fates(before, [], []) == {"kept": 0, "partly": 0, "dropped": 0, "resupplied": 0}


def test_codex_records_the_text_it_kept() -> None:
    (conv,) = read_conversations(Source(str(FIXTURE)))
    (comp,) = conv.compactions
    assert comp.kept_texts == ("Fix the failing test in test_app.py",)
