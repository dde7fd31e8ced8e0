"""The sweep table's --cost columns, legend and notes (docs/cost.md, "Outputs")."""

from __future__ import annotations

from typing import Any

# --cost (cost/, docs/cost.md): appended to the table when the rows carry them
COST_KEY = "cost_per_conversation_usd"
COST_COLUMNS: list[tuple[str, str]] = [
    ("$/conv", COST_KEY),
    ("$ total", "cost_usd"),
    ("Δ$ orig", "cost_change_vs_original"),
    ("Δ$ model", "cost_change_same_model"),
    ("sum$", "cost_summarizer_share"),
    ("break$", "cost_cache_break_share"),
]


def cost_cell(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if key == "cost_with_outcome":
        value = (value or {}).get("usd_per_solved_task")
    if value is None:
        return "-"
    if key in (COST_KEY, "cost_usd", "cost_with_outcome"):
        return f"${value:.4f}"
    if key in ("cost_change_vs_original", "cost_change_same_model"):
        return f"{value:+.1%}"
    return f"{value:.1%}"


def cost_legend(rows: list[dict[str, Any]]) -> str:
    sources = sorted({s for row in rows for s in row.get("cost_priced_by", [])})
    return (
        "\ncost (--cost): $/conv, $ total: what each configuration's runs cost, prompt tokens "
        "split into cache reads, writes and fresh input by the provider's cache rules, "
        "summarizer calls included; Δ$ orig: the change against the original runs as recorded (the "
        "conversations with recorded usage), as a share of their whole bill; Δ$ model: the same change with the model's own bias cancelled (each compacted call against the model's price of the original call); sum$: the summarizer's share; break$: the share "
        "paid for re-sending what a compaction took out of the cache; $/solved (where the "
        "log scores its task: tau-bench reward): the cost per task the ORIGINAL run solved "
        "(a replay does not rerun the task). Prices: " + ("; ".join(sources) or "none") + "."
    )


def cost_notes(rows: list[dict[str, Any]]) -> str:
    """Where a configuration never summarizes a conversation the agent compacted, its
    Δ$ orig compares unlike runs: the original's prompts shrank at that compaction, this
    configuration's kept growing (past the window, its over column says, where a runtime
    would have had to compact). Say how much of the change those conversations hold."""
    billed = [row for row in rows if row.get("cost_replayed_share")]
    lines = [_bill_note(billed)] if billed else []
    for row in rows:
        lines.append(_overflow_note(row))
        missed = row.get("cost_missed_compaction")
        if missed and abs(missed["delta_usd"]) >= 0.005:  # the cents it shows
            name = " ".join(str(p) for p in (f"#{row['config']}", row.get("policy")) if p)
            lines.append(
                f"\n{name}: "
                f"{missed['conversations']} conversation(s) the agent compacted and this "
                f"configuration never summarizes hold {missed['delta_usd']:+,.2f} USD of its "
                f"change against the original runs; the other conversations "
                f"{missed['delta_usd_elsewhere']:+,.2f} USD."
            )
    return "".join(lines)


def _bill_note(rows: list[dict[str, Any]]) -> str:
    """The share of the original runs' bill the replayed calls cover (the rest, inline
    subagents and rewound branches, is the same in every row): said where it is not all.
    The bill of every conversation; a row that left an overflowed one out compares with
    the bill of the others, named beside it."""
    row = max(rows, key=lambda r: r["cost_billed_usd"])
    share = row["cost_replayed_share"]
    if share >= 1:
        return ""
    smaller = "; ".join(
        f"#{r['config']}{' ' + r['policy'] if r.get('policy') else ''} "
        f"{r['cost_billed_usd']:,.2f} USD"
        for r in rows
        if r["cost_billed_usd"] < row["cost_billed_usd"]
    )
    others = f" (without the conversations they left out: {smaller})" if smaller else ""
    return (
        f"\nthe original runs were billed {row['cost_billed_usd']:,.2f} USD{others}; the calls "
        f"replayed cover {share:.1%} of it (the rest: inline subagents and rewound "
        "branches, billed alike in every row; Δ$ orig and Δ$ model are shares of the "
        "whole bill)."
    )


def _overflow_note(row: dict[str, Any]) -> str:
    """The conversations whose run overflowed are left out of every $ column, never priced
    as if they ran (cost/overflow.py; docs/cost.md, "Overflow"): how many, said."""
    runs = row.get("cost_overflow_conversations")
    if not runs:
        return ""
    name = " ".join(str(p) for p in (f"#{row['config']}", row.get("policy")) if p)
    calls = row.get("cost_overflow_calls") or 0
    over = f", {calls:,} modeled call(s) over their model's window" if calls else ""
    return (
        f"\n{name}: {runs:,} conversation(s) overflowed (a view over the window{over}): "
        "no agent could have made those runs, so they are left out of its $ columns."
    )
