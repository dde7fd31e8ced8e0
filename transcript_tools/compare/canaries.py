"""``tsum compare --canaries``: every policy on a planted copy of each conversation, the
canaries' survival by round, each type's cliff, and the stale superseded value
(``eval/canaries.py`` plants and scores; this runs and pools).

Model-free: the summaries come from the offline provider, whatever the comparison's
(the planted text changes every prompt, so no cached response would match).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .._sync import run_sync
from ..engine.config import RunSettings
from ..engine.messages import Conversation
from ..engine.policy import Policy
from ..eval.canaries import (
    SEED,
    STALE,
    TYPES,
    Canary,
    CanaryProbes,
    Round,
    Survival,
    plant,
    survival,
)
from ..eval.checkpoints import compaction_message_indices
from ..eval.policy_probes import ActionScorer, policy_actions
from ..formats.corpus import CorpusReader
from ..present.table import text_table
from ..providers.executor import SummaryExecutor
from ..sweep.config import SweepConfig
from ..sweep.driver import _offline_executor, sweep_grid
from ..sweep.engine_path import engine_for
from .drift import ROUNDS, _label
from .figures import one_window

CLIFF = 0.5  # a type falls off at the first round where under half its canaries survive
ROWS = (*TYPES, STALE)


@dataclass(slots=True)
class CanaryResult:
    names: list[str]
    seed: int
    pooled: dict[str, dict[tuple[str, str], list[int]]] = field(default_factory=dict)
    planted: int = 0
    unplanted: int = 0  # conversations with fewer than two turns a person started
    mixed: int = 0  # conversations the policies would run at different windows

    def add(self, name: str, found: Survival) -> None:
        table = self.pooled.setdefault(name, {})
        for (kind, k), risk in found.at_risk.items():
            pair = table.setdefault((kind, _label(k, ROUNDS)), [0, 0])
            pair[0] += found.survived[kind, k]
            pair[1] += risk


async def _planted_run(
    conv: Conversation,
    canaries: Sequence[Canary],
    cfg: SweepConfig,
    run: RunSettings,
    executor: SummaryExecutor,
) -> list[Round]:
    """One policy on one planted conversation: each summary's record, and the end of the
    history when it was made."""
    assert run.settings.summary is not None
    base = run.settings.summary
    engine = engine_for(
        conv, cfg, base, run.template, run.settings.keep_recent_turns, "offline", run.settings.path
    )
    cut = base.max_tool_result_chars
    probes = CanaryProbes(conv.messages, cut, compaction_message_indices(conv), canaries=canaries)
    name = cfg.policy.name if cfg.policy is not None else "seed"
    scorer = ActionScorer(probes, name, conv.session_id, conv.path, cut)
    rounds: list[Round] = []
    await policy_actions(
        conv, engine, executor, scorer, lambda r: rounds.append((r, len(engine.slot.messages)))
    )
    return rounds


def canary_paths(
    paths: list[str],
    run: RunSettings,
    policies: Sequence[Policy],
    window: int | str,
    *,
    seed: int = SEED,
    fallback_window: int = 0,
) -> CanaryResult:
    """Every policy at ``window`` over a planted copy of each conversation of ``paths``
    (``fallback_window``: as the comparison's, ``compare.workflow.compare_paths``)."""
    assert run.settings.summary is not None
    base = run.settings.summary
    configs = sweep_grid(policies, [window], base=base, fallback_window=fallback_window)
    result = CanaryResult([p.name for p in policies], seed)
    reader = CorpusReader(run.fmt, run.skip_bad_lines)
    executor = _offline_executor()

    async def go() -> None:
        for conv in reader.conversations(paths):
            done = plant(conv, seed)
            if done is None:
                result.unplanted += 1
                continue
            planted, canaries = done
            own = [grid_cfg.for_conversation(planted) for grid_cfg in configs]
            if not one_window(cfg.max_context_tokens for cfg in own):
                result.mixed += 1  # left out, as the comparison leaves it out
                continue
            result.planted += 1
            for name, cfg in zip(result.names, own, strict=True):
                rounds = await _planted_run(planted, canaries, cfg, run, executor)
                result.add(name, survival(rounds, canaries))
        await executor.aclose()

    run_sync(go)
    return result


def _cell(pair: list[int] | None) -> str:
    return "-" if pair is None else f"{pair[0] / pair[1]:.0%} ({pair[1]})"


def cliff(table: dict[tuple[str, str], list[int]], kind: str, labels: Sequence[str]) -> str:
    """The first round where under ``CLIFF`` of the type's canaries at risk survive."""
    for label in labels:
        pair = table.get((kind, label))
        if pair is not None and pair[0] < CLIFF * pair[1]:
            return label
    return "-"


def round_labels(tables: Sequence[dict[tuple[str, str], list[int]]]) -> list[str]:
    """The rounds ("1", "2", ..., "5+") any of ``tables`` has, in order."""
    found = {label for table in tables for _, label in table}
    return sorted(found, key=lambda text: int(text.rstrip("+")))


def render_canaries(result: CanaryResult) -> str:
    labels = round_labels(list(result.pooled.values()))
    lines = [
        f"planted canaries: {len(TYPES)} typed facts in a copy of each of {result.planted} "
        f"conversation(s) (seed {result.seed}; {result.unplanted} with fewer than two turns "
        f"a person started, {result.mixed} at no one window: left out); summaries of the "
        "offline provider, not a model",
        "survival: share of the canaries still in the view after the k-th compaction, of those "
        "taken out of the verbatim view by then (n at risk); cliff: the first round under "
        f"{CLIFF:.0%}; stale: the superseded value still in the view after its update",
    ]
    rows = [("policy", "type", *(f"k={label}" for label in labels), "cliff")]
    for name in result.names:
        table = result.pooled.get(name, {})
        for kind in ROWS:
            cells = [_cell(table.get((kind, label))) for label in labels]
            if any(cell != "-" for cell in cells):
                # a stale value falling off is good news: no cliff
                fell = "-" if kind == STALE else cliff(table, kind, labels)
                rows.append((name, kind, *cells, fell))
    lines += text_table(rows, (0, 1))
    if len(rows) == 1:
        lines.append("  (no canary was taken out of a view: no policy summarized past one)")
    return "\n".join(lines) + "\n"
