"""``tsum diff``: the structured diff of two replay outputs, its three renderings, exit codes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from transcript_tools.cli.main import EXIT_CODES_HELP, cli
from transcript_tools.diff.compare import compare_dirs
from transcript_tools.diff.lineup import match_schedule, unified_diff
from transcript_tools.diff.render import _fence, render_markdown

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
ZH_TEMPLATE = ROOT / "prompts" / "summary.zh.j2"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def replay(out: Path, *args: str, samples: Path = SAMPLES) -> Path:
    result = run("replay", str(samples), "--out", str(out), "--silent", *args)
    assert result.exit_code == 0, result.stderr
    return out


def edited_template(tmp_path: Path, old: str = "简洁", new: str = "详细") -> Path:
    path = tmp_path / "prompts" / "summary.zh.j2"
    path.parent.mkdir(exist_ok=True)
    source = ZH_TEMPLATE.read_text(encoding="utf-8")
    assert source.count(old) == 1
    path.write_text(source.replace(old, new), encoding="utf-8")
    return path


def rewrite_jsonl(path: Path, change: Any) -> None:
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    rows = change(rows)
    path.write_bytes(b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in rows))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return replay(tmp_path_factory.mktemp("base") / "out")


def copy_of(base: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(base, tmp_path / "copy"))


# ---- identical -----------------------------------------------------------------------


def test_identical_outputs_exit_0(base: Path, tmp_path: Path) -> None:
    other = replay(tmp_path / "again", "-j", "3")
    result = run("diff", str(base), str(other))
    assert result.exit_code == 0
    assert (
        result.stdout
        == f"tsum diff {base} → {other}\nno differences: 3 session(s), 5 summary firing(s)\n"
    )
    assert result.stderr == "tsum: no differences (3 session(s), 5 summary firing(s))\n"


def test_manifest_is_ignored(base: Path, tmp_path: Path) -> None:
    other = copy_of(base, tmp_path)
    (other / "manifest.json").write_text('{"elapsed_seconds": 99}\n')
    assert run("diff", str(base), str(other), "--silent").exit_code == 0
    (other / "manifest.json").unlink()
    result = run("diff", str(base), str(other), "--silent")
    assert (result.exit_code, result.stderr) == (0, "")


# ---- what changed --------------------------------------------------------------------


def test_prompt_edit_shows_a_unified_diff_once_per_edit(base: Path, tmp_path: Path) -> None:
    new = replay(tmp_path / "new", "--prompt", str(edited_template(tmp_path)))
    result = run("diff", str(base), str(new))
    assert result.exit_code == 1
    out = result.stdout
    assert "template: zh (jinja, bdd1d00c429d) → summary.zh.j2 (jinja, " in out
    assert "5 prompt(s) changed, 0 summary text(s) changed" in out
    assert "== long_session: 5 prompt(s) changed" in out
    assert "schedule: unchanged (fired at turns 5, 8, 11, 14, 17)" in out
    assert f"      --- {base}: long_session turn 5 prompt" in out
    assert "      -请把下面的对话历史压缩成一段简洁的摘要" in out
    assert "      +请把下面的对话历史压缩成一段详细的摘要" in out
    assert out.count("@@ -1,4 +1,4 @@") == 1  # the other four summaries refer to it
    assert out.count("the same edit as long_session turn 5") == 4
    assert result.stderr == (
        "tsum: differences: 1 of 3 session(s) changed; 0 added, 0 removed; 0 schedule change(s); "
        "5 prompt(s) and 0 summary text(s) changed; template changed\n"
    )


def test_runs_checkpointing_per_call_number_calls_not_turns(tmp_path: Path) -> None:
    old = replay(tmp_path / "old", "--checkpoint", "call")
    new = replay(tmp_path / "new", "--checkpoint", "call", "--ratio", "0.6")
    result = run("diff", str(old), str(new))
    assert result.exit_code == 1
    out = result.stdout
    assert "(fired at calls " in out and "fired at turns" not in out
    assert "moved call " in out and "moved turn" not in out
    markdown = run("diff", str(old), str(new), "--markdown").stdout
    assert "fired at calls " in markdown and "turn" not in markdown.split("schedule:")[1]


def test_schedule_and_settings_changes(base: Path, tmp_path: Path) -> None:
    new = replay(tmp_path / "new", "--ratio", "0.6", "--debounce", "4")
    result = run("diff", str(base), str(new))
    assert result.exit_code == 1
    assert "setting summary_config.debounce_turns: 3 → 4\n" in result.stdout
    assert "setting summary_config.trigger_token_ratio: 0.75 → 0.6\n" in result.stdout
    assert (
        "schedule: moved turn 5 → 4, turn 11 → 12, turn 14 → 16; removed at turn 17 "
        "(fired at turns 5, 8, 11, 14, 17 → 4, 8, 12, 16)"
    ) in result.stdout
    assert "summaries: 5 → 4 firings; 0 added, 1 removed, 3 moved" in result.stdout
    # threshold is explained by the setting: the sessions that never fire are not "changed"
    assert "clickhouse-migration-zh" not in result.stdout


def test_summary_text_change_and_token_deltas(base: Path, tmp_path: Path) -> None:
    new = copy_of(base, tmp_path)

    def change(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows[1]["text"] = rows[1]["text"].replace("Goals and requests:", "Goals:")
        rows[1]["usage"]["output_tokens"] += 7
        return rows

    rewrite_jsonl(new / "summaries.jsonl", change)
    result = run("diff", str(base), str(new), "--context", "0")
    assert result.exit_code == 1
    assert "turn 8: summary call tokens in 1,729 → 1,729, out 417 → 424\n" in result.stdout
    assert "turn 8: summary text changed\n" in result.stdout
    assert "      -Goals and requests:\n      +Goals:\n" in result.stdout
    assert "out 2,699 → 2,706 (+7)" in result.stdout


def test_added_and_removed_sessions(base: Path, tmp_path: Path) -> None:
    only_two = tmp_path / "two"
    only_two.mkdir()
    for name in ("long_session.jsonl", "chinese_migration.jsonl"):
        shutil.copy(SAMPLES / name, only_two)
    new = replay(tmp_path / "new", samples=only_two)
    result = run("diff", str(base), str(new), "--json")
    assert result.exit_code == 1
    data = orjson.loads(result.stdout)
    assert data["identical"] is False
    assert [(s["session"], s["state"]) for s in data["sessions"]] == [
        ("resize-job-incident", "removed")
    ]
    assert data["counts"]["sessions_removed"] == 1
    back = run("diff", str(new), str(base))
    assert "== resize-job-incident: added: 2 turns, no summaries\n" in back.stdout


def test_record_order_is_still_a_difference(base: Path, tmp_path: Path) -> None:
    new = copy_of(base, tmp_path)
    rewrite_jsonl(new / "prompts.jsonl", lambda rows: rows[::-1])
    result = run("diff", str(base), str(new))
    assert result.exit_code == 1
    assert "other: prompts.jsonl: differs byte for byte" in result.stdout


def test_match_schedule() -> None:
    def kinds(old: list[int], new: list[int]) -> list[tuple[str, int | None, int | None]]:
        return [(c.kind, c.old_turn, c.new_turn) for c in match_schedule(old, new)]

    assert kinds([3, 6, 9], [3, 6, 9]) == []
    assert kinds([3, 6, 9], [3, 7, 10]) == [("moved", 6, 7), ("moved", 9, 10)]
    # a common firing in between: not a move
    assert kinds([3, 6, 9], [3, 9, 12]) == [("removed", 6, None), ("added", None, 12)]
    assert kinds([], [4]) == [("added", None, 4)]
    assert kinds([4, 8], [5]) == [("moved", 4, 5), ("removed", 8, None)]


def test_unified_diff_final_newline_only() -> None:
    assert "final newline" in unified_diff("a\n", "a", "x", "y")
    assert unified_diff("a\nb\n", "a\nc\n", "x", "y", 0).split("\n") == [
        "--- x",
        "+++ y",
        "@@ -2 +2 @@",
        "-b",
        "+c",
    ]


# ---- renderings ----------------------------------------------------------------------


def test_json(base: Path, tmp_path: Path) -> None:
    new = replay(tmp_path / "new", "--prompt", str(edited_template(tmp_path)))
    result = run("diff", str(base), str(new), "--json")
    assert result.exit_code == 1
    data = orjson.loads(result.stdout)
    assert (
        data["counts"]["prompts_changed"] == 5
        and data["template"]["new"]["name"] == "summary.zh.j2"
    )
    first = data["sessions"][0]["summaries"][0]
    assert first["turn"] == 5 and first["changed"] == ["prompt"]
    assert "+请把下面的对话历史压缩成一段详细的摘要" in first["prompt_diff"]
    assert result.stderr.startswith("tsum: differences:")


def test_markdown(base: Path, tmp_path: Path) -> None:
    new = replay(tmp_path / "new", "--prompt", str(edited_template(tmp_path)))
    result = run("diff", str(base), str(new), "--markdown")
    assert result.exit_code == 1
    md = result.stdout
    assert md.startswith("### tsum: 1 of 3 sessions differ — 5 prompts, 0 summaries changed\n")
    assert "| summary firings | 5 | 5 | +0 |" in md
    assert "<details><summary><b>long_session</b>: 5 prompt(s) changed</summary>" in md
    assert "```diff\n--- " in md and md.count("```diff") == 1
    assert md.rstrip().endswith("</details>")


def test_markdown_identical(base: Path) -> None:
    result = run("diff", str(base), str(base), "--markdown")
    assert (result.exit_code, result.stdout) == (
        0,
        "### tsum: no differences (3 sessions, 5 summary firings)\n",
    )


def test_markdown_fence_outgrows_backticks_in_the_text() -> None:
    assert _fence("+ use ```python blocks") == "````diff\n+ use ```python blocks\n````"
    assert _fence("plain").startswith("```diff\n")


def test_markdown_stays_under_the_comment_limit(base: Path, tmp_path: Path) -> None:
    new = replay(tmp_path / "new", "--prompt", str(edited_template(tmp_path)))
    diff = compare_dirs(base, new)
    short = render_markdown(diff, max_chars=1200)
    assert len(short) < 1500 and "1 more changed session(s) not shown" in short


def test_json_and_markdown_together_is_a_usage_error(base: Path) -> None:
    result = run("diff", str(base), str(base), "--json", "--markdown")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "tsum: error: --json and --markdown cannot be combined: choose one\n"


# ---- could not compare (exit 3) ------------------------------------------------------


def _missing_run_json(d: Path) -> None:
    (d / "run.json").unlink()


def _bad_line(d: Path) -> None:
    with open(d / "decisions.jsonl", "ab") as handle:
        handle.write(b'{"session": "x", "turn": 1, oops}\n')


def _truncated(d: Path) -> None:
    with open(d / "summaries.jsonl", "ab") as handle:
        handle.write(b'{"session": "long_')


def _format(d: Path) -> None:
    run_json = orjson.loads((d / "run.json").read_bytes())
    run_json["output_format"] = 99
    (d / "run.json").write_bytes(orjson.dumps(run_json))


def _zero_sessions(d: Path) -> None:
    for name in ("decisions.jsonl", "summaries.jsonl", "slots.jsonl", "prompts.jsonl"):
        (d / name).write_bytes(b"")


def _lost_prompt(d: Path) -> None:
    (d / "prompts.jsonl").write_bytes(
        b"".join((d / "prompts.jsonl").read_bytes().splitlines(keepends=True)[1:])
    )


def _no_decisions(d: Path) -> None:
    (d / "decisions.jsonl").unlink()


BROKEN = {
    "missing_run_json": (_missing_run_json, "no run.json: not a tsum replay --out directory"),
    "bad_line": (_bad_line, "decisions.jsonl:29: invalid JSON"),
    "truncated": (_truncated, "summaries.jsonl:6: truncated last line: corrupt output"),
    "incompatible": (_format, "output_format 99 is not one this tsum reads"),
    "zero_sessions": (
        _zero_sessions,
        "zero sessions in decisions.jsonl: nothing to compare (never a pass)",
    ),
    "lost_prompt": (_lost_prompt, "is not in prompts.jsonl (corrupt output)"),
    "missing_file": (_no_decisions, "decisions.jsonl is missing"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_could_not_compare_exits_3(base: Path, tmp_path: Path, case: str) -> None:
    breaker, expected = BROKEN[case]
    broken = copy_of(base, tmp_path)
    breaker(broken)
    for args in ((str(base), str(broken)), (str(broken), str(base))):
        result = run("diff", *args)
        assert result.exit_code == 3, case
        assert result.stdout == ""
        assert result.stderr.startswith("tsum: error: ") and expected in result.stderr, (
            result.stderr
        )
        assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_missing_directory(base: Path, tmp_path: Path) -> None:
    result = run("diff", str(base), str(tmp_path / "nope"))
    assert result.exit_code == 3 and result.stdout == ""
    assert (
        result.stderr
        == f"tsum: error: {tmp_path / 'nope'}: no such directory (expected the --out directory of tsum replay)\n"
    )


@pytest.mark.parametrize("command", ["diff", "check"])
def test_help_shows_the_exit_code_table(command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0
    for line in EXIT_CODES_HELP.splitlines()[1:]:
        assert line in result.stdout
