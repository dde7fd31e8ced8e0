"""What survives a compaction action, under any policy (docs/eval.md "Policies").

A policy acts in two ways: a summary (the summarized span leaves the view, the summary
comes in) and a pre-pass (old tool results are replaced by a placeholder, no LLM call).
Both are scored the same way, so a pre-pass policy and a summarizing one stand on the
same footing:

* the probes are those of the history messages the action took out of the view — the
  messages the previous view showed verbatim and the next one does not (dropped, or
  shown as a placeholder or a cut copy); a summary also takes the previous summary out,
  so the probes that survived earlier actions are looked for again (``carried``);
* they are looked for in the NEXT view, ``slot.load_messages()`` right after the action
  (summary + kept messages + placeholders + everything else the model still sees).

Beside that ``view`` score, on the same probes: ``truncation`` (the next view with what
the action added — summary or placeholders — swapped for the first N estimated tokens
of the removed messages, N = the tokens of what it added), ``none`` (the next view with
nothing added: what the rest of the view carries alone) and ``ceiling`` (the
uncompacted view: the whole history up to the action).

Actions are observed through the one loop's callbacks (engine/drive.py): ``appended``
runs after a unit's pre-pass and before its summary is applied (the view right after
the pre-pass), ``after_summary`` after a summary was applied, ``after_unit`` once the
unit's decision record (with the pre-pass's ``"cleared"`` figures) is written. Each
action is scored at once and only its record is kept (a view is never stored). The
seed's report (``tsum eval`` without ``--policy``) rides the same callbacks and scores
its summaries on the history they replaced instead (``ActionHooks.on_replacement``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, cast

from ..engine.accounting import Measured
from ..engine.drive import drive_conversation
from ..engine.messages import Conversation, Message
from ..engine.policy_engine import _ranges as ranges
from ..engine.policy_engine import new_violations
from ..engine.records import summary_ok
from ..engine.requests import SummaryOutcome, SummaryRequest
from ..engine.session import SessionEngine
from ..engine.tokens import estimate_text_tokens
from ..engine.validity import check_all
from ..providers.executor import SummaryExecutor
from .checkpoints import SummaryReplacement, tsum_replacement
from .haystack import Haystack, MemoHaystack, ViewHaystack
from .next_view import NextView, dedup, rule_counts
from .normalize import normalize
from .probes import Probe
from .records import ProbeRow, ScoreRecord
from .score import ConversationProbes, artifact_hits, recall_of, recalled, recalled_memo
from .shown import ShownTexts, set_bits, split_view, visible_text
from .view_recall import whole_view_hits

POLICY_ACTION = "policy-action"  # the ScoreRecord kind of an action scored here
SUMMARY = "summary"
PREPASS = "prepass"
ACTIONS = (SUMMARY, PREPASS)
# the policy's next view, its two floors, and the ceiling (module docstring)
POLICY_VARIANTS: tuple[Literal["view", "truncation", "none", "ceiling"], ...] = (
    "view",
    "truncation",
    "none",
    "ceiling",
)
EXAMPLES = 3  # violation lines kept per API in a record (the counts are all there)

Entries = list[tuple[int | None, Message]]
ProbeHits = tuple[list[ProbeRow], dict[str, list[int]], list[Probe]]  # ``_probe_rows``'


@dataclass(slots=True)
class ActionScorer:
    """Scores each action of one replay of one conversation (module docstring)."""

    probes: ConversationProbes
    label: str
    session: str
    path: str
    max_tool_result_chars: int
    records: list[ScoreRecord] = field(default_factory=list)
    hidden: int = 0  # bits: the history messages the latest view does not show verbatim
    alive: list[Probe] = field(default_factory=list)  # survivors, carried by the view's text
    whole_view: bool = False  # also score every probe of the history (eval/view_recall.py)
    detail: bool = True  # False: each record holds the view's counts only (the sweep's)
    _copies: dict[int, tuple[Message, MemoHaystack]] = field(default_factory=dict)  # by id
    _texts: ShownTexts | None = None  # the history as views show it (``_history``)

    def _history(self) -> ShownTexts:
        """The conversation's history messages as views show them, at this scorer's cut:
        one for every scorer of the conversation at that cut (a grid's configurations)."""
        texts = self._texts
        if texts is None:
            texts = self._texts = self.probes.shown(self.max_tool_result_chars)
        return texts

    def _haystack(self, index: int | None, message: Message) -> MemoHaystack:
        """A view's message's normalized visible text as a haystack that keeps its
        answers: a history message's is the conversation's (``ShownTexts.haystack``), a
        summary's or copy's its own, once (a view shows the same copies action after
        action)."""
        if index is not None and self.probes.messages[index] is message:
            return self._history().haystack(index)
        known = self._copies.get(id(message))
        if known is None or known[0] is not message:
            text = normalize(visible_text(message, self.max_tool_result_chars))
            known = self._copies[id(message)] = (message, MemoHaystack(text))
        return known[1]

    def score(
        self, kind: str, turn: int, entries: Entries, history_end: int, extra: ScoreRecord
    ) -> ScoreRecord:
        """The record of one action whose next view is ``entries`` (one that took nothing
        out of the view — a summary while the window still holds the whole history — has
        no probes, and its view is still checked). Without ``detail``, the record holds
        the view's counts only, with ``extra``."""
        mask, others = split_view(self.probes.messages, entries)
        hidden = ((1 << history_end) - 1) & ~mask
        gone = hidden & ~self.hidden
        self.hidden = hidden
        removed = set_bits(gone)
        added = [(i, m) for i, m in others if (gone >> i & 1 if i is not None else kind == SUMMARY)]
        checked = self._checked(kind, removed)
        # the next view is built only to look for probes in it (or for the whole view's)
        looked = bool(checked) or self.whole_view
        added_raw = self._added_text(added) if looked or self.detail else ""
        variants: NextView | None = None
        found: ProbeHits = ([], {}, [])
        if looked:
            rest = self._rest(entries, others, mask, added)
            variants = NextView(self.probes, rest, removed, added_raw)
            found = self._probe_rows(checked, variants, history_end)
        rows, tally, survivors = found
        self.alive = survivors if kind == SUMMARY else [*self.alive, *survivors]
        record: ScoreRecord = {
            "kind": POLICY_ACTION,
            "action": kind,
            "label": self.label,
            "session": self.session,
            "path": self.path,
            "turn": turn,
        }
        if self.detail:
            record.update(self._details(kind, removed, entries, history_end, added_raw))
        counts: dict[str, dict[str, list[int]]] = {
            variant: {kind: [hits[j], hits[-1]] for kind, hits in tally.items()}
            for j, variant in enumerate(POLICY_VARIANTS if self.detail else ("view",))
        }
        record["counts"] = counts
        if self.detail:
            record["recall"] = {v: recall_of(counts[v]) for v in POLICY_VARIANTS}
            record["probes"] = rows
        record.update(extra)
        if self.whole_view and variants is not None:
            record["whole_view"] = self._whole_view(history_end, mask, variants)
        self.records.append(record)
        return record

    def _added_text(self, added: Entries) -> str:
        """What the action added (summary, placeholders, cut copies), as the model sees it."""
        return "\n\n".join(visible_text(m, self.max_tool_result_chars) for _, m in added)

    def _whole_view(self, end: int, mask: int, variants: NextView) -> list[int]:
        """Every probe of history[:end] in the next view (eval/view_recall.py)."""
        return list(
            whole_view_hits(
                self.probes,
                end,
                set(set_bits(mask)),
                lambda i: self._history().haystack(i).text,
                variants.view(),
            )
        )

    def _checked(self, kind: str, removed: list[int]) -> list[tuple[Probe, bool]]:
        """The probes of the messages the action took out of the view, then (a summary,
        which takes the previous one out) the survivors of earlier actions (``carried``)."""
        checked = dedup([(p, False) for i in removed for p in self.probes.message_probes(i)])
        if kind == SUMMARY:
            seen = {(p.kind, p.key) for p, _ in checked}
            checked += [(p, True) for p in self.alive if (p.kind, p.key) not in seen]
        return checked

    def _details(
        self, kind: str, removed: list[int], entries: Entries, end: int, added_raw: str
    ) -> ScoreRecord:
        """What the action removed and added, and what the compaction broke (rules the
        log's own history keeps), as replay and sweep count it, and what the uncompacted
        view itself breaks (the ceiling row)."""
        history_view = list(self.probes.messages[:end])
        found = new_violations(history_view, [m for _, m in entries])
        baseline = check_all(history_view, prefix=True)  # as new_violations: its answer kept
        return {
            "position": sum(1 for r in self.records if r["action"] == kind) + 1,
            "removed_messages": len(removed),
            "removed": ranges(removed),
            "added_tokens": estimate_text_tokens(added_raw),
            "view_messages": len(entries),
            "violations": {api: len(lines) for api, lines in found.items()},
            "violation_rules": {api: rule_counts(lines) for api, lines in found.items()},
            "violation_examples": {api: lines[:EXAMPLES] for api, lines in found.items()},
            "uncompacted_violations": {api: len(v) for api, v in baseline.items() if v},
        }

    def _rest(self, entries: Entries, others: Entries, mask: int, added: Entries) -> ViewHaystack:
        """The next view less what the action ``added`` (summary, placeholders, cut
        copies): its history messages (``mask``, ``split_view``) as bits, its ``others``
        as haystacks."""
        added_ids = {id(m) for _, m in added}
        extras = [self._haystack(i, m) for i, m in others if id(m) not in added_ids]
        return self._history().view(
            mask,
            extras,
            lambda: [self._haystack(i, m) for i, m in entries if id(m) not in added_ids],
        )

    def _probe_rows(
        self, checked: list[tuple[Probe, bool]], variants: NextView, end: int
    ) -> ProbeHits:
        """Each checked probe's row, its kind's hits per variant then its probes, and
        the probes the next view carries (without ``detail``: no rows, the view's hits)."""
        rows: list[ProbeRow] = []
        tally: dict[str, list[int]] = {}
        survivors: list[Probe] = []
        uncompacted: list[Haystack] = []  # the whole history, built only when asked
        detail = self.detail
        for probe, was_carried in checked:
            alone = variants.in_rest(probe)  # the view and the truncation hold all of rest
            in_view = alone or recalled(probe, variants.view())
            if in_view:
                survivors.append(probe)
            hits = tally.get(probe.kind)
            if hits is None:
                hits = tally[probe.kind] = [0, 0, 0, 0, 0] if detail else [0, 0]
            hits[0] += in_view
            hits[-1] += 1
            if detail:
                in_truncation = alone or recalled(probe, variants.truncation())
                ceiling = self._in_history(probe, end, uncompacted)
                hits[1] += in_truncation
                hits[2] += alone
                hits[3] += ceiling
                row = probe.as_json()
                row["carried"] = was_carried
                row["view"], row["truncation"] = in_view, in_truncation
                row["none"], row["ceiling"] = alone, ceiling
                rows.append(cast(ProbeRow, row))
        return rows, tally, survivors

    def _in_history(self, probe: Probe, end: int, built: list[Haystack]) -> bool:
        """Recalled by the uncompacted view (history[:end]): its own message first (a
        substring of that view, so a hit there is a hit), the whole only if not."""
        own = probe.message
        if own < end and recalled_memo(probe, self._history().haystack(own)):
            return True
        if not built:
            built.append(self._history().history(end))
        return recalled(probe, built[0])


@dataclass(slots=True)
class ActionHooks:
    """The ``drive_conversation`` callbacks that score every action of a policy (the
    seed's included) as it happens (``appended``, ``after_summary``, ``after_unit``); each record goes to
    ``on_record``. The sweep chains them with its own measures (sweep/engine_path.py).

    ``on_replacement``: the seed's report (``tsum eval`` without ``--policy``), the one
    place its summaries are scored otherwise: each successful summary that replaced
    something goes there as the history it replaced (``checkpoints.tsum_replacement``),
    for ``score.score_checkpoint`` to score its text alone, instead of being scored here
    on the next view (docs/eval.md "Floors" and "Policies")."""

    engine: SessionEngine
    scorer: ActionScorer
    on_record: Callable[[ScoreRecord], None]
    on_replacement: Callable[[SummaryReplacement], None] | None = None
    # what the views are sized through (None: the engine's slot; the seed's row under
    # --policy: its view in the log's billed sizes, engine/sized_view.py)
    sized: Measured | None = None
    failed: int = 0
    replaced: int = 0  # slot.replaced grows exactly when a pre-pass clears something
    prepass: ScoreRecord | None = None
    replacements: int = 0  # the summaries given to ``on_replacement``
    # the view's tokens when the latest summary was asked for (``view_tokens_before``)
    asked: int | None = None

    def appended(self, _n: int, _start: int, end: int) -> None:
        slot = self.engine.slot
        if len(slot.replaced) > self.replaced:
            self.replaced = len(slot.replaced)
            extra: ScoreRecord = {
                "view_tokens_after": self.view_tokens(),
                **_uncompacted(self.measured, end),
            }
            self.prepass = self.scorer.score(PREPASS, -1, slot.view_entries(), end, extra)

    @property
    def measured(self) -> Measured:
        """What the views are sized through: ``sized``, else the engine's slot."""
        return self.engine.slot if self.sized is None else self.sized

    def view_tokens(self) -> int:
        """The view's tokens now, as ``measured`` sizes them."""
        return self.measured.view_size()[1]

    def flush_prepass(self) -> None:
        """The unit's pre-pass record, once its decision record (turn, the pre-pass's
        ``"cleared"`` figures) is written: after its summary is applied, or at its end."""
        prepass, self.prepass = self.prepass, None
        if prepass is not None:
            decision = self.engine.decisions[-1]
            cleared = decision.get("cleared") or {}
            prepass["turn"] = decision["turn"]
            prepass["view_tokens_before"] = cleared.get("view_tokens_before")
            prepass["freed_tokens"] = cleared.get("freed_tokens")
            self.on_record(prepass)

    def after_summary(self, request: SummaryRequest) -> None:
        self.flush_prepass()
        engine, slot = self.engine, self.engine.slot
        summary = engine.summaries[-1]
        text = summary.get("text")
        if not summary_ok(summary) or text is None:
            self.failed += 1
            return
        if self.on_replacement is not None:
            scorer = self.scorer
            row = (scorer.label, scorer.session, scorer.path)
            cp = tsum_replacement(engine, request, row, self.replacements + 1)
            if cp is not None:
                self.replacements += 1
                self.on_replacement(cp)
            return
        end = len(slot.messages)
        extra: ScoreRecord = {
            # a policy slot's record has its own (the same figure), the seed's none
            "view_tokens_before": summary.get("view_tokens_before", self.asked),
            "view_tokens_after": self.view_tokens(),
            **_uncompacted(self.measured, end),
            "summary": text,
            "model": summary.get("model"),
            "usage": summary.get("usage"),
            "prompt_sha256": summary.get("prompt_sha256"),
        }
        self.replaced = len(slot.replaced)  # a kept message's cut copy is the summary's
        self.on_record(self.scorer.score(SUMMARY, summary["turn"], slot.view_entries(), end, extra))

    def after_unit(self, _n: int) -> None:
        self.flush_prepass()


async def policy_actions(
    conv: Conversation,
    engine: SessionEngine,
    executor: SummaryExecutor,
    scorer: ActionScorer,
    on_record: Callable[[ScoreRecord], None],
    on_replacement: Callable[[SummaryReplacement], None] | None = None,
    sized: Measured | None = None,
) -> int:
    """Replay ``conv`` through ``engine`` (the one loop), scoring every action as it
    happens; each record goes to ``on_record`` (``on_replacement``, ``sized``:
    ``ActionHooks``'). Returns the number of failed summaries."""
    hooks = ActionHooks(engine, scorer, on_record, on_replacement, sized=sized)

    async def execute(request: SummaryRequest, _left: int) -> SummaryOutcome:
        hooks.asked = hooks.view_tokens()
        return await executor.execute(request)

    await drive_conversation(
        conv,
        engine,
        execute,
        after_summary=hooks.after_summary,
        after_unit=hooks.after_unit,
        appended=hooks.appended,
    )
    return hooks.failed


SummaryFigures = tuple[int, int, int, int]  # artifact probes kept, probed; tokens freed, kept


def summary_figures(records: list[ScoreRecord], views_before: list[int]) -> list[SummaryFigures]:
    """Per summary of a run, in order (the k-th compaction is the k-th entry): its artifact
    probes kept and probed, the view tokens it freed (negative: the view grew) and those
    left after it. ``views_before``: each successful summary's view when it was asked for."""
    summaries = [r for r in records if r["action"] == SUMMARY]
    out: list[SummaryFigures] = []
    for record, before in zip(summaries, views_before, strict=False):
        after = record.get("view_tokens_after") or 0
        out.append((*artifact_hits([record], "view"), before - after, after))
    return out


def _uncompacted(measured: Measured, end: int) -> ScoreRecord:
    """The uncompacted history's tokens (the ceiling row's), in the view's size model."""
    return {"uncompacted_tokens": measured.token_prefix(end)[end]}
