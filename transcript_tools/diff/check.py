"""``tsum check`` as a library call: replay a corpus and diff it against a baseline.

The steps, in the order that fails cheapest first: load the baseline (before paying for a
replay), seed the response cache with its summaries (an unchanged prompt reproduces for
free), replay into a fresh directory, name the responses ``--cache-only`` missed, diff,
run eval's recall gate (docs/eval.md) and, with ``max_cost_increase``, the cost gate
(``cost.gate``, docs/cost.md), and with ``update`` bless the fresh outputs.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cost.gate import COST_FILE, compare_costs, read_costs
from ..cost.prices import Pricer, pricer_for
from ..engine.config import DEFAULT_DIFF_CONTEXT, DEFAULT_MAX_DROP, RunSettings
from ..engine.records import summary_ok
from ..errors import ConfigError, TsumError, error_line
from ..providers.cache import CacheMode
from ..providers.factory import build_executor
from ..replay.run import ReplayResult, RunStatus, replay_paths
from ..reporter import QUIET, Reporter
from ..writable import check_output_dir
from .baseline import cache_only_message, cache_only_misses, seed_cache, update_baseline
from .changes import RunDiff
from .compare import ReplayOutput, diff_outputs, load_output
from .render import verdict_line

# (paths, out, the pricer: with the cost gate the replay is priced, as replay --cost)
Replay = Callable[[list[str], Path, Pricer | None], ReplayResult]


@dataclass(slots=True)
class CheckResult:
    """What a check found. ``diff`` is None when a new baseline was written (``update``
    with none before); ``scores`` is the recall gate's comparison (None: nothing scored)."""

    diff: RunDiff | None
    scores: Any = None  # eval.baseline.Comparison
    costs: Any = None  # cost.gate.CostComparison (--max-cost-increase), or None
    updated: str | None = None  # with update: how the baseline changed, for the end line
    max_drop: float = DEFAULT_MAX_DROP  # the gates' thresholds (None: the cost gate not asked)
    max_cost_increase: float | None = None

    @property
    def gates(self) -> list[Any]:
        """The gates that ran (recall, then cost): each has ``failed`` and ``lines``."""
        return [g for g in (self.scores, self.costs) if g is not None]

    def gates_json(self) -> list[dict[str, Any]]:
        """Both gates, as ``tsum check --json`` adds them (key ``gates``): whether each
        was evaluated, its threshold, the figures compared, failed or not, its lines."""
        recall, cost = self.scores, self.costs
        return [
            _gate_json(
                "recall",
                {"max_drop": self.max_drop},
                recall,
                (recall.old_recall, recall.new_recall) if recall is not None else (None, None),
            ),
            _gate_json(
                "cost",
                None
                if self.max_cost_increase is None
                else {"max_increase": self.max_cost_increase},
                cost,
                (cost.old_usd, cost.new_usd) if cost is not None else (None, None),
            ),
        ]

    @property
    def gate_failed(self) -> bool:
        return any(g.failed for g in self.gates)

    @property
    def failed(self) -> bool:
        """Differences, or a recall drop or cost rise past its gate on identical outputs."""
        if self.updated is not None:
            return False
        return self.diff is None or not self.diff.identical or self.gate_failed


def _gate_json(
    name: str, threshold: dict[str, float] | None, gate: Any, figures: tuple[Any, Any]
) -> dict[str, Any]:
    """One gate: ``evaluated`` is False where it did not run (not asked, nothing scored)
    or compared nothing (then its lines say why)."""
    baseline, run = figures
    return {
        "name": name,
        "evaluated": gate is not None and baseline is not None and run is not None,
        "threshold": threshold,
        "baseline": baseline,
        "run": run,
        "failed": bool(gate is not None and gate.failed),
        "lines": list(gate.lines) if gate is not None else [],
    }


class ReplayFailed(TsumError):
    """The replay inside check could not run (its errors were already reported)."""


