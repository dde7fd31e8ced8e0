"""``tsum compare --replicates N``: every policy's summaries made N times by a live
provider, and the spread of their recall, per summarizer model.

A single run can mislead: a public compaction study saw recall vary up to 14× between
replicate runs at temperature 0 (github.com/profff/lost-in-compaction). Each replicate
is the comparison's own sweep (``replace``: the same configurations and logs) with a
live executor whose responses go to a cache file of its own (``FILE.r1``, ``FILE.r2``,
…): replicate r never reads replicate s's answers, and a rerun replays all of them.
This is the one place a comparison calls an API, and only when asked.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .._sync import run_sync
from ..engine.config import RunSettings
from ..present.table import text_table
from ..reporter import notes_only
from ..sweep.driver import Sweep
from .collect import Collected
from .figures import same_window


@dataclass(frozen=True, slots=True)
class Replicates:
    count: int
    temperature: float | None = None
    cache: Path | None = None  # the replicates' caches are named after it


def replicate_cache(cache: Path | None, replicate: int) -> Path:
    """``cache.sqlite3`` -> ``cache.r2.sqlite3`` (the default cache's name without one)."""
    from ..providers.cache import default_cache_path

    base = cache or default_cache_path()
    return base.with_name(f"{base.stem}.r{replicate}{base.suffix}")


def live_executor(run: RunSettings, spec: Replicates, replicate: int) -> Any:
    """The provider of ``run``, called (not cache-only), cached per replicate."""
    from ..providers.factory import build_executor

    return build_executor(
        {
            "provider": run.provider["provider"],
            "model": run.provider["model"],
            "base_url": run.provider["base_url"],
            "cache": replicate_cache(spec.cache, replicate),
            "temperature": spec.temperature,
            "concurrency": 1,
        }
    )


@dataclass(slots=True)
class ReplicateRow:
    policy: str
    model: str
    recalls: list[float | None]  # pooled recall of each replicate (None: never summarized)

    @property
    def measured(self) -> list[float]:
        return [r for r in self.recalls if r is not None]

    def spread(self) -> str:
        """median [min, max] and max / min ("-" where nothing was measured)."""
        got = self.measured
        if not got:
            return "-"
        low, high = min(got), max(got)
        ratio = f"{high / low:.1f}x" if low > 0 else ("1.0x" if high == 0 else "inf")
        return f"{statistics.median(got):.0%} [{low:.0%}, {high:.0%}] {ratio}"


def pooled_recalls(names: list[str], collected: Collected) -> list[float | None]:
    """Each policy's pooled recall over the conversations the comparison pairs."""
    paired = [c for c in collected.complete() if same_window(c)]
    out: list[float | None] = []
    for arm in range(len(names)):
        hits = total = 0
        for conversation in paired:
            recall = conversation[arm].recall
            if recall is not None:
                hits, total = hits + recall[0], total + recall[1]
        out.append(hits / total if total else None)
    return out


def _replicate(
    sweep: Sweep, names: list[str], executor: Any, paths: list[str]
) -> list[float | None]:
    """One replicate: ``sweep`` with ``executor``, each policy's pooled recall."""
    collected = Collected(len(sweep.configs))
    live = replace(
        sweep,
        executor=executor,
        pricer=None,
        reporter=notes_only(sweep.reporter),  # the first run warned
        on_outcome=collected.add,
    )

    async def run() -> None:
        try:
            await live.run_async(paths)
        finally:  # the provider's HTTP client is closed in the loop that used it
            await executor.aclose()

    run_sync(run)
    return pooled_recalls(names, collected)


def replicate_rows(
    sweep: Sweep, names: list[str], run: RunSettings, spec: Replicates, paths: list[str]
) -> list[ReplicateRow]:
    """``sweep`` run ``spec.count`` times, each with a live executor of its own."""
    by_replicate: list[list[float | None]] = []
    model = ""
    for replicate in range(1, spec.count + 1):
        executor = live_executor(run, spec, replicate)
        model = run.provider["model"] or executor.provider.default_model
        by_replicate.append(_replicate(sweep, names, executor, paths))
    return [
        ReplicateRow(name, model, [recalls[arm] for recalls in by_replicate])
        for arm, name in enumerate(names)
    ]


def render_replicates(rows: list[ReplicateRow], spec: Replicates) -> str:
    temperature = "the API's default" if spec.temperature is None else f"{spec.temperature:g}"
    lines = [
        f"recall by replicate: every summary made {spec.count} times, live "
        f"(temperature {temperature}), each replicate's responses cached apart "
        f"({replicate_cache(spec.cache, 1).name}, …: a rerun replays them)",
        "spread: median [min, max] of the replicates' pooled recall, and max / min",
    ]
    header = ("policy", "model", *(f"r{i}" for i in range(1, spec.count + 1)), "spread")
    table = [header]
    for row in rows:
        cells = ["-" if r is None else f"{r:.0%}" for r in row.recalls]
        table.append((row.policy, row.model, *cells, row.spread()))
    lines += text_table(table, (0, 1))
    return "\n".join(lines) + "\n"
