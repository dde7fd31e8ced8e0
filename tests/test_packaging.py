"""The wheel ships every template under the distribution's own name; the installed package
finds them without the source tree; every install instruction installs this project."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from transcript_tools.engine.prompt import builtin_template_names, load_template

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = sorted(p.name for p in (ROOT / "prompts").glob("*.j2"))


def test_installed_package_lists_every_template() -> None:
    names = builtin_template_names()
    assert sorted(f"summary.{n}.j2" for n in names) == TEMPLATES
    for name in names:
        assert "messages" in load_template(name).source


# Never shipped, never needed to build: a stale build/ would hide a package missing from
# the package list (bdist_wheel copies whatever build/lib holds).
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".work"
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source") / "tree"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
    )
    # A failing build is the project failing (pyproject, package data): never a skip.
    assert result.returncode == 0, f"pip wheel failed: {result.stderr.strip()[-2000:]}"
    return next(out.glob("*.whl"))


def source_files() -> list[str]:
    """Every file the wheel must hold, by its path inside the wheel, from a walk of the
    source tree: each module and data file under transcript_tools/, and prompts/ (shipped
    as transcript_tools/prompts/, pyproject.toml's package-dir)."""
    shipped = {".py", ".j2", ".txt", ".css", ".toml"}
    found = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "transcript_tools").rglob("*")
        if path.is_file() and path.suffix in shipped and "__pycache__" not in path.parts
    ]
    found += [
        f"transcript_tools/prompts/{path.name}"
        for path in (ROOT / "prompts").iterdir()
        if path.is_file() and path.suffix in shipped
    ]
    return sorted(found)


def source_modules() -> list[str]:
    names = []
    for name in source_files():
        if name.endswith(".py"):
            dotted = name[: -len(".py")].replace("/", ".")
            names.append(dotted.removesuffix(".__init__"))
    return names


DISTRIBUTION = "transcript-tools"  # "tsum" on the index is an unrelated project


def test_wheel_carries_the_distribution_name(wheel: Path) -> None:
    assert wheel.name.startswith("transcript_tools-"), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(metadata).decode("utf-8")
        entry_points = archive.read(metadata.replace("METADATA", "entry_points.txt")).decode()
    assert re.search(r"^Name: (.+)$", text, re.M).group(1) == DISTRIBUTION  # type: ignore[union-attr]
    assert "tsum = transcript_tools.cli:main" in entry_points  # the command keeps its name


def test_every_install_instruction_installs_this_project() -> None:
    docs = [ROOT / "README.md", ROOT / "docs" / "ci.md", ROOT / "examples" / "github-workflow.yml"]
    instructions = [
        (path.name, line.strip())
        for path in docs
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.match(r"\s*(run:\s*)?(\$ )?pip install ", line)
    ]
    assert len(instructions) >= 4
    for name, line in instructions:
        pinned = f'"{DISTRIBUTION} @ git+https://github.com/OWNER/REPO@COMMIT"' in line
        local = re.search(r"pip install -e (\.|'\.\[test\]')", line) is not None
        assert pinned or local or line == 'pip install "$TSUM_SOURCE"', (name, line)
    workflow = (ROOT / "examples" / "github-workflow.yml").read_text(encoding="utf-8")
    assert f'TSUM_SOURCE: "{DISTRIBUTION} @ git+https://github.com/OWNER/REPO@COMMIT"' in workflow
    assert "tsum==" not in workflow


def test_wheel_contains_every_template(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in TEMPLATES:
        assert f"transcript_tools/prompts/{template}" in names


def test_wheel_marks_the_package_as_typed(wheel: Path) -> None:
    """PEP 561: without ``py.typed`` a type checker skips the installed package (mypy:
    "module is installed, but missing library stubs or py.typed marker"), so none of the
    README's typed results (``ReplayResult``, the record TypedDicts) is checked."""
    assert "transcript_tools/py.typed" in set(zipfile.ZipFile(wheel).namelist())


def test_wheel_contains_every_policy_preset(wheel: Path) -> None:
    """The presets are package data (read through importlib.resources): a wheel without
    them would fail `tsum policies list` while every editable-install test passed."""
    names = set(zipfile.ZipFile(wheel).namelist())
    presets = sorted((ROOT / "transcript_tools" / "engine" / "presets").glob("*.toml"))
    assert len(presets) >= 13
    for preset in presets:
        assert f"transcript_tools/engine/presets/{preset.name}" in names
    assert "transcript_tools/engine/policy.py" in names


def test_wheel_contains_every_module_of_the_source_tree(wheel: Path) -> None:
    # transcript_tools.eval was once missing from every wheel for a round.
    expected = source_files()
    assert "transcript_tools/eval/evaluation.py" in expected  # the walk sees subpackages
    assert "transcript_tools/templates/report.html.j2" in expected
    assert "transcript_tools/prompts/summary.zh.j2" in expected
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [name for name in expected if name not in names]
    assert missing == [], f"not in the wheel: {missing}"


def test_installed_wheel_runs_from_another_directory(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # -S: no site, so no .pth file: the editable install of this checkout (the test
    # environment's) cannot fill in a module the wheel lacks. The dependencies come from
    # the environment's site-packages, named on the path instead.
    deps = sysconfig.get_paths()["purelib"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), deps])}
    code = (
        "import importlib, sys, transcript_tools.engine.prompt as p\n"
        f"target = {str(target)!r}\n"
        f"for name in {source_modules()!r}:\n"
        "    module = importlib.import_module(name)\n"
        "    assert module.__file__.startswith(target), (name, module.__file__)\n"
        "print(','.join(p.builtin_template_names()))\n"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().split(",") == sorted(
        t[len("summary.") : -len(".j2")] for t in TEMPLATES
    )


def test_importing_the_package_imports_no_sdk() -> None:
    code = (
        "import sys, transcript_tools, transcript_tools.cli.main; "
        "bad = [m for m in ('anthropic', 'openai') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
