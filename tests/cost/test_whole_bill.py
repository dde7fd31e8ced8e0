"""The original is what was billed (docs/cost.md, "The whole bill"): an inline subagent's
(sidechain) calls and a rewound branch's calls are priced beside the replayed ones, the
share of the bill the replayed calls cover is shown, and Δ is a share of the whole bill.
Prices by hand from Anthropic's list for Haiku 4.5: input $1, 5-minute write $1.25,
read $0.10, output $5 per million tokens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from transcript_tools import api
from transcript_tools.cli.main import cli
from transcript_tools.cost.model import RunCost
from transcript_tools.cost.original import bill_json, off_chain_run, recorded_run
from transcript_tools.cost.prices import Pricer
from transcript_tools.cost.tokens import CallTokens
from transcript_tools.engine.messages import REWOUND, SIDECHAIN
from transcript_tools.sweep.config import ConfigOutcome
from transcript_tools.sweep.stats import ConfigStats

HAIKU = "claude-haiku-4-5"


def _usage(fresh: int, read: int, write: int, output: int) -> dict[str, int]:
    return {
        "input_tokens": fresh,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "output_tokens": output,
    }


def _line(kind: str, uuid: str, parent: str | None, message: dict[str, Any], **extra: Any) -> bytes:
    entry = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "message": message}
    return orjson.dumps({**entry, **extra})


def _answer(mid: str, usage: dict[str, int]) -> dict[str, Any]:
    content = [{"type": "text", "text": "ok " + mid}]
    return {"id": mid, "role": "assistant", "model": HAIKU, "content": content, "usage": usage}


def _prompt(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _log(tmp_path: Path) -> Path:
    """a1 (main), a Task subagent's response over two lines, a2 (then rewound: u3 goes
    back to a1), a3 (main)."""
    lines = [
        _line("user", "u1", None, _prompt("fix the bug " * 30)),
        _line("assistant", "a1", "u1", _answer("m1", _usage(0, 0, 2000, 100))),
        _line("assistant", "s1", "a1", _answer("sub", _usage(1000, 0, 0, 10)), isSidechain=True),
        _line("assistant", "s2", "s1", _answer("sub", _usage(1000, 0, 0, 40)), isSidechain=True),
        _line("user", "u2", "a1", _prompt("now the docs " * 30)),
        _line("assistant", "a2", "u2", _answer("m2", _usage(0, 2000, 500, 50))),
        _line("user", "u3", "a1", _prompt("no, the tests " * 30)),
        _line("assistant", "a3", "u3", _answer("m3", _usage(0, 2000, 400, 20))),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


# micro-dollars: a1 2000 x 1.25 + 100 x 5 = 3,000; a3 2000 x 0.1 + 400 x 1.25 + 20 x 5 = 800;
# the subagent 1000 x 1 + 40 x 5 = 1,200; the rewound a2 200 + 500 x 1.25 + 50 x 5 = 1,075
REPLAYED, OFF_CHAIN = 3800e-6, 1200e-6 + 1075e-6


def test_the_reader_keeps_sidechain_and_rewound_calls(tmp_path: Path) -> None:
    (conv,) = api.read_corpus([str(_log(tmp_path))])
    assert [m.usage.output_tokens for m in conv.messages if getattr(m, "usage", None)] == [100, 20]
    sidechain, rewound = conv.off_chain_calls
    assert (sidechain.kind, sidechain.usage.output_tokens) == (SIDECHAIN, 40)  # its last line
    assert (rewound.kind, rewound.usage.cache_read_tokens) == (REWOUND, 2000)


def test_the_bill_holds_every_billed_call_and_the_replayed_share(tmp_path: Path) -> None:
    (conv,) = api.read_corpus([str(_log(tmp_path))])
    pricer = Pricer()
    original, off_chain = recorded_run(conv, pricer), off_chain_run(conv, pricer)
    assert original.usd == pytest.approx(REPLAYED)
    assert off_chain.usd == pytest.approx(OFF_CHAIN)
    bill = bill_json(original, off_chain, conv)
    assert bill == {
        "usd": pytest.approx(REPLAYED + OFF_CHAIN),
        "off_chain_usd": pytest.approx(OFF_CHAIN),
        "off_chain_calls": {"rewound": 1, "sidechain": 1},
        "replayed_share": 0.6255,  # 3,800 / 6,075
    }
    out = tmp_path / "out"
    done = CliRunner().invoke(cli, ["replay", str(_log(tmp_path)), "--cost", "--out", str(out)])
    assert done.exit_code == 0, done.stderr
    (record,) = [orjson.loads(x) for x in (out / "costs.jsonl").read_bytes().splitlines()]
    assert record["billed"]["usd"] == pytest.approx(0.006075)
    assert record["delta_usd"] == 0 and record["delta_of_bill"] == 0  # nothing compacted
    report = CliRunner().invoke(cli, ["replay", str(_log(tmp_path)), "--cost"])
    assert "billed $0.0061 with 1 rewound, 1 sidechain call(s)" in report.stdout
    assert "(the replayed calls: 63% of it" in report.stdout


def test_the_sweep_change_is_a_share_of_the_whole_bill() -> None:
    def run(micro: int) -> RunCost:
        out = RunCost()
        out.add(Pricer.from_options("1"), "m", CallTokens(micro, 0, 0, 0))  # $1/Mtok
        return out

    stats = ConfigStats(None, cost_on=True)  # type: ignore[arg-type]
    outcome = ConfigOutcome(1, [], cost=run(3000), original_cost=run(4000))
    outcome.off_chain_cost = run(6000)
    stats._add_cost(outcome, missed=False)
    figures = stats.cost_json()
    # Δ -$0.001 of a $0.010 bill (not of the $0.004 the replayed calls cost)
    assert figures["cost_change_vs_original"] == -0.1
    assert figures["cost_billed_usd"] == 0.01 and figures["cost_replayed_share"] == 0.4
