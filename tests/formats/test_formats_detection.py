"""Format detection: fixtures, ambiguous shapes, forcing, and every file of the real corpus."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.support.corpus import CORPUS, FIXTURES, build_database, needs_corpus
from tests.support.detection import detect_format
from transcript_tools.errors import InputError
from transcript_tools.formats import READERS, read_conversations, reader_names
from transcript_tools.formats.source import Source

FIXTURE_FORMATS = {
    "representative_claude_code.jsonl": "claude-code",
    "edge_cases_claude_code.jsonl": "claude-code",
    "edge_cases_claude_code_synthetic.jsonl": "claude-code",
    "edge_cases_claude_code_compact_summary.jsonl": "claude-code",
    "edge_cases_claude_code_resume_relog.jsonl": "claude-code",
    "edge_cases_claude_code_ide_context.jsonl": "claude-code",
    "edge_cases_claude_code_queued_prompt.jsonl": "claude-code",
    "edge_cases_claude_code_then_codex.jsonl": "claude-code",
    "representative_claude_code_chat.json": "claude-code",
    "representative_claude_code_subagent.jsonl": "claude-code",
    "representative_codex.jsonl": "codex",
    "edge_cases_codex.jsonl": "codex",
    "edge_cases_codex_0_34_tokens_before.jsonl": "codex",
    "edge_cases_codex_0_55_tokens_before_and_after.jsonl": "codex",
    "representative_anthropic.jsonl": "anthropic",
    "edge_cases_anthropic.json": "anthropic",
    "representative_claude_trace.jsonl": "anthropic",
    "edge_cases_claude_trace.jsonl": "anthropic",
    "representative_swe_agent.traj": "trajectory",
    "edge_cases_swe_agent.traj": "trajectory",
    "representative_openhands.jsonl": "trajectory",
    "edge_cases_openhands_events.json": "trajectory",
    "edge_cases_openhands_auto_reply.json": "trajectory",
    "representative_sharegpt.jsonl": "sharegpt",
    "edge_cases_sharegpt.json": "sharegpt",
    "edge_cases_mini_swe_agent_text.traj.json": "openai",
    "representative_mini_swe_agent_tools.traj.json": "openai",
    "edge_cases_mini_swe_agent_format_error.traj.json": "openai",
    "representative_tau2_bench.json": "tau-bench",
    "edge_cases_tau_bench.json": "tau-bench",
    "representative_gemini.jsonl": "gemini-cli",
    "edge_cases_gemini.jsonl": "gemini-cli",
    "edge_cases_gemini_session.json": "gemini-cli",
    "representative_aider_chat.aider.chat.history.md": "aider-chat",
    "edge_cases_aider_chat.md": "aider-chat",
    "edge_cases_aider_chat_notes.aider.chat.history.md": "aider-chat",
    "representative_aider.aider.llm.history": "aider-llm",
    "edge_cases_aider_llm.log": "aider-llm",
    # OpenCode, Continue; a .sql fixture is built into its database first
    "representative_opencode_go.sql": "opencode-db",
    "edge_cases_opencode_go.sql": "opencode-db",
    "representative_opencode_ts.sql": "opencode-db",
    "representative_opencode_export.json": "opencode",
    "edge_cases_opencode_export.json": "opencode",
    "edge_cases_opencode_shell_subtask.json": "opencode",
    "representative_continue.json": "continue",
    "edge_cases_continue.json": "continue",
    # ---- Cline / Roo Code / Kilo Code, Gemini CLI headless, managed agents
    "representative_cline.api_conversation_history.json": "cline",
    "representative_cline.ui_messages.json": "cline",
    "edge_cases_cline_ui_alone.ui_messages.json": "cline",
    "edge_cases_roo_code.api_conversation_history.json": "cline",
    "edge_cases_cline_text_results.api_conversation_history.json": "cline",
    "edge_cases_roo_code_truncation.api_conversation_history.json": "cline",
    "representative_gemini_stream.jsonl": "gemini-stream",
    "edge_cases_gemini_stream.jsonl": "gemini-stream",
    "edge_cases_gemini_stream_cli_notice.jsonl": "gemini-stream",
    "representative_managed_agents.jsonl": "managed-agents",
    "edge_cases_managed_agents.json": "managed-agents",
    "edge_cases_managed_agents_stream.jsonl": "managed-agents",
    # ---- the newest Claude Code and the other readers' variants of unseen real logs
    "edge_cases_claude_code_2_1_head.jsonl": "claude-code",
    "edge_cases_claude_code_task_notification.jsonl": "claude-code",
    "edge_cases_claude_code_result_before_call.jsonl": "claude-code",
    "edge_cases_claude_code_warmup_chat.json": "claude-code",
    "edge_cases_claude_code_no_person.jsonl": "claude-code",
    "edge_cases_aider_chat_note_continuation.aider.chat.history.md": "aider-chat",
    "edge_cases_gemini_stream_two_runs.jsonl": "gemini-stream",
    "edge_cases_managed_agents_raw.jsonl": "managed-agents",
    # ---- logs added later: SpecStory, pi, Crush, ATIF, OpenTelemetry, inspect_ai
    "representative_specstory_cursor.md": "specstory",
    "representative_specstory_classic.md": "specstory",
    "edge_cases_specstory_claude_code.md": "specstory",
    "representative_pi.jsonl": "pi",
    "edge_cases_pi_v1.jsonl": "pi",
    "representative_crush.sql": "crush",
    "representative_atif.json": "atif",
    "edge_cases_atif_continuation.json": "atif",
    "representative_otel_genai.json": "otel",
    "edge_cases_otel_claude_code_logs.jsonl": "otel",
    "edge_cases_otel_gemini_cli.json": "otel",
    "representative_inspect.eval": "inspect-ai",
    "edge_cases_inspect_compaction.json": "inspect-ai",
}

# What detection says of the malformed fixtures: their format when the broken record is
# past the records detection looks at (the reader then names it), "error" when the file
# cannot be parsed far enough to detect anything.
MALFORMED_FORMATS = {
    "malformed_aider.aider.llm.history": "aider-llm",
    "malformed_anthropic.jsonl": "anthropic",
    "malformed_claude_code.jsonl": "claude-code",
    "malformed_claude_code_fields.jsonl": "claude-code",
    "malformed_codex.jsonl": "codex",
    "malformed_gemini.jsonl": "gemini-cli",
    "malformed_sharegpt.jsonl": "sharegpt",
    "malformed_tau_bench.json": "tau-bench",
    "malformed_trajectory.traj": "trajectory",
    # ---- Cline / Roo Code / Kilo Code, Gemini CLI headless, managed agents
    "malformed_cline.api_conversation_history.json": "cline",
    "malformed_gemini_stream.jsonl": "gemini-stream",
    "malformed_managed_agents.jsonl": "managed-agents",
    # ---- the readers' variants found in unseen real logs
    "malformed_aider_chat_invalid_utf8.aider.chat.history.md": "aider-chat",
    "malformed_claude_code_impossible_usage.jsonl": "claude-code",
    "malformed_claude_code_numeric_id.jsonl": "claude-code",
}


@pytest.mark.parametrize("name,fmt", sorted(FIXTURE_FORMATS.items()))
def test_fixture_is_detected(name: str, fmt: str, tmp_path: Path) -> None:
    path = FIXTURES / name
    if name.endswith(".sql"):
        path = build_database(path, tmp_path / "opencode.db")
    assert detect_format(Source(str(path))) == fmt


def test_every_fixture_is_covered() -> None:
    names = {p.name for p in FIXTURES.iterdir() if not p.name.startswith("malformed_")}
    assert names == set(FIXTURE_FORMATS)


def _detected(path: Path, tmp_path: Path) -> str | None:
    if path.name.endswith(".sql"):  # an OpenCode fixture is kept as SQL: build its database
        (tmp_path / path.stem).mkdir()
        path = build_database(path, tmp_path / path.stem / "opencode.db")
    try:
        return detect_format(Source(str(path)))
    except InputError:
        return "error"


def test_every_fixture_file_is_detected_as_listed(tmp_path: Path) -> None:
    """ALL fixtures, malformed ones too, through detection: name -> expected format."""
    expected = {**FIXTURE_FORMATS, **MALFORMED_FORMATS}
    files = sorted(p for p in FIXTURES.iterdir() if p.is_file())
    assert {p.name for p in files} == set(expected)  # a new fixture must say its format
    got = {p.name: _detected(p, tmp_path) for p in files}
    assert got == expected


def test_openai_is_tried_last() -> None:
    assert READERS[-1].NAME == "openai"
    assert reader_names()[:1] == ["native"]


def write(tmp_path: Path, name: str, rows: list[object]) -> Source:
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return Source(str(path))


PLAIN = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


@pytest.mark.parametrize(
    "rows,fmt",
    [
        ([{"messages": PLAIN}], "openai"),  # plain text: either reads it alike; OpenAI wins
        ([{"messages": [{"role": "system", "content": "s"}, *PLAIN]}], "openai"),
        ([{"system": "s", "messages": PLAIN}], "anthropic"),  # top-level system is Anthropic's
        (
            [
                {
                    "messages": [
                        *PLAIN,
                        {
                            "role": "assistant",
                            "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                        },
                    ]
                }
            ],
            "anthropic",
        ),
        (
            [
                {
                    "messages": [
                        {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [{"id": "c", "function": {"name": "f"}}],
                        }
                    ]
                }
            ],
            "openai",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "base64", "data": "x"}}],
                }
            ],
            "anthropic",
        ),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
            "openai",
        ),
        ([{"conversations": [{"from": "human", "value": "hi"}]}], "sharegpt"),
        ([{"kind": "user", "blocks": [{"type": "text", "text": "hi"}]}], "native"),
        ([{"type": "summary", "summary": "t", "leafUuid": "u"}] * 9, "claude-code"),
        ([{"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}], "codex"),
        (
            [
                {
                    "request": {
                        "url": "https://api.anthropic.com/v1/messages",
                        "body": {"messages": PLAIN},
                    },
                    "response": {},
                }
            ],
            "anthropic",
        ),
        (  # another API's capture in the same envelope is not taken for Anthropic
            [
                {
                    "request": {
                        "url": "https://api.openai.com/v1/chat/completions",
                        "body": {"messages": PLAIN},
                    },
                    "response": {},
                }
            ],
            None,
        ),
        (
            [{"id": 1, "source": "user", "action": "message", "args": {"content": "hi"}}],
            "trajectory",
        ),
    ],
)
def test_ambiguous_shapes(tmp_path: Path, rows: list[object], fmt: str | None) -> None:
    assert detect_format(write(tmp_path, "x.jsonl", rows)) == fmt


def test_unknown_format_names_the_formats_tried(tmp_path: Path) -> None:
    source = write(tmp_path, "x.jsonl", [{"hello": "world"}])
    assert detect_format(source) is None
    with pytest.raises(InputError) as info:
        list(read_conversations(source))
    message = info.value.message
    assert all(name in message for name in reader_names()) and "--format" in message


def test_format_forces_a_reader(tmp_path: Path) -> None:
    source = write(tmp_path, "x.jsonl", [{"messages": PLAIN}])
    (conv,) = read_conversations(source, "anthropic")
    assert conv.format == "anthropic" and [m.role for m in conv.messages] == ["user", "assistant"]
    with pytest.raises(InputError, match="unknown format 'nope'"):
        list(read_conversations(source, "nope"))


# ---- the real corpus ----------------------------------------------------------------------

EXPECTED_BY_FOLDER = {
    "claude-code": "claude-code",
    "codex": "codex",
    "chat-completions": "openai",
    "agent-trajectories": "trajectory",
    "sharegpt": "sharegpt",
    "tau2-bench": "tau-bench",
    "aider": "aider-llm",
}


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(
        p
        for p in CORPUS.rglob("*")
        if p.is_file()
        and (p.suffix in (".jsonl", ".json", ".traj") or p.name.endswith(".aider.llm.history"))
        and not p.name.endswith(".meta.json")
        and p.name != "manifest.json"
    )


@needs_corpus
def test_corpus_is_there() -> None:
    assert len(corpus_files()) >= 40


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: str(p.relative_to(CORPUS))[:60])
def test_every_real_file_reads_with_detection(path: Path) -> None:
    folder = path.relative_to(CORPUS).parts[0]
    convs = list(read_conversations(Source(str(path))))
    assert convs, "no conversation read"
    assert {c.format for c in convs} == {EXPECTED_BY_FOLDER[folder]}
    assert all(c.messages for c in convs if folder != "sharegpt")
