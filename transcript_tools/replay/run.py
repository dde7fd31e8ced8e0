"""A replay run, orchestrated: inputs, executor, sinks, ``run.json``, the manifest, the status.

The CLI (``tsum replay``, ``tsum check``) and the library front door
(``transcript_tools.replay``) call ``run_replay`` alike; the CLI only parses
options, prints, and maps ``ReplayResult.status`` to an exit code.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from .._sync import run_sync
from .._version import __version__
from ..cost.prices import Pricer
from ..engine.config import Checkpoint, ReplaySettings, TurnPath
from ..engine.prompt import PromptTemplate, template_from_config
from ..engine.requests import SUMMARY_MAX_TOKENS
from ..errors import ConfigError
from ..providers.base import Provider
from ..providers.factory import (
    _executor_for,
    build_executor,
    cache_only_failure,
    executor_stats,
    resolve_cache_mode,
)
from .driver import ReplayRun, RunStats, SessionResult, Sink


class RunStatus(StrEnum):
    """How a run ended; the CLI maps each to an exit code (``errors.ExitCode``)."""

    OK = "ok"
    INPUT_ERRORS = "input_errors"  # some inputs could not be read (the rest were replayed)
    NO_SESSIONS = "no_sessions"  # nothing to replay: a failure, never a pass
    ALL_SUMMARIES_FAILED = "all_summaries_failed"  # bad endpoint, model or key
    CACHE_MISS = "cache_miss"  # --cache-only and responses missing


@dataclass(slots=True)
class ReplayResult:
    """What a run did. ``sessions`` holds every session's result only when the run
    collected them (``run_replay(..., collect=True)``, the library default)."""

    status: RunStatus
    stats: RunStats
    message: str | None = None  # why the status is not OK
    executor: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0
    sessions: list[SessionResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # batch rounds, cost: end of the line

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.OK

    def summary_line(self, state: str = "complete") -> str:
        """The one line for stderr at the end of a run."""
        stats = self.stats
        parts = [f"{stats.files} file(s)", f"{stats.sessions} session(s)", f"{stats.turns} turn(s)"]
        if stats.calls:  # --checkpoint call: the units the checkpoint ran after
            parts.append(f"{stats.calls} checkpoint call(s)")
        if stats.would_summarize:
            estimate = ""
            if stats.estimated:  # --measure current: the schedule rests on an estimate
                estimate = (
                    f"; after the first, the schedule rests on an estimate: each summary assumed "
                    f"{SUMMARY_MAX_TOKENS} tokens, as tsum sweep does"
                )
            parts.append(f"{stats.would_summarize} summaries would fire (dry run{estimate})")
        else:
            done = stats.summaries_ok + stats.summaries_failed
            parts.append(
                f"{done} summaries ({stats.summaries_ok} ok, {stats.summaries_failed} failed)"
            )
        if self.executor:
            parts.append(self.executor["line"])
        parts.append(f"{len(stats.errors)} error(s)")
        if stats.warnings:
            parts.append(f"{stats.warnings} warning(s)")
        prefix = "tsum: " if state == "complete" else f"tsum: {state}: "
        return (
            prefix
            + ", ".join(parts)
            + f" in {self.elapsed:.2f}s"
            + "".join(f"; {n}" for n in self.notes)
        )


class _Collect:
    """A sink that keeps every session's result (library use: the caller reads them)."""

    spool_prompts = False

    def __init__(self) -> None:
        self.results: list[SessionResult] = []

    def write_session(self, result: SessionResult) -> None:
        self.results.append(result)


def _quiet(_message: str) -> None:
    return None


