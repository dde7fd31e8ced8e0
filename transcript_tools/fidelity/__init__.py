"""``tsum fidelity``: the logs' own compactions as ground truth for the policies' replay."""

from ..engine.runtime_policy import RUNTIME_PRESETS
from .records import FidelityRow, RuntimeSummary, summarize
from .workflow import FidelityResult, fidelity_paths

__all__ = [
    "RUNTIME_PRESETS",
    "FidelityResult",
    "FidelityRow",
    "RuntimeSummary",
    "fidelity_paths",
    "summarize",
]
