"""The token lines a policy draws for a model's window: when its trigger fires, how much
it keeps verbatim. One home for both, read by the engine, the sweep and ``tsum policies``.

The ratio line is the seed's F2 (``max_context_tokens * trigger_token_ratio``, the same
float), clamped where the policy says so (Aider's 1/16 within 1K–8K). A reserve is what
a runtime keeps free below its window: ``window x (1 - reserve_ratio) - reserve_tokens``.
With both a ratio and a reserve the earlier line wins, as in Kimi CLI's ``should_auto_compact``
(MoonshotAI/kimi-cli:src/kimi_cli/soul/compaction.py@0097027650bcfd79dac41385f5419bacde246cb7),
Qwen Code's ``computeThresholds``
(QwenLM/qwen-code:packages/core/src/services/chatCompressionService.ts@00b481a30437e76f2196d18e3783c16d39e1d9f8)
and Roo Code's ``manageContext``
(RooCodeInc/Roo-Code:src/core/context-management/index.ts@0cc04f43f1a1e340df9a72771c2cb80df6e103b3);
a reserve that leaves nothing of a small window is dropped, and the ratio alone decides
(Qwen Code's fallback for such windows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .kinds import Threshold

if TYPE_CHECKING:
    from .policy import Keep, Trigger


def clamp_tokens(tokens: float, floor: int, ceiling: int) -> float:
    """``tokens`` within [floor, ceiling]; a 0 ceiling is no ceiling."""
    if ceiling and tokens > ceiling:
        tokens = ceiling
    return float(floor) if tokens < floor else float(tokens)


def reserve_line(trigger: Trigger, window: int) -> float:
    """``window`` less what the runtime keeps free (may be negative on a small window)."""
    if trigger.reserve_ratio:
        return window * (1 - trigger.reserve_ratio) - trigger.reserve_tokens
    return float(window - trigger.reserve_tokens)


def threshold_tokens(trigger: Trigger, window: int) -> float | None:
    """The token count at which ``trigger`` fires for a model with ``window`` tokens;
    None for the forms that do not count tokens (every, messages, never)."""
    if trigger.threshold is Threshold.RATIO:
        line = clamp_tokens(window * trigger.ratio, trigger.floor_tokens, trigger.ceiling_tokens)
        if trigger.reserve_tokens or trigger.reserve_ratio:
            reserved = reserve_line(trigger, window)
            if reserved > 0:
                line = min(line, reserved)
        return line
    if trigger.threshold is Threshold.TOKENS:
        return float(trigger.tokens)
    if trigger.threshold is Threshold.RESERVE:
        return max(reserve_line(trigger, window), 0.0)
    return None


def keep_budget_tokens(keep: Keep, window: int) -> int | None:
    """The token budget of what is kept verbatim, or None when the policy sets none."""
    if keep.tokens:
        return keep.tokens
    if keep.tokens_ratio:
        budget = clamp_tokens(
            int(window * keep.tokens_ratio), keep.floor_tokens, keep.ceiling_tokens
        )
        return int(budget)
    return None
