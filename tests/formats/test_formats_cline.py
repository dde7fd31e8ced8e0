"""Cline / Roo Code / Kilo Code task folders: API history + UI log as one session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from transcript_tools.cli.inspect_cmd import inspect_command
from transcript_tools.engine.messages import (
    INJECTED,
    OBSERVATION,
    PERSON,
    AssistantMessage,
    ToolResultMessage,
    UserMessage,
)
from transcript_tools.errors import InputError
from transcript_tools.formats.inputs import expand_inputs

API = FIXTURES / "representative_cline.api_conversation_history.json"
UI = FIXTURES / "representative_cline.ui_messages.json"
ALONE = FIXTURES / "edge_cases_cline_ui_alone.ui_messages.json"
ROO = FIXTURES / "edge_cases_roo_code.api_conversation_history.json"
# newer Cline (modelInfo, metrics.tokens, tool_use with call_id answered by text results),
# shaped on the real history of mike4567/MRA04242026 (tests/fixtures/formats/PROVENANCE.md)
TEXT_RESULTS = FIXTURES / "edge_cases_cline_text_results.api_conversation_history.json"
ROO_TRUNCATION = FIXTURES / "edge_cases_roo_code_truncation.api_conversation_history.json"


def ui_count(path: Path, *, alone: bool = False) -> dict[str, int]:
    """From the UI log only: the person's records, the requests that produced a reply, and
    their tokens (tokensIn + tokensOut + cacheWrites + cacheReads).

    With the API history a request's reply is the message two after its
    conversationHistoryIndex (a retry replaces the failed one); alone, a failed request is
    a call only if the model wrote something after it."""
    rows: list[dict[str, Any]] = json.loads(path.read_text())
    prompts = sum(r.get("say") in ("task", "user_feedback") for r in rows)
    replies: dict[int, int] = {}
    pending: int | None = None
    seen_request = False
    for n, r in enumerate(rows):
        if alone and r.get("say") == "text" and not seen_request:
            prompts += 1  # this Cline version says the task as the first "text"
        if r.get("say") != "api_req_started":
            wrote = r.get("say") in ("text", "reasoning", "completion_result", "tool") or r.get(
                "ask"
            ) in ("tool", "command", "followup")
            if alone and pending is not None and wrote and not r.get("partial"):
                replies[n], pending = pending, None
            continue
        seen_request = True
        info = json.loads(r["text"])
        tokens = info["tokensIn"] + info["tokensOut"] + info["cacheWrites"] + info["cacheReads"]
        if alone:
            pending = tokens if "cancelReason" in info else None
            if pending is None:
                replies[n] = tokens
        else:
            replies[r["conversationHistoryIndex"]] = tokens  # a retry replaces the failed one
    return {"prompts": prompts, "calls": len(replies), "tokens": sum(replies.values())}


def inspect_json(*paths: Path) -> tuple[list[dict[str, Any]], str]:
    result = CliRunner().invoke(inspect_command, ["--json", *map(str, paths)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


@pytest.mark.parametrize("path", [API, UI])
def test_either_file_of_the_folder_is_the_session(path: Path) -> None:
    (info,), stderr = inspect_json(path)
    got = {"prompts": info["turns"], "calls": info["calls"], "tokens": info["recorded_tokens"]}
    assert got == ui_count(UI)
    assert info["session_id"] == "representative_cline" and info["format"] == "cline"
    # the failed request before its retry is named, never silently dropped
    assert "1 api_req_started record(s) with no reply" in stderr and "[12]" in stderr


def test_a_task_folder_is_read_once_in_a_directory(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / "1767644899000"
    task.mkdir(parents=True)
    shutil.copy(API, task / "api_conversation_history.json")
    shutil.copy(UI, task / "ui_messages.json")
    (task / "task_metadata.json").write_text('{"files_in_context": []}')
    assert [f.path for f in expand_inputs([str(tmp_path)])] == [
        str(task / "api_conversation_history.json"),
        str(task / "task_metadata.json"),
    ]
    infos, stderr = inspect_json(tmp_path)
    assert [(i["session_id"], i["turns"]) for i in infos] == [("1767644899000", 4)]
    assert "task_metadata.json: not a transcript tsum can read (skipped)" in stderr


def test_who_wrote_each_user_message() -> None:
    (conv,) = read(API)
    users = [m for m in conv.messages if isinstance(m, UserMessage)]
    origins = [(m.origin, m.blocks[0].text.split("\n")[0][:30]) for m in users]  # type: ignore[union-attr]
    assert origins == [
        (PERSON, "<task>"),
        (PERSON, "[attempt_completion] Result:"),  # holds the <feedback>
        (OBSERVATION, "[ERROR] You did not use a tool"),
        (PERSON, "[ask_followup_question for 'Sh"),  # the person's <answer>
        (PERSON, "[TASK RESUMPTION] This task wa"),  # with a <user_message>
    ]
    results = [m for m in conv.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == [
        "toolu_01",
        "toolu_02",
        "toolu_04",
        "toolu_07",
        "toolu_08",
    ]
    # Cline's summarize_task is a recorded compaction, after its result
    (comp,) = conv.compactions
    assert comp.source == "cline:summarize_task"
    assert isinstance(conv.messages[comp.message_index - 1], ToolResultMessage)
    assert isinstance(conv.messages[comp.message_index], AssistantMessage)
    # what Cline appended to a tool's output rides on the result, never a message of its own
    assert "<environment_details>" in results[0].content


def test_text_results_whose_argument_holds_brackets_or_newlines() -> None:
    rows: list[dict[str, Any]] = json.loads(TEXT_RESULTS.read_text())
    texts = [" ".join(b.get("text", "") for b in r["content"]) for r in rows]
    tags = ("<task>", "<feedback>", "<answer>", "<user_message>")
    person = sum(
        r["role"] == "user" and any(t in x for t in tags) for r, x in zip(rows, texts, strict=True)
    )
    asked = [r["metrics"]["tokens"] for r in rows if r["role"] == "assistant"]
    (info,), _ = inspect_json(TEXT_RESULTS)
    assert (info["turns"], info["calls"], info["recorded_tokens"]) == (
        person,
        len(asked),
        sum(t["prompt"] + t["completion"] for t in asked),
    )
    assert (person, len(asked)) == (4, 9)
    (conv,) = read(TEXT_RESULTS)
    results = [m for m in conv.messages if isinstance(m, ToolResultMessage)]
    # [search_files for 'from ['"]…['"]'], [execute_command for '… [1, 2] …'] and
    # [write_to_file for 'src/app/[id]/page.ts'] are results too; the question answered
    # with <answer> and the two calls cut off by [TASK RESUMPTION] have none
    assert [r.tool_call_id[-2:] for r in results] == ["01", "02", "03", "05", "07", "09"]
    users = [m for m in conv.messages if isinstance(m, UserMessage)]
    assert [m.origin for m in users] == [PERSON, PERSON, PERSON, INJECTED, PERSON]


def test_roo_truncation_marker_and_feedback_sent_as_a_tool_result() -> None:
    rows: list[dict[str, Any]] = json.loads(ROO_TRUNCATION.read_text())
    said = [json.dumps(r["content"]) for r in rows]
    person = sum(
        r["role"] == "user" and ("<task>" in x or "<feedback>" in x)
        for r, x in zip(rows, said, strict=True)
    )
    asked = [r["metrics"]["tokens"] for r in rows if r["role"] == "assistant"]
    (info,), stderr = inspect_json(ROO_TRUNCATION)
    assert (info["turns"], info["calls"], info["recorded_tokens"]) == (
        person,
        len(asked),
        sum(t["prompt"] + t["completion"] for t in asked),
    )
    hidden = sum("truncationParent" in r for r in rows)
    assert (person, hidden) == (2, 4)
    assert (
        f"{ROO_TRUNCATION}[5]: Roo Code's sliding-window truncation marker: kept as the"
        f" runtime's notice; the {hidden} message(s) it hid" in stderr
    )
    (conv,) = read(ROO_TRUNCATION)
    users = [m for m in conv.messages if isinstance(m, UserMessage)]
    # Roo sends the person's <feedback> as attempt_completion's tool_result: a turn starts
    assert [m.origin for m in users] == [PERSON, INJECTED, PERSON]
    assert "<feedback>" in users[2].blocks[0].text  # type: ignore[union-attr]
    results = [m for m in conv.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["toolu_t1", "toolu_t2"]
    assert conv.compactions == []  # a truncation, not a summary: read whole


def test_the_ui_log_alone() -> None:
    (info,), stderr = inspect_json(ALONE)
    got = {"prompts": info["turns"], "calls": info["calls"], "tokens": info["recorded_tokens"]}
    assert got == ui_count(ALONE, alone=True)
    assert "UI record(s) left out" in stderr and "checkpoint_created×1 (first [1])" in stderr
    (conv,) = read(ALONE)
    # the two chunks of the command's output are its one result; the partial text is not read
    command = next(m for m in conv.messages if isinstance(m, ToolResultMessage))
    assert command.content.count("\n") == 2 and "app.py" in command.content
    texts = [
        b.text
        for m in conv.messages
        if isinstance(m, AssistantMessage)
        for b in m.blocks
        if hasattr(b, "text")
    ]
    assert "It is an OCR app for invoices." not in texts


def test_roo_code_condense_summary_and_metrics() -> None:
    (conv,) = read(ROO)
    (comp,) = conv.compactions
    summary = conv.messages[comp.message_index]
    assert comp.source == "cline:isSummary"
    assert isinstance(summary, UserMessage) and summary.origin == INJECTED
    calls = [m for m in conv.messages if isinstance(m, AssistantMessage)]
    assert len(calls) == 4  # the summary is the runtime's, no call of the agent
    rows = json.loads(ROO.read_text())
    recorded = [r["metrics"]["tokens"] for r in rows if "metrics" in r]
    assert sum(m.usage.total_tokens for m in calls if m.usage) == sum(
        t["prompt"] + t["completion"] for t in recorded
    )
    assert calls[-1].usage is None  # no metrics, no UI log: estimated
    persons = [m for m in conv.messages if isinstance(m, UserMessage) and m.origin == PERSON]
    assert len(persons) == 2  # the task and the <feedback> beside a tool_result
    assert any(isinstance(m, ToolResultMessage) and m.is_error for m in conv.messages)


def test_a_bad_message_is_named_by_its_element() -> None:
    with pytest.raises(InputError) as info:
        read(FIXTURES / "malformed_cline.api_conversation_history.json")
    assert info.value.item == 9
    (conv,) = read(FIXTURES / "malformed_cline.api_conversation_history.json", skip_bad_lines=True)
    assert conv.format == "cline"


def test_eval_scores_the_recorded_condense_summary() -> None:
    from transcript_tools.eval.checkpoints import compaction_message_indices, recorded_checkpoints

    (conv,) = read(ROO)
    (comp,) = conv.compactions
    checkpoints, notes = recorded_checkpoints(conv, lambda index: 0)
    assert notes == []
    (checkpoint,) = checkpoints
    assert checkpoint.label == "recorded:cline" and "## Conversation summary" in checkpoint.summary
    assert compaction_message_indices(conv) == {comp.message_index}  # never probed itself


def test_the_person_messages_of_both_files_are_compared(tmp_path: Path) -> None:
    shutil.copy(API, tmp_path / "api_conversation_history.json")
    rows = json.loads(UI.read_text())
    first_feedback = next(i for i, r in enumerate(rows) if r.get("say") == "user_feedback")
    del rows[first_feedback]
    (tmp_path / "ui_messages.json").write_text(json.dumps(rows))
    (conv,) = read(tmp_path / "api_conversation_history.json")
    assert any(
        "the API history has 4 message(s) the person wrote" in w and "shows 3" in w
        for w in conv.warnings
    )
    (same,) = read(API)
    assert not any("the person wrote" in w for w in same.warnings)
