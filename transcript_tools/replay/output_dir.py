"""Writers for replay results: the ``--out`` directory (the human report: ``text_report``).

Files under ``--out`` (all JSONL with sorted keys, one record per line, in
input order; byte-identical for identical inputs, whatever the concurrency):

* ``decisions.jsonl`` — one record per turn;
* ``summaries.jsonl`` — one per summary call (ok or failed);
* ``prompts.jsonl``   — each distinct rendered prompt once: ``{sha256, text}``;
* ``slots.jsonl``     — the slot snapshot after each successful summary;
* ``compressed/<session>.jsonl`` — the final ``load_messages()`` view, native JSONL;
* ``run.json``        — the settings that shaped the run (diffable);
* ``manifest.json``   — timings, counts, errors (not diffable: it holds durations).

Each session's records are written and flushed together, so an interrupted run
leaves whole sessions behind.
"""

from __future__ import annotations

import io
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import IO, Any

import orjson

from ..cost.gate import COST_FILE
from ..engine.config import Checkpoint, ReplaySettings
from ..engine.prompt import PromptTemplate
from ..errors import ConfigError
from ..formats.inputs import OUTPUT_MARKER, NameSet, unique_name
from ..formats.native import write_messages
from ..writable import check_output_dir, drop_links, refuse_input_folder
from .conversation import SessionResult
from .parking import Rendered

DUMP_OPTIONS = orjson.OPT_SORT_KEYS
_LINE_OPTIONS = DUMP_OPTIONS | orjson.OPT_APPEND_NEWLINE

RECORD_FILES = ("decisions.jsonl", "summaries.jsonl", "prompts.jsonl", "slots.jsonl")
# Every name tsum writes or deletes under --out (a symlink there is never followed)
OWN_FILES = (*RECORD_FILES, COST_FILE, "run.json", "manifest.json", OUTPUT_MARKER, "compressed")
PARTIAL_MANIFEST = b'{\n  "status": "running"\n}\n'  # replaced when the run ends
# COST_FILE (cost.gate): --cost only, one record per session (cost/meter.py)
_UNSAFE = re.compile(r"[^A-Za-z0-9._#@+-]+")


def dump_line(record: Any) -> bytes:
    return orjson.dumps(record, option=_LINE_OPTIONS)


# dump_line as a C-level callable: writelines(map(...)) over a session's records then
# runs no Python frame per record.
_dump_lines = partial(orjson.dumps, option=_LINE_OPTIONS)


def write_records(files: Mapping[str, IO[bytes]], result: SessionResult) -> None:
    """A session's records, appended to the files of ``RECORD_FILES``."""
    engine = result.engine
    # Line by line (writelines of a generator), never one joined copy of a
    # session's records: prompts alone can be 30,000 characters each.
    if engine.decisions:
        files["decisions.jsonl"].writelines(map(_dump_lines, engine.decisions))
    if engine.summaries:
        files["summaries.jsonl"].writelines(map(_dump_lines, engine.summaries))
    if result.prompt_spool is not None:
        result.prompt_spool.seek(0)
        shutil.copyfileobj(result.prompt_spool, files["prompts.jsonl"])
        result.prompt_spool.close()
    elif engine.prompts:
        files["prompts.jsonl"].writelines(
            dump_line({"sha256": sha, "text": text}) for sha, text in engine.prompts.items()
        )
    if engine.snapshots:
        files["slots.jsonl"].writelines(map(_dump_lines, engine.snapshots))
    if result.cost is not None:
        files[COST_FILE].write(dump_line(result.cost))


def render_records(result: SessionResult) -> dict[str, bytes]:
    """``write_records`` into memory: the bytes of each record file the session adds to."""
    memory = {name: io.BytesIO() for name in (*RECORD_FILES, COST_FILE)}
    write_records(memory, result)
    return {name: buffer.getvalue() for name, buffer in memory.items() if buffer.tell()}


def safe_filename(session_id: str) -> str:
    name = _UNSAFE.sub("_", session_id).strip("._") or "session"
    return name[:150]


def refuse_foreign(root: Path) -> None:
    """Refuse a folder tsum did not write (no ``OUTPUT_MARKER``) holding files of the names
    it replaces or deletes: another tool's ``run.json`` is not tsum's to overwrite."""
    if not root.is_dir() or (root / OUTPUT_MARKER).exists():
        return
    theirs = [name for name in OWN_FILES if name != "compressed" and (root / name).exists()]
    if (root / "compressed").is_dir():
        theirs += [f"compressed/{p.name}" for p in sorted((root / "compressed").glob("*.jsonl"))]
    if theirs:
        shown = ", ".join(theirs[:3]) + (f" and {len(theirs) - 3} more" if len(theirs) > 3 else "")
        raise ConfigError(
            f"--out {root}: not a folder tsum wrote (no {OUTPUT_MARKER}), and it holds {shown}, "
            "which tsum would replace: choose a new or empty folder"
        )


