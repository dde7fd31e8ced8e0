"""``tsum replay``, ``tsum format``, ``tsum prompt`` and ``tsum prompts``."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..config import (
    DEFAULT_KEEP_RECENT_TURNS,
    Measure,
    ReplaySettings,
    SlotMode,
    SummaryConfig,
    TurnPath,
    load_config_file,
    summary_config_from,
)
from ..errors import ConfigError, ExitCode, InputError, TsumError
from ..formats import read_conversations, reader_names
from ..formats.source import Source
from ..outputs import OutputDirectory, TextReport
from ..parallel_jobs import parallel_replay
from ..prompt import (
    PromptTemplate,
    builtin_template_names,
    builtin_template_source,
    load_template,
    template_from_config,
)
from ..replay import ReplayRun, split_turns
from ..transcript import format_messages_as_text
from .provider_options import build_executor, cache_only_failure, describe_stats, provider_options
from .scale_options import refuse_summaries_on_ray, resolve_backend, scale_options


def summary_options(func: Any) -> Any:
    """Options for every SummaryConfig field and the slot, shared by replay/format/prompt."""
    options = [
        click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), envvar="TSUM_CONFIG",
                     help="Settings file (tsum.toml, or a pyproject.toml with [tool.tsum]). Default: ./tsum.toml or ./pyproject.toml."),
        click.option("--ratio", "--trigger-token-ratio", "trigger_token_ratio", type=float,
                     help="Fire when tokens >= max_context_tokens * ratio. [default: 0.75]"),
        click.option("--max-context-tokens", type=int, help="The model's context window. [default: 32000]"),
        click.option("--debounce", "--debounce-turns", "debounce_turns", type=int,
                     help="At least this many turns between two summaries. [default: 3]"),
        click.option("--max-tool-result-chars", type=int, help="Keep the first N characters of each tool result. [default: 500]"),
        click.option("--max-transcript-chars", type=int, help="Cap of the formatted conversation. [default: 30000]"),
        click.option("--marker", "summary_marker", help="Prefix of the injected summary message. [default: [上下文摘要]]"),
        click.option("--prompt", "prompt_spec", envvar="TSUM_PROMPT",
                     help=f"Summary prompt: a built-in name ({', '.join(builtin_template_names())}) or a file (Jinja if it has {{{{ }}}} tags, else the seed's plain {{messages}} form). [default: zh]"),
        click.option("--mode", type=click.Choice([m.value for m in SlotMode]), help="Slot mode. [default: focused]"),
        click.option("--keep-recent-turns", type=int, help=f"Focused view: whole turns kept before the summary. [default: {DEFAULT_KEEP_RECENT_TURNS}]"),
        click.option("--path", "turn_path", type=click.Choice([p.value for p in TurnPath]),
                     help="Turn path: submit_turn (sync) or submit_turn_stream + finalize_turn (stream). [default: sync]"),
        click.option("--measure", type=click.Choice([m.value for m in Measure]),
                     help="Watermark: cumulative cost_so_far (the seed) or the current context size. [default: cumulative]"),
        click.option("--format", "fmt", type=click.Choice(reader_names()), envvar="TSUM_FORMAT",
                     help="Force the input format instead of detecting it."),
        click.option("--skip-bad-lines", is_flag=True, help="Warn about bad lines and replay the rest of the file."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def resolve_settings(opts: dict[str, Any], *, dry_run: bool = False) -> tuple[ReplaySettings, PromptTemplate, dict[str, Any]]:
    """Defaults < config file < command line."""
    file_values = load_config_file(opts.get("config_path"))
    merged = dict(file_values)
    for key in ("trigger_token_ratio", "max_context_tokens", "debounce_turns", "max_tool_result_chars",
                "max_transcript_chars", "summary_marker", "mode", "keep_recent_turns", "measure"):
        if opts.get(key) is not None:
            merged[key] = opts[key]
    if opts.get("turn_path") is not None:
        merged["path"] = opts["turn_path"]
    if opts.get("model") or merged.get("model"):
        merged["summary_model"] = opts.get("model") or merged["model"]  # --model wins over the file
    if opts.get("prompt_spec") == "":
        raise ConfigError(f"--prompt is empty: give a built-in name ({', '.join(builtin_template_names())}) or a file")
    prompt_spec = opts.get("prompt_spec") or merged.get("prompt")
    if prompt_spec is None and isinstance(merged.get("summary_prompt"), str):
        # the prompt text itself in the config file (Jinja or the seed's plain form)
        template = template_from_config(merged["summary_prompt"], "config")
    else:
        template = load_template(prompt_spec)
    for problem in template.check():
        click.echo(f"tsum: warning: {problem}", err=True)
    merged["summary_prompt"] = template.source
    summary = summary_config_from(merged, SummaryConfig(summary_prompt=template.source))
    try:
        settings = ReplaySettings(
            summary=summary,
            mode=SlotMode(merged.get("mode", "focused")),
            keep_recent_turns=int(merged.get("keep_recent_turns", DEFAULT_KEEP_RECENT_TURNS)),
            path=TurnPath(merged.get("path", "sync")),
            measure=Measure(merged.get("measure", "cumulative")),
            template_name=template.name,
            dry_run=dry_run,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return settings, template, merged


def with_file_defaults(opts: dict[str, Any], file_values: dict[str, Any]) -> dict[str, Any]:
    """Provider options left at their defaults take the config file's value, if it has one."""
    ctx = click.get_current_context(silent=True)
    out = dict(opts)
    for key in ("provider", "model", "base_url", "concurrency"):
        if key not in file_values or ctx is None:
            continue
        source = ctx.get_parameter_source(key)
        if source in (None, click.core.ParameterSource.DEFAULT):
            out[key] = file_values[key]
    return out


