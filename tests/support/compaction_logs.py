"""Small Claude Code and Codex logs with recorded compactions, written line by line.

Each model call records the prompt it was sent (``prompts``); a compaction sits after the
call its ``after`` names (1-based) and the calls after it record the smaller prompts of
the compacted context. The shapes follow the real logs of the shared corpus
(claude-code/*/f89f86a1…, codex/*/rollout-…019c8a59…) and the public samples of
``compact_boundary`` lines (``compactMetadata``: ``trigger``, ``preTokens``,
``postTokens``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SUMMARY = "This session is being continued from a previous conversation. Summary: the work so far."


def _cc(kind: str, n: int, version: str, **fields: Any) -> str:
    return json.dumps(
        {
            "type": kind,
            "uuid": f"u{n}",
            "parentUuid": f"u{n - 1}" if n else None,
            "sessionId": "s1",
            "version": version,
            **fields,
        }
    )


def claude_code_log(
    path: Path,
    prompts: list[int],
    *,
    after: int,
    version: str = "2.0.26",
    model: str = "claude-sonnet-4-5-20250929",
    boundary: dict[str, Any] | None = None,
    command: str | None = None,
) -> Path:
    """A Claude Code session: a prompt, then one call per entry of ``prompts`` (each a
    tool call answered by a result), a compaction after call ``after``. ``boundary``: the
    ``compactMetadata`` of a ``compact_boundary`` line (None: the summary line only, as
    1.0.x writes); ``command``: "before" / "after" logs a ``/compact`` echo there."""
    lines: list[str] = []
    n = 0

    def add(kind: str, **fields: Any) -> None:
        nonlocal n
        lines.append(_cc(kind, n, version, **fields))
        n += 1

    def echo() -> None:
        text = "<command-name>/compact</command-name>\n<command-message>compact</command-message>"
        add("user", message={"role": "user", "content": text})

    add("user", message={"role": "user", "content": "Please fix the failing test in the repo."})
    for call, prompt in enumerate(prompts, 1):
        usage = {
            "input_tokens": 10,
            "cache_read_input_tokens": prompt - 10,
            "cache_creation_input_tokens": 0,
            "output_tokens": 50,
        }
        content = [
            {"type": "text", "text": f"Step {call}: reading more files."},
            {"type": "tool_use", "id": f"t{call}", "name": "Read", "input": {"file": f"f{call}"}},
        ]
        add(
            "assistant",
            message={
                "id": f"m{call}",
                "role": "assistant",
                "model": model,
                "content": content,
                "usage": usage,
            },
        )
        result = [{"type": "tool_result", "tool_use_id": f"t{call}", "content": "x " * 400}]
        add("user", message={"role": "user", "content": result})
        if call == after:
            if command == "before":
                echo()
            if boundary is not None:
                add(
                    "system",
                    subtype="compact_boundary",
                    content="Conversation compacted",
                    compactMetadata=boundary,
                )
            add("user", isCompactSummary=True, message={"role": "user", "content": SUMMARY})
            if command == "after":
                echo()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _codex(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-02-23T12:00:00.000Z", "type": kind, "payload": payload})


def codex_log(
    path: Path,
    prompts: list[int],
    *,
    after: int,
    window: int = 258400,
    kept: int = 2,
    version: str = "0.104.0-alpha.1",
    model: str = "gpt-5.3-codex",
) -> Path:
    """A Codex rollout: one turn of tool calls whose prompts are ``prompts``; after call
    ``after``'s tool output, a ``compacted`` item whose ``replacement_history`` keeps
    ``kept`` user messages (plus a developer message and the summary item)."""
    meta = {"id": "c1", "cli_version": version, "base_instructions": {"text": "You are Codex."}}
    lines = [
        _codex("session_meta", meta),
        _codex("turn_context", {"model": model}),
        _codex(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Fix the bug."}],
            },
        ),
        _codex("event_msg", {"type": "user_message", "message": "Fix the bug."}),
    ]
    total = 0
    for call, prompt in enumerate(prompts, 1):
        total += prompt + 20
        last = {
            "input_tokens": prompt,
            "cached_input_tokens": 0,
            "output_tokens": 20,
            "total_tokens": prompt + 20,
        }
        lines.append(
            _codex(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "call_id": f"c{call}",
                    "arguments": "{}",
                },
            )
        )
        info = {
            "total_token_usage": {"total_tokens": total},
            "last_token_usage": last,
            "model_context_window": window,
        }
        lines.append(_codex("event_msg", {"type": "token_count", "info": info}))
        lines.append(
            _codex(
                "response_item",
                {"type": "function_call_output", "call_id": f"c{call}", "output": "y " * 300},
            )
        )
        if call == after:
            user = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Fix the bug."}],
            }
            history = [user] * kept + [
                {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "rules"}],
                },
                {"type": "compaction", "encrypted_content": "opaque"},
            ]
            lines.append(_codex("compacted", {"message": "", "replacement_history": history}))
            lines.append(_codex("event_msg", {"type": "context_compacted"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
