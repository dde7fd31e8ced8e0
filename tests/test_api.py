"""The library's front door: the README's code runs as written, also inside a
running event loop; library defaults follow the spec."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import transcript_tools as tt
from tests.support.fakes import FakeProvider, drive, turn
from transcript_tools.providers.executor import SummaryExecutor

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


def readme_examples() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Use it from Python") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    return blocks


def run_readme_example(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    return out.getvalue()


@pytest.mark.parametrize("inside_a_loop", [False, True], ids=["plain", "inside-running-loop"])
def test_readme_library_example_runs(
    inside_a_loop: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's library section, run as written: every workflow of the CLI."""
    shutil.copytree(SAMPLES, tmp_path / "samples")
    monkeypatch.chdir(tmp_path)  # the example's paths are relative; it writes runs/
    first, engine_example = readme_examples()
    if inside_a_loop:

        async def main() -> str:  # as in Jupyter: a loop is running while the sync API is called
            asyncio.get_running_loop()
            return run_readme_example(first)

        printed = asyncio.run(main())
    else:
        printed = run_readme_example(first)
    assert printed.splitlines() == [
        "native 8 turns",
        "openai 2 turns",
        "openai 18 turns",
        "long_session 93 messages",
        "ok [3, 6, 9, 12, 15]",
        "False",  # --checkpoint call moves summaries
        "False",  # the check against the run it replays passes
        "4 configurations over 3 conversations",
        "['zh', 'en'] 3",
        "3",
    ]
    assert (tmp_path / "runs" / "turn" / "decisions.jsonl").stat().st_size > 0
    assert (
        run_readme_example(engine_example).strip()
        == "the summary ['prompt', 'summary', 'snapshot', 'decision'] []"
    )


def test_read_detects_formats_and_streams_conversations() -> None:
    convs = list(tt.read_corpus(SAMPLES))
    assert {c.format for c in convs} >= {"openai"} and len(convs) == 3
    assert all(isinstance(c, tt.Conversation) for c in convs)


def test_replay_status_and_out_dir(tmp_path: Path) -> None:
    result = tt.replay_corpus(SAMPLES / "long_session.jsonl", out=tmp_path / "out")
    assert result.ok and result.sessions == []  # written, not collected
    assert (tmp_path / "out" / "decisions.jsonl").stat().st_size > 0
    assert orjson.loads((tmp_path / "out" / "manifest.json").read_bytes())["status"] == "complete"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert tt.replay_corpus(empty).status is tt.RunStatus.NO_SESSIONS
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    failed = tt.replay_corpus(bad)
    assert failed.status is tt.RunStatus.INPUT_ERRORS and "bad.jsonl:1" in failed.stats.errors[0]


def test_replay_with_a_provider_object_names_it_and_caches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TSUM_HOME", str(tmp_path / "home"))
    provider = FakeProvider(default="my summary")
    result = tt.replay_corpus(SAMPLES / "long_session.jsonl", provider=provider, model="m1")
    summaries = result.sessions[0].engine.summaries
    assert result.ok and summaries and {s["provider"] for s in summaries} == {"fake"}
    assert {s["model"] for s in summaries} == {"m1"} and len(provider.prompts) == len(summaries)
    assert not (tmp_path / "home").exists()  # no response cache was opened


def test_diff_of_two_runs(tmp_path: Path) -> None:
    tt.replay_corpus(SAMPLES, out=tmp_path / "a")
    tt.replay_corpus(SAMPLES, tt.SummaryConfig(debounce_turns=2), out=tmp_path / "b")
    assert tt.diff_outputs(tmp_path / "a", tmp_path / "a").identical
    assert not tt.diff_outputs(tmp_path / "a", tmp_path / "b").identical


def test_engine_without_summary_config_never_summarizes() -> None:
    engine, provider = tt.SessionEngine("s"), FakeProvider()
    drive(engine, [turn(f"t{i}", usage=tt.Usage(10**6, 10)) for i in range(10)], provider)
    assert provider.prompts == [] and {d["decision"] for d in engine.decisions} == {"disabled"}


def test_records_name_the_provider_that_ran_the_request() -> None:
    settings = tt.ReplaySettings(
        summary=tt.SummaryConfig(max_context_tokens=20, trigger_token_ratio=0.5, debounce_turns=0)
    )
    engine = tt.SessionEngine("s", settings, provider_name="primary")
    request = engine.submit_turn(turn("over the line"))
    assert request is not None
    outcome = asyncio.run(
        SummaryExecutor(FakeProvider(name="fallback"), cache=None).execute(request)
    )
    engine.complete_summary(outcome)
    assert engine.summaries[0]["provider"] == "fallback"


