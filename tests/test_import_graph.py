"""No import cycles inside ``transcript_tools``, and imports point down the layers only.

The graph is built with ``ast`` from the source: every ``import`` of a
``transcript_tools`` module, at module level, inside a function (a lazy import
still ties the two modules together) or under ``if TYPE_CHECKING:`` (a type-level
dependency is a dependency). Imports by name at run time (``importlib.import_module``, the provider
registry's built-ins) are not edges, by design. ``cli/`` is included: its lazy
sub-command table loads modules by name, so ``cli.main`` imports none of them.

The layers (``LAYERS``, top first) are the package layout of docs/architecture.md: a module
may import from its own layer or any layer below, never above. ``engine`` is the seed's
I/O-free core; ``cli`` only consumes the library.

Run as a script to print the graph: ``python tests/test_import_graph.py``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "transcript_tools"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
EXCLUDED: tuple[str, ...] = ()


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def import_graph() -> dict[str, set[str]]:
    """module -> the transcript_tools modules it imports."""
    paths = {module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                # ``from .pkg import sub`` imports the submodule ``pkg.sub``
                targets = [
                    f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in paths else prefix
                    for alias in node.names
                ]
            edges.update(t for t in targets if t in paths and t != name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def connect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


# Top first. A name is a module or a package (and everything in it); "" is the package root.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli", "pytest_plugin"),
    ("", "api", "arguments", "settings"),
    ("compare",),
    ("sweep", "diff"),
    ("eval",),
    ("replay", "inspection", "fidelity"),
    ("parallel", "providers"),
    ("cost",),
    ("formats",),
    ("engine",),
    (
        "errors",
        "reporter",
        "plugins",
        "terminal",
        "_sync",
        "_version",
        "templates",
        "present",
        "untrusted",
        "writable",
    ),
)


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of a transcript_tools module (KeyError: a module no layer holds)."""
    rest = module.removeprefix(PACKAGE).removeprefix(".")
    head = rest.split(".")[0]
    for index, names in enumerate(LAYERS):
        if head in names:
            return index
    raise KeyError(module)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every edge from a module to one in a higher layer, as ``a -> b``."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) < layer_of(module)
    )


def _without_excluded(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    def kept(name: str) -> bool:
        return not any(name == e or name.startswith(e + ".") for e in EXCLUDED)

    return {m: {t for t in ts if kept(t)} for m, ts in graph.items() if kept(m)}


def test_no_import_cycles() -> None:
    graph = _without_excluded(import_graph())
    assert len(graph) > 30  # the walk found the package
    assert cycles(graph) == []


def test_every_module_is_in_a_layer() -> None:
    unplaced = []
    for module in import_graph():
        try:
            layer_of(module)
        except KeyError:
            unplaced.append(module)
    assert unplaced == []


def test_imports_point_down_the_layers() -> None:
    assert upward_imports(import_graph()) == []


def test_the_checker_finds_an_upward_import() -> None:
    graph = {
        "transcript_tools.engine.session": {"transcript_tools.providers.base"},
        "transcript_tools.providers.base": {"transcript_tools.engine.requests"},
        "transcript_tools.sweep.simulate": {"transcript_tools.diff.compare"},  # one layer: fine
        "transcript_tools.cli.main": {"transcript_tools.errors"},
        "transcript_tools": {"transcript_tools.api"},
    }
    assert upward_imports(graph) == [
        "transcript_tools.engine.session -> transcript_tools.providers.base"
    ]
    assert layer_of("transcript_tools") == layer_of("transcript_tools.api")


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_edges_are_resolved() -> None:
    graph = import_graph()
    assert "transcript_tools.engine.rules" in graph["transcript_tools.engine.session"]
    assert (
        "transcript_tools.eval.checkpoints" in graph["transcript_tools.sweep.engine_path"]
    )  # down
    assert "transcript_tools.providers.registry" in graph["transcript_tools.providers.anthropic"]
    # registry imports the built-in providers by name at run time: no edge back
    assert (
        "transcript_tools.providers.anthropic" not in graph["transcript_tools.providers.registry"]
    )
    assert "transcript_tools.sweep.tables" in graph["transcript_tools.sweep.html"]


MAX_MODULE_LINES = 400
# A module over MAX_MODULE_LINES is one concept that reads better whole than split to fit a
# number: listed here with its lines today and why; it may shrink, not grow. A new long
# module fails until it is split along a concept or its reason is written down.
# "path": (its lines today, why it is whole)
LONG_MODULES: dict[str, tuple[int, str]] = {
    "formats/codex.py": (
        439,
        "one reader: a rollout's line kinds and the parts of its items, private to it",
    ),
    "engine/policy_slot.py": (
        407,
        "one slot: the view a policy keeps, its running sizes and the engine's Slot methods",
    ),
}


def test_a_module_over_400_lines_names_its_reason() -> None:
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in ROOT.rglob("*.py")
    }
    assert len(sizes) > 100  # the walk found the package
    long = {m: n for m, n in sizes.items() if n > MAX_MODULE_LINES}
    assert sorted(long) == sorted(LONG_MODULES), "a long module without a reason, or a stale entry"
    assert {m: n for m, n in long.items() if n > LONG_MODULES[m][0]} == {}, "a long module grew"


if __name__ == "__main__":
    full = import_graph()
    for module in sorted(full):
        print(f"{module} -> {', '.join(sorted(full[module])) or '-'}")
    print("cycles (whole package, cli/ included):", cycles(full) or "none")
    print("cycles (cli/ excluded):", cycles(_without_excluded(full)) or "none")
    print("upward imports:", upward_imports(full) or "none")
    sys.exit(1 if cycles(_without_excluded(full)) else 0)
