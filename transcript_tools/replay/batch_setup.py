"""``--batch`` on a run that replays: the options checked before any work, then the rounds
(``batch.BatchReplay``), and the hint a failed run leaves about its batches in flight."""

from __future__ import annotations

import asyncio

from ..engine.config import DEFAULT_BATCH_POLL
from ..errors import ConfigError, TsumError
from ..providers.batch import limits_from_env
from ..providers.batch.base import BatchReport
from ..providers.batch.store import BatchStore
from ..providers.cache import CacheMode
from ..providers.executor import SummaryExecutor
from ..reporter import Reporter
from .batch import BatchReplay
from .driver import ReplayDriver


class BatchSetup:
    """``--batch`` on a run that replays (``replay.run.replay_paths``): validated before any
    work. The run's ``reporter.say`` gets the progress lines, the one a quiet caller must
    still show (batches left in flight by a failed run) marked ``important``."""

    def __init__(
        self,
        executor: SummaryExecutor,
        *,
        poll: float | None = None,
    ) -> None:
        from ..providers.batch import batch_client

        # the provider first: offline has no cache by default, and no batch API either
        self.client = batch_client(executor.provider, limits_from_env())
        if executor.cache is None or executor.cache_mode is not CacheMode.READ_WRITE:
            raise ConfigError(
                "--batch reads and writes the response cache: drop --no-cache, --cache-only "
                "and --refresh"
            )
        self.executor = executor
        self.store = BatchStore(executor.cache.path)
        self.poll = float(poll or DEFAULT_BATCH_POLL)
        self.report: BatchReport | None = None

    async def run(self, run: ReplayDriver, paths: list[str]) -> None:
        executor = self.executor
        driver = BatchReplay(run, executor, self.client, self.store, poll=self.poll)
        self.report = driver.report
        try:
            await driver.run_all(paths)
        except (asyncio.CancelledError, KeyboardInterrupt, TsumError):
            self._in_flight_hint(run.reporter)
            raise
        finally:
            await executor.aclose()
            self.store.close()

    def _in_flight_hint(self, reporter: Reporter) -> None:
        try:
            left = self.store.in_flight()
        except Exception:  # the hint must never hide the real error
            return
        if left:
            ids = ", ".join(b.batch_id for b in left)
            reporter.say(
                f"tsum: {len(left)} batch(es) in flight ({ids}): the same command resumes them "
                "without resubmitting; `tsum batch cancel` stops them",
                important=True,
            )
