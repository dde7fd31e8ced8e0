"""Does the exec-built ``__init__`` of the message dataclasses earn its place?

``engine/messages._fast_init`` gives each frozen, slotted message class an ``__init__``
that stores through the slots' descriptors; the plain replacement is the ``__init__``
``dataclasses`` generates (``object.__setattr__`` per field). This script measures both
**in one process, interleaved** (the machine is shared: only ratios inside one run mean
anything), swapping the classes' ``__init__`` at run time:

- per object: building ``Usage``, ``TextBlock``, ``AssistantMessage``, ``ToolResultMessage``;
- decisions (``tsum replay --dry-run --out``, in-process, as benchmarks/run.py times them)
  against the stdlib-json floor, on t3000 and c200x40 with recorded usage and t3000 with
  its usage stripped (the figures of run.py's table whose targets are 2x and 3x).

usage: python benchmarks/bench_fast_init.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402  (the suite's corpora and its in-process replay)

from transcript_tools.engine import messages  # noqa: E402


def fast_init_classes() -> list[type]:
    """The classes ``_fast_init`` decorated: their ``__init__`` calls the ``_set_*`` descriptors."""
    return [
        cls
        for cls in vars(messages).values()
        if isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and any(n.startswith("_set_") for n in cls.__init__.__code__.co_names)
    ]


def dataclass_init(cls: type) -> Callable[..., None]:
    """The ``__init__`` ``dataclasses`` generates for the same fields and defaults."""
    specs = [
        (f.name, f.type)
        if f.default is dataclasses.MISSING
        else (f.name, f.type, dataclasses.field(default=f.default))
        for f in dataclasses.fields(cls)
    ]
    clone = dataclasses.make_dataclass(cls.__name__, specs, frozen=True, slots=True)
    init: Callable[..., None] = clone.__init__  # type: ignore[misc]
    return init


@contextmanager
def plain_inits(classes: list[type], plain: dict[type, Callable[..., None]]) -> Iterator[None]:
    fast = {cls: cls.__init__ for cls in classes}
    for cls in classes:
        cls.__init__ = plain[cls]  # type: ignore[misc]
    try:
        yield
    finally:
        for cls in classes:
            cls.__init__ = fast[cls]  # type: ignore[misc]


def interleaved(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """Each function ``repeats`` times, round-robin, the order reversed every other round
    (so neither variant always runs right after the floor's garbage); seconds per call."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():  # warm-up: imports, page cache
        fn()
    names = list(fns)
    for round_ in range(repeats):
        for name in names if round_ % 2 == 0 else names[::-1]:
            started = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - started)
    return times


def objects_built(classes: list[type], fn: Callable[[], Any]) -> int:
    """How many message objects ``fn`` builds (each class's __init__ counted once)."""
    count = 0
    saved = {cls: cls.__init__ for cls in classes}

    def counting(init: Callable[..., None]) -> Callable[..., None]:
        def counted(self: Any, *args: Any, **kwargs: Any) -> None:
            nonlocal count
            count += 1
            init(self, *args, **kwargs)

        return counted

    for cls in classes:
        cls.__init__ = counting(saved[cls])  # type: ignore[misc]
    try:
        fn()
    finally:
        for cls in classes:
            cls.__init__ = saved[cls]  # type: ignore[misc]
    return count


def build_objects(n: int) -> None:
    usage, text = messages.Usage, messages.TextBlock
    assistant, result = messages.AssistantMessage, messages.ToolResultMessage
    for i in range(n):
        assistant((text("a"),), usage(i, 2, 3, 4))
        result("c1", "output", False)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7, help="repeats per measurement")
    args = parser.parse_args()
    from transcript_tools.cli.main import tune_gc

    tune_gc()  # as benchmarks/run.py: the tsum command's GC policy
    classes = fast_init_classes()
    plain = {cls: dataclass_init(cls) for cls in classes}
    # The swap is real: the plain __init__ is the dataclass one, and builds equal objects.
    with plain_inits(classes, plain):
        assert "__dataclass_builtins_object__" in messages.Usage.__init__.__code__.co_freevars
        built_plain = messages.AssistantMessage((messages.TextBlock("a"),), messages.Usage(1, 2))
    assert built_plain == messages.AssistantMessage(
        (messages.TextBlock("a"),), messages.Usage(1, 2)
    )
    print(f"{len(classes)} classes: {', '.join(c.__name__ for c in classes)}", file=sys.stderr)

    out = run.WORK / "out-fast-init"
    t3000 = run.build_corpus("t3000", 1, 3000)
    c200 = run.build_corpus("c200x40", 200, 40)
    corpora = {"t3000": t3000, "c200x40": c200, "t3000, usage stripped": run.strip_usage(t3000)}

    def with_plain(fn: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            with plain_inits(classes, plain):
                return fn()

        return call

    n = 100_000
    res = interleaved(
        {"fast": lambda: build_objects(n), "plain": with_plain(lambda: build_objects(n))},
        args.repeat,
    )
    fast_s, plain_s = statistics.median(res["fast"]), statistics.median(res["plain"])
    per_object_us = (plain_s - fast_s) / (4 * n) * 1e6
    print(f"medians of {args.repeat}, interleaved; min in brackets")
    print()
    print("| figure | fast __init__ | dataclass __init__ | plain / fast |")
    print("|---|---|---|---|")
    print(
        f"| build {n:,} x (AssistantMessage + TextBlock + Usage + ToolResultMessage) "
        f"| {fast_s * 1000:.0f} ms | {plain_s * 1000:.0f} ms | {plain_s / fast_s:.2f}x "
        f"({per_object_us:.2f} us less per object) |"
    )
    for label, corpus in corpora.items():
        built = objects_built(classes, lambda c=corpus: run.replay(c, out, dry_run=True))
        res = interleaved(
            {
                "floor": lambda c=corpus: run.json_floor(c),
                "fast": lambda c=corpus: run.replay(c, out, dry_run=True),
                "plain": with_plain(lambda c=corpus: run.replay(c, out, dry_run=True)),
            },
            args.repeat,
        )
        floor = statistics.median(res["floor"])
        fast_s, plain_s = statistics.median(res["fast"]), statistics.median(res["plain"])
        fast_min, plain_min = min(res["fast"]), min(res["plain"])
        expected_ms = built * per_object_us / 1000
        print(
            f"| decisions / json floor, {label} ({built:,} objects: "
            f"{expected_ms:.0f} ms expected saved) "
            f"| {fast_s / floor:.2f}x ({fast_s * 1000:.0f} [{fast_min * 1000:.0f}] ms) "
            f"| {plain_s / floor:.2f}x ({plain_s * 1000:.0f} [{plain_min * 1000:.0f}] ms) "
            f"| {plain_s / fast_s:.2f}x [{plain_min / fast_min:.2f}x] |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