def check_corpus(
    paths: list[str],
    baseline_dir: Path,
    run: RunSettings,
    *,
    update: bool = False,
    out_dir: Path | None = None,
    max_drop: float = DEFAULT_MAX_DROP,
    max_cost_increase: float | None = None,
    context: int = DEFAULT_DIFF_CONTEXT,
    replay: Replay | None = None,
    reporter: Reporter = QUIET,
    on_update_diff: Callable[[RunDiff], None] | None = None,
    update_command: str = "tsum check ... --update",
    record_command: str = "tsum check ... (without --cache-only)",
) -> CheckResult:
    """Replay ``paths`` with ``run``'s settings and compare with ``baseline_dir``.

    ``replay(paths, out, pricer)`` runs the replay (default: ``replay.run.replay_paths``,
    quiet), priced when ``max_cost_increase`` is given (a cost rise beyond that share of
    the baseline's ``costs.jsonl`` fails like a recall drop; prices: --price-per-mtok,
    else genai-prices);
    ``reporter`` gets the informational lines (``say``) and the replay's fatal one;
    ``on_update_diff`` sees the diff before ``update`` rewrites the baseline. Raises
    ``TsumError`` when nothing could be compared (``update_command`` /
    ``record_command`` are quoted in the message as the command that fixes it)."""
    _check_destinations(baseline_dir, out_dir, update)  # before paying for a replay
    if replay is None:

        def replay(listed: list[str], out: Path, cost: Pricer | None) -> ReplayResult:
            return replay_paths(listed, run, out_dir=out, cost=cost)

    pricer = pricer_for(max_cost_increase is not None, None, run.provider.get("price_per_mtok"))

    if max_cost_increase is not None and not update and baseline_dir.is_dir():
        if read_costs(baseline_dir) is None:  # fail closed, and before paying for a replay
            raise TsumError(
                f"--max-cost-increase: {baseline_dir} has no {COST_FILE} to compare the "
                f"cost with; bless one with: {update_command}"
            )
    baseline = _load_baseline(baseline_dir, update, update_command, reporter)
    if baseline is not None and (seeded := _seed(baseline, run)):
        reporter.say(f"tsum: {seeded} summary response(s) taken from the baseline into the cache")

    with tempfile.TemporaryDirectory(prefix="tsum-check-") as tmp:
        fresh_dir = out_dir if out_dir is not None else Path(tmp) / "fresh"
        replay_error = _replayed(replay(list(paths), fresh_dir, pricer), reporter)
        missing = cache_only_misses(fresh_dir) if run.provider.get("cache_only") else []
        fresh = None
        if replay_error is None or missing:
            try:
                fresh = load_output(fresh_dir)
            except TsumError:
                if replay_error is None:
                    raise
        diff = None
        if baseline is not None and fresh is not None:
            diff = diff_outputs(
                baseline, fresh, old_label=str(baseline_dir), new_label="this run", context=context
            )
        if missing:
            raise TsumError(cache_only_message(missing, diff, record_command))
        if replay_error is not None:
            raise replay_error
        assert fresh is not None
        scores = _gate(
            list(paths),
            fresh_dir,
            baseline_dir if baseline else None,
            run,
            max_drop,
            update,
            reporter,
            out_dir or (baseline_dir if update else None),  # where the fresh eval.json stays
        )
        if not update:
            assert diff is not None
            costs = _cost_gate(baseline_dir, fresh_dir, max_cost_increase)
            return CheckResult(diff, scores, costs, None, max_drop, max_cost_increase)
        _bless(fresh, fresh_dir, baseline_dir, diff, on_update_diff)
        return CheckResult(diff, scores, updated=_updated_line(baseline_dir, diff))


def _gate(
    paths: list[str],
    fresh_dir: Path,
    baseline_dir: Path | None,
    run: RunSettings,
    max_drop: float,
    update: bool,
    reporter: Reporter,
    kept_in: Path | None = None,
) -> Any:  # eval.baseline.Comparison | None
    """tsum eval's recall gate (docs/eval.md) of the fresh replay against the baseline's
    stored scores; with ``update``, torn stored scores are replaced instead of failing.
    ``kept_in``: the folder the fresh scores are kept in (None: a temporary one)."""
    from ..eval.baseline import SCORES_FILE, gate

    scores_at = str(kept_in / SCORES_FILE) if kept_in is not None else None
    read = functools.partial(gate, fmt=run.fmt, skip_bad_lines=run.skip_bad_lines)  # as replayed
    try:
        return read(paths, fresh_dir, baseline_dir, max_drop=max_drop, scores_at=scores_at)
    except TsumError as exc:  # the baseline's stored scores are torn
        if not update:
            raise
        reporter.say(f"tsum: warning: baseline scores unreadable, they will be replaced: {exc}")
        return read(paths, fresh_dir, None, max_drop=max_drop)