def test_record_sink_keeps_nothing_in_the_engine() -> None:
    seen: list[tuple[str, dict[str, object]]] = []
    settings = tt.ReplaySettings(
        summary=tt.SummaryConfig(max_context_tokens=20, trigger_token_ratio=0.5, debounce_turns=1)
    )
    engine = tt.SessionEngine(
        "s", settings, record_sink=lambda kind, record: seen.append((kind, record))
    )
    drive(engine, [turn(f"msg {i}") for i in range(50)], FakeProvider())
    assert engine.decisions == engine.summaries == engine.snapshots == [] and engine.prompts == {}
    kinds = [kind for kind, _ in seen]
    assert kinds.count("decision") == 50 and kinds.count("summary") == kinds.count("snapshot") == 49
    assert kinds.count("prompt") == 49 and engine.get_conversation_summary() == "summary"
    assert not engine._prompt_shas  # not even the hashes of past prompts are kept


def test_check_uses_the_library_not_the_replay_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transcript_tools.cli import replay_cmd
    from transcript_tools.cli.main import cli

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("check invoked the replay command")

    baseline = tmp_path / "baseline"
    tt.replay_corpus(SAMPLES, out=baseline)
    monkeypatch.setattr(replay_cmd.replay_command, "callback", refuse)
    result = CliRunner().invoke(cli, ["check", "--baseline", str(baseline), str(SAMPLES)])
    assert result.exit_code == 0, result.stderr


def test_the_package_root_exports_what_it_documents() -> None:
    import transcript_tools.diff.compare
    import transcript_tools.replay.driver
    import transcript_tools.sweep.driver  # noqa: F401  (a submodule import must not hide a function)

    for function in (tt.read_corpus, tt.replay_corpus, tt.sweep_corpus, tt.diff_outputs):
        assert callable(function)
    for name in tt.__all__:
        assert getattr(tt, name) is not None, name
    assert len(tt.__all__) == 65 and {"check", "SummaryConfig"} <= set(tt.__all__) & set(dir(tt))
    namespace: dict[str, object] = {}
    exec("from transcript_tools import *", namespace)
    assert namespace["SessionEngine"] is tt.SessionEngine
    assert tt.SummaryOutcome is tt.engine.requests.SummaryOutcome  # type: ignore[attr-defined]


def test_every_export_is_an_explicit_re_export_for_type_checkers() -> None:
    """A user's ``mypy --strict`` (no implicit re-export) and pyright see a package's import
    as exported only in the form ``from .m import X as X`` (PEP 484): written
    ``from .m import X``, every README name was "does not explicitly export attribute"."""
    import ast

    source = Path(tt.__file__).read_text(encoding="utf-8")
    block = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
    )
    aliases = [alias for node in block.body for alias in getattr(node, "names", [])]
    assert len(aliases) == len(tt.__all__) == 65
    assert [a.name for a in aliases if a.asname != a.name] == []


def test_run_settings_carry_the_clis_settings_into_a_function(tmp_path: Path) -> None:
    """load_settings (flags > TSUM_* > file > default) reaches the run; arguments win."""
    toml = tmp_path / "tsum.toml"
    toml.write_text("debounce_turns = 2\nprompt = 'en'\nmeasure = 'current'\n", encoding="utf-8")
    loaded = tt.load_settings({"trigger_token_ratio": 0.5}, config=toml, env={})
    tt.replay_corpus(SAMPLES / "long_session.jsonl", run_settings=loaded, out=tmp_path / "a")
    info = orjson.loads((tmp_path / "a" / "run.json").read_bytes())
    assert info["summary_config"]["debounce_turns"] == 2
    assert info["summary_config"]["trigger_token_ratio"] == 0.5
    assert info["template"]["name"] == "en" and info["measure"] == "current"
    tt.replay_corpus(
        SAMPLES / "long_session.jsonl", run_settings=loaded, prompt="zh", out=tmp_path / "b"
    )
    assert orjson.loads((tmp_path / "b" / "run.json").read_bytes())["template"]["name"] == "zh"


