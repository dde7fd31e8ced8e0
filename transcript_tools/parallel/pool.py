"""Per-file work on every local core, or on a Ray cluster, merged in input order.

The unit of work is a *batch* of consecutive input files (a file is never split: a
conversation can span a whole file, and every reader streams one file). A worker reads
its files and returns one compact *part* (aggregates, rendered records, warnings), never
transcripts. The driver takes parts strictly in input order, so whatever the number of
workers the output is the one ``--workers 1`` gives, byte for byte.

Bounded memory: at most ``2 x workers`` batches are in flight (a job whose parts are
small aggregates may ask for more: ``parts_per_worker``, parallel/job.py), a batch holds at most
``BATCH_BYTES`` of input (or one bigger file), and the driver keeps only merged
aggregates plus the parts waiting for their turn.

Session ids: ``ReplayDriver`` makes every session id unique over the whole corpus
(``name``, ``name#2``...), in input order. A worker only knows its own files, so it
names its sessions as if no other file existed and returns the names. When none of them
was taken by an earlier file, they are exactly the names a single process gives (each
name is the first free candidate either way). Otherwise -- rare: the same session id in
two files -- the driver runs that batch again, seeded with the earlier names that its
sessions could collide with.
"""

from __future__ import annotations

import os
import re
import signal
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..formats.inputs import InputFile, NameSet, marked_inputs
from . import RAY_LOCAL
from .job import PARTS_PER_WORKER, FileJob

if TYPE_CHECKING:  # the pool's modules load when a pool starts (not for a run that makes calls)
    from concurrent.futures import Future, ProcessPoolExecutor

BATCH_BYTES = 1 << 20  # input bytes per batch: amortizes the per-task cost of a pool
BATCH_FILES = 64


# More processes than this is a typo, not a machine: the pool would fail to start them
# (``multiprocessing`` sizes C ints by the count) long after the run began.
MAX_WORKERS = 4096


def default_workers() -> int:
    """The cores this process may use (``os.process_cpu_count`` from Python 3.13)."""
    count = getattr(os, "process_cpu_count", None)
    if count is not None:
        return int(count() or 1)
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class Backend:
    """Where per-file work runs: ``workers`` local processes, or Ray at ``ray``."""

    workers: int = 1
    ray: str | None = None  # None: local; "local": start a local Ray; else an address


BATCH_HINT = (
    "summary calls at scale go through the providers' batch APIs (--batch), not through many "
    "Ray workers hitting one rate limit; --ray runs only work that makes no summary calls"
)


def backend_for(workers: Any, ray_address: str | None) -> Backend:
    """``workers`` as the settings rule resolved it (flags > TSUM_WORKERS > file), else the
    machine's cores; Ray at ``ray_address`` (``RAY_LOCAL``: a local Ray) when given."""
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS
    ):
        raise ConfigError(f"workers must be an integer from 1 to {MAX_WORKERS}, got {workers!r}")
    if ray_address is not None:
        from .ray_data import import_ray

        import_ray()  # a usage error now, before any work, when Ray is not installed
        if not ray_address.strip():
            raise ConfigError(
                "--ray: empty address (give none for a local Ray, `auto`, or ray://HOST:PORT)"
            )
        if ray_address != RAY_LOCAL and os.path.exists(ray_address):
            # `--ray corpus/`: click gave the path to --ray, its optional value
            raise ConfigError(
                f"--ray took {ray_address!r} as a Ray address: put --ray after the paths, or write --ray local"
            )
    return Backend(workers=workers or default_workers(), ray=ray_address)


def refuse_summaries_on_ray(ray_address: str | None, what: str) -> None:
    """Summary-making runs stay off Ray until a shared rate limit exists (docs/scale.md)."""
    if ray_address is not None:
        raise ConfigError(f"--ray does not run {what}: {BATCH_HINT}")


def plan(paths: Iterable[str], backend: Backend) -> list[InputFile] | None:
    """The input files to spread over workers, or None: run inline, as always.

    Inline when there is one worker, one file, or stdin among the inputs (stdin
    belongs to the driver process): no pool start-up for nothing.
    """
    paths = list(paths)
    if backend.ray is not None:
        if "-" in paths:
            raise ConfigError("--ray reads files, not stdin (-): give paths or URLs")
        from .ray_data import expand_urls

        return expand_urls(paths)
    if backend.workers <= 1 or "-" in paths:
        return None
    items = list(marked_inputs(paths))  # a file named again: its worker says so, in order
    return items if sum(item.repeated is None for item in items) > 1 else None


def batches(items: Iterable[InputFile]) -> Iterator[list[InputFile]]:
    """Consecutive files, up to ``BATCH_BYTES`` (or one bigger file) / ``BATCH_FILES`` each."""
    batch: list[InputFile] = []
    size = 0
    for item in items:
        try:
            length = os.path.getsize(item.path) if item.repeated is None else 0
        except OSError:  # missing: the worker reports it, as inline
            length = 0
        if batch and (size + length > BATCH_BYTES or len(batch) >= BATCH_FILES):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += length
    if batch:
        yield batch


