"""``tsum eval``: what survives a summary (docs/eval.md).

Probes drawn from the part of the history a summary replaces, scored on the summary
and on floors (no summary, truncation) and on the runtime's own recorded summaries.
"""

from __future__ import annotations

from .artifacts import ARTIFACT_KINDS
from .checkpoints import SummaryReplacement
from .evaluation import EvalResult, Evaluation, Variant
from .probes import EXTRACTOR_VERSION, Probe
from .score import ConversationProbes, recalled, score_checkpoint

__all__ = [
    "ARTIFACT_KINDS",
    "EXTRACTOR_VERSION",
    "SummaryReplacement",
    "ConversationProbes",
    "EvalResult",
    "Evaluation",
    "Probe",
    "Variant",
    "recalled",
    "score_checkpoint",
]
