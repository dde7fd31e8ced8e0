"""Single-point mutation testing of tsum's modules: can the tests fail? (docs/testing.md)

For each module given, every single-point mutant the operators below make is written
over the module's file, the tests that cover the mutated line are run (``pytest -x``),
and the file is restored: a failing or timed-out run *kills* the mutant, a passing one
lets it *survive*. A mutant listed in :data:`EQUIVALENT` changes nothing a caller can see
and is left out of the score.

Which tests cover which line comes from one traced run of the test pool (``--tests``)
before the mutants: a line-level map per test, so a mutant runs the few tests that
execute its line, not the whole pool. A mutant in code run at import (a module-level
constant, a dataclass default, a default argument) runs the whole pool, the tests that
run its module's code first; one in a function no test of the pool executes survives,
reported as ``uncovered``.

Operators (one change per mutant): comparison boundary (``<`` / ``<=``, ``>`` / ``>=``)
and negation (``==`` / ``!=``, ``is`` / ``is not``, ``in`` / ``not in``), ``and`` / ``or``,
arithmetic (``+`` / ``-``, ``*`` / ``/``, ``//`` -> ``/``, ``%`` -> ``//``), augmented
assignment (``+=`` / ``-=``), ``not x`` -> ``x``, unary minus dropped, ``True`` /
``False``, and an integer or float constant + 1. Not mutated: strings, docstrings,
annotations, decorators (``@dataclass(slots=True)``), ``assert`` statements, f-strings,
string concatenation, and lines marked ``# pragma: no mutate``.

Usage (the machine is shared: nice, a test pool per package, a timeout per mutant)::

    nice -n 10 python benchmarks/mutation.py transcript_tools/cost --tests tests/cost tests/engine
    nice -n 10 python benchmarks/mutation.py transcript_tools/engine/compaction.py --tests tests/engine

``--json FILE`` writes every mutant's outcome; ``--show`` prints each survivor.
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from mutation_equivalent import EQUIVALENT  # benchmarks/, the script's own directory

ROOT = Path(__file__).resolve().parent.parent

COMPARE_SWAPS: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
BINARY_SWAPS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
}
SYMBOLS: dict[type, str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.And: "and",
    ast.Or: "or",
}


@dataclass(frozen=True, slots=True)
class Mutant:
    module: str  # path relative to the repository
    line: int
    end_line: int
    start: int  # character offsets of the replaced text in the module's source
    end: int
    replacement: str
    change: str  # "< -> <=", "+1", ...
    import_time: bool  # the code runs when the module is imported
    source_line: str  # the first mutated line as written (stripped)


@dataclass(slots=True)
class Outcome:
    mutant: Mutant
    status: str  # killed, timeout, survived, uncovered, equivalent
    tests: int
    seconds: float


# ---- making the mutants ----------------------------------------------------------------


def _offsets(source: str) -> list[int]:
    starts, total = [0], 0
    for line in source.splitlines(keepends=True):
        total += len(line.encode("utf-8"))
        starts.append(total)
    return starts


def _skipped(tree: ast.Module) -> set[int]:
    """Ids of the nodes not mutated: docstrings, annotations, decorators, asserts, f-strings."""
    out: set[int] = set()

    def skip(node: ast.AST | None) -> None:
        if node is not None:
            out.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                skip(body[0])
        if isinstance(node, (ast.arg, ast.AnnAssign)):
            skip(node.annotation)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                skip(decorator)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            skip(node.returns)
        elif isinstance(node, (ast.Assert, ast.JoinedStr)):
            skip(node)
    return out


def _import_time(tree: ast.Module) -> set[int]:
    """Ids of the nodes run at import: everything outside a function's body, and the
    body of a module-level function the module calls at import (``_TABLE = _table()``)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = node.body if isinstance(node.body, list) else [node.body]
            for statement in body:
                inside.update(id(n) for n in ast.walk(statement))
    at_import = {id(n) for n in ast.walk(tree)} - inside
    called = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and id(n) in at_import
    }
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in called:
            at_import.update(id(n) for statement in node.body for n in ast.walk(statement))
    return at_import


