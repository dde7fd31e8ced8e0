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
from typing import Any, Literal, cast

from ..engine.drive import drive_conversation
from ..engine.formatting import format_message
from ..engine.messages import AssistantMessage, Conversation, Message, ToolUseBlock
from ..engine.policy_engine import _ranges as ranges
from ..engine.policy_engine import new_violations
from ..engine.policy_slot import PolicySlot
from ..engine.records import summary_ok
from ..engine.requests import SummaryOutcome, SummaryRequest
from ..engine.session import SessionEngine
from ..engine.tokens import estimate_text_tokens
from ..engine.validity import check_all
from ..providers.executor import SummaryExecutor
from .checkpoints import SummaryReplacement, tsum_replacement
from .haystack import Haystack, JoinedHaystack, MemoHaystack, PartsHaystack
from .normalize import normalize
from .probes import Probe
from .records import ProbeRow, ScoreRecord
from .score import ConversationProbes, artifact_hits, recall_of, recalled, recalled_memo
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


def view_entries(slot: Any) -> Entries:
    """The view as (history index, message), a summary message with index None: the
    policy's slot says it (``PolicySlot.view_entries``); the seed's ``ContextSlot`` view
    is matched back to its history by identity (its messages are the history's own)."""
    if isinstance(slot, PolicySlot):
        return slot.view_entries()
    where = {id(m): i for i, m in enumerate(slot.messages)}
    return [(where.get(id(m)), m) for m in slot.load_messages()]


