"""``tsum sweep`` as a library call: the grid, the summary source, the run, the report.

The grid's empty axes take the run's own setting (``RunSettings``: flags > environment >
settings file > default). Summary text, where a schedule needs it, comes from the offline
provider or from a provider's cached responses (never an API call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.config import (
    AUTO,
    Checkpoint,
    Measure,
    ReplaySettings,
    RunSettings,
    SlotMode,
    _int_at_least,
)
from ..engine.policy import Policy
from ..engine.policy_engine import is_seed
from ..engine.seed_defaults import SUMMARY_MAX_TOKENS
from ..errors import ConfigError
from ..parallel.pool import backend_for, refuse_summaries_on_ray
from ..reporter import QUIET, Reporter
from ..writable import check_output_file
from .config import SweepConfig
from .driver import CachedThenOffline, Sweep, SweepResult, sweep_grid
from .parallel import run_sweep
from .tables import sort_key

if TYPE_CHECKING:
    from ..cost.prices import Pricer

DEFAULT_SORT = "calls"
DEFAULT_REPORT_SAMPLE = 12  # conversations charted in the HTML report


@dataclass(slots=True)
class SweepRun:
    """A finished sweep: its result and the one line that sums it up."""

    result: SweepResult
    report_path: Path | None = None

    @property
    def failed(self) -> bool:
        """Inputs that could not be read, or no conversation at all."""
        return bool(self.result.errors) or self.result.conversations == 0

    def summary_line(self) -> str:
        result = self.result
        runs = f"{result.fast_runs} computed from token series, {result.engine_runs} engine run(s)"
        return (
            f"tsum: sweep: {result.files} file(s), {result.conversations} conversation(s), "
            f"{len(result.configs)} configuration(s): {runs}; {len(result.errors)} error(s) "
            f"in {result.elapsed:.2f}s"
            + (f"; report: {self.report_path}" if self.report_path else "")
        )


def sweep_paths(
    paths: list[str],
    run: RunSettings,
    *,
    ratios: Sequence[float] = (),
    max_context_tokens: Sequence[int | str] = (),  # a window, or AUTO (the log's)
    policies: Sequence[Policy] = (),  # tsum sweep --policy (docs/policies.md)
    debounces: Sequence[int] = (),
    modes: Sequence[SlotMode] = (),
    measures: Sequence[Measure] = (),
    checkpoints: Sequence[Checkpoint] = (),
    cache: str | Path | None = None,
    ray: str | None = None,
    summary_tokens: int = SUMMARY_MAX_TOKENS,
    price_per_mtok: float | None = None,
    pricer: Pricer | None = None,
    report_path: str | Path | None = None,
    report_sample: int = DEFAULT_REPORT_SAMPLE,
    sort: str = DEFAULT_SORT,
    chart: bool = False,
    reporter: Reporter = QUIET,
) -> SweepRun:
    """Every combination of the axes over ``paths``; an empty axis is ``run``'s value.

    ``cache`` holds a non-offline provider's responses (``run.provider``); ``ray`` an
    address for Ray (``parallel.RAY_LOCAL``: a local one); ``report_path`` an HTML report
    (``report_sample`` conversations charted, rows by ``sort``);
    ``pricer`` (``--cost``) prices every configuration's runs (docs/cost.md)."""
    _check_numbers(summary_tokens, price_per_mtok, report_sample, sort)
    if report_path is not None:
        check_output_file(report_path, "--report")  # before the sweep, not after it
    configs = _grid(
        run.settings, policies, ratios, max_context_tokens, debounces, modes, measures, checkpoints
    )
    provider = run.provider["provider"]
    if provider != "offline":
        refuse_summaries_on_ray(ray, f"a sweep that reads {provider} summaries")
    backend = backend_for(run.values.get("workers"), ray)
    executor = summary_source(run, cache)
    sweep = Sweep.for_run(
        configs,
        run,
        executor,
        summary_tokens=summary_tokens,
        price_per_mtok=price_per_mtok,
        pricer=pricer,
        sample_size=report_sample if report_path else 0,
        reporter=reporter,
    )
    try:
        result = run_sweep(sweep, list(paths), backend)
    finally:
        if executor is not None:
            executor.primary.close()
    report = Path(report_path) if report_path is not None else None
    if report is not None:
        from .html import write_report

        write_report(report, result, sort=sort, title=" ".join(paths), chart=chart)
    return SweepRun(result, report)


def _check_numbers(
    summary_tokens: int, price_per_mtok: float | None, report_sample: int, sort: str
) -> None:
    """The library's arguments, checked as ``tsum sweep``'s options are, before the sweep:
    a negative length or price gives negative costs and views, a bad sort fails at the end."""
    _int_at_least("summary_tokens", summary_tokens, 0, "must be >= 0")
    _int_at_least("report_sample", report_sample, 1, "must be >= 1")
    price = price_per_mtok
    number = isinstance(price, (int, float)) and not isinstance(price, bool)
    if price is not None and not (number and price >= 0):
        raise ConfigError(f"price_per_mtok must be a number >= 0, got {price!r}")
    sort_key(sort)


def _grid(
    settings: ReplaySettings,
    policies: Sequence[Policy],
    ratios: Sequence[float],
    max_context_tokens: Sequence[int | str],
    debounces: Sequence[int],
    modes: Sequence[SlotMode],
    measures: Sequence[Measure],
    checkpoints: Sequence[Checkpoint],
) -> list[SweepConfig]:
    """The configurations of a sweep: the policies', or, for none or the seed's alone, the
    seed's (its empty axes the settings' values)."""
    base = settings.summary
    assert base is not None
    if all(is_seed(policy) for policy in policies):  # the seed's grid, byte for byte
        policies = ()
        max_context_tokens = list(max_context_tokens) or [
            AUTO if settings.auto_window else base.max_context_tokens
        ]
        modes = list(modes) or [settings.mode]
        measures = list(measures) or [settings.measure]
        checkpoints = list(checkpoints) or [settings.checkpoint]
    return sweep_grid(
        policies, max_context_tokens, ratios=ratios, debounces=debounces,
        modes=modes, measures=measures, checkpoints=checkpoints, base=base,
    )  # fmt: skip


def summary_source(run: RunSettings, cache: str | Path | None) -> Any:
    """None for the offline default; for another provider, its cached responses (never an API call)."""
    provider, model, base_url = (run.provider[k] for k in ("provider", "model", "base_url"))
    if provider == "offline":
        if cache is not None or model or base_url:
            raise ConfigError(
                "--cache/--model/--base-url select cached responses of --provider anthropic or openai; "
                "the offline provider needs none"
            )
        return None
    if cache is None:
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
            "cache": cache,
            "cache_only": True,
            "concurrency": 1,
        }
    )
    return CachedThenOffline(primary)
