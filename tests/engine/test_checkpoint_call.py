"""``--checkpoint call`` (docs/spec.md, "Checkpoint units"): the checkpoint after every model call;
every rule that counts turns counts calls; records carry the turn and the call index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES, read
from transcript_tools.cli.main import cli
from transcript_tools.engine.config import Checkpoint, ConfigError, ReplaySettings, SummaryConfig
from transcript_tools.engine.messages import (
    OBSERVATION,
    SYNTHETIC_MODEL,
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.rules import (
    UnitCounter,
    split_units,
    turn_starts,
    unit_starts,
    unit_turns,
)
from transcript_tools.engine.session import SessionEngine
from transcript_tools.settings import settings_values

TEXT_PROTOCOL = FIXTURES / "edge_cases_mini_swe_agent_text.traj.json"
TOOL_PROTOCOL = FIXTURES / "representative_mini_swe_agent_tools.traj.json"


def call(n: int, tokens: int = 100, tool: bool = True) -> AssistantMessage:
    blocks = (TextBlock(f"step {n}"),) + ((ToolUseBlock(f"c{n}", "sh", {}),) if tool else ())
    return AssistantMessage(blocks, Usage(tokens, 10))


def agent_run() -> list[Message]:
    """system, task, then: call+result, call+result, call (no tool), synthetic, person, call."""
    return [
        SystemMessage("sys"),  # 0
        UserMessage.text("task"),  # 1
        call(1),  # 2
        ToolResultMessage("c1", "out"),  # 3
        call(2),  # 4
        ToolResultMessage("c2", "out"),  # 5
        UserMessage((TextBlock("<returncode>0</returncode>"),), OBSERVATION),  # 6
        call(3, tool=False),  # 7
        AssistantMessage((TextBlock("API error"),), None, SYNTHETIC_MODEL),  # 8: not a call
        UserMessage.text("thanks, now the docs"),  # 9
        call(4),  # 10
    ]


def test_unit_starts_per_turn_and_per_call() -> None:
    messages = agent_run()
    assert unit_starts(messages) == turn_starts(messages) == [0, 9]
    assert unit_starts(messages, Checkpoint.CALL) == [0, 4, 7, 9]
    # a call never leaves its results; each unit holds at most one model call
    for _, unit in split_units(messages, Checkpoint.CALL):
        calls = [m for m in unit if isinstance(m, AssistantMessage) and m.model != SYNTHETIC_MODEL]
        assert len(calls) <= 1
    assert unit_turns(messages, [0, 4, 7, 9]) == [0, 0, 0, 1]


def test_incremental_counter_equals_the_whole() -> None:
    messages = agent_run()
    for checkpoint in Checkpoint:
        counter = UnitCounter(checkpoint)
        for _start, unit in split_units(messages, checkpoint):
            counter.extend(unit[:1])
            counter.extend(unit[1:])
        assert counter.starts == unit_starts(messages, checkpoint)
        assert counter.turn_starts == turn_starts(messages)


def test_same_task_one_turn_and_four_calls_in_either_protocol() -> None:
    for path in (TEXT_PROTOCOL, TOOL_PROTOCOL):
        (conv,) = read(path)
        assert len(unit_starts(conv.messages)) == 1
        assert len(unit_starts(conv.messages, Checkpoint.CALL)) == 4


def run(messages: list[Message], checkpoint: Checkpoint, **cfg: int) -> SessionEngine:
    settings = ReplaySettings(
        summary=SummaryConfig(
            max_context_tokens=cfg.get("max", 200), debounce_turns=cfg.get("debounce", 1)
        ),
        dry_run=True,
        checkpoint=checkpoint,
        keep_recent_turns=1,
    )
    engine = SessionEngine("s", settings)
    for _, unit in split_units(messages, checkpoint):
        engine.submit_turn(unit)
    return engine


def test_call_checkpoint_fires_mid_turn_and_debounce_counts_calls() -> None:
    messages = agent_run()
    turn = run(messages, Checkpoint.TURN)
    assert [d["turn"] for d in turn.decisions] == [0, 1]
    assert all("call" not in d for d in turn.decisions)  # default records unchanged
    per_call = run(messages, Checkpoint.CALL)
    records = per_call.decisions
    assert [(d["turn"], d["call"]) for d in records] == [(0, 0), (0, 1), (0, 2), (1, 3)]
    assert "turns_since_last_summary" not in records[0]
    assert [d["calls_since_last_summary"] for d in records] == [0, 1, 1, 1]
    # threshold 150: over it from the 2nd call on; debounce 1 counts calls
    assert [d["decision"] for d in records] == [
        "below_threshold",
        "would_summarize",
        "would_summarize",
        "would_summarize",
    ]
    debounced = run(messages, Checkpoint.CALL, debounce=2)
    assert [d["decision"] for d in debounced.decisions][1:] == [
        "debounced",
        "would_summarize",
        "debounced",
    ]


def test_keep_recent_turns_counts_calls_in_the_focused_view() -> None:
    messages = agent_run()
    engine = run(messages, Checkpoint.CALL)
    engine.slot.set_summary("S", covered_end=len(messages))
    # keep_recent_turns=1: the last call (from the person message at 9), not the last turn
    view = engine.load_messages()
    assert view[0] == messages[0] and view[1:-1] == messages[9:]


def write(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    lines = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
    ]
    for n in range(6):
        lines.append(
            {
                "role": "assistant",
                "content": f"step {n}",
                "tool_calls": [
                    {
                        "id": f"c{n}",
                        "type": "function",
                        "function": {"name": "sh", "arguments": "{}"},
                    }
                ],
                "usage": {"prompt_tokens": 9000 * (n + 1), "completion_tokens": 10},
            }
        )
        lines.append({"role": "tool", "tool_call_id": f"c{n}", "content": "out"})
    path.write_text(json.dumps({"messages": lines}) + "\n")
    return path


def test_cli_replay_checkpoint_call(tmp_path: Path) -> None:
    path = write(tmp_path)
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(
        cli, ["replay", str(path), "--dry-run", "--checkpoint", "call", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "decisions.jsonl").read_text().splitlines()]
    assert [r["call"] for r in records] == list(range(6))
    assert {r["turn"] for r in records} == {0}
    assert any(r["decision"] == "would_summarize" for r in records)  # one turn, yet it fires
    assert "1 turn(s), 6 checkpoint call(s)" in result.stderr
    default = tmp_path / "default"
    assert (
        runner.invoke(cli, ["replay", str(path), "--dry-run", "--out", str(default)]).exit_code == 0
    )
    records = [json.loads(line) for line in (default / "decisions.jsonl").read_text().splitlines()]
    assert len(records) == 1 and "call" not in records[0]
    assert records[0]["decision"] == "debounced"  # over the line, but turn 0 < debounce 3


def test_sweep_grid_has_a_checkpoint_dimension(tmp_path: Path) -> None:
    path = write(tmp_path)
    runner = CliRunner()
    result = runner.invoke(cli, ["sweep", str(path), "--checkpoint", "turn,call", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["configs"]
    by_unit = {row.get("checkpoint", "turn"): row for row in rows}
    assert by_unit["turn"]["summary_calls"] == 0
    assert by_unit["call"]["summary_calls"] > 0
    table = runner.invoke(cli, ["sweep", str(path), "--checkpoint", "turn,call"]).stdout
    assert " unit " in table.splitlines()[0]
    default = runner.invoke(cli, ["sweep", str(path)]).stdout
    assert " unit " not in default.splitlines()[0]
    bad = runner.invoke(cli, ["sweep", str(path), "--checkpoint", "step"])
    assert bad.exit_code == 2


def test_config_file_key(tmp_path: Path) -> None:
    good = tmp_path / "tsum.toml"
    good.write_text('checkpoint = "call"\nmax_context_tokens = "auto"\n')
    assert settings_values(config=good, env={}) == {
        "checkpoint": "call",
        "max_context_tokens": "auto",
    }
    bad = tmp_path / "bad.toml"
    bad.write_text('checkpoint = "step"\n')
    with pytest.raises(ConfigError, match="checkpoint must be turn or call"):
        settings_values(config=bad, env={})


def test_max_context_tokens_auto_says_per_session_which_window(tmp_path: Path) -> None:
    """``--max-context-tokens auto``: the window the log records (Codex:
    model_context_window), else the default."""
    codex = FIXTURES / "representative_codex.jsonl"
    sharegpt = FIXTURES / "representative_sharegpt.jsonl"
    out = tmp_path / "out"
    args = ["replay", str(codex), str(sharegpt), "--dry-run", "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--max-context-tokens", "auto"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "decisions.jsonl").read_text().splitlines()]
    by_session = {
        r["session"]: (r["max_context_tokens"], r["max_context_tokens_from"], r["threshold"])
        for r in records
    }
    assert by_session["019c0000-1111-7222-8333-444455556666"] == (258400, "log", 258400 * 0.75)
    assert by_session["sg-1"] == (32000, "default", 24000.0)
    assert json.loads((out / "run.json").read_text())["max_context_tokens_auto"] is True
    plain = tmp_path / "plain"
    assert CliRunner().invoke(cli, [*args[:-1], str(plain)]).exit_code == 0
    records = [json.loads(line) for line in (plain / "decisions.jsonl").read_text().splitlines()]
    assert all("max_context_tokens_from" not in r and r["threshold"] == 24000.0 for r in records)
    bad = CliRunner().invoke(cli, [*args, "--max-context-tokens", "big"])
    assert bad.exit_code == 2 and "'big' is not an integer or auto" in bad.stderr


def test_sweep_report_charts_call_configurations_per_turn(tmp_path: Path) -> None:
    path = write(tmp_path)
    report = tmp_path / "r.html"
    args = ["sweep", str(path), "--checkpoint", "turn,call", "--measure", "cumulative,current"]
    result = CliRunner().invoke(cli, [*args, "--report", str(report)])
    assert result.exit_code == 0, result.output
    html = report.read_text()
    assert "<th>unit</th>" in html or ">unit<" in html


def test_call_outputs_read_back_for_diff(tmp_path: Path) -> None:
    """Several records per turn: the outputs are keyed by call, not reported as corrupt."""
    path = write(tmp_path)
    runner = CliRunner()
    for name, ratio in (("a", "0.75"), ("b", "0.5")):
        args = [
            "replay",
            str(path),
            "--checkpoint",
            "call",
            "--ratio",
            ratio,
            "--out",
            str(tmp_path / name),
        ]
        assert runner.invoke(cli, args).exit_code == 0
    result = runner.invoke(cli, ["diff", str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code in (0, 1), result.output
    assert "appears twice" not in result.output + result.stderr
    assert "trigger_token_ratio: 0.75 → 0.5" in result.stdout


def test_scoring_a_call_summary_uses_the_call_units() -> None:
    """The sweep's recall for call configurations: the replaced part ends at a call."""
    from transcript_tools.engine.messages import Conversation
    from transcript_tools.eval.baseline import score_summaries

    messages: list[Message] = [UserMessage.text("task: fix parse_date in dates.py")]
    for n in range(6):
        messages += [call(n), ToolResultMessage(f"c{n}", f"ran step {n}: /src/file_{n}.py ok")]
    conv = Conversation("s", "mem.jsonl", "native", messages)
    summary = [{"turn": 4, "text": "fixed /src/file_0.py", "status": "ok"}]
    assert score_summaries(conv, summary, keep=1) == []  # one turn: nothing replaced
    scored = score_summaries(conv, summary, keep=1, starts=unit_starts(messages, Checkpoint.CALL))
    assert len(scored) == 1 and scored[0]["turn"] == 4