@dataclass(slots=True)
class ActionScorer:
    """Scores each action of one replay of one conversation (module docstring)."""

    probes: ConversationProbes
    label: str
    session: str
    path: str
    max_tool_result_chars: int
    records: list[ScoreRecord] = field(default_factory=list)
    hidden: set[int] = field(default_factory=set)  # not shown verbatim by the latest view
    alive: list[Probe] = field(default_factory=list)  # survivors, carried by the view's text
    whole_view: bool = False  # also score every probe of the history (eval/view_recall.py)
    _history: dict[int, str] = field(default_factory=dict)  # index -> visible, normalized
    _shown: dict[int, tuple[Message, MemoHaystack]] = field(default_factory=dict)  # id -> the same
    _history_hay: dict[int, MemoHaystack] = field(default_factory=dict)  # index -> its haystack

    def _norm(self, index: int | None, message: Message) -> str:
        """``visible_text(message)``, normalized; once per history message (for every
        scorer of the conversation when they cut tool results alike), and once per
        summary or placeholder copy (a view shows the same copies action after action)."""
        probes = self.probes
        if index is not None and probes.messages[index] is message:
            same_cut = probes.max_tool_result_chars == self.max_tool_result_chars
            history = probes.visible if same_cut else self._history
            text = history.get(index)
            if text is None:
                text = history[index] = normalize(visible_text(message, self.max_tool_result_chars))
            return text
        return self._haystack(index, message).text

    def _haystack(self, index: int | None, message: Message) -> MemoHaystack:
        """``_norm``'s text as a haystack that keeps its word set and answers: the
        history message's (``_message_haystack``), or the summary's or copy's own."""
        if index is not None and self.probes.messages[index] is message:
            return self._message_haystack(index)
        known = self._shown.get(id(message))
        if known is None or known[0] is not message:
            text = normalize(visible_text(message, self.max_tool_result_chars))
            known = self._shown[id(message)] = (message, MemoHaystack(text))
        return known[1]

    def _message_haystack(self, index: int) -> MemoHaystack:
        """History message ``index``'s normalized visible text as a haystack that keeps
        its answers (``score.recalled_memo``): the ceiling looks for a probe in its own
        message first, at every action that removes or carries it, in every configuration
        of a grid (kept with ``ConversationProbes.visible`` when they cut tool results
        alike). ``recalled`` is a pure function of the probe and the text."""
        probes = self.probes
        same_cut = probes.max_tool_result_chars == self.max_tool_result_chars
        kept = probes.visible_haystacks if same_cut else self._history_hay
        haystack = kept.get(index)
        if haystack is None:
            text = self._norm(index, probes.messages[index])
            haystack = kept[index] = MemoHaystack(text)
        return haystack

    def score(
        self, kind: str, turn: int, entries: Entries, history_end: int, extra: ScoreRecord
    ) -> ScoreRecord:
        """The record of one action whose next view is ``entries`` (one that took nothing
        out of the view — a summary while the window still holds the whole history — has
        no probes, and its view is still checked)."""
        history = self.probes.messages
        verbatim = {i for i, m in entries if i is not None and history[i] is m}
        hidden = set(range(history_end)) - verbatim
        removed = sorted(hidden - self.hidden)
        self.hidden = hidden
        carried = self.alive if kind == SUMMARY else []
        gone = set(removed)
        added = [(i, m) for i, m in entries if (i is None and kind == SUMMARY) or i in gone]
        added_ids = {id(m) for _, m in added}
        rest = PartsHaystack([self._haystack(i, m) for i, m in entries if id(m) not in added_ids])
        added_raw = "\n\n".join(visible_text(m, self.max_tool_result_chars) for _, m in added)
        view = JoinedHaystack(rest, normalize(added_raw))
        whole, cut = self.probes.truncate_indices(removed, estimate_text_tokens(added_raw))
        cut_text = " ".join([*(self.probes.norm_block(i) for i in whole), normalize(cut)])
        truncation = JoinedHaystack(rest, cut_text.strip())
        uncompacted: list[Haystack] = []  # the whole history, built only when asked
        checked = _dedup([(p, False) for i in removed for p in self.probes.message_probes(i)])
        seen = {(p.kind, p.key) for p, _ in checked}
        checked += [(p, True) for p in carried if (p.kind, p.key) not in seen]
        rows: list[ProbeRow] = []
        counts: dict[str, dict[str, list[int]]] = {v: {} for v in POLICY_VARIANTS}
        survivors: list[Probe] = []
        for probe, was_carried in checked:
            alone = recalled(probe, rest)  # the view and the truncation hold all of rest
            hits = {
                "view": alone or recalled(probe, view),
                "truncation": alone or recalled(probe, truncation),
                "none": alone,
                "ceiling": self._in_history(probe, history_end, uncompacted),
            }
            if hits["view"]:
                survivors.append(probe)
            for variant, hit in hits.items():
                pair = counts[variant].setdefault(probe.kind, [0, 0])
                pair[0] += hit
                pair[1] += 1
            rows.append(cast(ProbeRow, probe.as_json() | {"carried": was_carried} | hits))
        self.alive = survivors if kind == SUMMARY else [*self.alive, *survivors]
        # what the compaction broke (rules the log's own history keeps), as replay and
        # sweep count it, and what the uncompacted view itself breaks (the ceiling row)
        history_view = list(self.probes.messages[:history_end])
        found = new_violations(history_view, [m for _, m in entries])
        baseline = check_all(history_view)
        record: ScoreRecord = {
            "kind": POLICY_ACTION,
            "action": kind,
            "label": self.label,
            "session": self.session,
            "path": self.path,
            "turn": turn,
            "position": sum(1 for r in self.records if r["action"] == kind) + 1,
            "removed_messages": len(removed),
            "removed": ranges(removed),
            "added_tokens": estimate_text_tokens(added_raw),
            "view_messages": len(entries),
            "violations": {api: len(lines) for api, lines in found.items()},
            "violation_rules": {api: _rule_counts(lines) for api, lines in found.items()},
            "violation_examples": {api: lines[:EXAMPLES] for api, lines in found.items()},
            "uncompacted_violations": {api: len(v) for api, v in baseline.items() if v},
            "counts": counts,
            "recall": {v: recall_of(counts[v]) for v in POLICY_VARIANTS},
            "probes": rows,
            **extra,
        }
        if self.whole_view:
            record["whole_view"] = list(
                whole_view_hits(
                    self.probes, history_end, verbatim, lambda i: self._norm(i, history[i]), view
                )
            )
        self.records.append(record)
        return record

    def _in_history(self, probe: Probe, end: int, built: list[Haystack]) -> bool:
        """Recalled by the uncompacted view (history[:end]): its own message first (a
        substring of that view, so a hit there is a hit), the whole only if not."""
        history = self.probes.messages
        own = probe.message
        if own < end and recalled_memo(probe, self._message_haystack(own)):
            return True
        if not built:
            built.append(
                Haystack(" ".join(p for i in range(end) if (p := self._norm(i, history[i]))))
            )
        return recalled(probe, built[0])


