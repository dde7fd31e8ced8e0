"""formats.inputs: a file named twice is one input, where first named; stdin is not a file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from transcript_tools.formats.inputs import InputFile, expand_inputs, marked_inputs

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl"


def test_the_first_naming_keeps_its_place(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        shutil.copy(SAMPLE, folder / name)  # equal bytes, two files: both read
    a, b = str(folder / "a.jsonl"), str(folder / "b.jsonl")
    said: list[str] = []
    paths = [b, str(folder), os.path.join(str(folder), ".", "b.jsonl")]
    assert [i.path for i in expand_inputs(paths, said.append)] == [b, a]
    assert said == [
        f"warning: {b}: given twice (also given as {b}): read once",
        f"warning: {folder}/./b.jsonl: given twice (also given as {b}): read once",
    ]


def test_a_hard_link_is_a_file_of_its_own(tmp_path: Path) -> None:
    """Identity is the real path (as black's sources): a corpus built of hard links (a
    cheap copy: tests/parallel/test_sigterm.py) reads every link."""
    one, other = tmp_path / "one.jsonl", tmp_path / "other.jsonl"
    shutil.copy(SAMPLE, one)
    os.link(one, other)
    said: list[str] = []
    paths = [str(one), str(other)]
    assert [i.path for i in expand_inputs(paths, said.append)] == paths
    assert said == []


def test_stdin_and_missing_paths_are_never_repeats(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone.jsonl")
    said: list[str] = []
    paths = ["-", "-", missing, missing, ""]
    assert [i.path for i in expand_inputs(paths, said.append)] == paths  # each fails when read
    assert said == []


def test_a_plan_keeps_the_repeat_marked_and_a_worker_says_it() -> None:
    planned = list(marked_inputs([str(SAMPLE), str(SAMPLE)]))
    assert [i.repeated is None for i in planned] == [True, False]
    said: list[str] = []
    batch: list[InputFile] = planned[1:]  # the second naming alone, in a worker's batch
    assert list(expand_inputs(batch, said.append)) == []
    assert said == [planned[1].repeated]
