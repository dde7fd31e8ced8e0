"""Ray Data backend: the same per-file jobs as the local pool, as Ray Data tasks.

Files are read by Ray (``ray.data.read_binary_files``: local paths and every filesystem
URL Ray reads, e.g. ``s3://``); each task hands its file's bytes to the reader
(``formats.source.PREFETCHED_BYTES``) under the path the user gave, runs the job, and returns the
pickled part. Rows come back in input order (``preserve_order``), so the driver merges
exactly as with local workers. Ray is imported only here, only with ``--ray``.
"""

from __future__ import annotations

import logging
import os
import pickle
import re
from collections import deque
from collections.abc import Iterator
from typing import Any

from ..errors import ConfigError, TsumError
from ..formats.inputs import FirstNamed, InputFile, marked_inputs
from ..formats.source import PREFETCHED_BYTES
from .job import RAY_INSTALL_HINT, FileJob

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def import_ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401  # the extra: ray[data]
    except ImportError:
        raise ConfigError(f"--ray needs Ray Data: {RAY_INSTALL_HINT}") from None
    return ray


def is_url(path: str) -> bool:
    return bool(_SCHEME.match(path))


def expand_urls(paths: list[str]) -> list[InputFile]:
    """``expand_inputs`` for local paths and URLs alike (URL folders listed with pyarrow)."""
    items: list[InputFile] = []
    seen = FirstNamed()  # a local file named twice: read once (URLs are read as named)
    for spec in paths:
        if not is_url(spec):
            items.extend(marked_inputs([spec], seen))
            continue
        import_ray()
        from pyarrow import fs

        from ..formats.inputs import transcript_files

        filesystem, root = fs.FileSystem.from_uri(spec)
        info = filesystem.get_file_info(root)
        if info.type != fs.FileType.Directory:
            items.append(InputFile(spec))  # a missing URL fails when read, with its name
            continue
        scheme = spec[: _SCHEME.match(spec).end()]  # type: ignore[union-attr]
        found = transcript_files(  # the same rule as a local walk (formats/inputs.py)
            f.path
            for f in filesystem.get_file_info(fs.FileSelector(root, recursive=True))
            if f.type == fs.FileType.File
        )
        items.extend(InputFile(scheme + path, from_directory=True) for path in found)
    return items


def _key(path: str) -> str:
    """A path as Ray's ``include_paths`` column shows it: no scheme, local ones absolute."""
    match = _SCHEME.match(path)
    if match is not None:
        return path[match.end() :]
    return os.path.abspath(path)


class _Task:
    """One row (one file) -> one part. Pickled once per Ray worker.

    It must give each file the path the user gave (messages and outputs show it). Local
    files: a table (one machine's worth of files). URLs: Ray's path with the scheme back
    in front -- no table, so a job over millions of objects ships a few bytes, not a
    list of every object to every worker.
    """

    def __init__(
        self, job: FileJob, local: dict[str, InputFile], schemes: dict[str, str], named: set[str]
    ) -> None:
        self.job = job
        self.local = local
        self.schemes = schemes  # first path component (bucket) -> "s3://"
        self.named = named  # URLs given as files, not found by listing a folder

    def item(self, path: str) -> InputFile:
        found = self.local.get(_key(path))
        if found is not None:
            return found
        url = self.schemes[path.split("/", 1)[0]] + path
        return InputFile(url, from_directory=url not in self.named)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        item = self.item(row["path"])
        PREFETCHED_BYTES[item.path] = row["bytes"]
        try:
            part = self.job.run([item], set())
        finally:
            PREFETCHED_BYTES.pop(item.path, None)
        return {"path": row["path"], "part": pickle.dumps(part, pickle.HIGHEST_PROTOCOL)}


def _start(ray: Any, address: str) -> bool:
    """Attach to (or start) Ray; True when this run started it and must shut it down."""
    if ray.is_initialized():  # a host program (or a test) owns the instance
        return False
    try:
        ray.init(
            address=None if address == "local" else address,
            include_dashboard=False,
            log_to_driver=False,  # workers' logs stay in Ray's files: stderr is tsum's
            logging_level=logging.ERROR,  # its start-up notices are not tsum's output
        )
    except Exception as exc:  # Ray raises many kinds (connection, timeout, version)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise TsumError(f"--ray {address}: cannot start or reach Ray ({first})") from None
    return True


def _next_row(ray: Any, rows: Iterator[dict[str, Any]]) -> dict[str, Any] | None:
    try:
        return next(rows, None)
    except ray.exceptions.RayTaskError as exc:
        # an expected error raised in a task (a template that cannot render...): one line,
        # as in a local run, not the remote traceback Ray wraps around it
        cause = getattr(exc, "cause", None)
        if isinstance(cause, TsumError):
            raise cause from None
        raise


def _read_by_ray(item: InputFile) -> bool:
    return item.repeated is None and (is_url(item.path) or os.path.isfile(item.path))


def ray_map(
    job: FileJob, items: list[InputFile], address: str
) -> Iterator[tuple[list[InputFile], Any]]:
    """(batch of one file, part) per input file, in input order."""
    ray = import_ray()
    started = _start(ray, address)
    try:
        # Ray Data's notices (progress bars, "progress bars disabled", execution plans)
        # would interleave with tsum's warnings on stderr.
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True  # parts merge in input order
        context.enable_progress_bars = False
        if hasattr(context, "print_on_execution_start"):
            context.print_on_execution_start = False
        if not items:
            return
        # A local path that is not a file fails in the driver, with the inline message
        # (Ray would abort the whole read); a file named again is said there, not read.
        readable = [item for item in items if _read_by_ray(item)]
        expected = deque(items)
        early: dict[str, deque[Any]] = {}
        rows: Iterator[dict[str, Any]] = iter(())
        if readable:
            local = {_key(i.path): i for i in readable if not is_url(i.path)}
            schemes = {}
            for spec in {i.path for i in readable if is_url(i.path)}:
                rest = _key(spec)
                schemes[rest.split("/", 1)[0]] = spec[: len(spec) - len(rest)]
            named = {i.path for i in readable if is_url(i.path) and not i.from_directory}
            paths = [item.path if is_url(item.path) else _key(item.path) for item in readable]
            dataset = ray.data.read_binary_files(paths, include_paths=True)
            rows = iter(dataset.map(_Task(job, local, schemes, named)).iter_rows())
        while expected:
            item = expected[0]
            if not _read_by_ray(item):
                expected.popleft()
                yield [item], job.run([item], set())
                continue
            waiting = early.get(_key(item.path))
            if waiting:  # preserve_order keeps this buffer at one entry
                expected.popleft()
                yield [item], pickle.loads(waiting.popleft())
                continue
            row = _next_row(ray, rows)
            if row is None:
                raise RuntimeError(f"Ray returned no result for {item.path}")
            early.setdefault(_key(row["path"]), deque()).append(row["part"])
        if _next_row(ray, rows) is not None:
            raise RuntimeError("Ray returned more results than input files")
    finally:
        if started:
            ray.shutdown()


def ray_rerun(job: FileJob, batch: list[InputFile], taken: set[str]) -> Any:
    """A batch again, in the driver (rare: a session id repeated across files)."""
    fetched = []
    for item in batch:
        if is_url(item.path):
            from pyarrow import fs

            filesystem, path = fs.FileSystem.from_uri(item.path)
            with filesystem.open_input_stream(path) as stream:
                PREFETCHED_BYTES[item.path] = stream.read()
            fetched.append(item.path)
    try:
        return job.run(batch, taken)
    finally:
        for path in fetched:
            PREFETCHED_BYTES.pop(path, None)
