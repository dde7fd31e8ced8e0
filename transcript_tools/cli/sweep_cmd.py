"""``tsum sweep``: evaluate trigger settings over a corpus, offline."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..engine.config import Checkpoint, Measure, SlotMode
from ..errors import ConfigError, ExitCode
from ..sweep.driver import CachedThenOffline, Sweep, config_grid
from ..sweep.parallel import run_sweep
from ..sweep.tables import SORT_KEYS, render_csv, render_json, render_table
from ..terminal import echo
from .cost_options import cost_options, pricer_for
from .scale_options import refuse_summaries_on_ray, resolve_backend, scale_options
from .settings import config_option, format_option, resolve

SORT_CHOICES = list(SORT_KEYS) + ["-" + k for k in SORT_KEYS if k != "config"]


def _split(values: tuple[str, ...], name: str, convert: Callable[[str], Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                out.append(convert(part))
            except ValueError:
                raise click.BadParameter(
                    f"{part!r} is not a valid value", param_hint=name
                ) from None
    return out


def _choice(enum: Any) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return enum(text)
        except ValueError:
            raise ValueError(text) from None

    return convert


EPILOG = """\b
Examples:
  tsum sweep corpus/ --ratio 0.5,0.75,0.9 --max-context-tokens 32000,128000 --debounce 1,3,5
  tsum sweep corpus/ --ratio 0.6 --debounce 5 --measure cumulative,current --report sweep.html
  tsum sweep corpus/ --json > sweep.json        (or --csv)

