"""The one loop that drives a conversation through a session engine, unit by unit.

Replay, eval and the sweep's engine path all call :func:`drive_conversation`; none of them
writes its own loop, so every setting the loop honours (the turn path, the unit, the
window the log records) reaches all of them alike. The loop does no I/O: summary
requests go to the ``execute`` callable its caller passes (an executor, the response
cache, a batch planner), and what a caller measures per unit or per summary it measures
in the ``after_unit`` / ``after_summary`` callbacks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from .config import ReplaySettings, TurnPath
from .messages import AssistantMessage, Conversation
from .records import DecisionRecord, WindowFields
from .requests import SummaryOutcome, SummaryRequest
from .rules import unit_starts
from .runtime_policy import follow_runtime
from .session import SessionEngine
from .windows import conversation_model, resolve_window

# (request, units left after this one) -> its outcome; the units left let a pool run the
# session with the longest chain of summaries ahead first.
Execute = Callable[[SummaryRequest, int], Awaitable[SummaryOutcome]]


def recorded_window(conv: Conversation, configured: int, policy_window: int = 0) -> tuple[int, str]:
    """``--max-context-tokens auto`` for one conversation: the window its log records
    (``"log"``: Codex's ``model_context_window``), else its model's documented window
    (``"model"``), else the policy's own (``"policy"``), else ``configured``
    (``"default"``): engine/windows.py. The one rule replay, eval, the sweep (fast and
    engine path) and ``tsum fidelity`` apply."""
    return resolve_window(conv.context_window, conversation_model(conv), policy_window, configured)


def model_room(conv: Conversation) -> int:
    """The most context ``conv``'s model is known to have taken: the window its log records
    (Codex), or else its largest recorded prompt (a call's ``input_tokens``); 0 when the
    log records neither. A window set below it is not the model's (``tsum replay``'s tip)."""
    largest = max(
        (m.usage.input_tokens for m in conv.messages if type(m) is AssistantMessage and m.usage),
        default=0,
    )
    return max(conv.context_window or 0, largest)


def session_window(
    conv: Conversation, settings: ReplaySettings
) -> tuple[ReplaySettings, WindowFields | None]:
    """``--max-context-tokens auto``: the settings with :func:`recorded_window` and the
    policy following the log's runtime release (engine/runtime_policy.py), and the record
    fields that say which window and where it came from; ``None`` without auto (default
    records unchanged)."""
    cfg = settings.summary
    if not settings.auto_window or cfg is None:
        return settings, None
    policy = settings.policy
    if policy is not None:
        model = conversation_model(conv)
        followed = follow_runtime(policy, conv.runtime_version, model, log_format=conv.format)
        if followed != policy:
            settings = replace(settings, policy=followed)
        policy = followed
    window, source = recorded_window(
        conv, cfg.max_context_tokens, policy.trigger.window if policy is not None else 0
    )
    if window != cfg.max_context_tokens:
        cfg = replace(cfg, max_context_tokens=window)
        settings = replace(settings, summary=cfg)
    return settings, {
        "max_context_tokens": cfg.max_context_tokens,
        "max_context_tokens_from": source,
    }


def unit_bounds(conv: Conversation, settings: ReplaySettings) -> list[tuple[int, int]]:
    """(start, end) of each unit of ``conv``: its turns, or its calls with --checkpoint call."""
    starts = unit_starts(conv.messages, settings.checkpoint)
    ends = [*starts[1:], len(conv.messages)] if starts else []
    return list(zip(starts, ends, strict=True))


def drive_without_summaries(
    conv: Conversation,
    engine: SessionEngine,
    *,
    units: Sequence[tuple[int, int]] | None = None,
) -> None:
    """:func:`drive_conversation` where no summary request can come (no SummaryConfig, or
    a dry run), from synchronous code: with no request the coroutine never suspends, so
    one ``send`` runs it to the end (no event loop; also inside a running one)."""
    run = drive_conversation(conv, engine, None, units=units)
    try:
        run.send(None)
    except StopIteration:
        return
    run.close()  # pragma: no cover - only an awaited request suspends the loop
    raise AssertionError("drive_without_summaries: the engine made a summary request")


async def drive_conversation(
    conv: Conversation,
    engine: SessionEngine,
    execute: Execute | None,
    *,
    units: Sequence[tuple[int, int]] | None = None,
    annotate: Callable[[int], DecisionRecord | None] | None = None,
    after_summary: Callable[[SummaryRequest], None] | None = None,
    after_unit: Callable[[int], None] | None = None,
    appended: Callable[[int, int, int], None] | None = None,
) -> None:
    """Feed ``conv`` to ``engine`` unit by unit, on the path its settings name (sync:
    ``submit_turn``; stream: ``submit_turn_stream`` + ``finalize_turn``), and complete
    each summary request through ``execute`` before the next unit.

    ``units`` defaults to :func:`unit_bounds`; ``annotate(n)`` gives unit n's extra
    decision fields. ``appended(n, start, end)`` runs once unit n's messages are in the
    slot and before its checkpoint's summary is applied: the view is then the one the
    unit's model calls were sent (``engine.slot.load_messages(upto=i)`` for the call at
    i). ``execute`` may be None only where no request can come (no SummaryConfig, or a
    dry run)."""
    history = conv.messages
    bounds = unit_bounds(conv, engine.settings) if units is None else units
    stream = engine.settings.path is TurnPath.STREAM
    for number, (start, end) in enumerate(bounds):
        messages = history[start:end]
        annotations = annotate(number) if annotate is not None else None
        if stream:
            engine.submit_turn_stream(messages, annotations=annotations)
            request = engine.finalize_turn()
        else:
            request = engine.submit_turn(messages, annotations=annotations)
        if appended is not None:
            appended(number, start, end)
        if request is not None:
            assert execute is not None, "a summary request needs an executor (or dry_run)"
            engine.complete_summary(await execute(request, len(bounds) - number))
            if after_summary is not None:
                after_summary(request)
        if after_unit is not None:
            after_unit(number)
