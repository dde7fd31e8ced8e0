"""One session's turn loop and the summary checkpoint (the seed's "step 8.5").

The engine does no I/O: when the checkpoint fires it hands out a ``SummaryRequest``;
the driver executes it however it likes (inline, a concurrent pool, the response
cache) and gives back a ``SummaryOutcome`` with ``complete_summary``. Both turn paths:

* sync: ``submit_turn`` — checkpoint at the current ``turn_index``, then +1 (step 9);
* stream: ``submit_turn_stream`` advances ``turn_index`` at once, and
  ``finalize_turn`` runs the checkpoint with ``turn_index - 1`` (saturating) for
  BOTH the debounce check and the assignment — the seed fixes only the
  assignment, and without the same correction in the check the stream path
  fires one turn early.

Records (plain dicts, ready for JSONL) accumulate in ``decisions``, ``summaries``,
``snapshots``; rendered prompts in ``prompts`` (by sha256) — unless the caller gives a
``record_sink``: each record goes there as it is made, the engine keeps none.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ..errors import TsumError
from .accounting import ESTIMATED, TurnAccounting
from .compaction import CompactionPlan
from .config import DEFAULT_PROVIDER, Checkpoint, Measure, ReplaySettings, SummaryConfig
from .formatting import MESSAGE_SEPARATOR, FormattedHistory, formatted_blocks
from .kinds import Threshold
from .messages import Message, Usage
from .policy import Policy
from .policy_engine import policy_skip, policy_threshold, seed_policy, summary_max_tokens
from .policy_slot import PolicySlot
from .prompt import PromptTemplate, template_from_config
from .records import DecisionRecord, SnapshotRecord, SummaryRecord, SummaryStatus, UnitFields
from .requests import SummaryOutcome, SummaryRequest
from .rules import Decision, UnitCounter
from .sizes import ESTIMATES, SizeModel
from .slot import ContextSlot, FocusedConfig, SessionMemory, Slot

SUMMARY_KEY = "conversation_summary"  # F5
__all__ = ["ESTIMATED", "SUMMARY_KEY", "SessionEngine"]


@dataclass(slots=True)
class _Pending:
    turn: int
    request: SummaryRequest | None
    record: DecisionRecord
    advance_after: bool  # sync path: turn_index advances after the checkpoint
    plan: CompactionPlan | None = None  # under a policy: what the summary replaces


def new_slot(settings: ReplaySettings, policy: Policy, sizes: SizeModel | None) -> Slot:
    """The slot a session runs ``policy`` in: the seed's ``ContextSlot`` where the run
    names no other policy (``settings.policy`` None: the seed's outputs, byte for byte),
    else a ``PolicySlot`` (engine/policy_slot.py: the view a policy makes)."""
    units = UnitCounter(settings.checkpoint)
    if settings.policy is None:
        return ContextSlot(
            mode=settings.mode,
            focused=FocusedConfig(keep_recent_turns=policy.keep.turns),
            marker=policy.placement.marker,
            units=units,
        )
    return PolicySlot(policy, slot_window(settings), sizes or ESTIMATES, units=units)


def slot_window(settings: ReplaySettings) -> int:
    """The window a policy's view is held to (engine/overflow.py)."""
    return (settings.summary or SummaryConfig()).max_context_tokens


@dataclass(slots=True)
class SessionEngine:
    """Replays one conversation's turns through the checkpoint."""

    session_id: str
    # N2: an engine built without a SummaryConfig never summarizes.
    settings: ReplaySettings = field(default_factory=lambda: ReplaySettings(summary=None))
    provider_name: str = DEFAULT_PROVIDER
    template: PromptTemplate | None = None
    turn_index: int = 0
    last_summary_turn: int = 0  # the seed: starts at 0
    stream_units: int = 0  # units that went through submit_turn_stream + finalize_turn
    # A policy's size model (engine/sizes.py): billed sizes where the log recorded them;
    # None: estimates (the seed's path never reads it)
    sizes: SizeModel | None = None
    # The policy the session runs: ``settings.policy``, or the seed's (engine/presets/seed.toml
    # with the SummaryConfig's values)
    policy: Policy = field(init=False)
    slot: Slot = field(init=False)
    accounting: TurnAccounting = field(init=False)  # step 5 and the measures
    _line: float | None = field(init=False)  # the trigger's line for the session's window
    memory: SessionMemory = field(default_factory=SessionMemory)
    decisions: list[DecisionRecord] = field(default_factory=list)
    summaries: list[SummaryRecord] = field(default_factory=list)
    snapshots: list[SnapshotRecord] = field(default_factory=list)
    prompts: dict[str, str] = field(default_factory=dict)
    # Where rendered prompts go: None keeps them in ``prompts``; the replay driver
    # spools them to a file instead (a long session renders thousands of them).
    prompt_sink: Callable[[str, str], None] | None = None
    # Where every record goes instead of the lists above: (kind, record) with kind
    # "decision", "summary", "snapshot" or "prompt" ({"sha256", "text"}).
    record_sink: Callable[[str, Mapping[str, Any]], None] | None = None
    _prompt_shas: set[str] = field(default_factory=set)
    # False: no summary's prompt is digested or kept (its record's "prompt_sha256" is "",
    # ``prompts`` stays empty), for a caller that reads neither and has each prompt from
    # its request (the sweep's engine path: a digest costs a pass over every prompt)
    digest_prompts: bool = True
    _pending: _Pending | None = None
    # The history's formatted blocks, kept between summaries: each message is formatted
    # once, not once per summary whose prompt shows it.
    _formatted: FormattedHistory | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cfg = self.settings.summary
        settings = self.settings
        policy = self.policy = settings.policy or seed_policy(cfg, settings)
        self.slot = new_slot(settings, policy, self.sizes)
        current = settings.measure is Measure.CURRENT
        self.accounting = TurnAccounting(self.session_id, self.slot, policy, current)
        self._line = None if cfg is None else policy_threshold(policy, cfg.max_context_tokens)
        if cfg is not None and self.template is None:
            self.template = template_from_config(cfg.summary_prompt, self.settings.template_name)

    # ---- public API (the seed's names) -------------------------------------------

    def get_conversation_summary(self) -> str | None:
        """F8: the latest summary written to SessionMemory."""
        return self.memory.get(SUMMARY_KEY)

    def load_messages(self) -> list[Message]:
        return self.slot.load_messages()

    def submit_turn(
        self, messages: list[Message], *, annotations: DecisionRecord | None = None
    ) -> SummaryRequest | None:
        """Sync path: append the turn, then the checkpoint at ``turn_index`` (step 8.5)."""
        self._ensure_idle()
        record = self.accounting.append_turn(messages, annotations)
        return self._checkpoint(self.turn_index, record, advance_after=True)

    def submit_turn_stream(
        self, messages: list[Message], *, annotations: DecisionRecord | None = None
    ) -> None:
        """Stream path, first half: the turn index advances here, before ``finalize_turn``."""
        self._ensure_idle()
        record = self.accounting.append_turn(messages, annotations)
        self.turn_index += 1
        self._pending = _Pending(self.turn_index, None, record, advance_after=False)

    def finalize_turn(self) -> SummaryRequest | None:
        """Stream path, second half: checkpoint with the corrected index ``turn_index - 1``."""
        pending = self._pending
        if pending is None or pending.request is not None:
            raise TsumError("finalize_turn() without a preceding submit_turn_stream()")
        self._pending = None
        self.stream_units += 1
        turn = max(self.turn_index - 1, 0)  # saturating_sub(1), for the check AND the assignment
        return self._checkpoint(turn, pending.record, advance_after=False)

    def complete_summary(self, outcome: SummaryOutcome) -> None:
        """Take back the result of the request the checkpoint handed out."""
        pending = self._pending
        if pending is None or pending.request is None:
            raise TsumError("complete_summary() without a pending summary request")
        self._pending = None
        self._apply_outcome(pending, outcome)

    # ---- the turn ----------------------------------------------------------------

    def _ensure_idle(self) -> None:
        if self._pending is not None:
            raise TsumError(
                "a summary request is pending: call complete_summary() / finalize_turn() first"
            )

    def _checkpoint(
        self, turn: int, record: DecisionRecord, *, advance_after: bool
    ) -> SummaryRequest | None:
        cfg = self.settings.summary
        since = turn - self.last_summary_turn
        record.update(self._index_fields(turn))
        if self.settings.checkpoint is Checkpoint.CALL:  # F6 counts calls
            record["calls_since_last_summary"] = since
        else:
            record["turns_since_last_summary"] = since
        if cfg is None:  # N2: no SummaryConfig, no checkpoint
            record["threshold"] = None
            self._finish(record, Decision.DISABLED, advance_after)
            return None
        slot, trigger, line = self.slot, self.policy.trigger, self._line
        # F2 + F6 (the seed's form of the trigger), or the policy's (engine/policy_engine.py)
        record["threshold"] = line
        count = slot.view_size()[0] if trigger.threshold is Threshold.MESSAGES else 0
        skip = policy_skip(
            trigger,
            turn,
            self.last_summary_turn,
            record["watermark"],
            line,
            count,
            not slot.messages,
        )
        if skip is not None:
            self._finish(record, skip, advance_after)
            return None
        if self.settings.dry_run:
            self.last_summary_turn = turn  # as if it succeeded: the schedule of a run where all do
            slot.assume_summary()  # its effect: a summary SUMMARY_MAX_TOKENS long
            self._finish(record, Decision.WOULD_SUMMARIZE, advance_after)
            return None
        given = slot.summary_input()
        if given is None:  # nothing to summarize, or a summary would replace nothing
            self._finish(record, Decision.SKIPPED_EMPTY, advance_after)
            return None
        request = self._request(turn, given[0], cfg)
        self._pending = _Pending(turn, request, record, advance_after, given[1])
        return request

    def _request(self, turn: int, given: Sequence[Message], cfg: SummaryConfig) -> SummaryRequest:
        """The request for the formatted newest of ``given``: the whole history (F3) is
        formatted once per message (``FormattedHistory``), any other input afresh."""
        assert self.template is not None
        if given is self.slot.messages:
            formatted = self._formatted
            if formatted is None:
                formatted = self._formatted = FormattedHistory(
                    cfg.max_tool_result_chars, cfg.max_transcript_chars
                )
            blocks, cut = formatted.formatted_blocks(given)
        else:
            caps = cfg.max_tool_result_chars, cfg.max_transcript_chars
            blocks, cut = formatted_blocks(given, *caps)
        prompt = self.template.render(
            blocks[0] if cut else MESSAGE_SEPARATOR.join(blocks),
            session_id=self.session_id,
            turn=turn,
            previous_summary=self.get_conversation_summary() or "",
        )
        return SummaryRequest(
            self.session_id,
            turn,
            prompt,
            cfg.summary_model,
            summary_max_tokens(self.policy),
            # those in the prompt (the 30K cut) and their text in it
            messages=tuple(given[len(given) - len(blocks) :]),
            max_tool_result_chars=cfg.max_tool_result_chars,
            max_transcript_chars=cfg.max_transcript_chars,
            formatted=tuple(blocks),
            formatted_cut=cut,
        )

    def _apply_outcome(self, pending: _Pending, outcome: SummaryOutcome) -> None:
        request, record, turn = pending.request, pending.record, pending.turn
        assert request is not None and self.template is not None
        sha = self._keep_prompt(request.prompt)
        response = outcome.response
        text = response.text if response is not None else ""
        summary: SummaryRecord = {
            "session": self.session_id,
            **self._index_fields(turn),
            "prompt_sha256": sha,
            "prompt_chars": len(request.prompt),
            "template": self.template.name,
            "template_sha256": self.template.sha256,
            # the provider that ran the request (a driver may fall back to another)
            "provider": outcome.provider or self.provider_name,
            "model": response.model if response is not None else request.model,
        }
        if response is None or not text.strip():
            # N3: record the failure, change nothing; the next eligible turn tries again
            summary["status"] = SummaryStatus.FAILED
            error = summary["error"] = outcome.error or "empty summary"
            summary["text"] = None
            summary["usage"] = _usage_json(response.usage) if response and response.usage else None
            self._keep("summary", summary)
            record["error"] = error
            self._finish(record, Decision.FAILED, pending.advance_after)
            return
        summary["status"] = SummaryStatus.OK
        summary["error"] = None
        summary["text"] = text
        summary["usage"] = _usage_json(response.usage) if response.usage else None
        summary.update(self.slot.apply_summary(text, pending.plan))
        self._keep("summary", summary)
        self.memory.set(SUMMARY_KEY, text)  # F5, every mode
        self.last_summary_turn = turn
        view_messages, view_tokens = self.slot.view_size()
        self._keep(
            "snapshot",
            {
                "session": self.session_id,
                **self._index_fields(turn),
                "slot": self.slot.snapshot(),
                "history_messages": len(self.slot.messages),
                "view_messages": view_messages,
                "view_tokens_estimated": view_tokens,
                "slot_saves": self.slot.saves,
            },
        )
        self._finish(record, Decision.SUMMARIZED, pending.advance_after)

    def _keep_prompt(self, prompt: str) -> str:
        """The prompt's sha256, the prompt kept by it (``prompts``, or the sinks); "" and
        nothing kept where the session digests no prompt (``digest_prompts``)."""
        if not self.digest_prompts:
            return ""
        sha = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        if self.record_sink is not None and self.prompt_sink is None:
            # Every prompt, not deduplicated: an embedded engine keeps no set of hashes.
            self.record_sink("prompt", {"sha256": sha, "text": prompt})
        elif sha not in self._prompt_shas:
            self._prompt_shas.add(sha)
            if self.prompt_sink is not None:
                self.prompt_sink(sha, prompt)
            else:
                self.prompts[sha] = prompt
        return sha

    def _index_fields(self, unit: int) -> UnitFields:
        """``turn``; with ``--checkpoint call`` also ``call``, the unit the checkpoint
        counted (``turn`` is then the person turn the call belongs to)."""
        if self.settings.checkpoint is Checkpoint.TURN:
            return {"turn": unit}
        return {"turn": max(len(self.slot.units.turn_starts) - 1, 0), "call": unit}

    def _keep(self, kind: str, record: DecisionRecord | SummaryRecord | SnapshotRecord) -> None:
        if self.record_sink is not None:
            self.record_sink(kind, record)
        elif kind == "decision":
            self.decisions.append(cast(DecisionRecord, record))
        elif kind == "summary":
            self.summaries.append(cast(SummaryRecord, record))
        else:
            self.snapshots.append(cast(SnapshotRecord, record))

    def _finish(self, record: DecisionRecord, decision: Decision, advance_after: bool) -> None:
        record["decision"] = decision
        self.slot.mark(record, self.accounting.current_context_tokens)
        self._keep("decision", record)
        if advance_after:
            self.turn_index += 1  # step 9


def _usage_json(usage: Usage) -> dict[str, int]:
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