def run_info(settings: ReplaySettings, template: PromptTemplate, provider: str, model: str | None) -> dict[str, Any]:
    """The settings that shape the outputs (run.json: diffable, no paths or times)."""
    cfg = settings.summary
    assert cfg is not None
    return {
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


@click.command(epilog="Outputs with --out DIR: decisions.jsonl, summaries.jsonl, prompts.jsonl, slots.jsonl, "
               "compressed/<session>.jsonl, run.json, manifest.json (see README).")
@click.argument("paths", nargs=-1, required=True)
@summary_options
@provider_options
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), help="Write JSONL records here instead of a report on stdout.")
@click.option("--dry-run", is_flag=True, help="Decisions only: no summary calls (fired checkpoints are recorded as would_summarize).")
@click.option("--silent", is_flag=True, help="No progress bar, warnings or end-of-run summary on stderr.")
@scale_options
def replay_command(paths: tuple[str, ...], out_dir: Path | None, dry_run: bool, silent: bool,
                   workers: int | None, ray_address: str | None, **opts: Any) -> None:
    """Replay transcripts (files, directories, globs, or - for stdin) turn by turn through the checkpoint.

    --workers and --ray spread a --dry-run over processes or a Ray cluster; a replay that
    makes summary calls runs them with --concurrency instead.
    """
    started = time.perf_counter()
    settings, template, merged = resolve_settings(opts, dry_run=dry_run)
    if not dry_run:
        refuse_summaries_on_ray(ray_address, "a replay that makes summary calls (add --dry-run for decisions only)")
    backend = resolve_backend(workers, ray_address, merged)
    provider_opts = with_file_defaults(opts, merged)
    executor = None if dry_run else build_executor(provider_opts)  # fails here, before any work
    provider_name = "none" if executor is None else executor.provider.name
    model = settings.summary.summary_model if settings.summary else None
    if executor is not None and model is None:
        model = executor.provider.default_model

    def warn(message: str) -> None:
        if not silent:
            click.echo(message, err=True)

    def error(message: str) -> None:
        click.echo(message, err=True)

    sink: Any
    out = None
    if out_dir is not None:
        out = OutputDirectory(out_dir, write_compressed=not dry_run)  # a dry run compresses nothing
        out.write_run_info(run_info(settings, template, provider_name, model))
        sink = out
    else:
        sink = TextReport(sys.stdout)
    progress = _progress(silent)
    run = ReplayRun(
        settings,
        executor,
        sink,
        provider_name=provider_name,
        template=template,
        fmt=opts.get("fmt"),
        skip_bad_lines=opts.get("skip_bad_lines", False),
        concurrency=int(opts.get("concurrency") or 1),
        warn=warn,
        error=error,
        on_session=(lambda _r: progress.update(1)) if progress is not None else None,
    )
    status = "complete"
    try:
        if parallel_replay(run, list(paths), backend) is None:  # not spread: as always
            asyncio.run(_run_and_close(run, list(paths), executor))
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    except BaseException as exc:  # the manifest must not call an aborted run complete
        status = "failed"
        run.stats.errors.append(f"run aborted: {exc}")
        raise
    finally:
        if progress is not None:
            progress.close()
        stats = run.stats
        cache_stats = _executor_stats(executor)
        if executor is not None:
            executor.close()
        elapsed = time.perf_counter() - started
        if out is not None:
            out.close(_manifest(status, paths, stats, cache_stats, elapsed, provider_name, model))
        if not silent or status != "complete":
            click.echo(_summary_line(stats, cache_stats, elapsed, status), err=True)
    missing = cache_only_failure(executor.stats) if executor is not None else None
    if missing:
        raise _CacheOnlyFailure(missing)
    if stats.summaries_failed and not stats.summaries_ok:
        # N3 keeps each session going, but a run in which no summary call succeeded
        # (bad endpoint, model or key) must not pass CI silently.
        first = next((e for e in _first_errors(out_dir) if e), None) if out_dir else None
        raise _AllSummariesFailed(
            f"all {stats.summaries_failed} summary call(s) failed"
            + (f" (first: {first})" if first else "")
            + "; see summaries.jsonl" * (out_dir is not None)
        )
    if stats.errors or stats.sessions == 0:
        if stats.sessions == 0 and not stats.errors:
            click.echo("tsum: error: no sessions found in the given paths", err=True)
        sys.exit(int(ExitCode.FAILED))