class OutputDirectory:
    """Writes replay results under one directory (created; previous run files replaced).

    ``write_compressed=False`` (a dry run) skips ``compressed/``: without summaries
    the view is the input itself. ``inputs``: the run's paths, none of which it may hold.
    """

    spool_prompts = True

    def __init__(
        self,
        root: str | Path,
        write_compressed: bool = True,
        cost: bool = False,
        inputs: list[str] | None = None,
    ) -> None:
        self.root = Path(root)
        check_output_dir(self.root, "--out")  # a one-line refusal, before any work
        refuse_foreign(self.root)
        refuse_input_folder(root, inputs or [])
        self.root.mkdir(parents=True, exist_ok=True)
        drop_links(self.root, OWN_FILES)
        drop_links(self.root / "compressed")
        # Marks the folder as tsum's output, so a later replay of a tree that holds
        # it does not read its JSONL back as transcripts.
        (self.root / OUTPUT_MARKER).write_bytes(b"written by tsum replay\n")
        self.compressed = self.root / "compressed"
        self.write_compressed = write_compressed
        if self.compressed.is_dir():
            for old in self.compressed.glob("*.jsonl"):
                old.unlink()
        if write_compressed:
            self.compressed.mkdir(exist_ok=True)
        (self.root / "run.json").unlink(missing_ok=True)
        # Until close() writes the real one, the folder says it is partial: a run killed,
        # or stopped by a full disk, leaves a directory `tsum diff` calls incomplete.
        (self.root / "manifest.json").write_bytes(PARTIAL_MANIFEST)
        self.files: dict[str, IO[bytes]] = {
            name: open(self.root / name, "wb")
            for name in (*RECORD_FILES, *((COST_FILE,) if cost else ()))
        }
        self._names: set[str] = NameSet()
        self._aside = 0  # compressed files of sessions waiting for their turn

    def write_run_info(self, info: dict[str, Any]) -> None:
        (self.root / "run.json").write_bytes(
            orjson.dumps(info, option=DUMP_OPTIONS | orjson.OPT_INDENT_2) + b"\n"
        )

    def write_session(self, result: SessionResult) -> None:
        write_records(self.files, result)
        for handle in self.files.values():
            handle.flush()
        if self.write_compressed:
            engine = result.engine
            name = unique_name(safe_filename(engine.session_id), self._names, "-")
            tmp = self.compressed / f".{name}.tmp"
            write_messages(tmp, engine.load_messages(), engine.session_id)
            os.replace(tmp, self.compressed / f"{name}.jsonl")

    def render(self, result: SessionResult) -> Rendered:
        """``write_session``'s output, for a session that must wait for an earlier one
        (``reorder``): records as bytes, ``compressed/`` written under a temporary name
        (its final name depends on the sessions written before it)."""
        records = render_records(result)
        aside = None
        if self.write_compressed:
            self._aside += 1
            aside = self.compressed / f".waiting-{self._aside}.tmp"
            engine = result.engine
            write_messages(aside, engine.load_messages(), engine.session_id)
        return Rendered(records, aside)

    def write_rendered(self, session_id: str, rendered: Rendered) -> None:
        for name, data in rendered.records.items():
            self.files[name].write(data)
        for handle in self.files.values():
            handle.flush()
        if rendered.aside is not None:
            name = unique_name(safe_filename(session_id), self._names, "-")
            os.replace(rendered.aside, self.compressed / f"{name}.jsonl")

    def close(self, manifest: dict[str, Any] | None = None) -> None:
        for handle in self.files.values():
            handle.close()
        if manifest is not None:
            (self.root / "manifest.json").write_bytes(
                orjson.dumps(manifest, option=DUMP_OPTIONS | orjson.OPT_INDENT_2) + b"\n"
            )


def run_info(
    settings: ReplaySettings,
    template: PromptTemplate,
    provider: str,
    model: str | None,
    temperature: float | None = None,
) -> dict[str, Any]:
    """The settings that shape the outputs (run.json: diffable, no paths or times)."""
    cfg = settings.summary
    assert cfg is not None
    extra: dict[str, Any] = {}  # beyond the seed: only when set, so default run.json stays
    if temperature is not None:
        extra["temperature"] = temperature
    if settings.checkpoint is not Checkpoint.TURN:
        extra["checkpoint"] = settings.checkpoint.value
    if settings.auto_window:
        extra["max_context_tokens_auto"] = True  # per session: the records' max_context_tokens_from
    if settings.policy is not None:  # every value: `tsum check` reports a changed one
        extra["policy"] = asdict(settings.policy)
    return {
        **extra,
        "output_format": 1,
        "summary_config": {
            "trigger_token_ratio": cfg.trigger_token_ratio,
            "max_context_tokens": cfg.max_context_tokens,
            "debounce_turns": cfg.debounce_turns,
            "summary_model": cfg.summary_model,
            "max_tool_result_chars": cfg.max_tool_result_chars,
            "max_transcript_chars": cfg.max_transcript_chars,
            "summary_marker": cfg.summary_marker,
        },
        "template": {"name": template.name, "kind": template.kind, "sha256": template.sha256},
        "mode": settings.mode.value,
        "keep_recent_turns": settings.keep_recent_turns,
        "path": settings.path.value,
        "measure": settings.measure.value,
        "dry_run": settings.dry_run,
        "provider": provider,
        "model": model,
    }