# ---- one definition of a call: a run writes one decision per call inspect counts --------


def test_a_turn_without_a_call_joins_the_next_calls_unit() -> None:
    """A prompt nothing answered, the prompts before the first call, a trailing prompt:
    no unit of their own (a decision row with no call, input_tokens 0)."""
    messages: list[Message] = [
        SystemMessage("sys"),  # 0
        UserMessage.text("first, unanswered"),  # 1
        UserMessage.text("second"),  # 2
        call(1),  # 3
        ToolResultMessage("c1", "out"),  # 4
        UserMessage.text("third, unanswered"),  # 5
        UserMessage.text("fourth"),  # 6
        call(2, tool=False),  # 7
        UserMessage.text("fifth, the log ends here"),  # 8
    ]
    assert unit_starts(messages, Checkpoint.CALL) == [0, 5]
    assert turn_starts(messages) == [0, 2, 5, 6, 8]  # turn mode is unchanged
    counter = UnitCounter(Checkpoint.CALL)
    for message in messages:  # one by one, as a stream arrives
        counter.extend([message])
    assert counter.starts == [0, 5]
    assert unit_starts([SystemMessage("sys"), UserMessage.text("hi")], Checkpoint.CALL) == []


def test_replay_rows_are_the_calls_inspect_counts(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    rows = [
        {"role": "user", "content": "first, unanswered"},
        {"role": "user", "content": "second"},
        {
            "role": "assistant",
            "content": "a",
            "usage": {"prompt_tokens": 900, "completion_tokens": 9},
        },
        {"role": "user", "content": "third, unanswered"},
        {"role": "user", "content": "fourth"},
        {
            "role": "assistant",
            "content": "b",
            "usage": {"prompt_tokens": 950, "completion_tokens": 7},
        },
        {"role": "user", "content": "fifth, the log ends here"},
    ]
    path.write_text(json.dumps({"messages": rows}) + "\n")
    runner = CliRunner()
    out = tmp_path / "out"
    args = ["replay", str(path), "--dry-run", "--checkpoint", "call", "--out", str(out)]
    assert runner.invoke(cli, args).exit_code == 0
    decisions = [json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()]
    (info,) = json.loads(runner.invoke(cli, ["inspect", str(path), "--json"]).stdout)
    assert info["calls"] == 2 == len(decisions)
    assert [d["input_tokens"] for d in decisions] == [900, 950]
    sweep = runner.invoke(cli, ["sweep", str(path), "--checkpoint", "call", "--json"])
    assert sweep.exit_code == 0, sweep.output
