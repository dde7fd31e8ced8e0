"""Token prices for the end-of-run cost line: batch (half price) vs synchronous.

The model's list price comes from genai-prices' bundled table (``cost.prices``: dated,
no network); ``--price-per-mtok`` overrides it and is the only source for a model the
table lacks. The batch discount is the providers' documented rule (half price on both
batch APIs), applied here, not looked up. A summary call's tokens are priced as fresh
input and output: cache rates, if given, do not apply here.
"""

from __future__ import annotations

from typing import Any

from ...cost.prices import OVERRIDE_FLAG, Pricer, Rates, parse_rates
from ...cost.tokens import CallTokens
from ...engine.messages import Usage

BATCH_DISCOUNT = 0.5  # both batch APIs: 50% of the synchronous price (docs/cost.md)


def price_for(model: str | None, spec: str | None) -> tuple[Rates, str] | None:
    """The rates of a summary call and their source ("--price-per-mtok", or the
    genai-prices entry and date), or None where none is known."""
    if spec:
        return parse_rates(spec), OVERRIDE_FLAG
    return Pricer().list_rates(model) if model else None


def cost_report(
    usage: Usage, price: tuple[Rates, str], *, batch: bool
) -> tuple[str, dict[str, Any]]:
    """The end-of-run words and the manifest entry."""
    rates, source = price
    sync = rates.cost(CallTokens(usage.input_tokens, output=usage.output_tokens))
    batched = sync * BATCH_DISCOUNT
    paid = batched if batch else sync
    words = (
        f"cost ${paid:.4f} at batch prices (synchronous: ${sync:.4f})"
        if batch
        else f"cost ${sync:.4f} (with --batch: ${batched:.4f})"
    )
    return words + f" [{source}]", {
        "mode": "batch" if batch else "synchronous",
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "price_per_mtok": {"input": rates.input, "output": rates.output},
        "price_source": source,
        "batch_usd": round(batched, 6),
        "synchronous_usd": round(sync, 6),
        "paid_usd": round(paid, 6),
    }
