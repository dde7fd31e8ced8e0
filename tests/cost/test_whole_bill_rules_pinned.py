"""The whole bill's record (``cost/original.py`` ``bill_json``), pinned against one-point
edits (a single-point mutation run, docs/testing.md, found these unpinned): no bill when
either part is unpriced, and its dollars rounded to the micro-dollar. Prices by hand:
``--price-per-mtok 1`` and ``0.3``, one token each.
"""

from __future__ import annotations

from transcript_tools.cost.model import RunCost
from transcript_tools.cost.original import bill_json
from transcript_tools.cost.prices import Pricer
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.engine.messages import Conversation

CONV = Conversation("s", "s.jsonl", "test")


def _run(pricer: Pricer, model: str = "m") -> RunCost:
    run = RunCost()
    run.add(pricer, model, CallTokens(1, 0, 0, 0))
    return run


def test_no_bill_when_either_part_is_unpriced() -> None:
    """Fails on ``original is None and off_chain is None`` (None + a price: TypeError)."""
    priced, unpriced = _run(Pricer.from_options("1")), _run(Pricer(), "no-such-model")
    assert unpriced.usd is None
    assert bill_json(priced, unpriced, CONV) is None
    assert bill_json(unpriced, priced, CONV) is None


def test_the_bills_dollars_are_rounded_to_the_micro_dollar() -> None:
    """$1/Mtok x 1 token + $0.3/Mtok x 1 token = $0.0000013: 0.000001 at 6 places (fails
    at 7 places: 0.0000013); the off-chain $0.0000003 rounds to 0."""
    bill = bill_json(_run(Pricer.from_options("1")), _run(Pricer.from_options("0.3")), CONV)
    assert bill is not None
    assert bill["usd"] == 0.000001
    assert bill["off_chain_usd"] == 0.0
    assert bill["replayed_share"] == round(1 / 1.3, 4)
