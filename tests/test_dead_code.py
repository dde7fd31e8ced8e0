"""No dead code: vulture over the package, with the whitelist of names used from outside
Python (.ci/vulture_whitelist.py), configured by [tool.vulture] in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_vulture_finds_no_unused_code() -> None:
    pytest.importorskip("vulture", reason="vulture comes with the [test] extra")
    done = subprocess.run(
        [sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_vulture_reports_a_function_nobody_calls(tmp_path: Path) -> None:
    """The check can fail: a module with an uncalled function is reported."""
    pytest.importorskip("vulture", reason="vulture comes with the [test] extra")
    module = tmp_path / "orphan.py"
    module.write_text("def never_called() -> int:\n    return 1\n")
    done = subprocess.run(
        [sys.executable, "-m", "vulture", str(module), "--min-confidence", "60"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 3 and "never_called" in done.stdout
