"""docs/cost.md's error-bar table is what its own command prints on the shared corpus."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from tests.support.corpus import CORPUS, needs_corpus

ROOT = Path(__file__).resolve().parents[2]


@needs_corpus
def test_the_docs_table_is_the_scripts_output(capsys: pytest.CaptureFixture[str]) -> None:
    # `python benchmarks/cost_error.py ../shared/corpus/real/claude-code ../shared/corpus/real/codex`:
    # its two 1.0.56 rows had gone stale in the docs (-12.2% where the script and replay
    # --cost's "model error on the original" read -11.3%)
    script = runpy.run_path(str(ROOT / "benchmarks" / "cost_error.py"))
    script["main"]([str(CORPUS / "claude-code"), str(CORPUS / "codex")])
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    docs = (ROOT / "docs" / "cost.md").read_text(encoding="utf-8").splitlines()
    start = docs.index(printed[0])
    assert docs[start : start + len(printed)] == printed
