"""The wheel ships every template; the installed package finds them without the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from transcript_tools.prompt import builtin_template_names, load_template

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = sorted(p.name for p in (ROOT / "prompts").glob("*.j2"))


def test_installed_package_lists_every_template() -> None:
    names = builtin_template_names()
    assert sorted(f"summary.{n}.j2" for n in names) == TEMPLATES
    for name in names:
        assert "messages" in load_template(name).source


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {result.stderr.strip()[-300:]}")
    return next(out.glob("*.whl"))


def test_wheel_contains_every_template(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in TEMPLATES:
        assert f"transcript_tools/prompts/{template}" in names


def test_installed_wheel_runs_from_another_directory(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = (
        "import transcript_tools, transcript_tools.prompt as p; "
        f"assert transcript_tools.__file__.startswith({str(target)!r}), transcript_tools.__file__; "
        "import transcript_tools.cli.main; "
        "print(','.join(p.builtin_template_names()))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().split(",") == sorted(t[len("summary.") : -len(".j2")] for t in TEMPLATES)


def test_importing_the_package_imports_no_sdk() -> None:
    code = (
        "import sys, transcript_tools, transcript_tools.cli.main; "
        "bad = [m for m in ('anthropic', 'openai') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
