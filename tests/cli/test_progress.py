"""A run's stderr: the progress bar on a terminal and the grouped warnings summary."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import orjson
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.cli.progress import RunStderr, warning_kind, warnings_summary

CADENCE = (
    "warning: {path}: session {sid}: the watermark stayed over the line after turn {turn}: "
    "the checkpoint fired every 3 turn(s) from then on"
)


def test_a_kind_is_the_message_without_location_quotes_and_numbers() -> None:
    one = CADENCE.format(path="a/x.jsonl", sid="s1", turn=3)
    two = CADENCE.format(path="b/y.jsonl", sid="s#2", turn=11)
    assert (
        warning_kind(one)
        == warning_kind(two)
        == (
            "the watermark stayed over the line after turn N: the checkpoint fired every N "
            "turn(s) from then on"
        )
    )
    line = "warning: t.json: simulations[3]: 6 calls left out (messages 16, 17, 20)"
    assert warning_kind(line) == "N calls left out (messages N, …)"
    longer = "warning: t.json: simulations[0]: 16 calls left out (messages 13, 14, 15, … (8 more))"
    assert warning_kind(longer) == warning_kind(line)
    assert warning_kind("warning: f.jsonl:12: 2 event(s) of type 'x' left out") == (
        "N event(s) of type … left out"
    )
    # singular and plural of one word are one kind
    assert warning_kind("warning: a: session s: 1 canned reply left out") == warning_kind(
        "warning: a: session t: 16 canned replies left out"
    )


def test_summary_counts_each_kind_most_frequent_first_with_its_first_occurrence() -> None:
    cadence = [CADENCE.format(path=f"f{n}.jsonl", sid=f"s{n}", turn=n) for n in (3, 4, 5)]
    other = "warning: g.jsonl: session q: 1 tool call(s) never answered (first: toolu_1)"
    assert warnings_summary([other, *cadence]) == [
        "tsum: 4 warning(s) of 2 kind(s), the first of each (--warnings all prints every one):",
        f"     3x {cadence[0]}",
        f"     1x {other}",
    ]
    assert warnings_summary([]) == []


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_counts_files_against_their_total(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.jsonl").write_text("{}\n")
    screen = Terminal()
    threads = threading.active_count()
    stderr = RunStderr([str(tmp_path)], desc="replay", silent=False, stream=screen)
    assert stderr.bar is not None and stderr.bar.total == 3
    stderr.session("a.jsonl")
    stderr.session("a.jsonl")  # two sessions of one file
    stderr.session("b.jsonl")  # a new file: a.jsonl is done
    assert (stderr.bar.n, stderr.sessions) == (1, 3)
    stderr.warn("warning: b.jsonl: session s: 1 tool call(s) never answered (first: x)")
    stderr.error("error: c.jsonl:1: invalid JSON")  # a failed file is done too
    assert stderr.bar.n == 2
    stderr.close()
    assert threading.active_count() == threads  # no tqdm monitor thread left behind
    text = screen.getvalue()
    assert "replay:" in text and "/3 files" in text and "3 session(s), 1 warning(s)" in text
    assert "error: c.jsonl:1: invalid JSON\n" in text  # printed above the bar, whole
    assert text.rstrip().endswith(
        "1x warning: b.jsonl: session s: 1 tool call(s) never answered (first: x)"
    )


def test_no_bar_off_a_terminal_and_none_when_silent(tmp_path: Path) -> None:
    assert RunStderr([str(tmp_path)], desc="x", silent=False, stream=io.StringIO()).bar is None
    assert RunStderr([str(tmp_path)], desc="x", silent=True, stream=Terminal()).bar is None


def _cadence_log(path: Path) -> Path:
    """A log whose every turn is over the seed's line: the fixed-cadence warning."""
    rows: list[object] = []
    for n in range(8):
        rows.append({"role": "user", "content": f"q{n}"})
        usage = {"prompt_tokens": 30_000, "completion_tokens": 10}
        rows.append({"role": "assistant", "content": f"a{n}", "usage": usage})
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_replay_groups_warnings_off_a_terminal_and_all_prints_each(tmp_path: Path) -> None:
    _cadence_log(tmp_path / "a.jsonl")
    _cadence_log(tmp_path / "b.jsonl")
    grouped = CliRunner().invoke(cli, ["replay", str(tmp_path), "--dry-run"]).stderr
    lines = grouped.splitlines()
    assert lines[0] == (
        "tsum: 2 warning(s) of 1 kind(s), the first of each (--warnings all prints every one):"
    )
    assert lines[1].startswith(f"     2x warning: {tmp_path / 'a.jsonl'}: session a: ")
    assert lines[2].startswith("tsum: 2 file(s), 2 session(s)")
    every = CliRunner().invoke(cli, ["replay", str(tmp_path), "--dry-run", "--warnings", "all"])
    assert [line[:9] for line in every.stderr.splitlines()[:2]] == ["warning: "] * 2
    assert "kind(s)" not in every.stderr
