"""What ``sweep`` runs per file on a pool or Ray, and how the parts merge.

Each job runs the library's own single-process code on its share of the files, with
warnings and errors captured as *events* in the order they happened. The driver replays the
events through the same reporter and counters, in input order, so stderr reads exactly as
in a single process; the parts' aggregates merge into the same totals one process gets.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, fields, replace
from typing import Any

from ..formats.inputs import InputFile, NameSet
from ..parallel.pool import Backend, ordered_parts, plan
from ..reporter import LOGGED, Recorder, replay_to
from .driver import ChartSample, Sweep, SweepResult, keep_sample
from .stats import ConfigStats


@dataclass(slots=True)
class SweepPart:
    result: SweepResult
    events: list[tuple[str, str]]
    names: set[str]


@dataclass(slots=True)
class SweepJob:
    sweep: Sweep  # with the logging reporter and no executor: the offline summarizer is built per worker
    names_sessions: bool = True
    # A part is aggregates (a few KB per configuration, at most ``sample_size`` charted
    # conversations): many may wait, so a grid's slow batch (a big log, a long
    # conversation) at the head of the window leaves no worker idle (parallel/pool.py).
    parts_per_worker: int = 16

    def run(self, items: list[InputFile], taken: set[str]) -> SweepPart:
        recorder, ids = Recorder(), NameSet(taken)
        sweep = replace(self.sweep, reporter=recorder, taken_ids=ids)
        result = sweep.run(items)  # type: ignore[arg-type]  # InputFiles pass through
        return SweepPart(result, recorder.events, ids - taken)


def run_sweep(sweep: Sweep, paths: list[str], backend: Backend) -> SweepResult:
    """``sweep.run(paths)``, spread over ``backend`` when that pays (same result)."""
    items = plan(paths, backend) if sweep.executor is None else None
    if items is None:  # one worker / one file / cached provider responses: as always
        return sweep.run(paths)
    started = time.perf_counter()
    if sweep.template is None:
        from ..engine.prompt import template_from_config

        sweep.template = template_from_config(sweep.base.summary_prompt)
    job = SweepJob(replace(sweep, reporter=LOGGED, on_outcome=None))
    total = SweepResult(sweep.configs, sweep.new_stats())
    heap: list[tuple[tuple[bool, bool, int, int], int, ChartSample]] = []
    reporter = sweep.reporter
    for part in ordered_parts(job, items, backend):
        replay_to(reporter, part.events)
        _merge_sweep(total, part.result, heap, sweep.sample_size)
        for _ in range(part.result.conversations):
            reporter.session(None)
        reporter.files_done(part.result.files)
    total.samples = [s for _, _, s in sorted(heap, key=lambda item: item[2].profile.index)]
    total.summary_source = sweep._source(total)
    total.elapsed = time.perf_counter() - started
    return total


# ConfigStats fields that are maxima; every other int is a sum, every Counter a histogram.
_MAXIMA = {"peak_without", "peak_with"}
_FIXED = {"config", "price_per_mtok", "cost_on"}


def merge_config_stats(into: ConfigStats, part: ConfigStats) -> None:
    """Fold one part's aggregates into ``into``: equal to having added its conversations."""
    for f in fields(ConfigStats):
        name = f.name
        if name in _FIXED:
            continue
        mine, theirs = getattr(into, name), getattr(part, name)
        if isinstance(mine, Counter):
            mine.update(theirs)
        elif name in _MAXIMA:
            setattr(into, name, max(mine, theirs))
        elif isinstance(mine, int):
            setattr(into, name, mine + theirs)
        else:  # a new kind of aggregate: say how it merges here
            raise TypeError(f"ConfigStats.{name}: no merge rule")


def _merge_sweep(total: SweepResult, part: SweepResult, heap: list[Any], size: int) -> None:
    for mine, theirs in zip(total.stats, part.stats, strict=True):
        merge_config_stats(mine, theirs)
    offset = total.conversations  # the part's conversation indices start at 0
    total.files += part.files
    total.conversations += part.conversations
    total.turns += part.turns
    total.fast_runs += part.fast_runs
    total.engine_runs += part.engine_runs
    total.warnings += part.warnings
    total.errors.extend(part.errors)
    for sample in part.samples:  # the part's best; the corpus's best are among them
        sample.profile.index += offset
        keep_sample(heap, size, sample)
