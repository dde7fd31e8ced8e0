"""Tips: one line on stderr when the seed's defaults do not fit the logs at hand.

The seed's window (``max_context_tokens`` = 32,000, docs/spec.md F1) and its cumulative
measure are the specification and stay the defaults; on a log whose model took far more
context than that, they fire the checkpoint from the first turns, which says nothing
about the log. The tip names the options that fit such a log instead.
"""

from __future__ import annotations

from ..engine.config import Measure, RunSettings
from ..engine.drive import model_room
from ..engine.messages import Conversation
from ..engine.session import SessionEngine
from ..engine.windows import DEFAULT, POLICY, conversation_model

# "far larger": the model took at least this many times the configured window
FAR_LARGER = 2


def window_tip(model_room: int, run: RunSettings, fired: int) -> str | None:
    """The tip for a run whose logs show a model that took ``model_room`` tokens of
    context (``engine.drive.model_room``, the largest over the run), or None when the
    window was chosen (a flag, ``TSUM_MAX_CONTEXT_TOKENS``, a settings file, ``auto``) or fits,
    or when the checkpoint fired nowhere (``fired``: the run's firings, done or would-be):
    the tip says it fires, so it is printed only where it did."""
    summary = run.settings.summary
    if summary is None or run.values.get("max_context_tokens") is not None or not fired:
        return None
    window = summary.max_context_tokens
    if model_room < FAR_LARGER * window:
        return None
    options = "--max-context-tokens auto"
    if run.settings.measure is Measure.CUMULATIVE:
        options += " --measure current"
    return (
        f"tsum: tip: these logs show a model taking up to {model_room:,} tokens of context, far "
        f"over the seed's default window of {window:,}, so the checkpoint fires from the first "
        f"turns; for the model's own window try {options}"
    )


def fallback_window_warning(conv: Conversation, engine: SessionEngine) -> str | None:
    """``--max-context-tokens auto`` on a log that records no window and whose model
    the window table does not know falls back to the policy's or the default window; say
    so when the log's own calls read more than that (the schedule is not the model's),
    else None."""
    first = engine.decisions[0] if engine.decisions else None
    source = first.get("max_context_tokens_from") if first else None
    if first is None or source not in (POLICY, DEFAULT):
        return None
    window, largest = first["max_context_tokens"], model_room(conv)
    if largest <= window:
        return None
    model = conversation_model(conv)
    unknown = f"no documented window for {model}" if model else "no model named"
    return (
        f"--max-context-tokens auto: no window in the log and {unknown}, so the {source} "
        f"window of {window:,} was used, but the log's calls read up to {largest:,} tokens: "
        "the model's window is larger (give it with --max-context-tokens N)"
    )