def _cost_gate(baseline_dir: Path, fresh_dir: Path, max_increase: float | None) -> Any:
    """--max-cost-increase's gate (``cost.gate``); None where it was not asked."""
    if max_increase is None:
        return None
    return compare_costs(read_costs(baseline_dir), read_costs(fresh_dir) or {}, max_increase)


def _check_destinations(baseline_dir: Path, out_dir: Path | None, update: bool) -> None:
    """Refuse an --out that is the baseline, and unwritable destinations, before any work."""
    if out_dir is not None and out_dir.resolve() == baseline_dir.resolve():
        raise ConfigError(
            "--out must not be the --baseline directory (use --update to rewrite the baseline)"
        )
    if out_dir is not None:
        check_output_dir(out_dir, "--out")
    if update:
        if baseline_dir.name in ("", ".."):  # "", ".", "..", "/": no folder to rename into place
            raise ConfigError(
                f"--baseline {baseline_dir}: --update writes the baseline as a folder of its own "
                "(e.g. --baseline tsum-baseline), not the current or a parent folder"
            )
        check_output_dir(baseline_dir.parent, "--baseline")  # renamed into place there


def _load_baseline(
    baseline_dir: Path, update: bool, update_command: str, reporter: Reporter
) -> ReplayOutput | None:
    """The baseline, read before paying for a replay; None where ``update`` writes a new one
    (a missing or unreadable baseline fails the check, naming ``update_command``)."""
    if not baseline_dir.exists() and update:
        return None
    try:
        return load_output(baseline_dir)
    except TsumError as exc:
        if not update:
            raise TsumError(
                f"baseline: {exc}\n(create or rewrite it with: {update_command})"
            ) from None
        reporter.say(f"tsum: warning: baseline unreadable, it will be replaced: {exc}")
        return None


def _updated_line(baseline_dir: Path, diff: RunDiff | None) -> str:
    if diff is None:
        what = "written (new baseline)"
    elif diff.identical:
        what = "rewritten (no differences)"
    else:
        what = "updated (" + verdict_line(diff).removeprefix("tsum: ") + ")"
    return f"tsum: baseline {baseline_dir} {what}"


def _bless(
    fresh: ReplayOutput,
    fresh_dir: Path,
    baseline_dir: Path,
    diff: RunDiff | None,
    on_update_diff: Callable[[RunDiff], None] | None,
) -> None:
    """The fresh outputs become the baseline; never a run with failed summary calls."""
    failed = sum(
        1 for r in fresh.sessions.values() for s in r.summaries.values() if not summary_ok(s)
    )
    if failed:
        raise TsumError(
            f"--update refused: {failed} summary call(s) failed in this run "
            "(see summaries.jsonl); a baseline must not record failures"
        )
    if diff is not None and on_update_diff is not None:
        on_update_diff(diff)
    update_baseline(fresh_dir, baseline_dir)  # with the gates' stored figures (GATE_FILES)


def _replayed(result: ReplayResult, reporter: Reporter) -> TsumError | None:
    """The replay's failure, if any (bad input was already reported line by line)."""
    if result.status is RunStatus.OK:
        return None
    if (fatal := result.could_not_run()) is not None:
        return fatal
    if result.status is RunStatus.NO_SESSIONS:
        reporter.error(error_line(str(result.message)))
    return ReplayFailed(
        "the replay failed (see above): nothing compared, the baseline is unchanged"
    )


def _seed(baseline: ReplayOutput, run: RunSettings) -> int:
    """The baseline's summaries into the cache this run reads (none: no cache, or --refresh)."""
    executor = build_executor(run.provider)
    try:
        if executor.cache is None or executor.cache_mode is CacheMode.REFRESH:
            return 0
        return seed_cache(baseline, executor.cache, executor.provider)
    finally:
        executor.close()
