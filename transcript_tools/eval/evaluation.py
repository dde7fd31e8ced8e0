"""``tsum eval`` as a library call: every action of a corpus, per variant, scored.

A variant is one template (and provider/model, and with ``--policy`` one policy) to
compare. Each conversation is read once; its probes are extracted once and shared by
every variant and every action (``ConversationProbes``). Every variant runs through the
same drive (``policy_probes.policy_actions``); the scored records go to
``on_checkpoint`` as they are made (the CLI writes them to JSONL) and into their row's
``Aggregate``; only the first few are kept whole, for the HTML page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any

from ..engine.config import DEFAULT_PROVIDER, ReplaySettings, SlotMode
from ..engine.drive import session_window
from ..engine.messages import Conversation
from ..engine.prompt import PromptTemplate
from ..engine.seed_defaults import DEFAULT_MAX_TOOL_RESULT_CHARS
from ..engine.session import SessionEngine
from ..engine.sized_view import measuring
from ..errors import ConfigError
from ..formats.corpus import CorpusReader
from ..providers.executor import SummaryExecutor
from ..replay.sizes import log_sizes, policy_sizes
from ..reporter import LOGGED, Reporter
from .aggregate import Aggregate
from .artifacts import ARTIFACT_KINDS
from .checkpoints import (
    SummaryReplacement,
    compaction_message_indices,
    recorded_checkpoints,
    score_record,
)
from .person_fates import fate_records, fate_totals
from .policy_probes import POLICY_ACTION, ActionScorer, policy_actions
from .probes import EXTRACTOR_VERSION
from .records import ScoreRecord
from .score import ConversationProbes

KEEP_WHOLE = 20  # scored checkpoints kept with their texts, for the HTML page


@dataclass(slots=True)
class Variant:
    """One column of the comparison: a template through a provider (and model)."""

    label: str
    template: PromptTemplate
    settings: ReplaySettings
    executor: SummaryExecutor
    provider_name: str = DEFAULT_PROVIDER


@dataclass(slots=True)
class EvalResult:
    labels: list[str]  # the rows of the summaries' table: variants, recorded compactions
    aggregates: dict[str, Aggregate]  # every row: those and (``--policy``) the policies
    files: int = 0
    sessions: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: dict[str, int] = field(default_factory=dict)
    # the first records of each way of scoring whole, for HTML (a summary with the text
    # it replaced, ``replaced_text``)
    kept: list[dict[str, Any]] = field(default_factory=list)
    # every variant wrote the same text at every shared checkpoint
    identical_summaries: bool | None = None
    extractor_version: int = EXTRACTOR_VERSION
    judged: dict[str, Any] | None = None
    # ``--person-fates``: each recorded compaction's person-message fates (None: not asked)
    person_fates: list[dict[str, Any]] | None = None

    @property
    def policies(self) -> dict[str, Aggregate]:
        """``--policy``: each policy's row, its actions scored on the next view."""
        return {label: agg for label, agg in self.aggregates.items() if agg.on_view}

    def keeps(self, record: ScoreRecord) -> bool:
        """Is ``record`` among the first ``KEEP_WHOLE`` of its way of scoring?"""
        on_view = record["kind"] == POLICY_ACTION
        return sum((r["kind"] == POLICY_ACTION) == on_view for r in self.kept) < KEEP_WHOLE

    def as_json(self) -> dict[str, Any]:
        policies = self.policies
        out = {
            "extractor_version": self.extractor_version,
            "files": self.files,
            "sessions": self.sessions,
            "errors": self.errors,
            "notes": self.notes,
            "failed_summaries": self.failed,
            "identical_summaries": self.identical_summaries,
            "variants": {label: self.aggregates[label].as_json() for label in self.labels},
            "judged": self.judged,
        }
        if policies:
            out["policies"] = {label: agg.as_json() for label, agg in policies.items()}
        if self.person_fates is not None:
            out["recorded_person_fates"] = {
                "totals": fate_totals(self.person_fates),
                "compactions": self.person_fates,
            }
        return out


def retained_recall(record: ScoreRecord, view_tokens: int) -> ScoreRecord:
    """The artifact probes the next view still carries (in the summary or the kept
    turns) per 1,000 of its estimated tokens: the figure of NousResearch/hermes-agent's
    compaction eval (recall at retained tokens), docs/cost.md."""
    kept = sum(
        1
        for probe in record["probes"]
        if probe["kind"] in ARTIFACT_KINDS and (probe["summary"] or probe["in_kept"])
    )
    return {
        "retained_probes": kept,
        "next_view_tokens": view_tokens,
        "recall_per_1k_retained_tokens": round(kept / view_tokens * 1000, 4),
    }


