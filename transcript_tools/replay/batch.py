"""``--batch``: a replay whose summary calls go through the providers' batch APIs, in rounds.

The design keeps the engine and the replay driver untouched:

* **Plan** — replay every session with a *planning executor*: a request whose
  response is in the cache is served from it; a request known to have failed in
  this run fails (N3); any other request is *needed*. A needed request is added
  to the batch being built (unless a batch already holds it) and its session
  stops there — or, where the schedule cannot depend on summary text (the
  cumulative measure — recorded or estimated, cost_so_far never depends on
  summaries — and a template without ``previous_summary``), the session goes on
  assuming success, so every firing of the session is planned in the same round.
* **Submit** — the needed requests go out as batches (split at the API's limits),
  each recorded in the cache database before any waiting.
* **Wait** — poll every batch in flight with a growing interval; an ended batch's
  results are streamed into the response cache (failures remembered for this run).
* Repeat until a plan needs nothing; the number of plans that submitted is the
  number of rounds. Then the normal ``ReplayDriver`` runs once more against the
  cache — the same code path as a synchronous run that finds every response
  cached — so the outputs are byte-identical to the synchronous path's.

The engine is cheap (a replay without calls is the dry run's cost), so replaying
from the start each round costs little beside hours of batch latency, and it keeps
the batch path from ever disagreeing with the synchronous one. Sessions that
completed from the cache are not replanned.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, cast

from ..engine.messages import Usage
from ..engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
from ..engine.rules import depends_on_summary_text
from ..errors import ProviderError, TsumError
from ..formats.corpus import CorpusReader
from ..providers.batch.base import BatchClient, BatchItem, BatchReport, BatchStatus
from ..providers.batch.store import BatchStore
from ..providers.cache import cache_key
from ..providers.executor import SummaryExecutor
from ..providers.retry import ProviderCallError, public_url
from .conversation import replay_conversation
from .driver import ReplayDriver, ReplayStats

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]
PLANNED = "(planned: replaced by the batch result)"  # never written: planning outputs are dropped
POLL_GROWTH = 1.5
POLL_CAP_FACTOR = 20  # the interval grows to at most 20x --batch-poll ...
POLL_CAP_MAX = 600.0  # ... and at most 10 minutes (unless --batch-poll is longer)
MAX_POLL_ERRORS = 8  # consecutive retryable errors before giving up
REFUSED_STATUSES = frozenset({429, 503, 529})  # the API turned the submission away


class _Blocked(Exception):
    """The session's next summary is not known yet: it waits for the next round."""