def _variants(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Each single-point change of ``node`` itself: (the changed copy, what changed)."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            swap = COMPARE_SWAPS.get(type(op))
            if swap is not None:
                ops = [*node.ops[:i], swap(), *node.ops[i + 1 :]]
                yield ast.Compare(node.left, ops, node.comparators), _arrow(op, swap)
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield ast.BoolOp(other(), node.values), _arrow(node.op, other)
    elif isinstance(node, ast.BinOp) and type(node.op) in BINARY_SWAPS and not _text(node):
        swap = BINARY_SWAPS[type(node.op)]
        yield ast.BinOp(node.left, swap(), node.right), _arrow(node.op, swap)
    elif (
        isinstance(node, ast.AugAssign) and type(node.op) in (ast.Add, ast.Sub) and not _text(node)
    ):
        swap = BINARY_SWAPS[type(node.op)]
        yield ast.AugAssign(node.target, swap(), node.value), _arrow(node.op, swap, "=")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        yield node.operand, "not x -> x" if isinstance(node.op, ast.Not) else "-x -> x"
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            yield ast.Constant(not value), f"{value} -> {not value}"
        elif isinstance(value, (int, float)):
            yield ast.Constant(value + 1), f"{value!r} -> {value + 1!r}"


def _text(node: ast.BinOp | ast.AugAssign) -> bool:
    """String concatenation (a swap would only raise ``TypeError``)."""
    sides = (node.left, node.right) if isinstance(node, ast.BinOp) else (node.value,)
    return any(
        isinstance(side, ast.JoinedStr)
        or (isinstance(side, ast.Constant) and isinstance(side.value, str))
        for side in sides
    )


def _arrow(old: ast.AST | type, new: type, suffix: str = "") -> str:
    name = SYMBOLS[old if isinstance(old, type) else type(old)]
    return f"{name}{suffix} -> {SYMBOLS[new]}{suffix}"


def mutants(path: Path) -> list[Mutant]:
    """Every single-point mutant of the module at ``path``."""
    source = path.read_text(encoding="utf-8")
    raw = source.encode("utf-8")
    lines = source.splitlines()
    offsets = _offsets(source)
    tree = ast.parse(source)
    skipped, at_import = _skipped(tree), _import_time(tree)
    module = str(path.resolve().relative_to(ROOT))
    out: list[Mutant] = []
    for node in ast.walk(tree):
        if id(node) in skipped or not hasattr(node, "lineno"):
            continue
        if "pragma: no mutate" in lines[node.lineno - 1]:
            continue
        for changed, change in _variants(node):
            start = offsets[node.lineno - 1] + node.col_offset
            end = offsets[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
            text = ast.unparse(changed)
            if not isinstance(node, ast.stmt):
                text = f"({text})"
            out.append(
                Mutant(
                    module,
                    node.lineno,
                    node.end_lineno or node.lineno,
                    len(raw[:start].decode("utf-8")),
                    len(raw[:end].decode("utf-8")),
                    text,
                    change,
                    id(node) in at_import,
                    lines[node.lineno - 1].strip(),
                )
            )
    return sorted(out, key=lambda m: (m.line, m.start, m.change))


def apply(source: str, mutant: Mutant) -> str:
    return source[: mutant.start] + mutant.replacement + source[mutant.end :]


# ---- which tests run which lines -------------------------------------------------------


class LineMap:
    """A pytest plugin: for each test, the lines of the target files it executes."""

    def __init__(self, files: set[str]) -> None:
        self.files = files
        self.lines: dict[str, dict[int, set[str]]] = {f: {} for f in files}
        self.seconds: dict[str, float] = {}
        self.failed: list[str] = []
        self._test = ""

    def _local(self, frame: FrameType, event: str, _arg: Any) -> Any:
        if event == "line":
            self.lines[frame.f_code.co_filename].setdefault(frame.f_lineno, set()).add(self._test)
        return self._local

    def _global(self, frame: FrameType, _event: str, _arg: Any) -> Any:
        return self._local if frame.f_code.co_filename in self.files else None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Iterator[None]:
        self._test = item.nodeid
        began = time.perf_counter()
        sys.settrace(self._global)
        threading.settrace(self._global)
        try:
            return (yield)
        finally:
            sys.settrace(None)
            threading.settrace(None)  # type: ignore[arg-type]
            self.seconds[item.nodeid] = time.perf_counter() - began

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            self.failed.append(report.nodeid)


def line_map(files: list[Path], tests: list[str], saved: Path | None = None) -> LineMap:
    """Run the test pool once, traced (in this process); with ``saved``, the map a run
    with the same pool saved there, or this one saved there for the next run."""
    if saved is not None and saved.exists():
        stored = json.loads(saved.read_text(encoding="utf-8"))
        plugin = LineMap(set(stored["lines"]))
        plugin.lines = {
            f: {int(n): set(ts) for n, ts in by_line.items()}
            for f, by_line in stored["lines"].items()
        }
        plugin.seconds = stored["seconds"]
        if {str(f.resolve()) for f in files} <= plugin.files:
            return plugin
    plugin = LineMap({str(f.resolve()) for f in files})
    code = pytest.main(["-q", "-p", "no:cacheprovider", *tests], plugins=[plugin])
    if code not in (0, 5) or plugin.failed:
        sys.exit(f"the test pool fails before any mutation: {plugin.failed or code}")
    if saved is not None:
        lines = {f: {n: sorted(ts) for n, ts in b.items()} for f, b in plugin.lines.items()}
        saved.write_text(json.dumps({"lines": lines, "seconds": plugin.seconds}), encoding="utf-8")
    return plugin


def selection(mutant: Mutant, path: Path, coverage: LineMap, whole_pool: bool = True) -> list[str]:
    """The tests that run the mutated code, the quickest first (``-x``: a mutant most
    tests kill is killed by the first). A mutant run at import (a constant, a default)
    can be read by any test without a line of its module running: the whole pool, the
    tests that run the module's code first (``whole_pool=False``: those tests only, a
    floor that costs far less when such a mutant survives)."""
    by_line = coverage.lines[str(path.resolve())]
    chosen: set[str] = set()
    for line in range(mutant.line, mutant.end_line + 1):
        chosen |= by_line.get(line, set())
    if not mutant.import_time:
        return sorted(chosen, key=lambda test: (coverage.seconds[test], test))
    touching = set().union(*by_line.values()) if by_line else set()
    if not whole_pool:
        return sorted(touching, key=lambda test: (coverage.seconds[test], test))
    return sorted(
        coverage.seconds, key=lambda test: (test not in touching, coverage.seconds[test], test)
    )


# ---- running a mutant ------------------------------------------------------------------


FIRST_STAGE = 4  # tests run before the rest: most mutants fail the first test they meet


def run(mutant: Mutant, stages: list[tuple[list[str], float]]) -> str:
    """The mutant's outcome: written over its module, the tests run in a fork of this
    process (the libraries stay imported; tsum and its tests are imported afresh, from
    the mutated file), the module restored. The tests run in stages (tests, timeout): a
    later stage only when the earlier passed, so a mutant the quickest tests kill does
    not pay for collecting the files of all the others."""
    path = ROOT / mutant.module
    source = path.read_text(encoding="utf-8")
    stat = path.stat()
    path.write_text(apply(source, mutant), encoding="utf-8")
    try:
        for tests, timeout in stages:
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                _child(tests)
            code = _wait(pid, timeout)
            if code is None:
                return "timeout"
            if code not in (0, 5):
                return "killed"
    finally:
        path.write_text(source, encoding="utf-8")
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the cached bytecode holds
    return "survived"


def _child(tests: list[str]) -> None:
    os.setpgid(0, 0)  # a timeout kills the tests' own processes too
    sys.dont_write_bytecode = True
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    for name in [n for n in sys.modules if n.split(".")[0] in ("transcript_tools", "tests")]:
        del sys.modules[name]
    try:
        code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *tests]))
    except BaseException:  # a mutant that breaks the import, or pytest itself
        code = 3
    os._exit(code)


