"""The inputs of a run: files, directories, globs and ``-``, expanded in a fixed order.

A directory is walked for transcript files (sorted), skipping tsum's own output folders;
a file named twice (a folder and a file in it, two spellings, a symlink) is read once, where
it was first named, and the later naming is a warning (``FirstNamed``); session ids
repeated across inputs get a suffix (``unique_name``).
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Callable, Iterable, Iterator
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
    # a file named again (``FirstNamed``): not read, this warning said in its place
    repeated: str | None = None


def _ignore(_message: str) -> None:
    pass


def expand_inputs(
    paths: list[str] | list[InputFile], warn: Callable[[str], None] = _ignore
) -> Iterator[InputFile]:
    """Files, directories (recursing into transcript files, sorted), globs, and ``-``;
    a file named twice is yielded once, each later naming said through ``warn``."""
    for item in marked_inputs(paths):
        if item.repeated is None:
            yield item
        else:
            warn(item.repeated)


def marked_inputs(
    paths: list[str] | list[InputFile], seen: FirstNamed | None = None
) -> Iterator[InputFile]:
    """``expand_inputs``' files with each later naming of a file kept, marked ``repeated``:
    a parallel run's plan, whose workers say the warning where one process would."""
    seen = FirstNamed() if seen is None else seen
    for spec in paths:
        if isinstance(spec, InputFile):  # already marked: one batch of a parallel run
            yield spec
            continue
        for item in _expand(spec):
            yield seen.mark(spec, item)


def _expand(spec: str) -> Iterator[InputFile]:
    """The files one argument names (a file, a directory, a glob, ``-``)."""
    if spec in ("-", ""):  # stdin; "" (an unset variable) fails when read, never "."
        yield InputFile(spec)
        return
    path = Path(spec)
    if path.is_dir() and own_output(spec) is not None:
        yield InputFile(spec)  # tsum's own output, named: an error when read, never unsaid
        return
    if path.is_dir():
        walked, unlisted = _walk(path)
        for name in transcript_files(walked):
            yield InputFile(name, from_directory=True)
        for folder in unlisted:  # its logs unread: an error when read, never left out unsaid
            yield InputFile(folder)
        return
    if not path.exists() and any(ch in spec for ch in "*?["):
        matches = sorted(glob.glob(spec, recursive=True))
        if matches:
            yield from (InputFile(name) for name in matches if os.path.isfile(name))
            return
    yield InputFile(spec)  # a missing path fails when read, with its name


class FirstNamed(dict[str, tuple[str, str]]):
    """The files named so far, each with the argument that named it first and its path
    there. A file is its resolved real path (``os.path.realpath``, as black's sources), so
    ``a.jsonl``, ``./a.jsonl``, a symlink to it and a folder holding it name one file; a
    hard link is another name of its own (a corpus built of links reads every one).
    stdin, a missing path, a FIFO or a folder (an error when read) never repeat."""

    def mark(self, spec: str, item: InputFile) -> InputFile:
        """``item``, marked ``repeated`` when an earlier naming read its file."""
        key = _identity(item.path)
        if key is None:
            return item
        if key not in self:
            self[key] = (spec, item.path)
            return item
        item.repeated = (
            f"warning: {item.path}: given twice{_also(*self[key], item.path)}: read once"
        )
        return item


def _also(first_spec: str, first_path: str, path: str) -> str:
    """The argument that named the file first (and its path there, if not this one)."""
    if first_path == first_spec:  # an argument naming the file itself
        return f" (also given as {first_spec})"
    as_path = "" if first_path == path else f" as {first_path}"
    return f" (also found in {first_spec}{as_path})"


def _identity(path: str) -> str | None:
    """The real path of a regular file, or None (stdin, missing, a FIFO, a folder)."""
    if path in ("-", ""):
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
    except (OSError, ValueError):
        return None
    return os.path.realpath(path)


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
