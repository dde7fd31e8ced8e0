"""--cost through the library front door (``transcript_tools.api``): the same pricer the
CLI builds reaches replay, sweep (policy rows included) and check's cost gate."""

from __future__ import annotations

from pathlib import Path

import orjson

import transcript_tools as tt

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
LONG = SAMPLES / "long_session.jsonl"


def test_replay_corpus_cost_is_the_record_replay_cost_writes(tmp_path: Path) -> None:
    plain = tt.replay_corpus(LONG)
    assert [s.cost for s in plain.sessions] == [None]
    priced = tt.replay_corpus(LONG, cost=True, price_per_mtok="3/15")
    (session,) = priced.sessions
    assert session.cost is not None and session.cost["session"] == "long_session"
    out = tmp_path / "o"
    tt.replay_corpus(LONG, cost=True, price_per_mtok="3/15", out=out)
    (written,) = [orjson.loads(x) for x in (out / "costs.jsonl").read_bytes().splitlines()]
    assert written == orjson.loads(orjson.dumps(session.cost))
    assert session.cost["policy"]["priced_by"] == ["--price-per-mtok 3/15"]


def test_sweep_corpus_cost_prices_policy_rows_on_the_engine() -> None:
    plain = tt.sweep_corpus(SAMPLES, policies=["seed", "claude-code-microcompact"])
    priced = tt.sweep_corpus(
        SAMPLES, policies=["seed", "claude-code-microcompact"], cost=True, price_per_mtok=3
    )
    rows = [s.to_json() for s in priced.stats]
    assert all(row["cost_priced_conversations"] == 3 and row["cost_usd"] > 0 for row in rows)
    assert not any("cost_usd" in s.to_json() for s in plain.stats)
    # a policy always runs the engine, priced or not: the same number of engine runs
    assert priced.engine_runs == plain.engine_runs == 2 * priced.conversations


def test_check_max_cost_increase_gates_through_the_api(tmp_path: Path) -> None:
    baseline = tmp_path / "base"
    blessed = tt.check(LONG, baseline, update=True, max_cost_increase=0.05, price_per_mtok="3/15")
    assert not blessed.failed and (baseline / "costs.jsonl").is_file()
    same = tt.check(LONG, baseline, max_cost_increase=0.05, price_per_mtok="3/15")
    assert same.costs is not None and not same.costs.failed and not same.failed
    dearer = tt.check(LONG, baseline, max_cost_increase=0.05, price_per_mtok="6/30")
    assert dearer.costs.failed and dearer.failed and dearer.diff.identical
    assert "+100.0%" in dearer.costs.lines[0]
    ungated = tt.check(LONG, baseline, price_per_mtok="6/30")
    assert ungated.costs is None and not ungated.failed
