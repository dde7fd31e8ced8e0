"""Reading a ``tsum replay --out`` directory back, validated (for ``tsum diff`` / ``check``).

Anything that makes two outputs incomparable raises: a missing directory or
file, a corrupt line (``path:line``), an ``output_format`` this version does not
read, a summary whose prompt is not in ``prompts.jsonl``, zero sessions (an
empty replay is never a pass). Prompt texts stay on disk and are read on demand.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson

from ..engine.records import (
    DecisionRecord,
    SnapshotRecord,
    SummaryRecord,
    UnitFields,
    record_unit,
)
from ..errors import InputError, TsumError
from .output_dir import RECORD_FILES

SUPPORTED_OUTPUT_FORMATS = (1,)
RUN_FILE = "run.json"
MANIFEST_FILE = "manifest.json"  # not diffable; its status says whether the run finished
DIFFABLE_FILES = (*RECORD_FILES, RUN_FILE)  # plus compressed/*.jsonl; never manifest.json
_REQUIRED: dict[str, dict[str, type]] = {
    "decisions.jsonl": {"session": str, "turn": int, "decision": str},
    "summaries.jsonl": {"session": str, "turn": int, "status": str, "prompt_sha256": str},
    "prompts.jsonl": {"sha256": str, "text": str},
    "slots.jsonl": {"session": str, "turn": int},
}


class DiffInputError(TsumError):
    """An output directory that cannot be compared (missing, corrupt, incompatible): exit 3."""


@dataclass(slots=True)
class SessionRecords:
    """One session's records, by the checkpoint's unit (the turn, or the call)."""

    decisions: dict[int, DecisionRecord] = field(default_factory=dict)
    summaries: dict[int, SummaryRecord] = field(default_factory=dict)
    slots: dict[int, SnapshotRecord] = field(default_factory=dict)


@dataclass(slots=True)
class ReplayOutput:
    """One loaded ``--out`` directory. Prompt texts stay on disk and are read on demand."""

    root: Path
    run: dict[str, Any]
    sessions: dict[str, SessionRecords]
    digests: dict[str, str]  # diffable file (relative path) -> sha256
    _prompt_offsets: dict[str, int] = field(default_factory=dict)

    def prompt(self, sha256: str) -> str:
        with open(self.root / "prompts.jsonl", "rb") as handle:
            handle.seek(self._prompt_offsets[sha256])
            return str(orjson.loads(handle.readline())["text"])


def load_output(root: str | Path) -> ReplayOutput:
    """Load and validate a replay output directory; ``DiffInputError`` / ``InputError`` if unusable."""
    root = Path(root)
    try:
        return _load_output(root)
    except OSError as exc:  # a file of it unreadable (no permission...): a read, not a write
        where = exc.filename or root
        raise DiffInputError(f"{where}: cannot read ({exc.strerror or exc})") from None


def _load_output(root: Path) -> ReplayOutput:
    if not root.is_dir():
        what = "is a file, not a directory" if root.exists() else "no such directory"
        raise DiffInputError(f"{root}: {what} (expected the --out directory of tsum replay)")
    _refuse_partial(root)
    _refuse_links(root)
    run_path = root / RUN_FILE
    run = _run_settings(root, run_path)
    for name in RECORD_FILES:
        if not (root / name).is_file():
            raise DiffInputError(
                f"{root}: {name} is missing: not a complete tsum replay --out directory"
            )

    sessions: dict[str, SessionRecords] = {}
    digests: dict[str, str] = {RUN_FILE: hashlib.sha256(run_path.read_bytes()).hexdigest()}
    offsets: dict[str, int] = {}
    for name in RECORD_FILES:
        path = root / name
        digest = hashlib.sha256()
        offset = 0
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, start=1):
                digest.update(line)
                record = _parse_line(path, number, line, name)
                if name == "prompts.jsonl":
                    offsets.setdefault(record["sha256"], offset)
                else:
                    _add_record(sessions, name, record, path, number)
                offset += len(line)
        digests[name] = digest.hexdigest()
    compressed = root / "compressed"
    if compressed.is_dir():
        for path in sorted(compressed.glob("*.jsonl")):
            digests[f"compressed/{path.name}"] = hashlib.sha256(path.read_bytes()).hexdigest()

    for session, records in sessions.items():
        for turn, summary in records.summaries.items():
            if summary["prompt_sha256"] not in offsets:
                raise DiffInputError(
                    f"{root / 'summaries.jsonl'}: session {session} turn {turn}: prompt "
                    f"{summary['prompt_sha256'][:12]} is not in prompts.jsonl (corrupt output)"
                )
    if not sessions:
        raise DiffInputError(
            f"{root}: zero sessions in decisions.jsonl: nothing to compare (never a pass)"
        )
    return ReplayOutput(root, run, sessions, digests, offsets)


def _run_settings(root: Path, run_path: Path) -> dict[str, Any]:
    """run.json, checked: present, a JSON object, in an output format this tsum reads."""
    if not run_path.is_file():
        raise DiffInputError(
            f"{root}: no {RUN_FILE}: not a tsum replay --out directory (or an interrupted one)"
        )
    try:
        run = orjson.loads(run_path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(str(run_path), None, f"invalid JSON ({exc})") from None
    if not isinstance(run, dict):
        raise InputError(str(run_path), None, "expected a JSON object")
    fmt = run.get("output_format")
    if fmt not in SUPPORTED_OUTPUT_FORMATS:
        raise DiffInputError(
            f"{run_path}: output_format {fmt!r} is not one this tsum reads "
            f"({', '.join(map(str, SUPPORTED_OUTPUT_FORMATS))}); rerun the replay with this version"
        )
    return run


def _refuse_links(root: Path) -> None:
    """A file of ours that is a symlink is never read through: a baseline comes from the
    repository, so from a pull request, and its links could point anywhere."""
    compressed = root / "compressed"
    inside = sorted(compressed.iterdir()) if compressed.is_dir() else []
    for path in (*(root / name for name in DIFFABLE_FILES), compressed, *inside):
        if path.is_symlink():
            raise DiffInputError(
                f"{path}: a symlink; tsum does not follow links in an output or baseline "
                "directory (rewrite it with tsum replay --out or check --update)"
            )


def _refuse_partial(root: Path) -> None:
    """A run that did not end well (killed, interrupted, a full disk) is incomplete: its
    missing sessions are not "removed". ``manifest.json`` says so (``OutputDirectory``
    writes a partial one first); a baseline has none and is whole by construction."""
    manifest = root / MANIFEST_FILE
    if not manifest.is_file():
        return
    try:
        status = orjson.loads(manifest.read_bytes()).get("status", "complete")
    except (orjson.JSONDecodeError, AttributeError):
        status = "unreadable"  # torn by a kill while it was written
    if status != "complete":  # no status at all: a manifest some other way made, read as is
        raise DiffInputError(
            f"{root}: incomplete output directory ({MANIFEST_FILE}: status {status}): the run "
            "did not finish; rerun it before comparing"
        )


def _parse_line(path: Path, number: int, line: bytes, name: str) -> dict[str, Any]:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            what = "invalid UTF-8"
        else:
            what = "truncated last line" if not line.endswith(b"\n") else f"invalid JSON ({exc})"
        raise InputError(str(path), number, f"{what}: corrupt output, rerun the replay") from None
    if not isinstance(record, dict):
        raise InputError(str(path), number, "expected a JSON object: corrupt output")
    for key, kind in _REQUIRED[name].items():
        value = record.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise InputError(
                str(path), number, f"field {key!r} missing or not {kind.__name__}: corrupt output"
            )
    return record


def _add_record(
    sessions: dict[str, SessionRecords], name: str, record: dict[str, Any], path: Path, number: int
) -> None:
    records = sessions.get(record["session"])
    if records is None:
        if name != "decisions.jsonl":
            raise InputError(
                str(path), number, f"session {record['session']!r} has no decisions: corrupt output"
            )
        records = sessions[record["session"]] = SessionRecords()
    # each file's records are its type (engine/records.py); _REQUIRED checked their keys
    tables: dict[str, dict[int, Any]] = {
        "decisions.jsonl": records.decisions,
        "summaries.jsonl": records.summaries,
        "slots.jsonl": records.slots,
    }
    table = tables[name]
    # the checkpoint's unit: the turn, or the call with --checkpoint call (several per turn)
    unit = record_unit(cast(UnitFields, record))
    key = record[unit]
    if key in table:
        raise InputError(
            str(path), number, f"session {record['session']!r} {unit} {key} appears twice"
        )
    table[key] = record
