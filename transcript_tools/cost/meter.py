"""The cost of a replayed conversation as the policy would have made it.

Attach a :class:`CostMeter` to ``engine/drive.drive_conversation``: its ``appended``
hook reads, for each model call of the unit just appended, the prompt the engine's
current state gives that call (``engine.slot.load_messages(upto=i)``: any policy's
view goes through it), and ``execute`` wraps the summary executor to count each
summarizer call. A call whose prompt is still the whole history is the original call:
its recorded usage is used where the log has it. Every other call is modeled
(:mod:`model`) on sizes calibrated against the recording (:mod:`sizes`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..engine.messages import AssistantMessage, Conversation, Message
from ..engine.requests import SummaryOutcome, SummaryRequest
from ..engine.rules import is_model_call
from ..engine.tokens import MESSAGE_OVERHEAD_TOKENS, estimate_message_tokens
from .breakpoints import placement_for
from .cache_rules import rules_for
from .model import RunCost, modeled_call
from .original import (
    bill_json,
    model_error,
    off_chain_run,
    one_hour_shares,
    reconstructed_run,
    recorded_breaks,
    recorded_run,
)
from .overflow import run_price
from .prices import Pricer
from .records import CostRecord
from .sizes import Sizes, calibrate
from .tokens import CallTokens

Execute = Callable[[SummaryRequest, int], Awaitable[SummaryOutcome]]


class _Slot(Protocol):
    def load_messages(self, upto: int | None = None) -> list[Message]: ...


class _Engine(Protocol):
    @property
    def slot(self) -> _Slot: ...


def _whole_history(view: list[Message], history: list[Message], end: int) -> bool:
    return len(view) == end and all(a is b for a, b in zip(view, history, strict=False))


@dataclass(slots=True)
class CostMeter:
    conv: Conversation
    engine: _Engine
    pricer: Pricer
    sizes: Sizes = field(init=False)
    run: RunCost = field(default_factory=RunCost)
    _previous: list[Message] | None = None
    _previous_end: int = 0
    _model: str | None = None
    _breaks: dict[int, int] = field(default_factory=dict)
    _one_hour: dict[int, float] = field(default_factory=dict)
    _runtime: str | None = None  # the policy's runtime: it places the cache breakpoints
    _previous_prompt: int | None = None

    def __post_init__(self) -> None:
        policy = getattr(self.engine.slot, "policy", None)  # the seed's slot has none
        self._runtime = None if policy is None else str(policy.runtime)
        self.sizes = calibrate(self.conv)
        self._breaks = recorded_breaks(self.conv)
        self._one_hour = one_hour_shares(self.conv)

    def appended(self, _number: int, start: int, end: int) -> None:
        history = self.conv.messages
        for i in range(start, end):
            message = history[i]
            if not is_model_call(message):
                continue
            assert isinstance(message, AssistantMessage)
            self._model = message.model or self._model
            view = self.engine.slot.load_messages(upto=i)
            usage = message.usage
            if usage is not None and _whole_history(view, history, i):
                tokens = CallTokens.recorded(usage)
                self.run.add(self.pricer, message.model, tokens, at=i)
            else:
                output = (
                    usage.output_tokens if usage is not None else estimate_message_tokens(message)
                )
                kept = {id(m) for m in view}
                new = round(
                    sum(self.sizes.of(m) for m in history[self._previous_end : i] if id(m) in kept)
                )
                rules = rules_for(message.model)
                tokens, broken = modeled_call(
                    self._previous,
                    view,
                    self.sizes,
                    rules,
                    output=output,
                    new_tokens=new if self._previous is not None else None,
                    survived=self._breaks.get(i),
                    previous_prompt=self._previous_prompt,
                    breakpoints=placement_for(rules.provider, self._runtime, self.conv.format),
                )
                tokens = tokens.with_one_hour_share(self._one_hour[i])
                window = self.conv.context_window or self.pricer.context_window(message.model)
                self.run.add(
                    self.pricer,
                    message.model,
                    tokens,
                    broken=broken,
                    at=i,
                    modeled=True,
                    over_window=window is not None and tokens.prompt > window,
                )
            self._previous, self._previous_end = view, i
            self._previous_prompt = tokens.prompt

    def execute(self, inner: Execute) -> Execute:
        """``inner`` with every summarizer call it makes priced (fresh input: a summary
        prompt is new text each time)."""

        async def counted(request: SummaryRequest, left: int) -> SummaryOutcome:
            outcome = await inner(request, left)
            self.summarized(request, outcome)
            return outcome

        return counted

    def summarized(self, request: SummaryRequest, outcome: SummaryOutcome) -> None:
        response = outcome.response
        if response is None and not outcome.attempts:
            return  # nothing was sent (a cached response counts: a deployment pays for it)
        if response is not None and response.usage is not None:
            tokens = CallTokens(response.usage.input_tokens, 0, 0, response.usage.output_tokens)
        else:
            prompt = MESSAGE_OVERHEAD_TOKENS + round(self.sizes.of_text(request.prompt))
            text = response.text if response is not None else ""
            tokens = CallTokens(prompt, 0, 0, round(self.sizes.of_text(text)))
        model = request.model or (response.model if response is not None else None)
        if self.pricer.quote(model, tokens) is None:
            model = self._model  # a model no price list knows (the offline one): the agent's
        self.run.add(self.pricer, model, tokens, summarizer=True)

    def record(self, views_over: int = 0) -> CostRecord:
        """The session's cost record: the policy's run, the original as recorded, the
        difference, and the model's own error on the original. ``views_over``: the
        checkpoints the policy left over the window; a run that overflowed is counted,
        not priced (cost/overflow.py)."""
        original = recorded_run(self.conv, self.pricer)
        price = run_price(self.run, views_over)
        # every record has every key (null where it has no figure): a script reads any line alike
        out: CostRecord = {
            "policy": self.run.to_json(),
            "original": original.to_json(),
            "overflow": price.overflow,
            "billed": None,
            "delta_of_bill": None,
            "outcome": None,
            "model_error": None,
            "delta_usd_same_model": None,
        }
        if price.overflow:
            out["policy"]["usd"] = None
        policy_usd, original_usd = price.usd, original.usd
        out["delta_usd"] = (
            None
            if policy_usd is None or original_usd is None or not original.calls
            else round(policy_usd - original_usd, 6)
        )
        bill = bill_json(original, off_chain_run(self.conv, self.pricer), self.conv)
        if bill is not None and original.calls:
            out["billed"] = bill
            delta = out["delta_usd"]
            out["delta_of_bill"] = (
                None if delta is None or not bill["usd"] else round(delta / bill["usd"], 4)
            )
        if self.conv.outcome is not None:  # the original run's, beside what it cost
            out["outcome"] = self.conv.outcome
        if original.calls:
            rebuilt = reconstructed_run(self.conv, self.sizes, self.pricer)
            carried = reconstructed_run(self.conv, self.sizes, self.pricer, carry_breaks=True)
            out["model_error"] = model_error(original, rebuilt, carried)
            same = None if price.overflow else self.run.same_model_delta(carried)
            out["delta_usd_same_model"] = None if same is None else round(same, 6)
        return out


def cost_line(record: CostRecord) -> str:
    """The replay report's words for a session's cost record."""
    policy, original = record["policy"], record["original"]
    t = policy["tokens"]

    def usd(value: float | None) -> str:
        return "unpriced" if value is None else f"${value:.4f}"

    head = "not priced (overflow)" if record.get("overflow") else usd(policy["usd"])
    words = (
        f"cost {head}: {t['cache_read']:,} cache read, {t['cache_write']:,} "
        f"cache write, {t['fresh']:,} fresh, {t['output']:,} output tokens"
        f"; summarizer {usd(policy['summarizer_usd'])}, cache breaks {usd(policy['cache_break_usd'])}"
    )
    if record.get("delta_usd") is not None:
        checked = record.get("model_error") or {}
        error = checked.get("usd")
        bar = "" if error is None else f", model error on the original {error:+.1%}"
        if not checked.get("cache_recorded", True):
            bar = ", the log records no cache use: the model's split is unchecked"
        same = record.get("delta_usd_same_model")
        same_words = "" if same is None else f", same-model Δ {same:+.4f}"
        words += (
            f"; original run {usd(original['usd'])} (Δ {record['delta_usd']:+.4f}{same_words}{bar})"
        )
    if record.get("overflow"):
        over_calls = policy["overflow_calls"]
        where = (
            f"{over_calls} modeled call(s) over the model's window (up to "
            f"{policy['overflow_max_prompt']:,} tokens)"
            if over_calls
            else "the policy left the view over its window"
        )
        words += f"; overflow: {where}, a run no agent could have made, left out of every total"
    bill = record.get("billed")
    if bill is not None and bill["off_chain_calls"]:
        calls = ", ".join(f"{n} {kind}" for kind, n in bill["off_chain_calls"].items())
        share = bill["replayed_share"]
        words += (
            f"; billed {usd(bill['usd'])} with {calls} call(s) the replay does not read"
            f" (the replayed calls: {'-' if share is None else f'{share:.0%}'} of it"
            f", Δ {record.get('delta_of_bill') or 0:+.1%} of the bill)"
        )
    outcome = record.get("outcome")
    if outcome is not None:
        words += "; the original run's task outcome: " + ", ".join(
            f"{key} {value}" for key, value in sorted(outcome.items())
        )
    return words + f" [{'; '.join(policy['priced_by']) or 'no price'}]"


@dataclass(slots=True)
class _WholeHistory:
    """A slot that never compacts: every call is sent the whole history."""

    messages: list[Message]

    def load_messages(self, upto: int | None = None) -> list[Message]:
        return self.messages[: len(self.messages) if upto is None else upto]


@dataclass(slots=True)
class _Uncompacted:
    slot: _WholeHistory


def uncompacted_run(conv: Conversation, pricer: Pricer) -> RunCost:
    """The conversation's cost when nothing is compacted (a configuration that never
    fires): the recorded calls as recorded, the others modeled on the whole history."""
    meter = CostMeter(conv, _Uncompacted(_WholeHistory(conv.messages)), pricer)
    meter.appended(0, 0, len(conv.messages))
    return meter.run


async def drive_priced(
    conv: Conversation,
    engine: Any,
    execute: Execute | None,
    pricer: Pricer | None,
    **options: Any,
) -> CostMeter | None:
    """``engine.drive.drive_conversation`` (``options``: its keywords), with a
    :class:`CostMeter` attached when ``pricer`` is given (--cost); the meter, or None."""
    from ..engine.drive import drive_conversation

    if pricer is None:
        await drive_conversation(conv, engine, execute, **options)
        return None
    meter = CostMeter(conv, engine, pricer)
    priced = None if execute is None else meter.execute(execute)
    also = options.pop("appended", None)  # the caller's own hook runs after the meter's

    def appended(number: int, start: int, end: int) -> None:
        meter.appended(number, start, end)
        if also is not None:
            also(number, start, end)

    await drive_conversation(conv, engine, priced, appended=appended, **options)
    return meter
