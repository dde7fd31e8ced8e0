"""``tsum check``: replay + diff against a baseline, --update, --cache-only; determinism."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from transcript_tools.cli.main import cli
from transcript_tools.diff.baseline import Missing, cache_only_message, update_baseline
from transcript_tools.diff.compare import DIFFABLE_FILES

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
ZH_TEMPLATE = ROOT / "prompts" / "summary.zh.j2"


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Relative paths, as in a CI checkout (conftest already cleans the environment)."""
    monkeypatch.chdir(tmp_path)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository as CI sees it: samples, a prompt template, a cache file (paths relative)."""
    shutil.copytree(SAMPLES, tmp_path / "samples")
    (tmp_path / "prompts").mkdir()
    shutil.copy(ZH_TEMPLATE, tmp_path / "prompts" / "summary.zh.j2")
    return tmp_path


CHECK = (
    "check",
    "--baseline",
    "baseline",
    "samples",
    "--prompt",
    "prompts/summary.zh.j2",
    "--cache",
    "cache.sqlite3",
)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_end_to_end_prompt_change_fails_then_bless_passes(repo: Path) -> None:
    # 1. bless a first baseline (records the responses in the cache)
    first = run(*CHECK, "--update")
    assert first.exit_code == 0, first.stderr
    assert first.stdout == ""
    assert first.stderr.endswith("tsum: baseline baseline written (new baseline)\n")
    assert sorted(snapshot(repo / "baseline")) == [
        ".tsum-output",  # tsum's own folder: a walk of the inputs skips it
        "compressed/clickhouse-migration-zh.jsonl",
        "compressed/long_session.jsonl",
        "compressed/resize-job-incident.jsonl",
        *sorted([*DIFFABLE_FILES, "eval.json"]),  # eval.json: tsum eval's scores (docs/eval.md)
    ]  # no manifest.json: no timings in a committed baseline

    # 2. unchanged prompt: passes from the cache alone, no API call
    same = run(*CHECK, "--cache-only")
    assert same.exit_code == 0, same.stderr
    assert (
        same.stdout
        == "tsum diff baseline → this run\nno differences: 3 session(s), 5 summary firing(s)\n"
    )
    assert "0 API calls, 5 cached" in same.stderr
    assert same.stderr.endswith("tsum: no differences (3 session(s), 5 summary firing(s))\n")

    # 3. one word of the template changes
    template = repo / "prompts" / "summary.zh.j2"
    template.write_text(
        template.read_text(encoding="utf-8").replace("简洁", "详细"), encoding="utf-8"
    )
    blessed = snapshot(repo / "baseline")

    # 3a. CI without keys: one clear message, exit 3, nothing on stdout
    keyless = run(*CHECK, "--cache-only")
    assert keyless.exit_code == 3
    assert keyless.stdout == ""
    error = keyless.stderr[keyless.stderr.index("tsum: error: ") :]
    assert error == (
        "tsum: error: 13 summary prompt(s) have no recorded response (--cache-only): 5 changed since the baseline, "
        "8 at turns where the baseline has no summary, in:\n"
        "  long_session turns 5-17\n"
        "  (a summary without a response fails, and the checkpoint tries again at every later turn)\n"
        "Record them where the provider's API key is available (cached responses are reused: only these are paid "
        "for), review the diff, then bless the new baseline:\n"
        "  tsum check --baseline baseline --prompt prompts/summary.zh.j2 --cache cache.sqlite3 samples\n"
        "  tsum check --baseline baseline --prompt prompts/summary.zh.j2 --cache cache.sqlite3 samples --update\n"
    )

    # 3b. the recording command: exit 1, the prompt diff on stdout, baseline untouched
    changed = run(*CHECK)
    assert changed.exit_code == 1, changed.stderr
    assert (
        "template: summary.zh.j2 (jinja, bdd1d00c429d) → summary.zh.j2 (jinja, " in changed.stdout
    )
    assert "      -请把下面的对话历史压缩成一段简洁的摘要" in changed.stdout
    assert "      +请把下面的对话历史压缩成一段详细的摘要" in changed.stdout
    assert changed.stderr.endswith(
        "tsum: differences: 1 of 3 session(s) changed; 0 added, 0 removed; 0 schedule change(s); "
        "5 prompt(s) and 0 summary text(s) changed; template changed\n"
    )
    assert snapshot(repo / "baseline") == blessed  # never blessed automatically

    # 4. bless; 5. CI passes again, keyless
    bless = run(*CHECK, "--update", "--markdown")
    assert bless.exit_code == 0, bless.stderr
    assert bless.stdout.startswith(
        "### tsum: 1 of 3 sessions differ — 5 prompts, 0 summaries changed\n"
    )
    assert (
        "tsum: baseline baseline updated (differences: 1 of 3 session(s) changed;" in bless.stderr
    )
    again = run(*CHECK, "--cache-only")
    assert again.exit_code == 0, again.stderr
    assert "no differences" in again.stdout


def test_missing_baseline_says_how_to_create_it(repo: Path) -> None:
    result = run(*CHECK)
    assert result.exit_code == 3 and result.stdout == ""
    assert result.stderr == (
        "tsum: error: baseline: baseline: no such directory (expected the --out directory of tsum replay)\n"
        "(create or rewrite it with: tsum check --baseline baseline --prompt prompts/summary.zh.j2 "
        "--cache cache.sqlite3 samples --update)\n"
    )
    assert not (repo / "cache.sqlite3").exists()  # failed before any replay


def test_missing_baseline_names_the_policy_as_given(repo: Path) -> None:
    """The hint once printed the ``Policy`` read from the file (its repr), not the file."""
    (repo / "my-policy.toml").write_text('extends = "codex"\n', encoding="utf-8")
    result = run("check", "samples", "--policy", "my-policy.toml", "--baseline", "baseline")
    assert result.exit_code == 3
    assert result.stderr.endswith(
        "(create or rewrite it with: tsum check --baseline baseline --policy my-policy.toml "
        "samples --update)\n"
    )


def test_bad_input_exits_3_and_leaves_the_baseline(repo: Path) -> None:
    assert run(*CHECK, "--update", "--silent").exit_code == 0
    blessed = snapshot(repo / "baseline")
    (repo / "samples" / "broken.jsonl").write_bytes(b'{"role": "user", "content": oops}\n')
    for extra in ((), ("--update",)):
        result = run(*CHECK, *extra)
        assert result.exit_code == 3
        assert result.stdout == ""
        assert "samples/broken.jsonl:1: invalid JSON" in result.stderr
        assert result.stderr.endswith(
            "tsum: error: the replay failed (see above): nothing compared, the baseline is unchanged\n"
        )
        assert snapshot(repo / "baseline") == blessed


def test_zero_sessions_is_a_failure(repo: Path) -> None:
    (repo / "none").mkdir()
    result = run("check", "--baseline", "baseline", "none", "--update")
    assert result.exit_code == 3
    assert "no sessions found" in result.stderr
    assert not (repo / "baseline").exists()


def test_out_keeps_the_fresh_outputs_and_json(repo: Path) -> None:
    assert run(*CHECK, "--update", "--silent").exit_code == 0
    result = run(*CHECK, "--out", "fresh", "--json", "--silent", "--ratio", "0.6")
    assert result.exit_code == 1 and result.stderr == ""
    data = orjson.loads(result.stdout)
    assert data["settings"] == [
        {"key": "summary_config.trigger_token_ratio", "new": 0.6, "old": 0.75}
    ]
    assert (repo / "fresh" / "manifest.json").is_file()  # --out is a full replay output
    assert run("diff", "baseline", "fresh", "--silent").exit_code == 1


def test_out_must_not_be_the_baseline(repo: Path) -> None:
    result = run(*CHECK, "--out", "baseline")
    assert result.exit_code == 2 and result.stdout == ""
    assert "--out must not be the --baseline directory" in result.stderr


def test_update_keeps_foreign_files_and_drops_stale_ones(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    assert (
        run(
            "replay", str(SAMPLES / "long_session.jsonl"), "--out", str(fresh), "--silent"
        ).exit_code
        == 0
    )
    baseline = tmp_path / "baseline"
    (baseline / "compressed").mkdir(parents=True)
    (baseline / "compressed" / "gone.jsonl").write_text("{}\n")
    (baseline / "manifest.json").write_text("{}\n")
    (baseline / "README.md").write_text("committed baseline\n")
    update_baseline(fresh, baseline)
    assert sorted(snapshot(baseline)) == sorted(
        [".tsum-output", "README.md", "compressed/long_session.jsonl", *DIFFABLE_FILES]
    )
    for name in DIFFABLE_FILES:
        assert (baseline / name).read_bytes() == (fresh / name).read_bytes()


def test_cache_only_message_without_a_baseline_diff() -> None:
    text = cache_only_message([Missing("a", 3), Missing("b", 1)], None, "tsum check --baseline b x")
    assert text.splitlines()[:2] == [
        "2 summary prompt(s) have no recorded response (--cache-only), in:",
        "  a turn 3; b turn 1",
    ]


def test_determinism_across_runs_concurrency_and_locations(tmp_path: Path) -> None:
    """Byte-identical diffable files whatever -j and wherever the inputs live; no paths, no times."""
    outputs = []
    for index, jobs in enumerate(("1", "8")):
        where = tmp_path / f"machine{index}" / "deep" / "checkout"
        shutil.copytree(SAMPLES, where / "samples")
        out = tmp_path / f"out{index}"
        result = run(
            "replay",
            str(where / "samples"),
            "--out",
            str(out),
            "-j",
            jobs,
            "--silent",
            "--cache",
            str(where / "cache.sqlite3"),
        )
        assert result.exit_code == 0, result.stderr
        outputs.append(out)
    first, second = (snapshot(o) for o in outputs)
    first.pop("manifest.json")
    second.pop("manifest.json")
    # the diffable files, three compressed sessions, and the .tsum-output folder marker
    assert first.keys() == second.keys() and len(first) == len(DIFFABLE_FILES) + 3 + 1
    for name in first:
        assert first[name] == second[name], name
        assert str(tmp_path).encode() not in first[name], f"{name} holds an absolute path"
    assert run("diff", str(outputs[0]), str(outputs[1])).exit_code == 0


def test_baseline_responses_make_any_cache_reproduce_it(repo: Path) -> None:
    """Blessed with one cache, checked keyless with another (a developer's machine vs CI)."""
    assert run(*CHECK, "--update", "--silent").exit_code == 0
    other = ("--cache", "ci-cache.sqlite3", "--cache-only")
    result = run(
        "check", "--baseline", "baseline", "samples", "--prompt", "prompts/summary.zh.j2", *other
    )
    assert result.exit_code == 0, result.stderr
    assert "tsum: 5 summary response(s) taken from the baseline into the cache\n" in result.stderr
    assert "0 API calls, 5 cached" in result.stderr


def test_seed_cache_prefers_the_blessed_text(repo: Path) -> None:
    from transcript_tools.diff.baseline import seed_cache
    from transcript_tools.diff.compare import load_output
    from transcript_tools.engine.requests import SummaryResponse
    from transcript_tools.engine.seed_defaults import SUMMARY_MAX_TOKENS
    from transcript_tools.providers.cache import ResponseCache, cache_key
    from transcript_tools.providers.offline import OfflineProvider

    assert run(*CHECK, "--update", "--silent").exit_code == 0
    baseline = load_output(repo / "baseline")
    provider = OfflineProvider()
    with ResponseCache(repo / "seeded.sqlite3") as cache:
        assert seed_cache(baseline, cache, provider) == 5
        assert seed_cache(baseline, cache, provider) == 0  # already there
        summary = next(s for r in baseline.sessions.values() for s in r.summaries.values())
        identity = provider.identity(baseline.run["model"])
        key = cache_key(identity, baseline.prompt(summary["prompt_sha256"]), SUMMARY_MAX_TOKENS)
        cache.put(key, identity, SummaryResponse("a different answer", "extractive-v1"))
        assert seed_cache(baseline, cache, provider) == 1
        cached = cache.get(key)
        assert cached is not None and cached.text == summary["text"]


def test_the_example_workflow_command_runs_keyless(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `tsum check` line of examples/github-workflow.yml, with the workflow's settings as env."""
    import re
    import shlex

    workflow = (ROOT / "examples" / "github-workflow.yml").read_text(encoding="utf-8")
    assert "actions/upload-artifact@" in workflow
    # the response cache is saved whatever the check's outcome: a step of its own, always()
    assert "actions/cache/restore@" in workflow and "actions/cache@" not in workflow
    save = workflow.split("- name: Save the response cache", 1)[1].split("- name:", 1)[0]
    assert "if: always()" in save and "uses: actions/cache/save@" in save
    assert "key: ${{ steps.cache.outputs.cache-primary-key }}" in save
    assert workflow.index("- name: Save the response cache") > workflow.index("- name: tsum check")
    line = re.search(r"^\s*(tsum check [^>\n]*)>", workflow, re.MULTILINE)
    assert line is not None
    args = shlex.split(line.group(1))[1:]
    assert run(*CHECK, "--update", "--silent").exit_code == 0
    monkeypatch.setenv("TSUM_BASELINE", "baseline")
    monkeypatch.setenv("TSUM_CACHE", ".tsum/cache.sqlite3")  # a fresh cache, as on a new runner
    monkeypatch.setenv("TSUM_CACHE_ONLY", "1")
    monkeypatch.setenv("TSUM_PROMPT", "prompts/summary.zh.j2")
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    # the PR comment carries the recall gate's verdict under the diff (docs/ci.md)
    assert result.stdout == (
        "### tsum: no differences (3 sessions, 5 summary firings)\n\n#### Gates\n\n"
        "- eval: artifact recall 86.4% -\\> 86.4% (+0.0%; allowed drop 5.0%): ok\n"
    )
    assert (repo / "tsum-out" / "run.json").is_file()
    docs = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "examples/github-workflow.yml" in docs and "(cli.md#exit-codes)" in docs


def test_failed_summaries_show_as_status_changes(repo: Path) -> None:
    assert run(*CHECK, "--update", "--silent").exit_code == 0
    template = repo / "prompts" / "summary.zh.j2"
    template.write_text(
        template.read_text(encoding="utf-8").replace("简洁", "详细"), encoding="utf-8"
    )
    keyless = run(*CHECK, "--cache-only", "--out", "fresh", "--silent")
    assert keyless.exit_code == 3 and keyless.stdout == ""
    result = run("diff", "baseline", "fresh")  # --out kept the run that failed
    assert result.exit_code == 1
    assert (
        "== long_session: 8 schedule change(s), 5 prompt(s) changed, 5 summary status change(s)\n"
        in result.stdout
    )
    assert "schedule: added at turns 6, 7, 9, 10, 12, 13, 15, 16 (" in result.stdout
    assert (
        "   turn 5: summarized → failed: cache miss (--cache-only): session long_session turn 5\n"
        in result.stdout
    )
    assert "summary text changed" not in result.stdout


def test_a_baseline_inside_the_inputs_is_not_read_back_as_input(repo: Path) -> None:
    nested = ("check", "--baseline", "samples/baseline", "samples", "--cache", "cache.sqlite3")
    assert run(*nested, "--update").exit_code == 0
    again = run(*nested)  # its compressed/*.jsonl is no transcript of the corpus
    assert again.exit_code == 0, again.output
    assert "tsum: no differences (3 session(s), 5 summary firing(s))" in again.stderr
    assert run(*nested, "--update").exit_code == 0  # rewritten: still marked
    assert run("replay", "samples", "--dry-run").stderr.count("3 session(s)") == 1


@pytest.mark.parametrize("baseline", [".", ".."])  # "": a usage error before (test_bad_input_files)
def test_update_refuses_the_current_folder_as_the_baseline(repo: Path, baseline: str) -> None:
    before = sorted(p.name for p in repo.parent.rglob("*"))
    result = run("check", "--baseline", baseline, "samples", "--update")
    assert result.exit_code == 2  # never exit 4 (a rename of '.') or a folder half written
    assert result.stderr == (
        f"tsum: error: --baseline {Path(baseline)}: --update writes the baseline as a folder "
        "of its own (e.g. --baseline tsum-baseline), not the current or a parent folder\n"
    )
    assert sorted(p.name for p in repo.parent.rglob("*")) == before


def test_the_ci_docs_real_run_is_what_check_prints(repo: Path) -> None:
    """docs/ci.md's "real run" after the 简洁 → 详细 edit: every line of it, but the
    timing and the prompt diff's own lines, is in what check prints."""
    docs = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    command = "$ tsum check --baseline tsum-baseline samples/ --prompt prompts/summary.zh.j2\n"
    block = docs[docs.index(command) + len(command) :].split("\n$ echo $?")[0]
    base = ("check", "--baseline", "tsum-baseline", "samples/", "--prompt", "prompts/summary.zh.j2")
    assert run(*base, "--update").exit_code == 0
    template = repo / "prompts" / "summary.zh.j2"
    template.write_text(
        template.read_text(encoding="utf-8").replace("简洁", "详细"), encoding="utf-8"
    )
    result = run(*base)
    assert result.exit_code == 1
    printed = set((result.stderr + result.stdout).splitlines())
    untimed = [line.rsplit(" in 0.", 1)[0] for line in printed]
    for line in block.splitlines():
        if line.startswith("      ") or not line.strip():  # the unified diff's lines
            continue
        if line.startswith("tsum: 3 file(s)"):
            assert line.rsplit(" in 0.", 1)[0] in untimed, line
        else:
            assert line in printed, line


def test_the_recall_gate_reads_the_logs_as_the_replay_did_skipping_bad_lines(
    tmp_path: Path,
) -> None:
    """With --skip-bad-lines the replay reads past a bad line; the recall gate scores the
    same sessions (it once read the log again without skipping, lost the whole file
    without a word, and passed on 'no scored checkpoint on one side')."""
    logs = tmp_path / "logs"
    logs.mkdir()
    text = (SAMPLES / "long_session.jsonl").read_text()
    (logs / "long_session.jsonl").write_text(text + "{not json\n")
    base = ("check", "--baseline", "baseline", "logs", "--skip-bad-lines")
    assert run(*base, "--update").exit_code == 0
    stored = orjson.loads((tmp_path / "baseline" / "eval.json").read_bytes())
    assert len(stored["checkpoints"]) == 5  # long_session's five summaries, scored
    result = run(*base)
    assert result.exit_code == 0, result.stderr
    assert "tsum: eval: artifact recall 86.4% -> 86.4%" in result.stderr
    assert "no scored checkpoint" not in result.stderr
