"""Token prices for the end-of-run cost line: batch (half price) vs synchronous.

The model's list price comes from genai-prices' bundled table (``cost.prices``: dated,
no network); ``--price-per-mtok`` overrides it and is the only source for a model the
table lacks. The batch discount is the providers' documented rule (half price on both
batch APIs), applied here, not looked up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...cost.prices import Pricer, parse_rates
from ...engine.messages import Usage

BATCH_DISCOUNT = 0.5  # both batch APIs: 50% of the synchronous price (docs/cost.md)


@dataclass(frozen=True, slots=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    source: str  # "--price-per-mtok", or the genai-prices entry and date (cost/prices.py)

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input_per_mtok + usage.output_tokens * self.output_per_mtok
        ) / 1_000_000


def parse_price(spec: str) -> tuple[float, float]:
    """``"3"`` (input and output alike) or ``"3/15"`` (input/output), USD per million
    tokens (``cost.prices.parse_rates``; cache rates, if given, do not apply here)."""
    rates = parse_rates(spec)
    return (rates.input, rates.output)


def price_for(model: str | None, spec: str | None) -> Price | None:
    if spec:
        inp, out = parse_price(spec)
        return Price(inp, out, "--price-per-mtok")
    if not model:
        return None
    found = Pricer().list_rates(model)
    if found is None:
        return None
    rates, source = found
    return Price(rates.input, rates.output, source)


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
