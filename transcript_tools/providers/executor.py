"""Executes summary requests: response cache, bounded concurrency, retries.

The replay driver only calls ``SummaryExecutor.execute``; everything between a
request and its outcome lives here. Provider failures never raise: they come
back as ``SummaryOutcome(error=...)`` and the session goes on (N3). Only
cancellation (Ctrl-C) and programming errors propagate.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import random
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..engine.config import DEFAULT_BREAKER_FAILURES, DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S
from ..engine.messages import Usage
from ..engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
from ..errors import ProviderConfigError, ProviderError
from .base import Provider
from .cache import CacheMode, ResponseCache, cache_key
from .retry import ProviderCallError, RetryPolicy

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]


@dataclass(slots=True)
class ExecutorStats:
    requests: int = 0  # execute() calls
    calls: int = 0  # provider call attempts, retries included
    retries: int = 0  # attempts after the first
    cache_hits: int = 0  # served from the cache (or shared with an identical call in flight)
    cache_misses: int = 0
    failures: int = 0  # requests that ended without a summary
    cache_errors: int = 0  # cache reads/writes that failed (the run goes on)
    usage: Usage = field(default_factory=Usage)  # summed over live calls, not cache hits
    # --cache-only misses: how many, and which (session_id, turn); the CLI names them, exits 3.
    cache_only_misses: int = 0
    cache_only_missing: list[tuple[str, int]] = field(default_factory=list)


class _PrioritySlots:
    """A semaphore whose waiters get the next free slot in priority order (lowest
    first, FIFO among equals). The replay driver ranks a call by how many turns its
    session has left, so the longest chain of summaries, which bounds the run's
    length, does not queue behind short sessions when every slot is busy."""

    def __init__(self, slots: int) -> None:
        self._free = slots
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def acquire(self, priority: int) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._order), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # handed a slot, then cancelled: pass it on
            raise  # a cancelled future left in the heap is skipped by release()

    def release(self) -> None:
        while self._waiters:
            future = heapq.heappop(self._waiters)[2]
            if not future.done():
                future.set_result(None)  # the slot goes straight to this waiter
                return
        self._free += 1


class SummaryExecutor:
    """Runs summary requests through the cache and the provider.

    ``concurrency`` bounds simultaneous provider calls (a slot is held through
    the retries of one request, so a rate-limited API is not hit harder while
    backing off). ``timeout`` is a hard per-attempt deadline in seconds (None: no
    limit; SDK providers get the same value as their HTTP timeout). ``sleep`` and
    ``rng`` are injectable so tests never wait for real backoff.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        cache: ResponseCache | None = None,
        cache_mode: CacheMode = CacheMode.READ_WRITE,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float | None = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        rng: random.Random | None = None,
        sleep: Sleep = asyncio.sleep,
        breaker: int | None = DEFAULT_BREAKER_FAILURES,
    ) -> None:
        if concurrency < 1:
            raise ProviderConfigError(f"--concurrency must be at least 1, not {concurrency}")
        if timeout is not None and timeout <= 0:
            raise ProviderConfigError(f"--timeout must be positive, not {timeout:g}")
        cache_mode = CacheMode(cache_mode)
        if cache is None and cache_mode is CacheMode.CACHE_ONLY:
            raise ProviderConfigError("--cache-only needs a response cache (remove --no-cache)")
        self.provider = provider
        self.cache = cache if cache_mode is not CacheMode.OFF else None
        self.cache_mode = cache_mode if self.cache is not None else CacheMode.OFF
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.stats = ExecutorStats()
        self._rng = rng or random.Random()
        self._sleep = sleep
        self._semaphore: _PrioritySlots | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None
        # Identical requests in flight at once share one call (read_write mode):
        # key -> future of the leader's response (None if it failed).
        self._inflight: dict[str, asyncio.Future[SummaryResponse | None]] = {}
        # Errors every later call would repeat (bad key, kill switch), per model.
        self._fatal: dict[str, str] = {}
        # The circuit breaker: after ``breaker`` failed calls in a row the provider is down
        # for the run; ``circuit_open`` says so (the run then fails, exit 3).
        self.breaker = breaker
        self._failed_in_a_row = 0
        self.circuit_open: str | None = None

    async def execute(self, request: SummaryRequest, *, priority: int = 0) -> SummaryOutcome:
        """The request's outcome; when all slots are busy, lower ``priority`` goes first."""
        outcome = await self._execute(request, priority)
        # Records name the provider that ran the request, whatever the driver around it.
        return replace(outcome, provider=self.provider.name)

    async def _execute(self, request: SummaryRequest, priority: int) -> SummaryOutcome:
        self.stats.requests += 1
        model = request.model or self.provider.default_model
        if self.cache is None:
            return await self._call(request, model, priority)
        identity = self.provider.identity(model)
        key = cache_key(identity, request.prompt, request.max_tokens)
        if self.cache_mode is not CacheMode.REFRESH:
            # Inline: a WAL read never waits for writers and takes microseconds.
            hit = self._cache_get(key)
            if hit is None and self.cache_mode is CacheMode.READ_WRITE:
                hit = await self._shared_inflight(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return SummaryOutcome(hit, cached=True)
            self.stats.cache_misses += 1
            if self.cache_mode is CacheMode.CACHE_ONLY:
                self.stats.failures += 1
                self.stats.cache_only_misses += 1
                self.stats.cache_only_missing.append((request.session_id, request.turn))
                return SummaryOutcome(
                    None,
                    error=f"cache miss (--cache-only): session {request.session_id} turn {request.turn}",
                )
        if self.cache_mode is not CacheMode.READ_WRITE:
            outcome = await self._call(request, model, priority)
            if outcome.response is not None:
                await self._cache_put(key, identity, outcome.response)
            return outcome
        # Leader of this key: registered before any await, so identical
        # requests arriving meanwhile wait for this call instead of paying twice.
        future: asyncio.Future[SummaryResponse | None] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        response: SummaryResponse | None = None
        try:
            outcome = await self._call(request, model, priority)
            response = outcome.response
            if response is not None:
                await self._cache_put(key, identity, response)
            return outcome
        finally:
            del self._inflight[key]
            # None (failure or cancellation) makes a waiter try on its own.
            future.set_result(response)

    async def _shared_inflight(self, key: str) -> SummaryResponse | None:
        while (future := self._inflight.get(key)) is not None:
            # shield: cancelling this waiter must not cancel the leader's future.
            response = await asyncio.shield(future)
            if response is not None:
                return response
            # The leader failed or was cancelled: the next waiter (or we) calls.
        return None

    async def _call(self, request: SummaryRequest, model: str, priority: int) -> SummaryOutcome:
        slots = self._get_semaphore()
        await slots.acquire(priority)
        try:
            return await self._call_in_slot(request, model)
        finally:
            slots.release()

    async def _call_in_slot(self, request: SummaryRequest, model: str) -> SummaryOutcome:
        # Checked after the wait for a slot: calls queued behind the one that
        # hit a bad key must not repeat it.
        fatal = self._fatal.get(model) or self.circuit_open
        if fatal is not None:
            self.stats.failures += 1
            return SummaryOutcome(None, error=fatal, attempts=0)
        attempt = 0
        while True:
            attempt += 1
            self.stats.calls += 1
            try:
                response = await self._attempt(request, model)
                self._count_usage(response.usage)
                if not response.text.strip():
                    # Whatever the provider: an empty summary is a failure, never stored.
                    raise ProviderCallError(f"{self.provider.name}: empty summary")
            except ProviderError as exc:
                error = exc
                self._count_usage(getattr(exc, "usage", None))  # a refusal is billed too
            else:
                self._failed_in_a_row = 0
                return SummaryOutcome(response, attempts=attempt)
            if isinstance(error, ProviderCallError) and error.fatal:
                self._fatal.setdefault(model, str(error))
            if not self.retry.should_retry(error, attempt):
                self.stats.failures += 1
                self._count_failure(error)
                return SummaryOutcome(None, error=str(error), attempts=attempt)
            self.stats.retries += 1
            retry_after = getattr(error, "retry_after", None)
            delay = self.retry.delay(attempt, retry_after, self._rng)
            log.debug(
                "retrying %s turn %s in %.2fs: %s",
                request.session_id,
                request.turn,
                delay,
                error,
            )
            await self._sleep(delay)  # cancellable: Ctrl-C is not delayed by backoff

    def _count_usage(self, usage: Usage | None) -> None:
        """The tokens of an answer received (the cost line's): a summary or not."""
        if usage is not None:
            self.stats.usage = self.stats.usage + usage

    def _count_failure(self, error: ProviderError) -> None:
        """One more failed call in a row; at ``breaker`` of them, stop calling."""
        self._failed_in_a_row += 1
        if self.breaker and self._failed_in_a_row >= self.breaker and self.circuit_open is None:
            self.circuit_open = (
                f"{self.provider.name}: {self._failed_in_a_row} summary calls failed in a row "
                f"(last: {error}); no more calls to it in this run"
            )
            log.warning("tsum: warning: %s", self.circuit_open)

    async def _complete(self, request: SummaryRequest, model: str) -> SummaryResponse:
        complete_request = getattr(self.provider, "complete_request", None)
        if complete_request is not None:  # base.RequestProvider: it reads the messages too
            response: SummaryResponse = await complete_request(request, model)
            return response
        return await self.provider.complete(request.prompt, model, request.max_tokens)

    async def _attempt(self, request: SummaryRequest, model: str) -> SummaryResponse:
        if self.timeout is None:
            return await self._complete(request, model)
        try:
            async with asyncio.timeout(self.timeout):
                return await self._complete(request, model)
        except TimeoutError:
            # Only our deadline raises TimeoutError here; an outside cancellation
            # (Ctrl-C) stays a CancelledError and propagates.
            raise ProviderCallError(
                f"{self.provider.name}: timed out after {self.timeout:g}s", retryable=True
            ) from None

    def _get_semaphore(self) -> _PrioritySlots:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore = _PrioritySlots(self.concurrency)
            self._semaphore_loop = loop
        return self._semaphore

    def _cache_get(self, key: str) -> SummaryResponse | None:
        assert self.cache is not None
        try:
            return self.cache.get(key)
        except sqlite3.Error as exc:
            self.stats.cache_errors += 1
            log.warning("response cache read failed (%s): treated as a miss", exc)
            return None

    async def _cache_put(
        self, key: str, identity: dict[str, Any], response: SummaryResponse
    ) -> None:
        assert self.cache is not None
        try:
            # A worker thread: a put may wait for another process's write lock.
            await asyncio.to_thread(self.cache.put, key, identity, response)
        except sqlite3.Error as exc:
            self.stats.cache_errors += 1
            log.warning("response cache write failed (%s): the summary is kept, not cached", exc)

    async def aclose(self) -> None:
        """Close the provider's HTTP client (inside the loop that used it) and the cache."""
        aclose = getattr(self.provider, "aclose", None)
        if aclose is not None:
            await aclose()
        self.close()

    def close(self) -> None:
        """Release the cache connection. Prefer ``aclose()`` inside the event loop."""
        if self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> SummaryExecutor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
