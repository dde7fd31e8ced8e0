"""The record ``--cost`` writes per session to ``costs.jsonl`` (docs/cost.md), typed once:
cost/meter.py builds it, the replay report's line and check's cost gate (cost/gate.py)
read it through these types, so mypy checks every key they name."""

from __future__ import annotations

from typing import Any, TypedDict


class TokensJson(TypedDict):
    """A run's tokens by how they are billed (cost/tokens.py ``CallTokens``)."""

    prompt: int
    cache_read: int
    cache_write: int
    cache_write_1h: int  # of cache_write, the writes with a 1-hour lifetime
    fresh: int
    output: int


class RunCostJson(TypedDict):
    """One run's cost (cost/model.py ``RunCost.to_json``): the agent's calls, and the
    summarizer's beside them."""

    calls: int
    summarizer_calls: int
    tokens: TokensJson
    summarizer_tokens: TokensJson
    usd: float | None  # None: a call no price list knows
    summarizer_usd: float | None  # None: a summarizer call has no price
    cache_break_usd: float | None  # what the prompt-cache breaks (compactions) cost; None: unpriced
    overflow_calls: int  # modeled calls over the model's window (cost/overflow.py)
    overflow_max_prompt: int  # the largest of those prompts
    priced_by: list[str]  # the price sources used


class BillJson(TypedDict):
    """The original run's whole bill (cost/original.py ``bill_json``): the replayed calls
    and the billed calls the replay does not read (inline subagents, rewound branches)."""

    usd: float
    off_chain_usd: float
    off_chain_calls: dict[str, int]  # kind (sidechain, rewound) -> calls
    replayed_share: float | None  # the share of the bill the replayed calls cover


class CostRecord(TypedDict, total=False):
    """One line of ``costs.jsonl``: a session under the run's policy, and as recorded."""

    session: str
    policy: RunCostJson
    original: RunCostJson
    delta_usd: float | None
    # the run overflowed (cost/overflow.py): policy.usd and the deltas are None
    overflow: bool
    delta_usd_same_model: float | None
    # None below: no recorded call to bill or check, or no task outcome in the log
    billed: BillJson | None  # the original run's whole bill
    delta_of_bill: float | None  # delta_usd against the whole bill
    outcome: dict[str, Any] | None  # the original run's task outcome, where the log records one
    model_error: dict[str, Any] | None  # the cost model's error on the original (cost/original.py)