def ordered_parts(job: FileJob, items: list[InputFile], backend: Backend) -> Iterator[Any]:
    """Each batch's part, in input order, with session ids as one process would give."""
    seen = SeenNames()
    if backend.ray is not None:
        from .ray_data import ray_map, ray_rerun

        results: Iterator[tuple[list[InputFile], Any]] = ray_map(job, items, backend.ray)
        rerun = ray_rerun
    else:
        pool = _Pool(job, backend.workers)
        results = pool.map(batches(items))
        rerun = pool.rerun
    try:
        for batch, part in results:
            if job.names_sessions:
                if not seen.names.isdisjoint(part.names):
                    part = rerun(job, batch, seen.collision_seed(part.names))
                seen.update(part.names)
            yield part
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()  # a generator: shuts its pool / Ray down now, even when abandoned


_NUMBERED = re.compile(r"^(.*)#\d+$")


class SeenNames:
    """The session names of the batches merged so far, indexed by the name each could
    have been numbered from: a batch's collision seed is then a lookup, not a scan of
    every earlier name (200,000 files in folders reusing names were quadratic)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._by_base: dict[str, list[str]] = {}

    def update(self, names: Iterable[str]) -> None:
        for name in names:
            if name in self.names:
                continue
            self.names.add(name)
            self._by_base.setdefault(name, []).append(name)
            match = _NUMBERED.match(name)
            if match is not None:
                self._by_base.setdefault(match.group(1), []).append(name)

    def collision_seed(self, names: Iterable[str]) -> NameSet:
        """The earlier names a batch's sessions could collide with (a small part).

        A session first named ``x`` probes ``x``, ``x#2``, ``x#3``... (``unique_name``),
        and its original id is its worker-given name or a prefix of it ending before a
        ``#``. Every earlier name of one of those forms is in the seed; others are never
        probed."""
        prefixes: set[str] = set()
        for name in names:
            prefixes.add(name)
            for i, ch in enumerate(name):
                if ch == "#":
                    prefixes.add(name[:i])
        return NameSet(n for prefix in prefixes for n in self._by_base.get(prefix, ()))


# ---- the local process pool -----------------------------------------------------------

_JOB: Any = None  # the job of this worker process (installed once, not sent per task)


def _install(job: FileJob) -> None:
    global _JOB
    _JOB = job
    # Ctrl-C goes to the whole process group, and so may SIGTERM (systemd, a CI cancel):
    # the driver stops the pool and says so once; workers must not each print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _run(items: list[InputFile], taken: set[str]) -> Any:
    return _JOB.run(items, taken)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's worker processes now (they ignore SIGINT and SIGTERM), so that none
    outlives the driver. ``_processes`` is the executor's own table of them (CPython's
    Lib/concurrent/futures/process.py; 3.14 adds ``terminate_workers`` for this)."""
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        if process.is_alive():
            process.kill()
    for process in list(processes.values()):
        process.join(timeout=5)


class _Pool:
    def __init__(self, job: FileJob, workers: int) -> None:
        self.job = job
        self.workers = workers
        self.pool: ProcessPoolExecutor | None = None

    def _start(self) -> ProcessPoolExecutor:
        if self.pool is None:
            # fork where there is one: the driver has already imported everything, so a
            # worker starts in milliseconds; a spawned one re-imports for ~0.3 s.
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            self.pool = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_install, initargs=(self.job,)
            )
        return self.pool

    def map(self, work: Iterator[list[InputFile]]) -> Iterator[tuple[list[InputFile], Any]]:
        pool = self._start()
        window: deque[tuple[list[InputFile], Future[Any]]] = deque()
        size = getattr(self.job, "parts_per_worker", PARTS_PER_WORKER) * self.workers
        stopped = False
        try:
            for batch in work:
                window.append((batch, pool.submit(_run, batch, set())))
                if len(window) >= size:  # bounded: parts wait for their turn
                    batch, future = window.popleft()
                    yield batch, future.result()
            while window:
                batch, future = window.popleft()
                yield batch, future.result()
        except BaseException:  # Ctrl-C, SIGTERM, an error: the batches in flight are moot
            stopped = True
            _end_workers(pool)
            raise
        finally:
            # A worker killed while writing its result leaves the executor's manager thread
            # waiting for the rest of it forever: after a kill, never join that thread.
            pool.shutdown(wait=not stopped, cancel_futures=True)
            self.pool = None

    def rerun(self, job: FileJob, batch: list[InputFile], taken: set[str]) -> Any:
        # In the driver: rare (a session id repeated across files), and the pool may be
        # shutting down already when the last batch needs it.
        return job.run(batch, taken)
