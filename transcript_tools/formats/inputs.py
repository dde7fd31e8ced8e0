"""The inputs of a run: files, directories, globs and ``-``, expanded in a fixed order.

A directory is walked for transcript files (sorted), skipping tsum's own output folders;
session ids repeated across inputs get a suffix (``unique_name``).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

OUTPUT_MARKER = ".tsum-output"  # written by outputs.OutputDirectory
# the error of a run whose inputs held no session (replay, eval, fidelity)
NO_SESSIONS_FOUND = "no sessions found in the given paths"
# Aider's logs are plain text under fixed names (``.aider.chat.history.md``, and
# ``.aider.llm.history`` or ``<name>.aider.llm.history`` when renamed).
TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".traj", ".aider.chat.history.md", ".aider.llm.history")
SKIPPED_SUFFIXES = (".meta.json",)
# OpenCode's SQLite database keeps its fixed name (.opencode/opencode.db)
TRANSCRIPT_NAMES = ("opencode.db",)


@dataclass(slots=True)
class InputFile:
    path: str
    from_directory: bool = False  # found by walking a directory: undetectable files are warnings


def expand_inputs(paths: list[str] | list[InputFile]) -> Iterator[InputFile]:
    """Files, directories (recursing into transcript files, sorted), globs, and ``-``."""
    for spec in paths:
        if isinstance(
            spec, InputFile
        ):  # already expanded: one file of a parallel run (parallel.py)
            yield spec
            continue
        if spec in ("-", ""):  # stdin; "" (an unset variable) fails when read, never "."
            yield InputFile(spec)
            continue
        path = Path(spec)
        if path.is_dir() and own_output(spec) is not None:
            yield InputFile(spec)  # tsum's own output, named: an error when read, never unsaid
            continue
        if path.is_dir():
            walked, unlisted = _walk(path)
            for name in transcript_files(walked):
                yield InputFile(name, from_directory=True)
            for folder in unlisted:  # its logs unread: an error when read, never left out unsaid
                yield InputFile(folder)
            continue
        if not path.exists() and any(ch in spec for ch in "*?["):
            matches = sorted(glob.glob(spec, recursive=True))
            if matches:
                for name in matches:
                    if os.path.isfile(name):
                        yield InputFile(name)
                continue
        yield InputFile(spec)  # a missing path fails when read, with its name


def own_output(path: str) -> str | None:
    """What a folder tsum wrote (a walk skips it) is, named as an input: where its
    replayed sessions are; None for any other path."""
    if not (Path(path) / OUTPUT_MARKER).exists():
        return None
    compressed = Path(path) / "compressed"
    where = f"; its replayed sessions are in {compressed}" if compressed.is_dir() else ""
    return f"tsum's own output folder ({OUTPUT_MARKER}), never read as input{where}"


def _walk(root: Path) -> tuple[list[str], list[str]]:
    """The files under ``root``, but for those in tsum's own output folders (marked by
    OutputDirectory), and the folders that could not be listed (no permission...)."""
    files: list[str] = []
    unlisted: list[str] = []
    for folder, dirs, names in os.walk(root, onerror=lambda exc: unlisted.append(exc.filename)):
        if OUTPUT_MARKER in names or OUTPUT_MARKER in dirs:
            dirs[:] = []  # nor the folders under it
            continue
        base = Path(folder)
        files.extend(str(base / name) for name in names if (base / name).is_file())
    return files, sorted(unlisted)


# A Cline / Roo Code / Kilo Code task folder is one session: its API history is read with
# its UI log (formats.cline), so a walk does not read the UI log a second time.
CLINE_API, CLINE_UI = "api_conversation_history.json", "ui_messages.json"


def transcript_files(walked: Iterable[str]) -> list[str]:
    """Of the files a directory walk found (local or a URL folder listed by Ray), the ones
    read as transcripts, sorted: the one rule for both walks."""
    found = sorted(
        name
        for name in walked
        if (name.endswith(TRANSCRIPT_SUFFIXES) or name.rsplit("/", 1)[-1] in TRANSCRIPT_NAMES)
        and not name.endswith(SKIPPED_SUFFIXES)
    )
    return _one_per_task_folder(found)


def _one_per_task_folder(found: list[str]) -> list[str]:
    if not any(name.endswith(CLINE_UI) for name in found):
        return found
    names = set(found)
    return [
        n for n in found if not (n.endswith(CLINE_UI) and n[: -len(CLINE_UI)] + CLINE_API in names)
    ]


class NameSet(set[str]):
    """Names taken so far, remembering how far each name's numbering got: the k-th copy
    of a name then costs one probe, not k (20,000 files sharing one session id were
    quadratic). Names are only ever added, so every number below the remembered one is
    taken for good."""

    __slots__ = ("numbered",)

    def __init__(self, names: Iterable[str] = ()) -> None:
        super().__init__(names)
        self.numbered: dict[tuple[str, str], int] = {}


def unique_name(name: str, taken: set[str], sep: str) -> str:
    """``name``, or ``name{sep}2``, ``name{sep}3``… whichever is not taken yet (then taken).
    A ``NameSet`` starts where the name's numbering got to (same result, O(1))."""
    numbered = taken.numbered if isinstance(taken, NameSet) else None
    n = numbered.get((name, sep), 1) if numbered is not None else 1
    candidate = name if n == 1 else f"{name}{sep}{n}"
    while candidate in taken:
        n += 1
        candidate = f"{name}{sep}{n}"
    taken.add(candidate)
    if numbered is not None:
        numbered[(name, sep)] = n
    return candidate
