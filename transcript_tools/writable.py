"""Where a run's outputs go, checked before the work; a write that fails, said in one line.

An output that cannot be written is the user's disk, not a bug in tsum: a folder that
does not exist, a read-only or full file system. ``check_output_dir`` and
``check_output_file`` refuse such a destination before any work (a sweep of 20,000
files is not computed to be lost at the end); ``write_failure`` turns an ``OSError``
met mid-run into the one line the CLI prints (exit 3, ``errors.ExitCode.FAILED``).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .errors import ConfigError

# The largest integer a setting may hold: the outputs are JSON written by orjson, which
# refuses integers beyond 64 bits (orjson's README, "int"), so a larger one is a usage
# error before the run, never a failure writing run.json after it.
MAX_SETTING_INT = 2**63 - 1

# The errors of a destination, not of tsum: full, read-only, refused, vanished.
WRITE_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.EFBIG,
        errno.EIO,
        errno.ENOENT,
        errno.ENOTDIR,
        errno.EISDIR,
    }
)


def _writable_folder(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def check_output_dir(path: str | Path, option: str) -> None:
    """Refuse an output directory tsum could not create or write in (``option`` names it)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path}: exists and is not a directory")
    existing = path
    while not existing.exists():  # the folders mkdir(parents=True) would create
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(f"{option} {path}: {existing} is not a directory")
    if not _writable_folder(existing):
        raise ConfigError(f"{option} {path}: {existing} is not writable (read-only or no access)")


def check_output_file(path: str | Path, option: str) -> None:
    """Refuse an output file whose folder does not exist or cannot be written in."""
    path = Path(path)
    folder = path.parent
    if path.is_dir():
        raise ConfigError(f"{option} {path}: is a directory")
    if not folder.is_dir():
        raise ConfigError(f"{option} {path}: its folder {folder} does not exist")
    if not _writable_folder(folder) or (path.exists() and not os.access(path, os.W_OK)):
        raise ConfigError(f"{option} {path}: not writable (read-only or no access)")


def refuse_input_folder(root: str | Path, paths: list[str]) -> None:
    """Refuse an ``--out`` that is an input folder or holds an input: the marker written
    there would hide those inputs from this run's walk and from every later one."""
    out = Path(root).resolve()
    for spec in paths:
        if not isinstance(spec, str) or spec in ("-", "") or not os.path.exists(spec):
            continue
        path = Path(spec).resolve()
        if path == out or out in path.parents:
            raise ConfigError(
                f"--out {root}: holds the input {spec}, and tsum marks its --out folder as "
                "output, which no run reads: choose a folder outside the inputs"
            )


def drop_links(folder: Path, names: tuple[str, ...] | None = None) -> None:
    """Remove the symlinks among ``names`` in ``folder`` (all of its entries: None), never
    their targets: a folder tsum writes in (an output, a baseline: it may come from a pull
    request) must not redirect tsum's writes and deletes outside it
    (``compressed -> ../elsewhere``). tsum then writes its own files in their place."""
    if not folder.is_dir() or folder.is_symlink():
        return
    entries = folder.iterdir() if names is None else (folder / name for name in names)
    for entry in list(entries):
        if entry.is_symlink():
            entry.unlink()


def write_failure(exc: OSError) -> str | None:
    """The one line for an output that could not be written mid-run, or None when
    ``exc`` is not a destination's error."""
    if exc.errno not in WRITE_ERRNOS:
        return None
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or os.strerror(exc.errno or 0)} (an output could not be written)"
