"""Functions stay short: one over ``MAX_FUNCTION_LINES`` lines needs a reason, written here.

A module is as long as its one concept needs (``tests/test_import_graph.py`` asks one over
400 lines to name why it is whole); what a reader has to hold in mind at once is a function. Each function over
the limit is listed in ``LONG`` with the lines it has today and why it is long; a listed
function may shrink (and leave the list once under the limit) but not grow, and a new
long function fails until it is split or its reason is written down. The reasons that
say "not yet split" are the debt still to pay, in the open.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "transcript_tools"
MAX_FUNCTION_LINES = 60

CLI = "a click command: a parameter per option; checks their combinations, calls one workflow"
READER = "a reader's state machine over a record kind's variants, its closures sharing the state"
HOT = "a hot path (docs/performance.md): one pass with its state in locals"
WORKFLOW = "a workflow's setup, run and result in one body: not yet split"

# "path::qualified name": (its lines today, why it is long)
LONG: dict[str, tuple[int, str]] = {
    "formats/gemini_stream.py::read": (129, READER),
    "eval/artifacts.py::extract_text": (
        127,
        HOT + "; a table of extractors not yet separated from their pre-checks",
    ),
    "sweep/engine_path.py::evaluate_engine": (79, WORKFLOW),
    "diff/check.py::check_corpus": (88, WORKFLOW),
    "sweep/simulate.py::profile_conversation": (90, HOT),
    "cli/compare_cmd.py::compare_command": (83, CLI),
    "engine/accounting.py::TurnAccounting.append_turn": (86, HOT),
    "cli/sweep_cmd.py::sweep_command": (83, CLI),
    "api.py::sweep_corpus": (
        79,
        "the public front door: one keyword per setting, documented in its docstring",
    ),
    "inspection.py::inspect_conversation": (75, HOT + " over a conversation's messages"),
    "cli/eval_cmd.py::eval_command": (74, CLI),
    "providers/offline/render.py::render_summary": (
        74,
        "the offline summary's sections in the order they print",
    ),
    "eval/score.py::score_checkpoint": (72, WORKFLOW),
    "formats/opencode/session.py::_assistant": (72, READER),
    "settings.py::load_settings": (
        69,
        "the one precedence home (flags, env, file, defaults) for every setting",
    ),
    "cli/check_cmd.py::check_command": (68, CLI),
    "formats/trajectories.py::_openhands": (67, READER),
    "compare/workflow.py::compare_paths": (62, WORKFLOW),
    "sweep/html.py::_tradeoff": (
        62,
        "the trade-off chart's data, one series per policy; not yet split",
    ),
}


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(qualified name, lines) of every function and method, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{node.name}"
            yield name, (node.end_lineno or node.lineno) - node.lineno + 1
            yield from functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")
        else:
            yield from functions(node, prefix)


def long_functions() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, lines in functions(tree):
            if lines > MAX_FUNCTION_LINES:
                found[f"{path.relative_to(ROOT).as_posix()}::{name}"] = lines
    return found


def test_every_long_function_has_a_reason_and_does_not_grow() -> None:
    found = long_functions()
    unlisted = sorted(set(found) - set(LONG))
    assert not unlisted, f"over {MAX_FUNCTION_LINES} lines with no reason in LONG: {unlisted}"
    grown = {name: (LONG[name][0], lines) for name, lines in found.items() if lines > LONG[name][0]}
    assert not grown, f"grew past their listed lines (listed, now): {grown}"


def test_no_reason_outlives_its_long_function() -> None:
    stale = sorted(set(LONG) - set(long_functions()))
    assert not stale, f"now short or gone, take them out of LONG: {stale}"


def test_the_walk_finds_a_long_method_by_its_qualified_name() -> None:
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    tree = ast.parse(f"class A:\n    def f(self):\n{body}\n    def g(self):\n        pass\n")
    assert dict(functions(tree)) == {"A.f": MAX_FUNCTION_LINES + 1, "A.g": 2}