def run_replay(
    paths: list[str],
    settings: ReplaySettings,
    *,
    template: PromptTemplate | None = None,
    provider: str | Provider = "offline",
    provider_options: Mapping[str, Any] | None = None,
    out_dir: str | Path | None = None,
    report: IO[str] | None = None,
    collect: bool = False,
    fmt: str | None = None,
    skip_bad_lines: bool = False,
    concurrency: int = 8,
    warn: Callable[[str], None] = _quiet,
    error: Callable[[str], None] = _quiet,
    on_session: Callable[[SessionResult], None] | None = None,
    on_end: Callable[[ReplayResult, str], None] | None = None,
    batch: Callable[[Any], Any] | None = None,
    price_per_mtok: str | float | None = None,
    backend: Any = None,
    cost: Pricer | None = None,
) -> ReplayResult:
    """Replay ``paths`` (files, directories, globs, ``-``) through the checkpoint.

    Records go to ``out_dir`` (the JSONL files, ``run.json``, ``manifest.json``), or a
    readable report to ``report``, or (``collect``) into ``ReplayResult.sessions``.
    ``provider`` is a name (built with ``provider_options``: model, base_url, cache
    flags, timeout, max_attempts; the same keys as the CLI options) or a ready
    ``Provider`` (which uses a response cache only when one is asked for). A provider that cannot be built fails here (``ProviderConfigError``),
    before any work. ``on_end(result, state)`` runs once whatever happens (``state``:
    complete, interrupted or failed), before an exception propagates.
    ``batch`` (``--batch``) builds, from the executor, the driver that sends the summary
    calls through the provider's batch API in rounds (``cli.batch_cmd.BatchSetup``);
    ``price_per_mtok`` prices the run (batch vs synchronous) in the manifest and line.
    ``backend`` (``parallel.Backend``: ``--workers`` / ``--ray``) spreads a dry run's
    files over processes or a Ray cluster, with the same outputs. ``cost`` (--cost)
    prices each session as replayed: ``costs.jsonl`` under ``out_dir``, a line in the
    report (docs/cost.md); sessions then run here, not spread by ``backend``.
    """
    from .output_dir import OutputDirectory
    from .text_report import TextReport

    if cost is not None and batch is not None:
        raise ConfigError("--cost does not price a --batch replay: drop one of the two")
    started = time.perf_counter()
    cfg = settings.summary
    if template is None and cfg is not None:
        template = template_from_config(cfg.summary_prompt, settings.template_name)
    executor = None
    if not settings.dry_run and cfg is not None:
        options = dict(provider_options or {})
        options["concurrency"] = concurrency
        if isinstance(provider, str):
            options["provider"] = provider
            executor = build_executor(options)
        else:
            # A caller's own provider object gets the offline rule: no response cache
            # unless one is asked for (``cache`` or a cache flag).
            mode = resolve_cache_mode({**options, "provider": "offline"})
            executor = _executor_for(provider, options, mode)
    provider_name = "none" if executor is None else executor.provider.name
    model = cfg.summary_model if cfg is not None else None
    if executor is not None and model is None:
        model = executor.provider.default_model

    out = None
    info: dict[str, Any] | None = None
    sink: Sink
    if out_dir is not None:
        out = OutputDirectory(out_dir, write_compressed=not settings.dry_run, cost=cost is not None)
        if template is not None:
            # what the provider sends (its identity): None = the API's own default
            temperature = executor.provider.identity(None).get("temperature") if executor else None
            info = run_info(settings, template, provider_name, model, temperature)
            out.write_run_info(info)
        sink = out
    elif report is not None:
        sink = TextReport(report)
    else:
        sink = _Collect() if collect else _Discard()
    run = ReplayRun(
        settings,
        executor,
        sink,
        provider_name=provider_name,
        template=template,
        fmt=fmt,
        skip_bad_lines=skip_bad_lines,
        concurrency=concurrency,
        warn=warn,
        error=error,
        on_session=on_session,
        pricer=cost,
    )
    result = ReplayResult(RunStatus.OK, run.stats)
    batch_driver = batch(executor) if batch is not None and executor is not None else None
    state = "complete"
    try:
        if batch_driver is not None:
            run_sync(lambda: batch_driver.run(run, list(paths), executor))
        elif cost is not None or not _spread(run, paths, backend):
            run_sync(lambda: _run_and_close(run, list(paths), executor))
    except KeyboardInterrupt:
        state = "interrupted"
        raise
    except BaseException as exc:  # the manifest must not call an aborted run complete
        state = "failed"
        run.stats.errors.append(f"run aborted: {exc}")
        raise
    finally:
        result.executor = executor_stats(executor)
        if executor is not None:
            executor.close()
        result.elapsed = time.perf_counter() - started
        extra = _batch_and_cost(result, executor, model, batch_driver, price_per_mtok)
        if out is not None and info is not None and run.stats.stream_units:
            # the path that ran, not the one asked for (both give the same schedule by
            # design, so nothing else shows it); absent: the sync path
            out.write_run_info({**info, "path_ran": TurnPath.STREAM.value})
        if out is not None:
            out.close(_manifest(state, paths, result, provider_name, model) | extra)
        if on_end is not None:
            on_end(result, state)
    if isinstance(sink, _Collect):
        result.sessions = sink.results
    _set_status(result, executor, out_dir)
    return result


def _spread(run: ReplayRun, paths: list[str], backend: Any) -> bool:
    """True when a process pool or Ray ran the (dry) run; False: run it here."""
    if backend is None or not run.settings.dry_run or run.executor is not None:
        return False  # summary calls are --concurrency's job: the pool's modules stay unloaded
    from .parallel import parallel_replay

    return parallel_replay(run, list(paths), backend) is not None


