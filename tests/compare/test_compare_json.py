"""``tsum compare --json``: the table's figures as one JSON document, no second reading."""

from __future__ import annotations

import json

from tests.compare.test_compare_cli import _run
from tests.support.docs import doc_text, undocumented

ARGS = ("--policy", "seed,codex,aider", "--max-context-tokens", "4000", "--silent", "--drift")


def _table_rows(text: str) -> list[list[str]]:
    """The comparison table's rows (after its header line), split on blanks."""
    block = text.split("\n\n")[1].splitlines()
    assert block[0].split()[0] == "policy"
    return [line.split() for line in block[1:] if line and not line.startswith(" ")]


def test_json_is_the_tables_figures_as_data() -> None:
    code, text, _ = _run(*ARGS, "--width", "200", "--columns", "policy,recall,degen,pareto")
    assert code == 0
    code, out, _ = _run(*ARGS, "--json")
    assert code == 0
    doc = json.loads(out)  # stdout is the document and nothing else
    assert doc["window"] == 4000 and doc["windows"] == {"4k (given)": 1}
    assert doc["intervals"] == {"level": 0.95, "resamples": 2000, "seed": 20260}
    assert "not a model" in doc["summarizer"]
    rows = _table_rows(text)
    assert len(rows) == 3
    # the rows in the table's order, each with the table's recall, flags and Pareto mark
    assert [r["policy"] for r in doc["policies"]] == [cells[0] for cells in rows]
    for row, cells in zip(doc["policies"], rows, strict=True):
        flagged = cells[1].startswith("[")
        assert flagged == bool(row["overflow"] or row["invalid"] or row["degenerate"])
        recall = cells[2 if flagged else 1]
        if row["recall"] is None:
            assert recall == "-"
        else:
            assert recall == f"{row['recall']['estimate'] * 100:.0f}"
            assert row["recall"]["low"] <= row["recall"]["estimate"] <= row["recall"]["high"]
        assert row["pareto"] == (cells[-1] == "*")
        assert row["verdict"] == "unpriced" or row["cost_delta_share"] is not None
    # the --drift section: one entry per row of its table, in order
    drift_rows = [
        line.split()
        for line in text.split("\n\n")[-1].splitlines()
        if line.split() and line.split()[0] in ("seed", "codex", "aider")
    ]
    assert drift_rows and len(doc["drift"]) == len(drift_rows)
    assert [(d["policy"], d["round"]) for d in doc["drift"]] == [(r[0], r[1]) for r in drift_rows]


def test_json_sorts_as_the_table_does() -> None:
    code, out, _ = _run(*ARGS, "--json", "--sort", "policy")
    assert code == 0
    assert [r["policy"] for r in json.loads(out)["policies"]] == ["seed", "codex", "aider"]


def test_every_key_a_script_sees_is_documented() -> None:
    code, out, _ = _run(*ARGS, "--json", "--canaries", "--budget-windows", "4000,16000")
    assert code == 0
    doc = json.loads(out)
    keys = set(doc) | set(doc["policies"][0]) | set(doc["budget"]) | set(doc["drift"][0])
    keys |= set(doc["canaries"]) | set(doc["canaries"]["survival"][0])
    missing = undocumented(keys, doc_text("compare.md", "`--json`"))
    assert not missing, f"keys of compare --json missing from docs/compare.md: {missing}"
