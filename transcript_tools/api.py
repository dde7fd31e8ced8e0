"""The front door: every workflow of the CLI as a plain synchronous function.

Each works from a script, a test or a notebook, also inside a running event loop
(``_sync.run_sync``), takes every option its command has and returns the library's own
types; nothing here prints. The CLI runs the same library code (``replay.run``,
``sweep.workflow``, ``eval.workflow``, ``diff.check``, ``inspection``).

Settings: the arguments given, over the config dataclasses' defaults; what the CLI gets
(flags > ``TSUM_*`` > tsum.toml > default) is ``run_settings=load_settings(...)``; typed
``config`` / ``settings`` objects replace the loaded ones. Names differ from the
modules' (importing a submodule sets the package attribute of its name).

>>> import transcript_tools as tt
>>> result = tt.replay_corpus(["samples/long_session.jsonl"], tt.SummaryConfig(max_context_tokens=20_000))
>>> [d["turn"] for d in result.sessions[0].engine.decisions if d["decision"] == tt.Decision.SUMMARIZED]
[3, 6, 9, 12, 15]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from .arguments import given_only, run_settings_from
from .engine.config import (
    DEFAULT_DIFF_CONTEXT,
    DEFAULT_MAX_DROP,
    DEFAULT_PROVIDER,
    Checkpoint,
    Measure,
    ReplaySettings,
    RunSettings,
    SlotMode,
    SummaryConfig,
)
from .engine.messages import Conversation
from .engine.policy import Policy
from .engine.policy_toml import resolve_policy
from .providers.base import Provider
from .providers.factory import ProviderOptions
from .reporter import Callbacks, ignore
from .settings import typed_values

if TYPE_CHECKING:
    from .diff.changes import RunDiff
    from .diff.check import CheckResult
    from .errors import InputError
    from .eval.workflow import EvalRun
    from .fidelity import FidelityResult
    from .inspection import InspectResult
    from .replay.conversation import SessionResult
    from .replay.run import ReplayResult
    from .sweep.driver import SweepResult

Paths = str | Path | Iterable[str | Path]


def read_corpus(
    paths: Paths,
    *,
    format: str | None = None,
    skip_bad_lines: bool = False,
    warn: Callable[[str], None] = ignore,
) -> Iterator[Conversation]:
    """The conversations in ``paths`` (files, directories, globs, ``-``), streamed; a file
    that cannot be read raises ``InputError`` naming the file and line."""
    from .formats import read_input
    from .formats.inputs import expand_inputs
    from .formats.source import Source

    for item in expand_inputs(_paths(paths), warn):
        source = Source(item.path, skip_bad_lines=skip_bad_lines, warn=warn)
        yield from read_input(source, format, from_directory=item.from_directory)


def replay_corpus(
    paths: Paths,
    config: SummaryConfig | None = None,
    *,
    settings: ReplaySettings | None = None,
    run_settings: RunSettings | None = None,
    prompt: str | None = None,
    provider: str | Provider = DEFAULT_PROVIDER,
    out: str | Path | None = None,
    out_format: str = "native",
    format: str | None = None,
    dry_run: bool = False,
    skip_bad_lines: bool = False,
    workers: int | None = None,
    ray: str | None = None,
    cost: bool = False,
    prices: str | Path | None = None,
    warn: Callable[[str], None] = ignore,
    error: Callable[[str], None] | None = None,
    on_session: Callable[[SessionResult], None] | None = None,
    **options: Unpack[ProviderOptions],
) -> ReplayResult:
    """Replay ``paths`` through the checkpoint and return what happened (``tsum replay``).

    ``config`` is the seed's ``SummaryConfig``; ``settings`` the rest (mode, path,
    measure, checkpoint; ``settings.summary=None``: no checkpoint); ``prompt`` a
    built-in template name or a file. ``provider`` is a name (``offline``,
    ``anthropic``, ``openai``, a plug-in; keys from their usual variables) or any object
    with the ``Provider`` protocol (no response cache unless ``cache`` is given);
    ``options`` are the call and cache options (``ProviderOptions``: model, cache,
    cache_only, batch…). With ``out`` the records are written as ``tsum replay --out``
    writes them (``out_format="atif"``: ATIF trajectories); without it each
    ``SessionResult`` is in ``result.sessions``. ``cost``: ``--cost`` (docs/cost.md).
    Bad input does not raise: see ``result.status`` and ``result.stats.errors``."""
    from .cost.prices import pricer_for
    from .formats.atif_write import check_out_format, write_out_format
    from .parallel.pool import backend_for, refuse_summaries_on_ray
    from .replay.run import replay_paths

    run = run_settings_from(
        run_settings, config, settings, prompt, format, provider, options, dry_run, skip_bad_lines
    )
    check_out_format(out, out_format, run.settings.dry_run)
    if not run.settings.dry_run:
        refuse_summaries_on_ray(ray, "a replay that makes summary calls")
    backend = backend_for(workers or run.values.get("workers"), ray)
    result = replay_paths(
        _paths(paths),
        run,
        out_dir=out,
        collect=out is None,
        reporter=Callbacks(warn, error, on_session),
        backend=backend if (workers or ray or run.values.get("workers")) else None,
        cost=pricer_for(cost, prices, run.provider.get("price_per_mtok")),
    )
    if out is not None and out_format != "native":
        write_out_format(out, out_format)
    return result


def sweep_corpus(
    paths: Paths,
    *,
    ratios: Sequence[float] = (),
    max_context_tokens: Sequence[int | str] = (),
    policies: Sequence[Policy | str] = (),
    debounces: Sequence[int] = (),
    modes: Sequence[SlotMode | str] = (),
    measures: Sequence[Measure | str] = (),
    checkpoints: Sequence[Checkpoint | str] = (),
    config: SummaryConfig | None = None,
    settings: ReplaySettings | None = None,
    run_settings: RunSettings | None = None,
    prompt: str | None = None,
    provider: str = DEFAULT_PROVIDER,
    model: str | None = None,
    base_url: str | None = None,
    cache: str | Path | None = None,
    format: str | None = None,
    skip_bad_lines: bool = False,
    workers: int | None = None,
    ray: str | None = None,
    summary_tokens: int | None = None,
    price_per_mtok: float | None = None,
    cost: bool = False,
    prices: str | Path | None = None,
    report: str | Path | None = None,
    chart: bool = False,
    report_sample: int | None = None,
    sort: str | None = None,
    warn: Callable[[str], None] = ignore,
    error: Callable[[str], None] | None = None,
) -> SweepResult:
    """Every combination of trigger settings over a corpus (``tsum sweep``); an empty axis
    takes the run's own value. Summary text, where a schedule needs it, comes from the
    offline provider, or from ``provider``'s responses in ``cache`` (never an API call).
    ``report`` writes the HTML report (``chart``: with the trade-off chart). ``policies`` (``Policy`` values or preset names /
    files, ``tsum sweep --policy``) make the compaction policy a grid dimension. ``cost``
    prices every configuration's runs (``tsum sweep --cost``; ``prices``: a JSON prices
    file; docs/cost.md)."""
    from .cost.prices import pricer_for
    from .sweep import workflow

    run = run_settings_from(
        run_settings,
        config,
        settings,
        prompt,
        format,
        provider,
        {"model": model, "base_url": base_url},
        False,
        skip_bad_lines,
        workers=workers,
    )
    done = workflow.sweep_paths(
        _paths(paths),
        run,
        ratios=ratios,
        max_context_tokens=typed_values("max_context_tokens", max_context_tokens),
        policies=[p if isinstance(p, Policy) else resolve_policy(p) for p in policies],
        debounces=debounces,
        modes=typed_values("mode", modes),
        measures=typed_values("measure", measures),
        checkpoints=typed_values("checkpoint", checkpoints),
        cache=cache,
        ray=ray,
        report_path=report,
        chart=chart,
        reporter=Callbacks(warn, error),
        price_per_mtok=price_per_mtok,
        pricer=pricer_for(cost, prices, price_per_mtok),
        **given_only(
            summary_tokens=summary_tokens,
            report_sample=report_sample,
            sort=sort,
        ),
    )
    return done.result


def eval_corpus(
    paths: Paths,
    *,
    prompts: Sequence[str] = (),
    models: Sequence[str] = (),
    policies: Sequence[Policy | str] = (),
    config: SummaryConfig | None = None,
    settings: ReplaySettings | None = None,
    run_settings: RunSettings | None = None,
    provider: str = DEFAULT_PROVIDER,
    judge: bool = False,
    out: str | Path | None = None,
    html: str | Path | None = None,
    chart: bool = False,
    cost: bool = False,
    person_fates: bool = False,
    format: str | None = None,
    skip_bad_lines: bool = False,
    warn: Callable[[str], None] = ignore,
    error: Callable[[str], None] | None = None,
    **options: Unpack[ProviderOptions],
) -> EvalRun:
    """Score what survives each summary, per template in ``prompts`` (default: the run's own)
    and model in ``models``: ``tsum eval``, its options by the same names (``out``: the
    ``checkpoints.jsonl`` and ``eval.json`` folder; ``html``: the page; ``policies``: ``Policy``
    values, preset names or files; ``person_fates``: ``--person-fates``; docs/eval.md)."""
    from .eval.workflow import eval_paths, variant_grid

    def variant(spec: str | None, model: str | None) -> RunSettings:
        given: dict[str, Any] = {**options, "model": model or options.get("model")}
        return run_settings_from(
            run_settings, config, settings, spec, format, provider, given, False, skip_bad_lines
        )

    from .settings import apply_policy

    def settings_for(policy: Policy | None, spec: str | None, model: str | None) -> RunSettings:
        return apply_policy(variant(spec, model), policy, {"prompt": spec} if spec else None)

    given = [p if isinstance(p, Policy) else resolve_policy(p) for p in policies]
    variants, policy_names = variant_grid(
        given, prompts, list(models) or [options.get("model")], settings_for
    )
    return eval_paths(
        _paths(paths),
        variants,
        variant(None, options.get("model")),
        judge=judge,
        out_dir=Path(out) if out is not None else None,
        html_path=Path(html) if html is not None else None,
        chart=chart,
        policy_names=policy_names,
        cost=cost,
        person_fates=person_fates,
        reporter=Callbacks(warn, error),
    )


def check(
    paths: Paths,
    baseline: str | Path,
    *,
    update: bool = False,
    out: str | Path | None = None,
    max_drop: float = DEFAULT_MAX_DROP,
    max_cost_increase: float | None = None,
    context: int = DEFAULT_DIFF_CONTEXT,
    config: SummaryConfig | None = None,
    settings: ReplaySettings | None = None,
    run_settings: RunSettings | None = None,
    prompt: str | None = None,
    provider: str = DEFAULT_PROVIDER,
    format: str | None = None,
    skip_bad_lines: bool = False,
    warn: Callable[[str], None] = ignore,
    **options: Unpack[ProviderOptions],
) -> CheckResult:
    """Replay ``paths`` and diff the outputs against the ``baseline`` directory (``tsum
    check``): ``result.diff`` (a ``RunDiff``), ``result.scores`` (the recall gate),
    ``result.costs`` (the cost gate, with ``max_cost_increase``: docs/cost.md),
    ``result.failed``. ``update`` rewrites the baseline with this run's outputs."""
    from .diff.check import check_corpus

    run = run_settings_from(
        run_settings, config, settings, prompt, format, provider, options, False, skip_bad_lines
    )
    return check_corpus(
        _paths(paths),
        Path(baseline),
        run,
        update=update,
        out_dir=Path(out) if out is not None else None,
        max_drop=max_drop,
        max_cost_increase=max_cost_increase,
        context=context,
        reporter=Callbacks(warn),
    )


def inspect_corpus(
    paths: Paths,
    *,
    format: str | None = None,
    skip_bad_lines: bool = False,
    workers: int | None = None,
    ray: str | None = None,
    run_settings: RunSettings | None = None,
    warn: Callable[[str], None] = ignore,
    error: Callable[[InputError], None] | None = None,
) -> InspectResult:
    """What is in transcript files, per session (``tsum inspect``): format, turns,
    messages by role, recorded vs estimated tokens, the compactions the agent recorded.
    ``run_settings`` gives the format and workers where the arguments do not."""
    from .inspection import inspect_paths
    from .parallel.pool import backend_for

    if run_settings is not None:
        format = format or run_settings.fmt
        workers = workers or run_settings.values.get("workers")
    return inspect_paths(
        _paths(paths),
        fmt=format,
        skip_bad_lines=skip_bad_lines,
        backend=backend_for(workers, ray) if workers or ray else None,
        warn=warn,
        error=error or (lambda exc: warn(f"error: {exc.location_text()}")),
    )


def fidelity_corpus(
    paths: Paths,
    *,
    policy: str | Policy | None = None,
    as_is: bool = False,
    format: str | None = None,
    skip_bad_lines: bool = False,
    run_settings: RunSettings | None = None,
    warn: Callable[[str], None] = ignore,
) -> FidelityResult:
    """Each recorded compaction against ``policy``'s replay (None: the log's runtime's
    preset), as ``tsum fidelity`` reports it (docs/fidelity.md); ``as_is``: ``--as-is``, the
    presets not following the release and model each compaction records; ``run_settings``
    gives the format where ``format`` does not. The CLI's ``--min-agreement`` gate compares
    ``result.agreement``."""
    from .fidelity import fidelity_paths

    return fidelity_paths(
        _paths(paths),
        policy=policy,
        fmt=format or (run_settings.fmt if run_settings is not None else None),
        skip_bad_lines=skip_bad_lines,
        follow=not as_is,
        reporter=Callbacks(warn),
    )


def diff_outputs(
    old: str | Path, new: str | Path, *, context: int = DEFAULT_DIFF_CONTEXT
) -> RunDiff:
    """Compare two replay outputs (``replay_corpus(..., out=DIR)`` or ``tsum replay --out``)."""
    from .diff.compare import compare_dirs

    return compare_dirs(old, new, context=context)


def _paths(paths: Paths) -> list[str]:
    if isinstance(paths, (str, Path)):
        return [str(paths)]
    return [str(p) for p in paths]