def visible_text(message: Message, max_tool_result_chars: int) -> str:
    """What the model sees of a view's message, as text: its formatted block (the
    summarizer's format, tool results cut as the probes are) and the string arguments of
    its tool calls, which that format leaves out but the probes draw commands and paths
    from (eval/probes.py)."""
    text = format_message(message, max_tool_result_chars)
    if not isinstance(message, AssistantMessage):
        return text
    args: list[str] = []
    for block in message.blocks:
        if isinstance(block, ToolUseBlock):
            value = block.input
            if isinstance(value, dict):
                args.extend(v for v in value.values() if isinstance(v, str))
            elif isinstance(value, str):
                args.append(value)
    return " ".join([text, *args]) if args else text


def _dedup(pairs: list[tuple[Probe, bool]]) -> list[tuple[Probe, bool]]:
    """Each (kind, normalized text) once, the first kept (as ``ConversationProbes.probes``)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for probe, carried in pairs:
        ident = (probe.kind, probe.key)
        if ident not in seen:
            seen.add(ident)
            out.append((probe, carried))
    return out


def _rule_counts(lines: list[str]) -> dict[str, int]:
    """Violations per rule code, from their lines (``validity.Violation.__str__``:
    ``api: message N: rule: text``)."""
    out: dict[str, int] = {}
    for line in lines:
        rule = line.split(": ", 3)[2]
        out[rule] = out.get(rule, 0) + 1
    return out


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
    failed: int = 0
    replaced: int = 0  # PolicySlot.replaced grows exactly when a pre-pass clears something
    prepass: ScoreRecord | None = None
    replacements: int = 0  # the summaries given to ``on_replacement``

    def appended(self, _n: int, _start: int, end: int) -> None:
        slot = self.engine.slot
        if isinstance(slot, PolicySlot) and len(slot.replaced) > self.replaced:
            self.replaced = len(slot.replaced)
            extra: ScoreRecord = {
                "view_tokens_after": slot.view_size()[1],
                **_uncompacted(slot, end),
            }
            self.prepass = self.scorer.score(PREPASS, -1, view_entries(slot), end, extra)

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
            "view_tokens_before": summary.get("view_tokens_before"),
            "view_tokens_after": slot.view_size()[1],
            **_uncompacted(slot, end),
            "summary": text,
            "model": summary.get("model"),
            "usage": summary.get("usage"),
            "prompt_sha256": summary.get("prompt_sha256"),
        }
        if isinstance(slot, PolicySlot):
            self.replaced = len(slot.replaced)  # a kept message's cut copy is the summary's
        self.on_record(self.scorer.score(SUMMARY, summary["turn"], view_entries(slot), end, extra))

    def after_unit(self, _n: int) -> None:
        self.flush_prepass()


async def policy_actions(
    conv: Conversation,
    engine: SessionEngine,
    executor: SummaryExecutor,
    scorer: ActionScorer,
    on_record: Callable[[ScoreRecord], None],
    on_replacement: Callable[[SummaryReplacement], None] | None = None,
) -> int:
    """Replay ``conv`` through ``engine`` (the one loop), scoring every action as it
    happens; each record goes to ``on_record`` (``on_replacement``: ``ActionHooks``').
    Returns the number of failed summaries."""
    hooks = ActionHooks(engine, scorer, on_record, on_replacement)

    async def execute(request: SummaryRequest, _left: int) -> SummaryOutcome:
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


def _uncompacted(slot: Any, end: int) -> ScoreRecord:
    return {"uncompacted_tokens": slot.token_prefix(end)[end]}
