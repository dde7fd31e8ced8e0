"""Token prices for the end-of-run cost line: batch (half price) vs synchronous.

A small table of list prices, dated; ``--price-per-mtok`` overrides it and is the
only source for any other model. Prices change: this table is a convenience, not
an invoice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...engine.messages import Usage
from ...errors import ConfigError

PRICES_AS_OF = "2025-10"
# USD per million tokens (input, output), synchronous list prices as of PRICES_AS_OF.
KNOWN_PRICES: dict[str, tuple[float, float]] = {
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-opus-4-1": (15.00, 75.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
}
BATCH_DISCOUNT = 0.5  # both batch APIs: 50% of the synchronous price


@dataclass(frozen=True, slots=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    source: str  # "--price-per-mtok" or "list price of MODEL as of DATE"

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input_per_mtok + usage.output_tokens * self.output_per_mtok
        ) / 1_000_000


def parse_price(spec: str) -> tuple[float, float]:
    """``"3"`` (input and output alike) or ``"3/15"`` (input/output), USD per million tokens."""
    try:
        values = [float(part) for part in spec.split("/")]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or any(v < 0 or v != v for v in values):
        raise ConfigError(
            f"--price-per-mtok {spec!r}: give USD per million tokens, e.g. 3 or 3/15 (input/output)"
        )
    return (values[0], values[-1])


def price_for(model: str | None, spec: str | None) -> Price | None:
    if spec:
        inp, out = parse_price(spec)
        return Price(inp, out, "--price-per-mtok")
    if not model:
        return None
    for name in sorted(KNOWN_PRICES, key=len, reverse=True):  # dated ids: claude-haiku-4-5-2025...
        if model == name or model.startswith(name + "-"):
            inp, out = KNOWN_PRICES[name]
            return Price(inp, out, f"list price of {name} as of {PRICES_AS_OF}")
    return None


def cost_report(usage: Usage, price: Price, *, batch: bool) -> tuple[str, dict[str, Any]]:
    """The end-of-run words and the manifest entry."""
    sync = price.cost(usage)
    batched = sync * BATCH_DISCOUNT
    paid = batched if batch else sync
    words = (
        f"cost ${paid:.4f} at batch prices (synchronous: ${sync:.4f})"
        if batch
        else f"cost ${sync:.4f} (with --batch: ${batched:.4f})"
    )
    return words + f" [{price.source}]", {
        "mode": "batch" if batch else "synchronous",
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "price_per_mtok": {"input": price.input_per_mtok, "output": price.output_per_mtok},
        "price_source": price.source,
        "batch_usd": round(batched, 6),
        "synchronous_usd": round(sync, 6),
        "paid_usd": round(paid, 6),
    }