def test_a_prompt_beside_a_typed_config_sets_its_template(tmp_path: Path) -> None:
    """``prompt=`` with ``config=`` is ``--prompt`` with ``--max-context-tokens``: the config's
    default template does not silently win (the README's pytest example gives both)."""
    config = tt.SummaryConfig(max_context_tokens=20_000, summary_model="m")
    log = SAMPLES / "long_session.jsonl"
    tt.replay_corpus(log, config, prompt="en", out=tmp_path / "en")
    info = orjson.loads((tmp_path / "en" / "run.json").read_bytes())
    assert info["template"]["name"] == "en"
    assert info["summary_config"]["max_context_tokens"] == 20_000
    assert info["summary_config"]["summary_model"] == "m"
    prompts = (tmp_path / "en" / "prompts.jsonl").read_text(encoding="utf-8")
    assert prompts.count("Summarize the conversation below") == 5  # every firing, English
    tt.replay_corpus(log, config, out=tmp_path / "zh")  # no prompt: the config's own
    assert orjson.loads((tmp_path / "zh" / "run.json").read_bytes())["template"]["name"] == "zh"
    english, chinese = (tt.eval_corpus(log, prompts=[p], config=config) for p in ("en", "zh"))
    assert english.result.labels == ["en"] and "en: 5 summary requests" in repr(english)
    assert "11356 in" in repr(english) and "9128 in" in repr(chinese)  # its own template


def test_a_keyword_no_function_reads_is_a_type_error(tmp_path: Path) -> None:
    """``**options`` are the provider options: a flag's name there was dropped unread."""
    log = SAMPLES / "long_session.jsonl"
    with pytest.raises(TypeError, match=r"max_context_tokens \(SummaryConfig fields: pass"):
        tt.replay_corpus(log, max_context_tokens=200_000)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) prompt$"):
        tt.eval_corpus(log, prompt="en")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="cache_onyl"):
        tt.check(log, tmp_path, cache_onyl=True)  # type: ignore[call-arg]
    assert tt.replay_corpus(log, cache_only=False, concurrency=2).stats.sessions == 1


def test_eval_check_and_inspect_return_typed_results(tmp_path: Path) -> None:
    inspected = tt.inspect_corpus(SAMPLES)
    assert inspected.ok and isinstance(inspected.sessions[0], tt.SessionInfo)
    scores = tt.eval_corpus(SAMPLES, out=tmp_path / "eval")
    assert isinstance(scores, tt.EvalRun) and scores.failure() is None
    assert (tmp_path / "eval" / "eval.json").is_file() and scores.result.sessions == 3
    tt.replay_corpus(SAMPLES, out=tmp_path / "base")
    checked = tt.check(SAMPLES, tmp_path / "base")
    assert isinstance(checked, tt.CheckResult) and not checked.failed
    assert checked.diff is not None and checked.diff.identical
    with pytest.raises(tt.TsumError, match="baseline"):
        tt.check(SAMPLES, tmp_path / "no-such-baseline")


@pytest.mark.parametrize(
    ("axis", "value", "named"),
    [
        ("modes", "nope", "mode must be focused or full, got 'nope'"),
        ("measures", "peak", "measure must be cumulative or current, got 'peak'"),
        ("checkpoints", "step", "checkpoint must be turn or call, got 'step'"),
        ("max_context_tokens", "big", "max_context_tokens must be an integer or auto, got 'big'"),
    ],
)
def test_a_wrong_sweep_axis_value_is_a_config_error(axis: str, value: str, named: str) -> None:
    """A setting that cannot work raises ConfigError (README), before any file is read: a
    sweep axis's value was converted bare (SlotMode(m), int(window)), and leaked ValueError."""
    with pytest.raises(tt.ConfigError) as caught:
        tt.sweep_corpus(SAMPLES / "long_session.jsonl", **{axis: [value]})
    assert str(caught.value) == named
    # the values it takes are the ones tsum sweep takes: names, members, auto
    result = tt.sweep_corpus(
        SAMPLES / "long_session.jsonl",
        modes=["full", tt.SlotMode.FOCUSED],
        measures=["current"],
        max_context_tokens=["auto", 20_000],
    )
    assert len(result.configs) == 4


def test_an_unknown_out_format_is_refused_before_the_replay(tmp_path: Path) -> None:
    """replay_corpus(out_format=...) was checked only after every session had been replayed
    (its summaries paid for), then raised a bare ValueError: now a ConfigError up front."""
    out = tmp_path / "out"
    with pytest.raises(tt.ConfigError) as caught:
        tt.replay_corpus(SAMPLES / "long_session.jsonl", out=out, out_format="json")
    assert str(caught.value) == "--out-format 'json': not an output format (known: native, atif)"
    assert not out.exists()  # refused before the run wrote anything
    tt.replay_corpus(SAMPLES / "long_session.jsonl", out=out, out_format="atif")
    assert [p.name for p in (out / "compressed").iterdir()] == ["long_session.json"]