def _batch_and_cost(
    result: ReplayResult,
    executor: Any,
    model: str | None,
    batch: Any,
    price_per_mtok: str | float | None,
) -> dict[str, Any]:
    """--batch's rounds and batches, and the cost when a price is known: manifest entries
    (returned) and notes for the end-of-run line (on ``result``)."""
    extra: dict[str, Any] = {}
    report = batch.report if batch is not None else None
    if report is not None:
        extra["batch"] = report.to_json()
        result.notes.append(report.line())
    if executor is not None:
        from ..providers.batch.pricing import cost_report, price_for

        usage = report.usage if report is not None else executor.stats.usage
        price = price_for(model, None if price_per_mtok is None else str(price_per_mtok))
        if price is not None:
            words, entry = cost_report(usage, price, batch=batch is not None)
            if words:
                extra["cost"] = entry
                if usage.total_tokens:  # all cached: nothing to price on the line
                    result.notes.append(words)
    return extra


class _Discard:
    spool_prompts = False

    def write_session(self, result: SessionResult) -> None:
        return None


def _set_status(result: ReplayResult, executor: Any, out_dir: str | Path | None) -> None:
    stats = result.stats
    missing = cache_only_failure(executor.stats) if executor is not None else None
    if missing:
        result.status, result.message = RunStatus.CACHE_MISS, missing
    elif stats.summaries_failed and not stats.summaries_ok:
        # N3 keeps each session going, but a run in which no summary call succeeded
        # (bad endpoint, model or key) must not pass CI silently.
        first = _first_error(Path(out_dir)) if out_dir is not None else None
        result.status = RunStatus.ALL_SUMMARIES_FAILED
        result.message = (
            f"all {stats.summaries_failed} summary call(s) failed"
            + (f" (first: {first})" if first else "")
            + "; see summaries.jsonl" * (out_dir is not None)
        )
    elif stats.errors:
        result.status = RunStatus.INPUT_ERRORS
        result.message = f"{len(stats.errors)} input(s) could not be read"
    elif stats.sessions == 0:
        result.status, result.message = (
            RunStatus.NO_SESSIONS,
            "no sessions found in the given paths",
        )


def _first_error(out_dir: Path) -> str | None:
    import orjson

    try:
        with open(out_dir / "summaries.jsonl", "rb") as handle:
            return orjson.loads(handle.readline() or b"{}").get("error")
    except (OSError, ValueError):
        return None


async def _run_and_close(run: ReplayRun, paths: list[str], executor: Any) -> None:
    try:
        await run.run(paths)
    finally:
        if executor is not None:
            await executor.aclose()  # HTTP clients belong to this event loop


def run_info(
    settings: ReplaySettings,
    template: PromptTemplate,
    provider: str,
    model: str | None,
    temperature: float | None = None,
) -> dict[str, Any]:
    """The settings that shape the outputs (run.json: diffable, no paths or times)."""
    cfg = settings.summary
    assert cfg is not None
    extra: dict[str, Any] = {}  # beyond the seed: only when set, so default run.json stays
    if temperature is not None:
        extra["temperature"] = temperature
    if settings.checkpoint is not Checkpoint.TURN:
        extra["checkpoint"] = settings.checkpoint.value
    if settings.auto_window:
        extra["max_context_tokens_auto"] = True  # per session: the records' max_context_tokens_from
    return {
        **extra,
        "output_format": 1,
        "summary_config": {
            "trigger_token_ratio": cfg.trigger_token_ratio,
            "max_context_tokens": cfg.max_context_tokens,
            "debounce_turns": cfg.debounce_turns,
            "summary_model": cfg.summary_model,
            "max_tool_result_chars": cfg.max_tool_result_chars,
            "max_transcript_chars": cfg.max_transcript_chars,
            "summary_marker": cfg.summary_marker,
        },
        "template": {"name": template.name, "kind": template.kind, "sha256": template.sha256},
        "mode": settings.mode.value,
        "keep_recent_turns": settings.keep_recent_turns,
        "path": settings.path.value,
        "measure": settings.measure.value,
        "dry_run": settings.dry_run,
        "provider": provider,
        "model": model,
    }


def _manifest(
    state: str, paths: list[str], result: ReplayResult, provider: str, model: str | None
) -> dict[str, Any]:
    stats = result.stats
    return {
        "tsum_version": __version__,
        "status": state,
        "inputs": list(paths),
        "provider": provider,
        "model": model,
        "files": stats.files,
        "failed_files": stats.failed_files,
        "sessions": stats.sessions,
        "turns": stats.turns,
        "summaries_ok": stats.summaries_ok,
        "summaries_failed": stats.summaries_failed,
        "would_summarize": stats.would_summarize,
        "warnings": stats.warnings,
        "errors": stats.errors,
        "executor": result.executor,
        "elapsed_seconds": round(result.elapsed, 3),
    }