class _AllSummariesFailed(TsumError):
    """Every summary call of the run failed: exit 3."""


def _first_errors(out_dir: Path) -> list[str | None]:
    import orjson

    try:
        with open(out_dir / "summaries.jsonl", "rb") as handle:
            return [orjson.loads(handle.readline() or b"{}").get("error")]
    except (OSError, ValueError):
        return []


async def _run_and_close(run: ReplayRun, paths: list[str], executor: Any) -> None:
    try:
        await run.run(paths)
    finally:
        if executor is not None:
            await executor.aclose()  # HTTP clients belong to this event loop


class _CacheOnlyFailure(TsumError):
    """--cache-only and responses missing: exit 3 with the sessions and turns named."""


def _progress(silent: bool) -> Any:
    if silent or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(unit="session", file=sys.stderr, leave=False)


def _executor_stats(executor: Any) -> dict[str, Any]:
    if executor is None:
        return {}
    stats = executor.stats
    out = {f.name: getattr(stats, f.name) for f in fields(stats) if f.name not in ("usage", "cache_only_missing")}
    out["line"] = describe_stats(stats)
    out["summary_input_tokens"] = stats.usage.input_tokens
    out["summary_output_tokens"] = stats.usage.output_tokens
    return out


def _summary_line(stats: Any, cache: dict[str, Any], elapsed: float, status: str) -> str:
    parts = [
        f"{stats.files} file(s)",
        f"{stats.sessions} session(s)",
        f"{stats.turns} turn(s)",
    ]
    if stats.would_summarize:
        parts.append(f"{stats.would_summarize} summaries would fire (dry run)")
    else:
        parts.append(f"{stats.summaries_ok + stats.summaries_failed} summaries ({stats.summaries_ok} ok, {stats.summaries_failed} failed)")
    if cache:
        parts.append(cache["line"])
    parts.append(f"{len(stats.errors)} error(s)")
    if stats.warnings:
        parts.append(f"{stats.warnings} warning(s)")
    prefix = "tsum: " if status == "complete" else f"tsum: {status}: "
    return prefix + ", ".join(parts) + f" in {elapsed:.2f}s"


