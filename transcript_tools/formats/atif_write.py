"""Writing a conversation as an ATIF trajectory (``tsum replay --out DIR --out-format atif``:
``compressed/<session>.json`` instead of the native ``.jsonl``).

The mapping is ``atif``'s reading (formats/atif.py) turned around, into the schema of the
``atif`` package 1.8.0 (``atif/trajectory.py``, ``step.py``): system messages are
``system`` steps, user messages ``user`` steps (an injection or an observation says so in
the step's ``extra.origin``), each assistant message an ``agent`` step with its
``reasoning_content``, ``tool_calls`` and ``metrics`` (``prompt_tokens`` = the whole prompt,
``cached_tokens`` the part read from the cache), and the tool results answering it its
``observation``. A result whose call is not in the step before it (ATIF requires a
result's ``source_call_id`` to name a call of its own step) goes into a ``system`` step's
observation, without ``source_call_id``. A message the runtime wrote (``<synthetic>``) is
an agent step with ``llm_call_count: 0``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from .._version import __version__
from ..engine.config import OUT_FORMATS
from ..engine.messages import (
    PERSON,
    SYNTHETIC_MODEL,
    AssistantMessage,
    Message,
    OtherBlock,
    SystemMessage,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)
from ..errors import ConfigError
from . import native
from .content_parts import text_of
from .source import Source, iter_records

SCHEMA_VERSION = "ATIF-v1.8"


def _agent_step(message: AssistantMessage) -> dict[str, Any]:
    step: dict[str, Any] = {"source": "agent", "message": text_of(message.blocks)}
    thinking = [
        str(b.data) for b in message.blocks if isinstance(b, OtherBlock) and b.kind == "thinking"
    ]
    if message.model == SYNTHETIC_MODEL:
        step["llm_call_count"] = 0
        return step
    if message.model:
        step["model_name"] = message.model
    if any(thinking):
        step["reasoning_content"] = "\n".join(t for t in thinking if t)
    calls = [b for b in message.blocks if isinstance(b, ToolUseBlock)]
    if calls:
        step["tool_calls"] = [
            {
                "tool_call_id": b.id,
                "function_name": b.name,
                "arguments": b.input if isinstance(b.input, dict) else {"input": b.input},
            }
            for b in calls
        ]
    if message.usage is not None:
        step["metrics"] = {
            "prompt_tokens": message.usage.input_tokens,
            "completion_tokens": message.usage.output_tokens,
            "cached_tokens": message.usage.cache_read_tokens,
        }
    return step


def _result(steps: list[dict[str, Any]], message: ToolResultMessage) -> None:
    last = steps[-1] if steps else None
    ids = {c["tool_call_id"] for c in (last or {}).get("tool_calls", [])}
    if last is not None and message.tool_call_id in ids:
        result = {"source_call_id": message.tool_call_id, "content": message.content}
        last.setdefault("observation", {"results": []})["results"].append(result)
        return
    orphan = {"content": message.content, "extra": {"tool_call_id": message.tool_call_id}}
    steps.append({"source": "system", "message": "", "observation": {"results": [orphan]}})


def _step(message: Message) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"source": "system", "message": message.text}
    if isinstance(message, UserMessage):
        step: dict[str, Any] = {"source": "user", "message": text_of(message.blocks)}
        if message.origin != PERSON:
            step["extra"] = {"origin": message.origin}
        return step
    if isinstance(message, UserImageMessage):
        return {"source": "user", "message": "", "extra": {"image": message.media_type}}
    assert isinstance(message, AssistantMessage)
    return _agent_step(message)


def trajectory(messages: Iterable[Message], session_id: str) -> dict[str, Any]:
    """The ATIF document of ``messages`` (steps numbered from 1, totals in
    ``final_metrics``)."""
    steps: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ToolResultMessage):
            _result(steps, message)
        else:
            steps.append(_step(message))
    for number, step in enumerate(steps, 1):
        step["step_id"] = number
    metrics = [s["metrics"] for s in steps if "metrics" in s]
    models = [s["model_name"] for s in steps if "model_name" in s]
    agent: dict[str, Any] = {"name": "tsum", "version": __version__}
    if models:
        agent["model_name"] = models[0]
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": session_id,
        "agent": agent,
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": sum(m["prompt_tokens"] for m in metrics),
            "total_completion_tokens": sum(m["completion_tokens"] for m in metrics),
            "total_cached_tokens": sum(m["cached_tokens"] for m in metrics),
            "total_steps": len(steps),
        },
    }


def check_out_format(out_dir: str | Path | None, out_format: str, dry_run: bool) -> None:
    """Refuse, before the run, an ``--out-format`` that would convert nothing: the views it
    rewrites are ``--out DIR/compressed``, which a report on stdout or a dry run never writes."""
    if out_format not in OUT_FORMATS:
        raise ConfigError(
            f"--out-format {out_format!r}: not an output format (known: {', '.join(OUT_FORMATS)})"
        )
    if out_format == "native":
        return
    if out_dir is None:
        raise ConfigError(
            f"--out-format {out_format} rewrites the views under --out DIR: give --out"
        )
    if dry_run:
        raise ConfigError(f"--out-format {out_format}: a --dry-run writes no views to rewrite")


def write_out_format(out_dir: str | Path | None, out_format: str) -> None:
    """``replay --out DIR --out-format FMT`` once the replay is done: the views under
    ``DIR/compressed`` in ``FMT`` ("atif"; "native" leaves them as written)."""
    if out_dir is None or out_format == "native":
        return
    if out_format != "atif":
        raise ValueError(f"unknown output format {out_format!r} (known: native, atif)")
    folder = Path(out_dir) / "compressed"
    for stale in folder.glob("*.json"):  # an earlier run's: this run wrote .jsonl only
        stale.unlink()
    convert_views(folder)


def convert_views(folder: str | Path) -> int:
    """Rewrite every native view ``<folder>/<session>.jsonl`` (what ``replay --out`` writes
    under ``compressed/``) as the ATIF trajectory ``<session>.json``; the number converted.

    The native format round-trips exactly (formats/native.py), so reading a view back
    loses nothing; the conversion runs once the replay has written its views."""
    converted = 0
    for view in sorted(Path(folder).glob("*.jsonl")):
        for conv in native.read(
            iter_records(Source(str(view)), view.read_bytes()), Source(str(view))
        ):
            document = trajectory(conv.messages, conv.session_id)
            data = orjson.dumps(document, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
            view.with_suffix(".json").write_bytes(data + b"\n")
        view.unlink()
        converted += 1
    return converted