class BatchReplay:
    """Runs ``run`` (a ``ReplayDriver`` whose executor is ``executor``) in batch rounds."""

    def __init__(
        self,
        run: ReplayDriver,
        executor: SummaryExecutor,
        client: BatchClient,
        store: BatchStore,
        *,
        poll: float = 30.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if executor.cache is None:
            raise TsumError("--batch needs the response cache (results are stored there)")
        self.run = run
        self.executor = executor
        self.cache = executor.cache
        self.provider = executor.provider
        self.client = client
        self.store = store
        self.poll = poll
        self.poll_cap = max(poll, min(POLL_CAP_MAX, poll * POLL_CAP_FACTOR))
        self._sleep = sleep
        self._say = run.reporter.say  # progress lines
        self.base_url = public_url(str(getattr(self.provider, "_base_url", "")))
        settings = run.settings
        self.report = BatchReport(
            planned_ahead=not depends_on_summary_text(settings.mode, settings.measure, run.template)
        )
        self.failed: dict[str, str] = {}  # custom_id -> error, for this run (N3)
        self._settled: set[str] = set()  # sessions replayed from the cache to their end
        self._batch: list[bytes] = []  # encoded requests of the batch being built
        self._keys: list[str] = []
        self._identities: list[dict[str, Any]] = []
        self._batch_bytes = 0
        self._in_flight: set[str] = set()
        self._blocked = False  # a session of the last plan waits for a result

    async def run_all(self, paths: list[str]) -> ReplayStats:
        self.report.resumed = [
            b.batch_id for b in self.store.in_flight(self.provider.name, self.base_url)
        ]
        if self.report.resumed:
            self._say(
                f"tsum: batch: resuming {len(self.report.resumed)} batch(es) in flight: "
                + ", ".join(self.report.resumed)
            )
        while True:
            self._in_flight = self.store.in_flight_keys(self.provider.name, self.base_url)
            before = len(self.report.submitted)
            await self._plan(paths)
            await self._flush()
            waiting = self.store.in_flight(self.provider.name, self.base_url)
            if not waiting:
                break
            if len(self.report.submitted) > before or self.report.rounds == 0:
                self.report.rounds += 1
            failures = len(self.failed)
            await self._wait([b.batch_id for b in waiting])
            if not self._blocked and len(self.failed) == failures:
                # Every session was planned to its end assuming success, and all succeeded:
                # the plan is the schedule, no need to plan again.
                break
        return await self._final_pass(paths)

    # ---- plan ------------------------------------------------------------------------

    async def _plan(self, paths: list[str]) -> None:
        run = self.run
        reader = CorpusReader(fmt=run.fmt, skip_bad_lines=run.skip_bad_lines)
        self._blocked = False
        for conv in reader.conversations(paths):
            if conv.session_id in self._settled:
                continue
            planner = _Planner(self, self.report.planned_ahead)
            try:
                await replay_conversation(  # the planner stands in: replay only calls execute()
                    conv,
                    run.settings,
                    cast(SummaryExecutor, planner),
                    run.provider_name,
                    run.template,
                )
            except _Blocked:
                self._blocked = True
                continue
            if not planner.missed:
                self._settled.add(conv.session_id)

    async def need(
        self, request: SummaryRequest, key: str, identity: dict[str, Any], model: str
    ) -> None:
        if key in self._in_flight:
            return
        self._in_flight.add(key)
        encoded = self.client.encode(BatchItem(key, request.prompt, model, request.max_tokens))
        limits = self.client.limits
        if self._batch and (
            len(self._batch) >= limits.max_requests
            or self._batch_bytes + len(encoded) > limits.max_bytes
        ):
            await self._flush()
        self._batch.append(encoded)
        self._keys.append(key)
        self._identities.append(identity)
        self._batch_bytes += len(encoded)

    async def _flush(self) -> None:
        if not self._batch:
            return
        requests, keys, identities = self._untaken(self._batch, self._keys, self._identities)
        self._batch, self._keys, self._identities, self._batch_bytes = [], [], [], 0
        if not keys:
            return
        batch_id = await self._retrying(lambda: self.client.submit(requests), "submit a batch")
        # Durable before any waiting: a kill after this line resumes, never resubmits.
        self._record(batch_id, keys, identities)
        self.report.submitted.append(batch_id)
        self.report.requests_submitted += len(keys)
        self._say(f"tsum: batch: submitted {batch_id} ({len(keys)} requests)")

    def _record(self, batch_id: str, keys: list[str], identities: list[dict[str, Any]]) -> None:
        """The submitted batch in the cache database, or an error naming it: unrecorded,
        no run would collect it, and the next one would send (and pay for) it again."""
        try:
            pending = zip(keys, identities, strict=True)
            self.store.record_batch(batch_id, self.provider.name, self.base_url, pending)
        except sqlite3.Error as exc:
            raise TsumError(
                f"batch {batch_id} ({len(keys)} requests) was accepted by the "
                f"{self.provider.name} API but could not be recorded in {self.store.path} "
                f"({exc}): a rerun would send its requests again; cancel it in the "
                "provider's console, or let it finish and be billed"
            ) from None

    def _untaken(
        self, requests: list[bytes], keys: list[str], identities: list[dict[str, Any]]
    ) -> tuple[list[bytes], list[str], list[dict[str, Any]]]:
        """The requests no batch holds now: another run sharing the cache may have sent
        some while this one planned (this run waits for that batch, as for its own)."""
        taken = self.store.in_flight_keys(self.provider.name, self.base_url)
        kept = [i for i, key in enumerate(keys) if key not in taken]
        if len(kept) == len(keys):
            return requests, keys, identities
        return [requests[i] for i in kept], [keys[i] for i in kept], [identities[i] for i in kept]

    # ---- wait and collect -----------------------------------------------------------

    async def _wait(self, batch_ids: list[str]) -> None:
        pending = set(batch_ids)
        delay = self.poll
        errors = 0
        while pending:
            pause = delay
            for batch_id in sorted(pending):
                try:
                    status = await self.client.poll(batch_id)
                    ended = status.ended and await self._collect(batch_id, status)
                except ProviderError as exc:
                    if getattr(exc, "status", None) == 404:  # gone: its requests go out again later
                        self._finish(
                            batch_id, {}, 0, "not found", set(self.store.custom_ids(batch_id))
                        )
                        pending.discard(batch_id)
                        continue
                    errors += 1
                    if not exc.retryable or errors >= MAX_POLL_ERRORS:
                        raise TsumError(
                            f"batch {batch_id}: {exc} (rerun the same command to resume)"
                        ) from None
                    log.warning("polling batch %s: %s", batch_id, exc)
                    pause = max(pause, _after(exc, delay))
                    continue
                errors = 0
                self.store.set_status(batch_id, status.state)
                if ended:
                    pending.discard(batch_id)
            if pending:
                await self._sleep(pause)
                delay = min(delay * POLL_GROWTH, self.poll_cap)

    async def _collect(self, batch_id: str, status: BatchStatus) -> bool:
        """Stream an ended batch's results into the cache; True when all were read."""
        expected = self.store.custom_ids(batch_id)
        seen: set[str] = set()
        errors: dict[str, str] = {}
        ok = 0
        billed = Usage()  # the report's once every result is read: a stream cut off is read again
        async for result in self.client.results(batch_id):
            key = result.custom_id
            if key not in expected or key in seen:
                continue
            seen.add(key)
            response = result.response
            usage = result.usage if response is None else response.usage
            billed = billed if usage is None else billed + usage  # a refusal is billed too
            if response is None or not response.text.strip():
                errors[key] = result.error or f"{self.provider.name}: empty summary"
                continue
            identity = self.store.identity(batch_id, key) or self.provider.identity(response.model)
            try:
                self.cache.put(key, identity, response)  # lands in the cache as it is read
            except sqlite3.Error as exc:
                errors[key] = f"response cache write failed ({exc})"
                continue
            ok += 1
        self.report.usage = self.report.usage + billed
        self._finish(batch_id, errors, ok, status.state, expected - seen)
        return True

    def _finish(
        self, batch_id: str, errors: dict[str, str], ok: int, state: str, unseen: set[str]
    ) -> None:
        for key in unseen:
            errors[key] = f"{self.provider.name}: batch {state}: request not processed"
        self.store.set_status(batch_id, state)
        self.store.finish(batch_id, ok, errors)
        self.failed.update(errors)
        self.report.results_ok += ok
        self.report.results_failed += len(errors)
        self._say(f"tsum: batch: {batch_id} {state}: {ok} ok, {len(errors)} failed")

    async def _retrying(self, call: Callable[[], Awaitable[str]], what: str) -> str:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await call()
            except ProviderError as exc:
                # Only a refusal is retried: after a timeout or a dropped connection the
                # batch may exist without its id, and a second submission would pay twice.
                refused = getattr(exc, "status", None) in REFUSED_STATUSES
                if not refused or attempt >= MAX_POLL_ERRORS:
                    raise TsumError(f"could not {what}: {exc}") from None
                await self._sleep(_after(exc, min(self.poll * attempt, self.poll_cap)))

    # ---- the outputs -----------------------------------------------------------------

    async def _final_pass(self, paths: list[str]) -> ReplayStats:
        """The normal replay against the filled cache; a failure of this run fails again."""
        executor = self.executor
        real = executor.provider
        resolver = _ResultsProvider(real, self.failed)
        executor.provider = resolver
        calls = executor.stats.calls
        try:
            return await self.run.run(paths)
        finally:
            executor.provider = real
            executor.stats.calls = calls  # no synchronous call was made
            executor.stats.usage = executor.stats.usage + self.report.usage


def _after(error: ProviderError, wait: float) -> float:
    """``wait``, or the server's ``Retry-After`` where it asks for longer (at most
    ``POLL_CAP_MAX``): a retry sooner is refused again and spends one of the attempts."""
    retry_after = getattr(error, "retry_after", None)
    return wait if retry_after is None else max(wait, min(retry_after, POLL_CAP_MAX))


class _Planner:
    """The executor of a planning pass: cache, this run's failures, else needed."""

    def __init__(self, driver: BatchReplay, optimistic: bool) -> None:
        self.driver = driver
        self.optimistic = optimistic
        self.missed = False

    async def execute(self, request: SummaryRequest, *, priority: int = 0) -> SummaryOutcome:
        del priority  # a plan makes no call: nothing waits for a slot
        driver = self.driver
        model = request.model or driver.provider.default_model
        identity = driver.provider.identity(model)
        key = cache_key(identity, request.prompt, request.max_tokens)
        hit = driver.cache.get(key)
        if hit is not None:
            return SummaryOutcome(hit, cached=True)
        error = driver.failed.get(key)
        if error is not None:
            return SummaryOutcome(None, error=error)
        self.missed = True
        await driver.need(request, key, identity, model)
        if self.optimistic:
            return SummaryOutcome(SummaryResponse(PLANNED, model))
        raise _Blocked


class _ResultsProvider:
    """Stands in for the provider in the final pass: every response is cached or failed."""

    def __init__(self, real: Any, failed: dict[str, str]) -> None:
        self._real = real
        self._failed = failed
        self.name = real.name
        self.key_env = real.key_env

    @property
    def default_model(self) -> str:
        return str(self._real.default_model)

    def identity(self, model: str | None) -> dict[str, Any]:
        return dict(self._real.identity(model))

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        key = cache_key(self._real.identity(model), prompt, max_tokens)
        raise ProviderCallError(
            self._failed.get(key) or f"{self.name}: no batch result for this request"
        )