With the cumulative measure (usage recorded or estimated) or in Full mode the schedule
cannot depend on summary text: it is computed from the token series alone and no provider
is called. Otherwise (--measure current in Focused mode, or a prompt that shows the
previous summary) the real engine runs with the offline summarizer, or with cached
responses of a real provider (--provider NAME --cache FILE; misses fall back to offline).
The output says which."""


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--ratio",
    "--trigger-token-ratio",
    "ratios",
    multiple=True,
    metavar="R[,R...]",
    help="trigger_token_ratio values (comma list or repeated). [default: config or 0.75]",
)
@click.option(
    "--max-context-tokens",
    "max_tokens",
    multiple=True,
    metavar="N[,N...]",
    help="max_context_tokens values. [default: config or 32000]",
)
@click.option(
    "--debounce",
    "--debounce-turns",
    "debounces",
    multiple=True,
    metavar="N[,N...]",
    help="debounce_turns values. [default: config or 3]",
)
@click.option(
    "--mode",
    "modes",
    multiple=True,
    metavar="focused|full[,...]",
    help="Slot modes. [default: focused]",
)
@click.option(
    "--measure",
    "measures",
    multiple=True,
    metavar="cumulative|current[,...]",
    help="Watermarks: the seed's cumulative cost_so_far, or the current context size. [default: cumulative]",
)
@click.option(
    "--checkpoint",
    "checkpoints",
    multiple=True,
    metavar="turn|call[,...]",
    help="Checkpoint after each user turn (the seed) or each model call (debounce counts calls). [default: config or turn]",
)
@config_option
@click.option(
    "--prompt",
    "prompt_spec",
    envvar="TSUM_PROMPT",
    help="Summary prompt (built-in name or file). [default: zh]",
)
@click.option(
    "--keep-recent-turns",
    type=int,
    help="Focused view: whole turns kept before the summary. [default: 3]",
)
@click.option(
    "--max-tool-result-chars",
    type=int,
    help="Per tool result in the summary prompt. [default: 500]",
)
@click.option(
    "--max-transcript-chars", type=int, help="Cap of the formatted conversation. [default: 30000]"
)
@format_option
@click.option(
    "--skip-bad-lines", is_flag=True, help="Warn about bad lines and use the rest of the file."
)
@click.option(
    "--sort",
    "sort",
    type=click.Choice(SORT_CHOICES),
    default="calls",
    show_default=True,
    help="Row order: a figure (ascending; prefix - for descending) or config (grid order).",
)
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout instead of the table.")
@click.option("--csv", "as_csv", is_flag=True, help="CSV on stdout instead of the table.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a self-contained HTML report (charts + table) to this file.",
)
@click.option(
    "--report-sample",
    type=click.IntRange(min=1),
    default=12,
    show_default=True,
    help="Conversations charted in the report (a deterministic sample; recorded compactions first).",
)
@click.option(
    "--price-per-mtok",
    type=click.FloatRange(min=0),
    help="Summarizer input price per million tokens: adds money.",
)
@click.option(
    "--summary-tokens",
    type=click.IntRange(min=0),
    default=1024,
    show_default=True,
    help="Assumed summary length where no summary is written (fast path): the call's max_tokens.",
)
@click.option(
    "--provider",
    default="offline",
    show_default=True,
    envvar="TSUM_PROVIDER",
    help="Where summary text comes from when needed: offline, or a provider whose responses are read "
    "from --cache (never called).",
)
@click.option(
    "--model", envvar="TSUM_MODEL", help="Model of the cached responses (their cache key)."
)
@click.option(
    "--base-url", envvar="TSUM_BASE_URL", help="Base URL of the cached responses (their cache key)."
)
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="TSUM_CACHE",
    help="Response cache to read summaries from (with --provider other than offline).",
)
@click.option("--silent", is_flag=True, help="No progress or end-of-run line on stderr.")
@scale_options
@cost_options
def sweep_command(
    paths: tuple[str, ...],
    ratios: tuple[str, ...],
    max_tokens: tuple[str, ...],
    debounces: tuple[str, ...],
    modes: tuple[str, ...],
    measures: tuple[str, ...],
    checkpoints: tuple[str, ...],
    sort: str,
    as_json: bool,
    as_csv: bool,
    report_path: Path | None,
    report_sample: int,
    price_per_mtok: float | None,
    summary_tokens: int,
    provider: str,
    model: str | None,
    base_url: str | None,
    cache_path: Path | None,
    silent: bool,
    workers: int | None,
    ray_address: str | None,
    cost: bool,
    prices_file: str | None,
    **opts: Any,
) -> None:
    """Evaluate every combination of trigger settings on every conversation (no LLM where none is needed)."""
    if as_json and as_csv:
        raise click.UsageError("--json and --csv cannot be combined: choose one")
    # The sweep's own provider options name cached responses; the rule is the same.
    opts.update(provider=provider, model=model, base_url=base_url)
    resolved = resolve({**opts, "workers": workers})
    settings, template = resolved.settings, resolved.template
    provider, model, base_url = (resolved.provider[k] for k in ("provider", "model", "base_url"))
    base = settings.summary
    assert base is not None
    configs = config_grid(
        _split(ratios, "--ratio", float) or [base.trigger_token_ratio],
        _split(max_tokens, "--max-context-tokens", int) or [base.max_context_tokens],
        _split(debounces, "--debounce", int) or [base.debounce_turns],
        _split(modes, "--mode", _choice(SlotMode)) or [settings.mode],
        _split(measures, "--measure", _choice(Measure)) or [settings.measure],
        base=base,
        checkpoints=_split(checkpoints, "--checkpoint", _choice(Checkpoint))
        or [settings.checkpoint],
    )
    if provider != "offline":
        refuse_summaries_on_ray(ray_address, f"a sweep that reads {provider} summaries")
    backend = resolve_backend(resolved.values.get("workers"), ray_address)
    executor, describe = _summary_source(provider, model, base_url, cache_path)

    def warn(message: str) -> None:
        if not silent:
            echo(message, err=True)

    progress = None
    if not silent and sys.stderr.isatty():
        from tqdm import tqdm

        progress = tqdm(unit="conversation", file=sys.stderr, leave=False)
    sweep = Sweep(
        configs,
        base=base,
        template=template,
        keep_recent_turns=settings.keep_recent_turns,
        executor=executor,
        provider_name=provider,
        describe_executor=describe,
        summary_tokens=summary_tokens,
        price_per_mtok=price_per_mtok,
        pricer=pricer_for(cost, prices_file, price_per_mtok),
        sample_size=report_sample if report_path else 0,
        fmt=resolved.fmt,
        skip_bad_lines=opts.get("skip_bad_lines", False),
        warn=warn,
        error=lambda m: echo(m, err=True),
        on_conversation=(lambda: progress.update(1)) if progress is not None else None,
    )
    try:
        result = run_sweep(sweep, list(paths), backend)
    finally:
        if progress is not None:
            progress.close()
        if executor is not None:
            executor.primary.close()
    render = render_json if as_json else render_csv if as_csv else render_table
    echo(render(result, sort), nl=False)
    if report_path is not None:
        from ..sweep.html import write_report

        write_report(report_path, result, sort=sort, title=" ".join(paths))
    if not silent:
        runs = f"{result.fast_runs} computed from token series, {result.engine_runs} engine run(s)"
        echo(
            f"tsum: sweep: {result.files} file(s), {result.conversations} conversation(s), "
            f"{len(configs)} configuration(s): {runs}; {len(result.errors)} error(s) "
            f"in {result.elapsed:.2f}s" + (f"; report: {report_path}" if report_path else ""),
            err=True,
        )
    if result.errors or result.conversations == 0:
        if result.conversations == 0 and not result.errors:
            echo("tsum: error: no conversations found in the given paths", err=True)
        sys.exit(int(ExitCode.FAILED))


def _summary_source(
    provider: str, model: str | None, base_url: str | None, cache_path: Path | None
) -> tuple[Any, Callable[[], str] | None]:
    """None for the offline default; for another provider, its cached responses (never an API call)."""
    if provider == "offline":
        if cache_path is not None or model or base_url:
            raise ConfigError(
                "--cache/--model/--base-url select cached responses of --provider anthropic or openai; "
                "the offline provider needs none"
            )
        return None, None
    if cache_path is None:
        raise ConfigError(
            f"a sweep never calls an API: provider {provider} (from --provider, TSUM_PROVIDER or the "
            "settings file) needs --cache FILE with its responses "
            "(recorded by tsum replay), or use --provider offline"
        )
    from ..providers.factory import build_executor

    primary = build_executor(
        {
            "provider": provider,
            "model": model,
            "base_url": base_url,
            "cache": cache_path,
            "cache_only": True,
            "concurrency": 1,
        }
    )
    wrapper = CachedThenOffline(primary)
    return wrapper, wrapper.describe