def test_load_settings_refuses_a_key_no_setting_has() -> None:
    """``tt.load_settings({"debounce_turn": 2})`` (a typo) ran at the default debounce, 3,
    without a word; a settings file's unknown key was already refused, now the flags' are."""
    with pytest.raises(tt.ConfigError, match=r"^unknown setting\(s\) debounce_turn \(known: "):
        tt.load_settings({"debounce_turn": 2}, env={}, read_file=False)
    run = tt.load_settings({"debounce_turns": 2, "model": "m"}, env={}, read_file=False)
    assert run.settings.summary is not None and run.settings.summary.debounce_turns == 2


def test_fidelity_corpus_takes_as_is_as_tsum_fidelity_does() -> None:
    """``tsum fidelity --as-is`` had no keyword in the library: fidelity_corpus always
    followed the recorded release, so a script could not reproduce an --as-is run."""
    from transcript_tools.cli.fidelity_cmd import as_json
    from transcript_tools.cli.main import cli

    log = ROOT / "tests" / "fixtures" / "formats" / "edge_cases_claude_code.jsonl"
    for extra, as_is in (([], False), (["--as-is"], True)):
        shown = CliRunner().invoke(cli, ["fidelity", str(log), "--json", *extra])
        result = tt.fidelity_corpus(log, as_is=as_is)
        assert orjson.loads(shown.stdout) == orjson.loads(orjson.dumps(as_json(result)))
    followed, as_is_rows = (tt.fidelity_corpus(log, as_is=a).rows for a in (False, True))
    assert [r.to_json() for r in followed] != [r.to_json() for r in as_is_rows]


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"summary_tokens": -5000}, "summary_tokens must be >= 0, got -5000"),
        ({"price_per_mtok": -3.0}, "price_per_mtok must be a number >= 0, got -3.0"),
        ({"report_sample": 0}, "report_sample must be >= 1, got 0"),
        ({"sort": "nope"}, "unknown sort key 'nope' (known: config, calls, cost, "),
    ],
)
def test_sweep_corpus_checks_its_numbers_and_sort_before_the_sweep(
    given: dict[str, object], named: str, tmp_path: Path
) -> None:
    """tsum sweep's ranges held for the CLI only: sweep_corpus(summary_tokens=-5000,
    price_per_mtok=-3) printed a cost of $-0.03 and a negative mean view, and a bad sort
    raised ValueError only once the whole grid had run, at the report."""
    report = tmp_path / "r.html"
    with pytest.raises(tt.ConfigError) as caught:
        tt.sweep_corpus(SAMPLES, report=report, **given)
    assert str(caught.value).startswith(named)
    assert not report.exists()


def test_a_prompt_that_cannot_work_is_a_config_error(tmp_path: Path) -> None:
    """The README: "a setting that cannot work raises a ConfigError". A prompt naming no
    template raised TemplateError, which ``except tt.ConfigError`` let through."""
    log = SAMPLES / "long_session.jsonl"
    broken = tmp_path / "broken.j2"
    broken.write_text("{{ messages ", encoding="utf-8")
    calls = [
        lambda: tt.replay_corpus(log, prompt="nope"),
        lambda: tt.eval_corpus(log, prompts=["nope"]),
        lambda: tt.check(log, tmp_path / "baseline", prompt=str(broken), update=True),
    ]
    for call in calls:
        with pytest.raises(tt.ConfigError) as caught:
            call()
        assert isinstance(caught.value, tt.TemplateError)
    assert not (tmp_path / "baseline").exists()


def _files(folder: Path) -> dict[str, bytes]:
    """A replay's output files by relative path, but manifest.json (timings)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }


@pytest.mark.parametrize("prompt", [None, "en"])
def test_run_settings_with_a_policy_replay_as_tsum_replay_policy(
    prompt: str | None, tmp_path: Path
) -> None:
    """``run_settings=tt.load_settings(policy=...)`` gives a function what ``tsum replay
    --policy`` uses (README): the policy was dropped (Codex's current measure and 0.9 ratio
    became the seed's cumulative 0.75), so the records differed from the CLI's."""
    from transcript_tools.cli.main import cli
    from transcript_tools.engine.policy_toml import resolve_policy

    shown, made = tmp_path / "cli", tmp_path / "api"
    args = ["replay", str(SAMPLES), "--policy", "codex", "--out", str(shown), "--silent"]
    args += ["--max-context-tokens", "8000"] + (["--prompt", prompt] if prompt else [])
    assert CliRunner().invoke(cli, args).exit_code == 0
    loaded = tt.load_settings({"max_context_tokens": 8000}, policy=resolve_policy("codex"))
    tt.replay_corpus(SAMPLES, run_settings=loaded, prompt=prompt, out=made)
    assert _files(made) == _files(shown)
    assert b'"threshold":7200.0' in _files(made)["decisions.jsonl"]  # Codex's 0.9 of 8000