def _manifest(status: str, paths: tuple[str, ...], stats: Any, cache: dict[str, Any], elapsed: float,
              provider: str, model: str | None) -> dict[str, Any]:
    return {
        "tsum_version": __version__,
        "status": status,
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
        "executor": cache,
        "elapsed_seconds": round(elapsed, 3),
    }


# ---- format / prompt ---------------------------------------------------------------


def _history_at(path: str, opts: dict[str, Any], turn: int | None, session: str | None) -> tuple[str, list[Any], int]:
    source = Source(path, skip_bad_lines=opts.get("skip_bad_lines", False),
                    warn=lambda m: click.echo(m, err=True))
    for conv in read_conversations(source, opts.get("fmt")):
        if session is not None and conv.session_id != session:
            continue
        turns = split_turns(conv.messages)
        if not turns:
            raise InputError(path, None, f"session {conv.session_id} has no messages")
        index = len(turns) - 1 if turn is None else turn
        if not 0 <= index < len(turns):
            raise ConfigError(f"--turn {turn}: session {conv.session_id} has turns 0..{len(turns) - 1}")
        end = turns[index][0] + len(turns[index][1])
        return conv.session_id, conv.messages[:end], index
    if session:
        raise ConfigError(f"--session {session}: no such session in {path}")
    raise InputError(path, None, "no conversations in this file")


@click.command()
@click.argument("file")
@click.option("--turn", type=int, help="The turn whose checkpoint is shown (0-based). [default: the last]")
@click.option("--session", help="The session to use when the file holds several. [default: the first]")
@summary_options
def format_command(file: str, turn: int | None, session: str | None, **opts: Any) -> None:
    """Print the formatted history the summary prompt gets at a turn (only that text, on stdout)."""
    settings, _, _ = resolve_settings(opts)
    cfg = settings.summary
    assert cfg is not None
    _, history, _ = _history_at(file, opts, turn, session)
    click.echo(format_messages_as_text(history, cfg.max_tool_result_chars, cfg.max_transcript_chars))


@click.command()
@click.argument("file")
@click.option("--turn", type=int, help="The turn whose checkpoint is shown (0-based). [default: the last]")
@click.option("--session", help="The session to use when the file holds several. [default: the first]")
@summary_options
def prompt_command(file: str, turn: int | None, session: str | None, **opts: Any) -> None:
    """Print the rendered summary prompt at a turn (previous_summary empty; see replay --out for real ones)."""
    settings, template, _ = resolve_settings(opts)
    cfg = settings.summary
    assert cfg is not None
    session_id, history, index = _history_at(file, opts, turn, session)
    text = format_messages_as_text(history, cfg.max_tool_result_chars, cfg.max_transcript_chars)
    click.echo(template.render(text, session_id=session_id, turn=index, previous_summary=""), nl=False)


@click.group()
def prompts_group() -> None:
    """The built-in summary prompt templates."""


@prompts_group.command("list")
def prompts_list() -> None:
    """List built-in templates."""
    for name in builtin_template_names():
        first = builtin_template_source(name).strip().splitlines()[0]
        click.echo(f"{name}\t{first[:70]}")


@prompts_group.command("show")
@click.argument("name")
def prompts_show(name: str) -> None:
    """Print a built-in template's source."""
    click.echo(builtin_template_source(name), nl=False)
