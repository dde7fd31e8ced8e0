"""A replay run, orchestrated: inputs, executor, sinks, ``run.json``, the manifest, the status.

The CLI (``tsum replay``, ``tsum check``) and the library front door call ``replay_paths``
alike; the CLI only parses options, prints, and maps the status to an exit code.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from .._sync import run_sync
from .._version import __version__
from ..cost.prices import Pricer
from ..engine.config import RunSettings, TurnPath
from ..engine.prompt import PromptTemplate, template_from_config
from ..engine.seed_defaults import SUMMARY_MAX_TOKENS
from ..errors import ConfigError, TsumError
from ..formats.inputs import NO_SESSIONS_FOUND
from ..providers.factory import (
    _executor_for,
    build_executor,
    cache_only_failure,
    executor_stats,
    resolve_cache_mode,
)
from ..reporter import QUIET, Reporter
from .conversation import SessionResult
from .driver import CollectingSink, ReplayDriver, ReplayStats, Sink


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
    collected them (``replay_paths(..., collect=True)``, the library default)."""

    status: RunStatus
    stats: ReplayStats
    message: str | None = None  # why the status is not OK
    executor: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0
    sessions: list[SessionResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # batch rounds, cost: end of the line

    def __repr__(self) -> str:  # counts, not every session's objects (library use)
        line = self.summary_line().removeprefix("tsum: ")
        return f"<ReplayResult {self.status}: {line}; {len(self.sessions)} session(s) kept>"

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.OK

    def could_not_run(self) -> TsumError | None:
        """The error a caller raises (exit 3) when the run could not do its work at all:
        responses missing under --cache-only, or every summary call failed."""
        if self.status in (RunStatus.CACHE_MISS, RunStatus.ALL_SUMMARIES_FAILED):
            return TsumError(self.message or self.status.value)
        return None

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


def replay_paths(
    paths: list[str],
    run: RunSettings,
    *,
    out_dir: str | Path | None = None,
    report: IO[str] | None = None,
    collect: bool = False,
    reporter: Reporter = QUIET,
    backend: Any = None,
    cost: Pricer | None = None,
) -> ReplayResult:
    """Replay ``paths`` (files, directories, globs, ``-``) with ``run``'s settings
    (``settings.load_settings``) through the checkpoint.

    Records go to ``out_dir`` (the JSONL files, ``run.json``, ``manifest.json``), or a
    readable report to ``report``, or (``collect``) into ``ReplayResult.sessions``.
    ``run.provider["provider"]`` is a name (built with the other ``run.provider`` options:
    model, base_url, cache flags, timeout, max_attempts, batch; the CLI's keys) or a ready
    ``Provider`` (which uses a response cache only when one is asked for). A provider that
    cannot be built fails here (``ProviderConfigError``), before any work. ``reporter``
    gets the warnings, errors, progress and (``end``) the result, once whatever happens.
    ``batch`` sends the summary calls through the provider's batch API in rounds
    (``batch_setup.BatchSetup``: progress to ``reporter.say``); ``price_per_mtok`` prices the
    run (batch vs synchronous) in the manifest and line. ``backend`` (``--workers`` /
    ``--ray``) spreads a dry run's files over processes or a Ray cluster, same outputs.
    ``cost`` (--cost) prices each session as replayed, not spread (``costs.jsonl``, a
    report line: docs/cost.md).
    """
    options = run.provider
    if cost is not None and options.get("batch"):
        raise ConfigError("--cost does not price a --batch replay: drop one of the two")
    started = time.perf_counter()
    driver, model, out, info = _driver(run, (paths, out_dir), report, collect, reporter, cost)
    executor = driver.executor
    result = ReplayResult(RunStatus.OK, driver.stats)
    batch_driver = _batch_driver(options, executor)
    state = "complete"
    try:
        _run(driver, paths, backend, batch_driver, cost is not None)
    except (KeyboardInterrupt, BrokenPipeError):  # Ctrl-C, or stdout's reader gone (| head)
        state = "interrupted"
        raise
    except BaseException as exc:  # the manifest must not call an aborted run complete
        state = "failed"
        driver.stats.errors.append(f"run aborted: {exc}")
        raise
    finally:
        result.executor = executor_stats(executor)
        if executor is not None:
            executor.close()
        result.elapsed = time.perf_counter() - started
        extra = _batch_and_cost(result, executor, model, batch_driver, options)
        if out is not None:
            manifest = _manifest(state, paths, result, driver.provider_name, model) | extra
            _close_out(out, info, driver.stats, manifest)
        reporter.end(result, state)
    if isinstance(driver.sink, CollectingSink):
        result.sessions = driver.sink.results
    _set_status(result, executor, out_dir)
    return result


def _run(driver: ReplayDriver, paths: list[str], backend: Any, batch: Any, cost: bool) -> None:
    """The replay itself: in --batch rounds, spread over a pool or Ray (a dry run without
    --cost), or here."""
    if batch is not None:
        run_sync(lambda: batch.run(driver, list(paths)))
    elif cost or not _spread(driver, paths, backend):
        run_sync(lambda: _run_and_close(driver, list(paths), driver.executor))


def _driver(
    run: RunSettings,
    where: tuple[list[str], str | Path | None],
    report: IO[str] | None,
    collect: bool,
    reporter: Reporter,
    cost: Pricer | None,
) -> tuple[ReplayDriver, str | None, Any, dict[str, Any] | None]:
    """The run's driver (its executor and sink built), the model, the --out directory
    (None without one) and run.json's settings, written before any session."""
    from .output_dir import OutputDirectory

    settings, template = run.settings, run.template
    cfg = settings.summary
    if template is None and cfg is not None:
        template = template_from_config(cfg.summary_prompt, settings.template_name)
    executor, provider_name, model = _summarizer(run)
    sink = _sink(where, report, collect, settings.dry_run, cost is not None)
    out = sink if isinstance(sink, OutputDirectory) else None
    info = _write_run_info(out, run, template, executor, provider_name, model)
    driver = ReplayDriver(
        settings,
        executor,
        sink,
        provider_name=provider_name,
        template=template,
        fmt=run.fmt,
        skip_bad_lines=run.skip_bad_lines,
        concurrency=run.concurrency,
        reporter=reporter,
        pricer=cost,
    )
    return driver, model, out, info


def _close_out(
    out: Any, info: dict[str, Any] | None, stats: ReplayStats, manifest: dict[str, Any]
) -> None:
    """--out at the end of the run: the turn path that ran (run.json), the manifest."""
    if info is not None and stats.stream_units:
        # the path that ran, not the one asked for (both give the same schedule by
        # design, so nothing else shows it); absent: the sync path
        out.write_run_info({**info, "path_ran": TurnPath.STREAM.value})
    out.close(manifest)


def _write_run_info(
    out: Any,
    run: RunSettings,
    template: PromptTemplate | None,
    executor: Any,
    provider_name: str,
    model: str | None,
) -> dict[str, Any] | None:
    """run.json's settings, written before any session (None: no --out, or no checkpoint)."""
    if out is None or template is None:
        return None
    from .output_dir import run_info

    # what the provider sends (its identity): None = the API's own default
    temperature = executor.provider.identity(None).get("temperature") if executor else None
    info = run_info(run.settings, template, provider_name, model, temperature)
    out.write_run_info(info)
    return info


def _batch_driver(options: Mapping[str, Any], executor: Any) -> Any:
    """--batch: the rounds' driver (replay/batch.py), else None."""
    if not options.get("batch") or executor is None:
        return None
    from .batch_setup import BatchSetup

    return BatchSetup(executor, poll=options.get("batch_poll"))


def _summarizer(run: RunSettings) -> tuple[Any, str, str | None]:
    """The summary executor of ``run.provider`` (a name, or a caller's own ``Provider``;
    None: a dry run or no checkpoint), its provider's name and the model."""
    cfg = run.settings.summary
    if run.settings.dry_run or cfg is None:
        return None, "none", cfg.summary_model if cfg is not None else None
    options = {**run.provider, "concurrency": run.concurrency}
    provider = options["provider"]
    if isinstance(provider, str):
        executor = build_executor(options)
    else:
        # A caller's own provider object gets the offline rule: no response cache
        # unless one is asked for (``cache`` or a cache flag).
        mode = resolve_cache_mode({**options, "provider": "offline"})
        executor = _executor_for(provider, options, mode)
    model = cfg.summary_model
    return (
        executor,
        executor.provider.name,
        executor.provider.default_model if model is None else model,
    )


def _sink(
    where: tuple[list[str], Any], report: IO[str] | None, collect: bool, dry_run: bool, cost: bool
) -> Sink:
    """Where the records go: --out (``where``: the inputs, it), the report, or memory."""
    from .output_dir import OutputDirectory
    from .text_report import TextReport

    if where[1] is not None:
        return OutputDirectory(where[1], write_compressed=not dry_run, cost=cost, inputs=where[0])
    if report is not None:
        return TextReport(report)
    return CollectingSink() if collect else NullSink()


def _spread(run: ReplayDriver, paths: list[str], backend: Any) -> bool:
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
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """--batch's rounds and batches, and the cost when a price is known (``options``'
    ``price_per_mtok``, else the model's): manifest entries (returned) and notes for the
    end-of-run line (on ``result``)."""
    price_per_mtok = options.get("price_per_mtok")
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


class NullSink:
    spool_prompts = False

    def write_session(self, result: SessionResult) -> None:
        return None


def _set_status(result: ReplayResult, executor: Any, out_dir: str | Path | None) -> None:
    stats = result.stats
    missing = cache_only_failure(executor.stats) if executor is not None else None
    if missing:
        result.status, result.message = RunStatus.CACHE_MISS, missing
    elif (down := getattr(executor, "circuit_open", None)) or (
        stats.summaries_failed and not stats.summaries_ok
    ):
        # N3 keeps sessions going; a run with no summary (bad key) or its provider down fails
        first = _first_error(Path(out_dir)) if out_dir is not None else None
        result.status = RunStatus.ALL_SUMMARIES_FAILED
        failed = f"all {stats.summaries_failed} summary call(s) failed"
        parts = [failed + (f" (first: {first})" if first else "")] * (not stats.summaries_ok)
        result.message = "; ".join([*parts, *([str(down)] if down else [])])
        result.message += "; see summaries.jsonl" * (out_dir is not None)
    elif stats.errors:
        result.status = RunStatus.INPUT_ERRORS
        result.message = f"{len(stats.errors)} input(s) could not be read"
    elif stats.sessions == 0:
        result.status, result.message = RunStatus.NO_SESSIONS, NO_SESSIONS_FOUND


def _first_error(out_dir: Path) -> str | None:
    import orjson

    try:
        with open(out_dir / "summaries.jsonl", "rb") as handle:
            return orjson.loads(handle.readline() or b"{}").get("error")
    except (OSError, ValueError):
        return None


async def _run_and_close(run: ReplayDriver, paths: list[str], executor: Any) -> None:
    try:
        await run.run(paths)
    finally:
        if executor is not None:
            await executor.aclose()  # HTTP clients belong to this event loop


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
