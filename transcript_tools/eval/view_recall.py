"""Recall over the whole view: of every artifact probe the history held up to an action,
the share the view the model is sent right after it still carries — the summary, the
messages kept verbatim, the placeholders, everything (docs/compare.md "Recall at a
matched budget").

The action scorer's own recall (eval/policy_probes.py) asks a narrower question: of the
probes the action took OUT of the view, how many the next view still carries. A probe
of a message the action kept verbatim is in neither its numerator nor its denominator,
so keeping more verbatim never raises it; here it counts as kept, as a model asked about
it after the compaction would find it. A public compaction evaluation scores its arms
with one exam over the retained context at each arm's retained tokens, and found its
whole gain came from text kept verbatim
(NousResearch/hermes-agent@evals/compaction/results/SCORECARD-2026-09-19-jev.md).

Probes and the matching rule are the scorer's (``ConversationProbes.probes``,
``score.recalled``); requests are left out, as the artifact recall leaves them out.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from .artifacts import REQUEST
from .haystack import Haystack
from .score import ConversationProbes, recalled


def whole_view_hits(
    probes: ConversationProbes,
    history_end: int,
    verbatim: Collection[int],
    message_text: Callable[[int], str],
    view: Haystack,
) -> tuple[int, int]:
    """(kept, probed) of the artifact probes of ``history[:history_end]`` (each kind and
    text once, the first mention kept) against ``view``, the whole next view's text.

    ``verbatim``: the history indices the view shows as they are; ``message_text(i)``:
    message i's text as the view shows it, normalized. A probe whose own message is shown
    verbatim is looked for in that message first: the view's text joins its messages' with
    spaces, so a hit in one of them is a hit in the whole (the search of the whole view is
    left for the probes of messages it no longer shows)."""
    kept = probed = 0
    shown: dict[int, Haystack] = {}  # a verbatim message's text, built once per call
    for probe in probes.probes(0, history_end):
        if probe.kind == REQUEST:
            continue
        probed += 1
        own = probe.message
        if own in verbatim:
            text = shown.get(own)
            if text is None:
                text = shown[own] = Haystack(message_text(own))
            if recalled(probe, text):
                kept += 1
                continue
        kept += recalled(probe, view)
    return kept, probed
