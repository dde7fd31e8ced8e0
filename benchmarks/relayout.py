"""Module moves of the package re-layout (35 flat modules into engine/, formats/, providers/,
replay/, sweep/, diff/, eval/, parallel/, cli/), applied as a codemod.

    python benchmarks/relayout.py STEP [--dry-run]
    python benchmarks/relayout.py names OLD NEW NAME...   # after a split by whole functions

``git mv``s every module of one STEP and rewrites every reference to it: the library's
relative imports (re-rendered from each file's new place), absolute ``transcript_tools.…``
names in tests, benchmarks, docs and strings (``monkeypatch`` targets, ``_EXPORTS``),
``from transcript_tools import <module>`` (kept under its old local name), and
``transcript_tools/<path>.py`` in Markdown. Nothing else in a file changes.

``--rewrite-only`` leaves the package alone and rewrites only the absolute references in
tests, benchmarks and docs: how tests written against the flat layout on another branch
are brought over after the move (``python benchmarks/relayout.py --rewrite-only engine
formats toplevel parallel replay sweep diff eval``).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = "transcript_tools"

STEPS: dict[str, dict[str, str]] = {
    "engine": {
        "messages": "engine.messages",
        "rules": "engine.rules",
        "tokens": "engine.tokens",
        "transcript": "engine.formatting",
        "prompt": "engine.prompt",
        "context": "engine.slot",
        "session": "engine.session",
        "config": "engine.config",
    },
    "formats": {"inputs": "formats.inputs"},
    "toplevel": {"_loop": "_sync", "inspect": "inspection"},
    "parallel": {
        "parallel": "parallel.pool",
        "parallel_job": "parallel.job",
        "ray_backend": "parallel.ray_data",
    },
    "replay": {
        "run": "replay.run",
        "replay": "replay.driver",
        "reorder": "replay.parking",
        "outputs": "replay.output_dir",
        "replay_output": "replay.read_output",
        "batch_replay": "replay.batch",
    },
    "sweep": {
        "sweep": "sweep.driver",
        "sweep_sim": "sweep.simulate",
        "sweep_stats": "sweep.stats",
        "sweep_render": "sweep.tables",
        "report": "sweep.html",
    },
    "diff": {
        "diff": "diff.compare",
        "diff_parts": "diff.parts",
        "diff_render": "diff.render",
        "check": "diff.baseline",
    },
    "eval": {"eval.run": "eval.evaluation"},
}
PACKAGES = {
    "engine": '"""The checkpoint the seed specifies: messages, rules, the slot, the session engine.\n\n'
    "Pure: no file, network or terminal I/O. Empty on purpose, so that importing one engine\n"
    'module does not import the others."""\n',
    "parallel": '"""Per-file work on a process pool or Ray Data; knows no feature."""\n',
    "replay": '"""``tsum replay``: the driver, its orchestration, the output directory."""\n',
    "sweep": '"""``tsum sweep``: trigger settings evaluated over a corpus."""\n',
    "diff": '"""``tsum diff`` and ``tsum check``: two output directories compared."""\n',
}


def full(mapping: dict[str, str]) -> dict[str, str]:
    return {f"{PKG}.{old}": f"{PKG}.{new}" for old, new in mapping.items()}


def module_of(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return ".".join(parts), is_pkg


def relative(from_package: str, target: str) -> str:
    a, b = from_package.split("."), target.split(".")
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    if common == 0:
        raise ValueError(f"{target} is outside {from_package}")
    return "." * (len(a) - common + 1) + ".".join(b[common:])


def rewrite_library_file(
    path: Path, old_name: str, new_name: str, is_pkg: bool, moves: dict[str, str]
) -> str:
    text = path.read_text(encoding="utf-8")
    old_package = old_name if is_pkg else old_name.rpartition(".")[0]
    new_package = new_name if is_pkg else new_name.rpartition(".")[0]
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, str, str]] = []  # (line index, old spec, new spec)
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = old_package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
            spec = "." * node.level + (node.module or "")
        elif node.module and (node.module == PKG or node.module.startswith(PKG + ".")):
            target = node.module
            spec = node.module
        else:
            continue
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if sub in moves:
                raise SystemExit(f"{path}:{node.lineno}: imports moved module {sub} by name")
        new_target = moves.get(target, target)
        if node.level:
            new_spec = relative(new_package, new_target)
        else:
            new_spec = new_target
        if new_spec != spec:
            edits.append((node.lineno - 1, spec, new_spec))
    for index, spec, new_spec in edits:
        pattern = re.compile(r"(\bfrom\s+)" + re.escape(spec) + r"(\s+import\b)")
        line, count = pattern.subn(rf"\g<1>{new_spec}\g<2>", lines[index], 1)
        if count != 1:
            raise SystemExit(f"{path}:{index + 1}: could not rewrite {spec!r}")
        lines[index] = line
    return "".join(lines)


def rewrite_names(text: str, moves: dict[str, str]) -> str:
    """Absolute dotted names and repository paths, in one pass (a new name may hold an old)."""
    names = sorted(moves, key=len, reverse=True)
    dotted = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")(?!\w)")
    text = dotted.sub(lambda m: moves[m.group(1)], text)
    paths = {
        old.replace(".", "/") + ".py": new.replace(".", "/") + ".py" for old, new in moves.items()
    }
    slashed = re.compile(r"(?<![\w/])(" + "|".join(map(re.escape, paths)) + ")")
    text = slashed.sub(lambda m: paths[m.group(1)], text)

    # from transcript_tools import a, b  (a moved module keeps its local name)
    def split(match: re.Match[str]) -> str:
        indent, names = match.group(1), [n.strip() for n in match.group(2).split(",")]
        if not any(f"{PKG}.{n.split()[0]}" in moves for n in names):
            return match.group(0)
        out = []
        for name in names:
            head, _, local = name.partition(" as ")
            local = local or head
            new = moves.get(f"{PKG}.{head}")
            if new is None:
                out.append(f"{indent}from {PKG} import {name}")
                continue
            parent, _, leaf = new.rpartition(".")
            alias = "" if leaf == local else f" as {local}"
            out.append(f"{indent}from {parent} import {leaf}{alias}")
        return "\n".join(out)

    return re.sub(rf"^([ \t]*)from {PKG} import ([\w ,]+)$", split, text, flags=re.M)


