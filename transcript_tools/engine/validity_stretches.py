"""A view's check (``validity._Scan``) read stretch by stretch where it can.

A view a compaction made is mostly the log's own history, view after view and
configuration after configuration of a grid, but in a new place: behind a new summary,
without what was dropped, so the prefix trees of ``validity.py`` do not reach it. The
scan is *quiet* where nothing read so far is open: a user turn after an assistant turn
without calls, no OpenAI call unanswered, the strict endpoint awaiting an assistant
message. What the scan finds after a quiet point then depends only on the messages read
from there (each rule reads an index only to name it): the stretch from one quiet point
to the next gives the same findings, shifted by where it starts, in every view and at
every place. Each such stretch read is kept by its messages' identities (held, so no
other object takes one of their ids while it is here), and taken whole where a view holds
it again at a quiet point. All are let go once STRETCH_MESSAGES are held.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from operator import is_
from typing import Any, Protocol

from .messages import Message
from .validity_prefixes import spine_run

Found = tuple[tuple[str, int, str], ...]  # (rule, message index, call id or text)
# What a stretch adds to each of a scan's lists, its indices from the stretch's start:
# (empty, misplaced, paired, openai, strict); () when it adds nothing
Findings = tuple[tuple[tuple[int, str], ...], tuple[int, ...], Found, Found, Found] | tuple[()]

_STRETCHES: dict[int, tuple[tuple[Message, ...], Findings]] = {}  # by the first message's id
STRETCH_MESSAGES = 1 << 16
_held = [0]  # messages held by _STRETCHES
_LOCK = threading.Lock()  # a library caller may check views from several threads


class Scanning(Protocol):
    """The fields of ``validity._Scan`` a stretch reads and extends."""

    n: int
    pending: Any
    expected: str
    empty: tuple[tuple[int, str], ...]
    misplaced: tuple[int, ...]
    paired: Found
    openai: Found
    strict: Found

    def read(self, message: Message) -> None: ...

    def carry(self, other: Any, by: int) -> None: ...


def quiet(scan: Scanning) -> bool:
    """Is nothing open (module docstring)? The strict endpoint awaits an assistant message
    only after a user message or a tool result (so the conversation began and this is a
    user turn); with no ``pending`` calls the assistant turn before it had none, so
    OpenAI's and the strict endpoint's open calls are empty too, and so is ``called``;
    the user turn's other fields are read only once an assistant turn before had calls."""
    return scan.pending is None and scan.expected == "assistant"


def read_on(
    scan: Scanning,
    view: Sequence[Message],
    start: int,
    each: Callable[[Message], None] | None = None,
) -> None:
    """Read ``view[start:]`` into ``scan``, keeping each stretch it reads; a stretch known
    from a quiet point is taken whole, unless ``each`` is given (called after every
    message read: validity.py's prefix trees keep a node for each)."""
    i, end = start, len(view)
    while i < end:
        if not quiet(scan):
            scan.read(view[i])
            i += 1
            if each is not None:
                each(view[i - 1])
            continue
        if each is None:  # a view: a run of the spine, else a known stretch, taken whole
            run = spine_run(view, i)
            if run is not None and quiet(run[0]):
                _jump(scan, *run)
                i += run[2]
                continue
            known = _STRETCHES.get(id(view[i]))
            if known is not None and _holds(view, i, known[0]):
                _take(scan, known[1], len(known[0]))
                i += len(known[0])
                continue
        first, marks = i, _marks(scan)
        scan.read(view[i])
        i += 1
        if each is not None:
            each(view[i - 1])
        while i < end and not quiet(scan):
            scan.read(view[i])
            i += 1
            if each is not None:
                each(view[i - 1])
        if quiet(scan):
            _keep(tuple(view[first:i]), _since(scan, marks))


def _holds(view: Sequence[Message], at: int, stretch: tuple[Message, ...]) -> bool:
    """Does ``view`` hold ``stretch`` (the same objects) from index ``at``?"""
    return len(view) - at >= len(stretch) and all(map(is_, stretch, view[at : at + len(stretch)]))


# A scan's n and its lists as they were (a list grows only by ``+=``, a new tuple)
Marks = tuple[int, tuple[tuple[int, str], ...], tuple[int, ...], Found, Found, Found]


def _marks(scan: Scanning) -> Marks:
    return scan.n, scan.empty, scan.misplaced, scan.paired, scan.openai, scan.strict


def _since(scan: Scanning, marks: Marks) -> Findings:
    """What ``scan`` found since ``marks``, indexed from where they were taken: nothing
    where each list is still the tuple marked (``+= ()`` keeps a tuple, so most reads
    leave them all)."""
    n, empty, misplaced, paired, openai, strict = marks
    if (
        scan.empty is empty and scan.misplaced is misplaced and scan.paired is paired
        and scan.openai is openai and scan.strict is strict
    ):  # fmt: skip
        return ()
    return (
        tuple((i - n, kind) for i, kind in scan.empty[len(empty) :]),
        tuple(i - n for i in scan.misplaced[len(misplaced) :]),
        _shifted(scan.paired[len(paired) :], -n),
        _shifted(scan.openai[len(openai) :], -n),
        _shifted(scan.strict[len(strict) :], -n),
    )


def _shifted(found: Found, by: int) -> Found:
    return tuple((rule, i + by, text) for rule, i, text in found)


def _take(scan: Scanning, findings: Findings, length: int) -> None:
    """``scan`` after a stretch of ``length`` messages that finds ``findings``."""
    n = scan.n
    if findings:
        empty, misplaced, paired, openai, strict = findings
        scan.empty += tuple((i + n, kind) for i, kind in empty)
        scan.misplaced += tuple(i + n for i in misplaced)
        scan.paired += _shifted(paired, n)
        scan.openai += _shifted(openai, n)
        scan.strict += _shifted(strict, n)
    scan.n = n + length


def _jump(scan: Scanning, before: Scanning, after: Scanning, run: int) -> None:
    """``scan``, at a quiet point, after the ``run`` messages that took a history's scan
    from ``before`` (quiet too) to ``after``: what they found, shifted to where ``scan``
    stands, and the open state they leave (module docstring: from a quiet point on, the
    scan depends only on the messages read)."""
    by = scan.n - before.n
    _take(scan, _since(after, _marks(before)), run)
    scan.carry(after, by)


def _keep(stretch: tuple[Message, ...], findings: Findings) -> None:
    with _LOCK:
        if _held[0] + len(stretch) > STRETCH_MESSAGES:
            _STRETCHES.clear()
            _held[0] = 0
        old = _STRETCHES.get(id(stretch[0]))
        if old is not None:
            _held[0] -= len(old[0])
        _STRETCHES[id(stretch[0])] = stretch, findings
        _held[0] += len(stretch)
