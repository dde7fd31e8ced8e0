"""tsum inspect: what fills the context, and the commands and failures that say it ran out."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.engine.composition import (
    ASSISTANT_TEXT,
    ATTACHMENTS,
    PERSON_TEXT,
    RUNTIME,
    SYSTEM,
    THINKING,
    TOOL_CALLS,
    TOOL_RESULTS,
    context_by_kind,
    context_overflows,
    shares,
)
from transcript_tools.engine.messages import (
    INJECTED,
    OBSERVATION,
    SYNTHETIC_MODEL,
    AssistantMessage,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)
from transcript_tools.engine.tokens import estimate_block_tokens, estimate_text_tokens


def test_every_block_counts_under_its_kind() -> None:
    call = ToolUseBlock("t1", "Read", {"file_path": "app.py"})
    image = OtherBlock("image")
    messages = [
        SystemMessage("You are a coding agent."),
        UserMessage((TextBlock("fix the crash"), image)),
        UserMessage((TextBlock("<system-reminder>todo list</system-reminder>"),), INJECTED),
        AssistantMessage((OtherBlock("thinking", "let me look"), TextBlock("Reading."), call)),
        ToolResultMessage("t1", "def main(): ..."),
        UserMessage((TextBlock("$ pytest\n1 failed"),), OBSERVATION),
        UserImageMessage("image/png"),
    ]
    tokens = context_by_kind(messages)
    assert tokens == {
        TOOL_RESULTS: estimate_text_tokens("def main(): ...")
        + estimate_text_tokens("$ pytest\n1 failed"),
        TOOL_CALLS: estimate_block_tokens(call),
        ASSISTANT_TEXT: estimate_text_tokens("Reading."),
        THINKING: estimate_text_tokens("let me look"),
        PERSON_TEXT: estimate_text_tokens("fix the crash"),
        ATTACHMENTS: 2 * estimate_block_tokens(image),
        RUNTIME: estimate_text_tokens("<system-reminder>todo list</system-reminder>"),
        SYSTEM: estimate_text_tokens("You are a coding agent."),
    }
    assert abs(sum(shares(tokens).values()) - 1) < 1e-9
    assert set(shares(dict.fromkeys(tokens, 0)).values()) == {0.0}


def test_only_runtime_written_overflow_messages_count() -> None:
    failed = AssistantMessage((TextBlock("Prompt is too long"),), model=SYNTHETIC_MODEL)
    talk = AssistantMessage((TextBlock("the prompt is too long for haiku"),), model="claude")
    other = AssistantMessage((TextBlock("API Error: 529 overloaded"),), model=SYNTHETIC_MODEL)
    assert context_overflows([failed, talk, other, failed]) == 2


def _claude_code_log(path: Path) -> Path:
    sid = "33333333-aaaa-4bbb-8ccc-000000000003"
    rows: list[dict[str, object]] = []

    def user(text: str) -> None:
        rows.append(
            {"type": "user", "sessionId": sid, "uuid": f"u{len(rows)}",
             "message": {"role": "user", "content": [{"type": "text", "text": text}]}}
        )  # fmt: skip

    def assistant(text: str, model: str) -> None:
        rows.append(
            {"type": "assistant", "sessionId": sid, "uuid": f"a{len(rows)}",
             "message": {"id": f"msg{len(rows)}", "role": "assistant", "model": model,
                         "content": [{"type": "text", "text": text}]}}
        )  # fmt: skip

    user("read app.py")
    assistant("Prompt is too long", SYNTHETIC_MODEL)
    for name in ("/compact", "/clear", "/compact", "/model"):
        user(f"<command-name>{name}</command-name>\n<command-message>x</command-message>")
    user("and now?")
    assistant("Done.", "claude-sonnet-4-5")
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_inspect_counts_commands_and_overflows_and_says_what_fills_the_context(
    tmp_path: Path,
) -> None:
    log = str(_claude_code_log(tmp_path / "s.jsonl"))
    (info,) = json.loads(CliRunner().invoke(cli, ["inspect", "--json", log]).stdout)
    assert info["commands"] == {"/compact": 2, "/clear": 1, "/model": 1}
    assert info["context_overflows"] == 1
    assert info["context_by_kind"][PERSON_TEXT] == estimate_text_tokens(
        "read app.py"
    ) + estimate_text_tokens("and now?")
    text = CliRunner().invoke(cli, ["inspect", log]).stdout.splitlines()
    assert text[-2].startswith("what fills the context (estimated, ")
    assert "person text " in text[-2] and "tool results 0.0%" in text[-2]
    assert text[-1] == 'commands: /clear 1, /compact 2; calls failed with "prompt is too long": 1'