def rewrite_exports(text: str, moves: dict[str, str]) -> str:
    """``__init__._EXPORTS``: values are module names relative to the package."""
    for old, new in moves.items():
        o, n = old.removeprefix(PKG + "."), new.removeprefix(PKG + ".")
        text = re.sub(r'(:\s*)"' + re.escape(o) + '"', lambda m, n=n: f'{m.group(1)}"{n}"', text)
    return text


def apply(step: str, dry_run: bool = False, move: bool = True) -> None:
    moves = full(STEPS[step])
    # 1. library: rewrite each file's imports as seen from its new place
    new_texts: dict[Path, tuple[Path, str]] = {}
    for path in sorted((ROOT / PKG).rglob("*.py")) if move else ():
        name, is_pkg = module_of(path)
        new_name = moves.get(name, name)
        text = rewrite_library_file(path, name, new_name, is_pkg, moves)
        if path.name == "__init__.py" and name == PKG:
            text = rewrite_exports(text, moves)
        target = ROOT / (new_name.replace(".", "/") + ("/__init__.py" if is_pkg else ".py"))
        new_texts[path] = (target, text)
    # 2. everything else: absolute names and paths
    others = [
        p
        for pattern in ("tests/**/*.py", "benchmarks/**/*.py", "benchmarks/**/*.sh", "**/*.md")
        for p in ROOT.glob(pattern)
        if ".venv" not in p.parts and "__snapshots__" not in p.parts and p.name != "relayout.py"
    ]
    other_texts = {p: rewrite_names(p.read_text(encoding="utf-8"), moves) for p in others}
    if dry_run:
        for path, (target, text) in new_texts.items():
            if target != path or text != path.read_text(encoding="utf-8"):
                print(f"{path.relative_to(ROOT)} -> {target.relative_to(ROOT)}")
        for path, text in other_texts.items():
            if text != path.read_text(encoding="utf-8"):
                print(f"{path.relative_to(ROOT)} (references)")
        return
    for path, (target, text) in new_texts.items():
        if target != path:
            target.parent.mkdir(parents=True, exist_ok=True)
            init = target.parent / "__init__.py"
            package = target.parent.name
            if not init.exists() and package in PACKAGES:
                init.write_text(PACKAGES[package], encoding="utf-8")
                subprocess.run(["git", "add", str(init)], cwd=ROOT, check=True)
            subprocess.run(["git", "mv", str(path), str(target)], cwd=ROOT, check=True)
        target.write_text(text, encoding="utf-8")
    for path, text in other_texts.items():
        if text != path.read_text(encoding="utf-8"):
            path.write_text(text, encoding="utf-8")


def _files() -> list[Path]:
    return [
        p
        for pattern in (f"{PKG}/**/*.py", "tests/**/*.py", "benchmarks/**/*.py")
        for p in ROOT.glob(pattern)
        if ".venv" not in p.parts and p.name != "relayout.py"
    ]


def _render(node: ast.ImportFrom, package: str, aliases: list[ast.alias], module: str) -> str:
    spec = relative(package, module) if node.level else module
    parts = [a.name + (f" as {a.asname}" if a.asname else "") for a in aliases]
    return f"{' ' * node.col_offset}from {spec} import {', '.join(parts)}\n"


def move_names(old: str, new: str, names: set[str]) -> None:
    """Re-point every ``from <old> import …`` of ``names`` to ``new`` (a split by whole
    functions: the definitions were cut from ``old`` and pasted into ``new`` by hand)."""
    old, new = f"{PKG}.{old}", f"{PKG}.{new}"
    for path in _files():
        text = path.read_text(encoding="utf-8")
        if path.name == "__init__.py" and path.parent == ROOT / PKG:
            o, n = old.removeprefix(PKG + "."), new.removeprefix(PKG + ".")
            for name in names:
                text = text.replace(f'"{name}": "{o}"', f'"{name}": "{n}"')
        name, is_pkg = module_of(path)
        package = name if is_pkg else name.rpartition(".")[0]
        lines = text.splitlines(keepends=True)
        for node in sorted(
            (n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ImportFrom)),
            key=lambda n: -n.lineno,
        ):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != old or not any(a.name in names for a in node.names):
                continue

            kept = [a for a in node.names if a.name not in names]
            moved = [a for a in node.names if a.name in names]
            out = "".join(
                _render(node, package, aliases, module)
                for aliases, module in ((kept, old), (moved, new))
                if aliases
            )
            assert node.end_lineno is not None
            lines[node.lineno - 1 : node.end_lineno] = [out]
        text = "".join(lines)
        if text != path.read_text(encoding="utf-8"):
            path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    args = sys.argv[1:]
    dry = "--dry-run" in args
    rewrite_only = "--rewrite-only" in args
    if args[:1] == ["names"]:  # names OLD NEW NAME...
        move_names(args[1], args[2], set(args[3:]))
        sys.exit(0)
    steps = [a for a in args if not a.startswith("--")]
    for s in steps:
        apply(s, dry_run=dry, move=not rewrite_only)
