"""tsum sweep: the fast path agrees exactly with the engine; figures; CLI."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.corpus import CORPUS as REAL
from tests.support.sweep_specs import build, config_spec, conversation_spec, long_recorded
from transcript_tools.cli.main import cli
from transcript_tools.engine.config import (
    Checkpoint,
    Measure,
    ReplaySettings,
    SlotMode,
    SummaryConfig,
)
from transcript_tools.engine.messages import (
    AssistantMessage,
    Compaction,
    Conversation,
    Message,
    Usage,
    UserMessage,
)
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.rules import (
    depends_on_summary_text,
    fixed_cadence,
    split_turns,
    split_units,
)
from transcript_tools.engine.session import SessionEngine
from transcript_tools.errors import ConfigError
from transcript_tools.reporter import QUIET
from transcript_tools.sweep.config import SweepConfig
from transcript_tools.sweep.driver import Sweep, _offline_executor, sweep_grid
from transcript_tools.sweep.engine_path import evaluate_engine
from transcript_tools.sweep.simulate import evaluate_fast, profile_conversation, simulate


def engine_fires(conv: Conversation, cfg: SweepConfig, *, dry_run: bool) -> list[int]:
    settings = ReplaySettings(
        summary=cfg.summary_config(SummaryConfig()),
        mode=cfg.mode,
        measure=cfg.measure,
        dry_run=dry_run,
        checkpoint=cfg.checkpoint,
    )
    engine = SessionEngine(conv.session_id, settings)
    executor = _offline_executor()
    for _, messages in split_units(conv.messages, cfg.checkpoint):
        request = engine.submit_turn(messages)
        if request is not None:
            engine.complete_summary(asyncio.run(executor.execute(request)))
    fired = ("would_summarize", "summarized", "failed")
    unit = "call" if cfg.checkpoint is Checkpoint.CALL else "turn"
    return [d[unit] for d in engine.decisions if d["decision"] in fired]


@settings(max_examples=200, deadline=None)
@given(conversation_spec, config_spec, st.sampled_from(list(Checkpoint)))
def test_fast_schedule_equals_engine_dry_run(
    spec: tuple, cfg: SweepConfig, checkpoint: Checkpoint
) -> None:
    """Any usage (recorded, estimated, mixed), any measure and mode, per turn or per
    call: the dry-run schedule -- where summaries cannot move the watermark (a dry run
    under the current measure in Focused mode estimates their effect instead:
    ``test_dry_run_estimate``)."""
    conv = build(spec)
    cfg = replace(cfg, checkpoint=checkpoint)
    if cfg.measure is Measure.CURRENT and cfg.mode is SlotMode.FOCUSED:
        cfg = replace(cfg, mode=SlotMode.FULL)
    profile = profile_conversation(conv, checkpoint=checkpoint)
    assert simulate(profile, cfg) == engine_fires(conv, cfg, dry_run=True)


@settings(max_examples=60, deadline=None)
@given(conversation_spec, config_spec, st.booleans())
def test_fast_path_equals_engine_with_summaries(
    spec: tuple, cfg: SweepConfig, all_recorded: bool
) -> None:
    """Where the sweep takes the fast path, the real engine (summaries applied) agrees:
    with estimated usage too (an estimated call never sees tsum's view)."""
    conv = build(spec, all_recorded=all_recorded)
    profile = profile_conversation(conv)
    template = load_template("zh")  # the default
    if depends_on_summary_text(cfg.mode, cfg.measure, template) and simulate(profile, cfg):
        return
    assert simulate(profile, cfg) == engine_fires(conv, cfg, dry_run=False)


def test_engine_path_is_taken_only_where_summary_text_matters() -> None:
    zh = load_template("zh")
    cumulative = SweepConfig(0.5, 100, 1)  # recorded or estimated usage alike
    current = SweepConfig(0.5, 100, 1, measure=Measure.CURRENT)
    full = SweepConfig(0.5, 100, 1, mode=SlotMode.FULL, measure=Measure.CURRENT)
    assert not depends_on_summary_text(cumulative.mode, cumulative.measure, zh)
    assert depends_on_summary_text(current.mode, current.measure, zh)
    assert not depends_on_summary_text(full.mode, full.measure, zh)


def test_fast_figures_match_the_engine() -> None:
    conv = long_recorded()
    turns = split_turns(conv.messages)
    template = load_template(None)
    profile = profile_conversation(conv, template=template)
    cfg = SweepConfig(0.5, 20000, 2)
    fast = evaluate_fast(profile, cfg)
    slow = asyncio.run(
        evaluate_engine(
            conv,
            turns,
            profile,
            cfg,
            base=SummaryConfig(),
            template=template,
            keep_recent_turns=3,
            executor=_offline_executor(),
            provider_name="offline",
        )
    )
    assert fast.fires == slow.fires == [2, 4, 6, 8, 10]
    assert (
        fast.prompt_chars == slow.prompt_chars
    )  # the same formatted text, computed from prefix sums
    assert abs(fast.prompt_tokens - slow.prompt_tokens) <= 0.02 * slow.prompt_tokens
    assert fast.fixed_cadence and slow.fixed_cadence
    # view with summaries: fast assumes summaries of max_tokens; the offline ones are shorter
    assert fast.peak_with >= slow.peak_with and fast.sum_with >= slow.sum_with
    assert fast.peak_with < profile.view_peak


def test_prompt_size_follows_the_30k_cap() -> None:
    messages: list[Message] = []
    for i in range(40):
        messages += [
            UserMessage.text(f"q{i} " + "y" * 2000),
            AssistantMessage.text("z" * 1500, Usage(1, 1)),
        ]
    messages.append(UserMessage.text("w" * 45000))
    conv = Conversation("cap", "mem", "native", messages)
    template = load_template(None)
    profile = profile_conversation(conv, template=template)
    from tests.support.rendering import render_summary_prompt

    for turn in (0, 5, 39, 40):
        end = profile.history_end[turn]
        prompt = render_summary_prompt(conv.messages[:end], template, SummaryConfig())
        assert prompt is not None and profile.prompt_size(turn)[0] == len(prompt)


@pytest.mark.parametrize(
    ("decisions", "debounce", "expected"),
    [
        (
            ["below_threshold", "debounced", "would_summarize", "debounced", "would_summarize"],
            2,
            True,
        ),
        (["would_summarize", "would_summarize", "would_summarize"], 0, True),
        (["would_summarize", "below_threshold", "would_summarize"], 1, False),
        (["below_threshold", "would_summarize", "debounced"], 2, False),  # one fire is no cadence
        (["summarized", "failed", "summarized", "debounced"], 1, True),
        (["summarized", "debounced", "debounced", "summarized"], 1, False),  # gap 3 with debounce 1
    ],
)
def test_fixed_cadence(decisions: list[str], debounce: int, expected: bool) -> None:
    assert fixed_cadence(decisions, debounce) is expected


def test_current_measure_sees_the_summary() -> None:
    """Recorded prompts are the original run's: after a summary the view (and watermark) drop."""
    from transcript_tools.engine.tokens import estimate_message_tokens

    messages: list[Message] = []
    seen = 0
    for i in range(10):
        user = UserMessage.text(f"step {i} " + "alpha beta " * 400)
        seen += estimate_message_tokens(user)
        reply = AssistantMessage.text(
            "done " * 300, Usage(seen + 500, 300)
        )  # + a hidden system prompt
        seen += estimate_message_tokens(reply)
        messages += [user, reply]
    conv = Conversation("s", "mem", "native", messages)
    cfg = SummaryConfig(max_context_tokens=8000, trigger_token_ratio=0.5, debounce_turns=1)
    settings = ReplaySettings(summary=cfg, measure=Measure.CURRENT, keep_recent_turns=1)
    engine = SessionEngine("s", settings)
    executor = _offline_executor()
    for _, turn_messages in split_turns(conv.messages):
        request = engine.submit_turn(turn_messages)
        if request is not None:
            engine.complete_summary(asyncio.run(executor.execute(request)))
    marks = [d["watermark"] for d in engine.decisions]
    fired = [d["turn"] for d in engine.decisions if d["decision"] == "summarized"]
    first_call = messages[1]
    assert isinstance(first_call, AssistantMessage) and first_call.usage is not None
    assert (
        marks[0] == first_call.usage.total_tokens
    )  # no summary yet: the latest call's prompt + output
    assert fired and marks[fired[0] + 1] < marks[fired[0]]  # the dropped turns are gone
    assert len(fired) < len(marks) - fired[0]  # so it does not fire at every turn
    assert not fixed_cadence([d["decision"] for d in engine.decisions], 1)


def test_the_seeds_grid_validates_and_dedups() -> None:
    grid = sweep_grid((), [1000], ratios=[0.5, 0.5, 0.75], debounces=[1, 3])
    assert [(c.trigger_token_ratio, c.debounce_turns) for c in grid] == [
        (0.5, 1),
        (0.5, 3),
        (0.75, 1),
        (0.75, 3),
    ]
    with pytest.raises(ConfigError):
        sweep_grid((), [1000], ratios=[1.5], debounces=[1])


def test_compaction_distance_and_sample() -> None:
    conv = long_recorded()
    conv.compactions.append(
        Compaction(message_index=conv.messages.index(conv.messages[9]), source="claude-code")
    )
    result = Sweep([SweepConfig(0.5, 20000, 2)], sample_size=3, reporter=QUIET).run([])
    assert result.conversations == 0
    sweep = Sweep([SweepConfig(0.5, 20000, 2), SweepConfig(0.9, 10**9, 2)], sample_size=3)
    result = SweepResultHarness.run(sweep, [conv])
    first, never = (s.to_json() for s in result.stats)
    assert first["compaction_conversations"] == 1 and first["compaction_delta_median"] is not None
    assert never["compaction_never_triggered"] == 1 and never["summary_calls"] == 0
    assert result.samples and result.samples[0].fires[0] == [2, 4, 6, 8, 10]


class SweepResultHarness:
    """Feed in-memory conversations through Sweep._one (what run() does per conversation)."""

    @staticmethod
    def run(sweep: Sweep, conversations: list[Conversation]):  # type: ignore[no-untyped-def]
        from transcript_tools.engine.prompt import template_from_config
        from transcript_tools.sweep.driver import SweepResult
        from transcript_tools.sweep.stats import ConfigStats

        sweep.template = template_from_config(sweep.base.summary_prompt)
        result = SweepResult(sweep.configs, [ConfigStats(c) for c in sweep.configs])
        heap: list = []
        for i, conv in enumerate(conversations):
            asyncio.run(sweep._one(i, conv, result, heap))
        result.samples = [s for _, _, s in sorted(heap, key=lambda item: item[2].profile.index)]
        return result


# ---- CLI ------------------------------------------------------------------------------------


def write_chat(path: Path, turns: int, usage: bool) -> None:
    lines = [{"role": "system", "content": "You help."}]
    for i in range(turns):
        lines.append({"role": "user", "content": f"question {i} " + "detail " * 100})
        reply = {"role": "assistant", "content": "answer " * 150}
        if usage:
            reply["usage"] = {"prompt_tokens": 900 * (i + 1), "completion_tokens": 150}
        lines.append(reply)
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    for n in range(3):
        write_chat(root / f"c{n}.jsonl", 8 + 4 * n, usage=True)
    return root


def test_cli_sweep_table_and_no_provider(corpus: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "sweep",
            str(corpus),
            "--ratio",
            "0.5,0.9",
            "--ratio",
            "0.75",
            "--max-context-tokens",
            "4000",
            "--debounce",
            "1,3",
            "--sort",
            "-calls",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["#", "ratio", "max_ctx"]
    rows = [line for line in lines[2:8]]
    assert len(rows) == 6
    calls = [int(r.split()[7]) for r in rows]
    assert calls == sorted(calls, reverse=True)
    assert "sorted by total summary calls (descending" in result.stdout
    assert "no provider was called" in result.stdout
    assert "3 conversation(s)" in result.stderr


def test_cli_sweep_json_csv_and_estimated(tmp_path: Path) -> None:
    write_chat(tmp_path / "e.jsonl", 20, usage=False)
    runner = CliRunner()
    result = runner.invoke(
        cli,
        [
            "sweep",
            str(tmp_path / "e.jsonl"),
            "--max-context-tokens",
            "4000",
            "--debounce",
            "2",
            "--measure",
            "cumulative,current",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [c["measure"] for c in doc["configs"]] == ["cumulative", "current"] or len(
        doc["configs"]
    ) == 2
    # estimated usage: the current measure runs the engine, the cumulative one is computed
    # from the token series (rules.depends_on_summary_text)
    assert "offline provider" in doc["summary_source"]
    assert (doc["engine_runs"], doc["fast_runs"]) == (1, 1)
    cumulative = next(c for c in doc["configs"] if c["measure"] == "cumulative")
    current = next(c for c in doc["configs"] if c["measure"] == "current")
    assert cumulative["fixed_cadence_conversations"] == 1  # cost_so_far never goes down
    assert current["summary_calls"] < cumulative["summary_calls"]
    csv_out = runner.invoke(cli, ["sweep", str(tmp_path), "--csv", "--debounce", "1,2"])
    assert csv_out.exit_code == 0
    header, *rows = csv_out.stdout.strip().splitlines()
    assert "summary_calls" in header.split(",") and len(rows) == 2


def test_cli_sweep_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(cli, ["sweep", str(empty)])
    assert result.exit_code == 3 and "no conversations" in result.stderr
    result = runner.invoke(cli, ["sweep", str(empty), "--ratio", "abc"])
    assert result.exit_code == 2 and "abc" in result.stderr
    result = runner.invoke(cli, ["sweep", str(empty), "--provider", "anthropic"])
    assert result.exit_code == 2 and "never calls an API" in result.stderr
    result = runner.invoke(cli, ["sweep", str(empty), "--json", "--csv"])
    assert result.exit_code == 2


@pytest.mark.skipif(
    not REAL.is_dir(), reason=f"real corpus not found at {REAL} (shared/ beside the repo)"
)
def test_real_corpus_recorded_logs_need_no_provider() -> None:
    paths = [str(REAL / "chat-completions"), str(REAL / "claude-code"), str(REAL / "codex")]
    configs = sweep_grid((), [32000, 128000], ratios=[0.5, 0.9], debounces=[1, 5])
    result = Sweep(configs, reporter=QUIET).run(paths)
    assert result.conversations >= 30 and not result.errors
    rows = [s.to_json() for s in result.stats]
    assert all(r["summarizing_conversations"] > 0 for r in rows)
    assert any(r["compaction_conversations"] for r in rows)
    # the seed's cumulative watermark: once crossed, every debounce turns
    assert max(r["fixed_cadence_conversations"] for r in rows) > 0
