"""The front door: plain synchronous functions, re-exported by the package root.

Their names differ from the modules' (``replay``, ``sweep``, ``diff``): importing a
submodule sets the package attribute of its name, which would hide a function so named.

Each works from a script, a test or a notebook, also inside a running event loop
(``run.run_sync``), and returns the library's own types. The CLI calls the same
machinery (``run.run_replay``); nothing here prints.

>>> import transcript_tools as tt
>>> result = tt.replay_corpus(["samples/long_session.jsonl"], tt.SummaryConfig(max_context_tokens=20_000))
>>> [d["turn"] for d in result.sessions[0].engine.decisions if d["decision"] == "summarized"]
[3, 6, 9, 12, 15]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._sync import run_sync
from .engine.config import Measure, ReplaySettings, SlotMode, SummaryConfig
from .engine.messages import Conversation
from .providers.base import Provider
from .replay.run import ReplayResult, run_replay

if TYPE_CHECKING:
    from .diff.changes import RunDiff
    from .sweep.driver import SweepResult


def _ignore(_message: str) -> None:
    return None


def read(
    paths: str | Path | Iterable[str | Path],
    *,
    format: str | None = None,
    skip_bad_lines: bool = False,
    warn: Callable[[str], None] = _ignore,
) -> Iterator[Conversation]:
    """The conversations in ``paths`` (files, directories, globs, ``-``), format detected
    unless ``format`` is given, streamed one at a time. A file that cannot be read raises
    ``InputError`` naming the file and line."""
    from .formats import read_input
    from .formats.inputs import expand_inputs
    from .formats.source import Source

    for item in expand_inputs(_paths(paths)):
        source = Source(item.path, skip_bad_lines=skip_bad_lines, warn=warn)
        yield from read_input(source, format, from_directory=item.from_directory)


def replay_corpus(
    paths: str | Path | Iterable[str | Path],
    config: SummaryConfig | None = None,
    *,
    settings: ReplaySettings | None = None,
    provider: str | Provider = "offline",
    model: str | None = None,
    base_url: str | None = None,
    cache: str | Path | None = None,
    out: str | Path | None = None,
    format: str | None = None,
    concurrency: int = 8,
    dry_run: bool = False,
    skip_bad_lines: bool = False,
    warn: Callable[[str], None] = _ignore,
) -> ReplayResult:
    """Replay ``paths`` through the checkpoint and return what happened.

    ``config`` is the seed's ``SummaryConfig`` (default: its defaults); ``settings``
    the rest (mode, keep_recent_turns, path, measure). ``provider`` is a name
    (``offline``, ``anthropic``, ``openai``: keys from their usual environment
    variables) or any object with the ``Provider`` protocol. With ``out`` the records
    are written as ``tsum replay --out`` writes them; without it every session's
    ``SessionResult`` is in ``result.sessions`` (its ``engine`` holds decisions,
    summaries, snapshots and the final view). Bad input does not raise: see
    ``result.status`` and ``result.stats.errors``.
    """
    if settings is None:
        settings = ReplaySettings(summary=config or SummaryConfig())
    elif config is not None:
        settings = replace(settings, summary=config)  # else settings.summary, None included (N2)
    settings = replace(settings, dry_run=dry_run or settings.dry_run)
    if model is not None and settings.summary is not None:  # as --model: the summary model
        settings = replace(settings, summary=replace(settings.summary, summary_model=model))
    options: dict[str, Any] = {"model": model, "base_url": base_url, "cache": cache}
    return run_replay(
        _paths(paths),
        settings,
        provider=provider,
        provider_options=options,
        out_dir=out,
        collect=out is None,
        fmt=format,
        skip_bad_lines=skip_bad_lines,
        concurrency=concurrency,
        warn=warn,
        error=warn,
    )


def sweep_corpus(
    paths: str | Path | Iterable[str | Path],
    *,
    ratios: Sequence[float] = (0.75,),
    max_context_tokens: Sequence[int] = (32_000,),
    debounces: Sequence[int] = (3,),
    modes: Sequence[SlotMode | str] = (SlotMode.FOCUSED,),
    measures: Sequence[Measure | str] = (Measure.CUMULATIVE,),
    base: SummaryConfig | None = None,
    format: str | None = None,
    warn: Callable[[str], None] = _ignore,
) -> SweepResult:
    """Evaluate every combination of trigger settings over a corpus (``tsum sweep``);
    summary text, where a schedule needs it, comes from the offline provider."""
    from .sweep.driver import Sweep, config_grid

    base = base or SummaryConfig()
    configs = config_grid(
        list(ratios),
        list(max_context_tokens),
        list(debounces),
        [SlotMode(m) for m in modes],
        [Measure(m) for m in measures],
        base=base,
    )
    runner = Sweep(configs, base=base, fmt=format, warn=warn, error=warn)
    listed = _paths(paths)
    return run_sync(lambda: runner.run_async(listed))


def diff_runs(old: str | Path, new: str | Path, *, context: int = 3) -> RunDiff:
    """Compare two replay outputs (``replay_corpus(..., out=DIR)`` or ``tsum replay --out``)."""
    from .diff.compare import diff_outputs, load_output

    return diff_outputs(
        load_output(Path(old)),
        load_output(Path(new)),
        old_label=str(old),
        new_label=str(new),
        context=context,
    )


def _paths(paths: str | Path | Iterable[str | Path]) -> list[str]:
    if isinstance(paths, (str, Path)):
        return [str(paths)]
    return [str(p) for p in paths]