@dataclass
class Evaluation:
    """Runs the variants over a corpus (``run``), feeding records to ``on_checkpoint``."""

    variants: list[Variant]
    fmt: str | None = None
    skip_bad_lines: bool = False
    # warnings, errors, progress (each session, with its file's path); never stdout
    reporter: Reporter = LOGGED
    on_checkpoint: Callable[[ScoreRecord], None] | None = None
    judge: Any = None  # eval.judge.Judge, or None
    cost: bool = False  # --cost: each tsum checkpoint's recall per 1,000 retained tokens
    # ``--policy``: score every action of each variant's policy on what it took out of
    # the view (eval/policy_probes.py) instead of each summary on what it replaced
    policy_mode: bool = False
    # the tool-result cut probes are drawn with, the same for every policy (a policy's
    # own summarizer cap may be none at all); None: the first variant's
    probe_tool_result_chars: int | None = None
    # ``--person-fates``: score each recorded compaction on the person's earlier messages
    person_fates: bool = False

    def run(self, paths: list[str]) -> EvalResult:
        from .._sync import run_sync  # also inside a running event loop (Jupyter)

        return run_sync(lambda: self.run_async(paths))

    async def run_async(self, paths: list[str]) -> EvalResult:
        for v in self.variants:
            if v.settings.mode is not SlotMode.FOCUSED:
                raise ConfigError(
                    "tsum eval needs --mode focused: in full mode a summary replaces nothing"
                )
        labels = [v.label for v in self.variants]
        rows = {label: Aggregate(on_view=self.policy_mode) for label in labels}
        result = EvalResult([] if self.policy_mode else list(labels), rows)
        result.failed = {label: 0 for label in labels}
        reader = CorpusReader(self.fmt, self.skip_bad_lines, self.reporter, own_warnings=True)
        result.person_fates = [] if self.person_fates else None
        same: list[bool] = []
        try:
            for conv in reader.conversations(paths):
                result.sessions += 1
                await self._one(conv, result, same)
                self.reporter.session(conv.path)
        finally:
            for v in self.variants:
                await v.executor.aclose()
            if self.judge is not None:
                await self.judge.executor.aclose()
        result.files = reader.stats.files
        result.errors = list(reader.stats.errors)
        if len(self.variants) > 1 and same:
            result.identical_summaries = all(same)
        if self.judge is not None:
            result.judged = self.judge.summary()
        return result

    async def _one(self, conv: Conversation, result: EvalResult, same: list[bool]) -> None:
        cfg = self.variants[0].settings.summary
        max_tool = cfg.max_tool_result_chars if cfg is not None else DEFAULT_MAX_TOOL_RESULT_CHARS
        if self.probe_tool_result_chars is not None:
            max_tool = self.probe_tool_result_chars
        probes = ConversationProbes(conv.messages, max_tool, compaction_message_indices(conv))
        by_turn: dict[int, set[str]] = {}
        billed = cache(partial(log_sizes, conv))  # the log's size model, read once
        for v in self.variants:
            settings, _ = session_window(conv, v.settings)  # --max-context-tokens auto
            engine = SessionEngine(
                conv.session_id,
                settings,
                provider_name=v.provider_name,
                template=v.template,
                # a policy measures in billed tokens
                sizes=policy_sizes(conv, settings, lambda _conv: billed()),
            )
            scorer = ActionScorer(probes, v.label, conv.session_id, conv.path, max_tool)
            replaced: list[SummaryReplacement] = []  # the seed's report (no --policy)
            # --policy: every row's views in the log's billed sizes, the seed's too (its
            # schedule its own: engine/sized_view.py); without, the seed's, byte for byte
            sized = measuring(engine, billed() if self.policy_mode else None)[0]
            result.failed[v.label] += await policy_actions(
                conv,
                engine,
                v.executor,
                scorer,
                partial(self._add, result, v.label),
                None if self.policy_mode else replaced.append,
                sized,
            )
            for cp in replaced:
                by_turn.setdefault(cp.turn, set()).add(cp.summary)
                await self._emit(cp, probes, result, v.label)
        same.extend(len(texts) == 1 for texts in by_turn.values())
        if result.person_fates is not None:
            result.person_fates.extend(fate_records(conv))
        recorded, notes = recorded_checkpoints(conv, probes.turn_of)
        result.notes.extend(notes)
        for cp in recorded:
            result.aggregates.setdefault(cp.label, Aggregate())
            if cp.label not in result.labels:
                result.labels.append(cp.label)
            await self._emit(cp, probes, result, cp.label)

    def _add(
        self,
        result: EvalResult,
        label: str,
        record: ScoreRecord,
        whole: Callable[[], dict[str, Any]] = dict,
    ) -> None:
        """Every scored record's way: into its row, the first few kept whole (with what
        ``whole`` adds) for the HTML page, then to ``on_checkpoint``."""
        result.aggregates[label].add(record)
        if result.keeps(record):
            result.kept.append({**record, **whole()})
        if self.on_checkpoint is not None:
            self.on_checkpoint(record)

    async def _emit(
        self, cp: SummaryReplacement, probes: ConversationProbes, result: EvalResult, label: str
    ) -> None:
        record = score_record(cp, probes)
        if self.cost and cp.view_tokens:
            record.update(retained_recall(record, cp.view_tokens))
        if self.judge is not None:
            record["judged"] = await self.judge.judge(cp, probes)
        self._add(
            result,
            label,
            record,
            lambda: {"replaced_text": [(i, probes.block(i)) for i in range(*cp.replaced)]},
        )