def _wait(pid: int, timeout: float) -> int | None:
    """The child's exit code, or None when it ran past ``timeout`` (then killed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    return None


def module_files(targets: list[str]) -> list[Path]:
    files: list[Path] = []
    for target in targets:
        path = (ROOT / target).resolve()
        found = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        files += [f for f in found if f.name != "__init__.py"]
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="modules or packages to mutate")
    parser.add_argument("--tests", nargs="+", default=["tests"], help="the test pool")
    parser.add_argument("--timeout", type=float, default=3.0, help="x the tests' own time")
    parser.add_argument("--json", type=Path, help="append each mutant's outcome here (JSON lines)")
    parser.add_argument("--show", action="store_true", help="print each survivor")
    parser.add_argument("--line", type=int, help="only the mutants of this line")
    parser.add_argument(
        "--line-map",
        type=Path,
        help="reuse the traced run saved in this file (same pool; saved there when absent)",
    )
    parser.add_argument(
        "--max-tests",
        type=int,
        help="run at most this many of a mutant's covering tests, the quickest (a floor)",
    )
    parser.add_argument(
        "--import-tests",
        choices=("pool", "module"),
        default="pool",
        help="a mutant run at import runs the whole pool, or only the tests that run a"
        " line of its module (a floor, far quicker where such mutants survive)",
    )
    parser.add_argument("--table", type=Path, help="only print the table of a --json file")
    parser.add_argument(
        "--survivors",
        type=Path,
        help="only the mutants a --json file says survived (a re-run after new tests)",
    )
    args = parser.parse_args()
    # a stopped run (kill PID) restores the module it mutated: SystemExit runs the finally
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    if args.table:
        _table(json.loads(line) for line in args.table.read_text().splitlines())
        return
    files = module_files(args.targets)
    again = _survivors(args.survivors) if args.survivors else None
    coverage = line_map(files, args.tests, args.line_map)
    outcomes: list[Outcome] = []
    for path in files:
        for mutant in mutants(path):
            if args.line is not None and not mutant.line <= args.line <= mutant.end_line:
                continue
            if again is not None and _key(asdict(mutant)) not in again:
                continue
            whole_pool = args.import_tests == "pool"
            outcome = _outcome(mutant, path, coverage, args.timeout, whole_pool, args.max_tests)
            outcomes.append(outcome)
            if args.show and outcome.status in ("survived", "uncovered"):
                print(_describe(outcome), flush=True)
            if args.json:
                with args.json.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(_as_json(outcome)) + "\n")
    _report(outcomes)


def _outcome(
    mutant: Mutant,
    path: Path,
    coverage: LineMap,
    factor: float,
    whole_pool: bool,
    max_tests: int | None = None,
) -> Outcome:
    if _equivalent(asdict(mutant)):
        return Outcome(mutant, "equivalent", 0, 0.0)
    tests = selection(mutant, path, coverage, whole_pool)[:max_tests]
    if not tests:
        return Outcome(mutant, "uncovered", 0, 0.0)
    stages = [part for part in (tests[:FIRST_STAGE], tests[FIRST_STAGE:]) if part]
    began = time.perf_counter()
    status = run(
        mutant, [(part, 20 + factor * sum(coverage.seconds[t] for t in part)) for part in stages]
    )
    return Outcome(mutant, status, len(tests), time.perf_counter() - began)


def _describe(outcome: Outcome) -> str:
    m = outcome.mutant
    return f"{outcome.status}: {m.module}:{m.line}: {m.change}: {m.source_line}"


def _as_json(outcome: Outcome) -> dict[str, Any]:
    return {**asdict(outcome.mutant), **{k: v for k, v in asdict(outcome).items() if k != "mutant"}}


def _report(outcomes: list[Outcome]) -> None:
    _table(_as_json(o) for o in outcomes)


def _equivalent(mutant: dict[str, Any]) -> bool:
    """Listed in EQUIVALENT by its change, its replacement text, or (where a line has two
    alike) its change at the column it starts at, or at line:column (two lines alike)."""
    line = (mutant["module"], mutant["source_line"])
    column = mutant["start"] - _line_starts(mutant["module"])[mutant["line"] - 1]
    return any(
        (*line, name) in EQUIVALENT
        for name in (
            mutant["change"],
            mutant["replacement"],
            f"{mutant['change']} @{column}",
            f"{mutant['change']} @{mutant['line']}:{column}",
        )
    )


@functools.cache
def _line_starts(module: str) -> list[int]:
    """The character offset of each line of ``module`` (its text as the run found it)."""
    starts, total = [], 0
    for text in (ROOT / module).read_text(encoding="utf-8").splitlines(keepends=True):
        starts.append(total)
        total += len(text)
    return starts


def _key(outcome: dict[str, Any]) -> tuple[str, int, int, str]:
    return (outcome["module"], outcome["start"], outcome["end"], outcome["change"])


def _survivors(path: Path) -> set[tuple[str, int, int, str]]:
    """The mutants whose latest outcome in a --json file is survived or uncovered."""
    latest = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        outcome = json.loads(line)
        latest[_key(outcome)] = outcome["status"]
    return {key for key, status in latest.items() if status in ("survived", "uncovered")}


def _table(outcomes: Iterable[dict[str, Any]]) -> None:
    """Per module: killed (a timeout counts), survived (uncovered included), equivalent;
    the score is killed / (mutants - equivalent). The last outcome of a mutant counts.
    Printed as a Markdown table (docs/testing.md)."""
    latest = {_key(o): "equivalent" if _equivalent(o) else o["status"] for o in outcomes}
    print("| module | mutants | killed | survived | equivalent | killed / non-equivalent |")
    print("|---|---:|---:|---:|---:|---:|")
    for module in sorted({key[0] for key in latest}):
        mine = [status for key, status in latest.items() if key[0] == module]
        killed = mine.count("killed") + mine.count("timeout")
        equivalent = mine.count("equivalent")
        survived = len(mine) - killed - equivalent
        scored = len(mine) - equivalent
        score = f"{killed / scored:.0%}" if scored else "-"
        name = module.removeprefix("transcript_tools/")
        print(f"| `{name}` | {len(mine)} | {killed} | {survived} | {equivalent} | {score} |")


if __name__ == "__main__":
    main()
