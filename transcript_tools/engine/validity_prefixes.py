"""The scans of the views' prefixes checked so far (``validity.check_all``), as trees by
the messages' identities, and the last history checked, as a spine through them.

A node holds its message (so no other object takes its id while it is here) and the
scan after it. A log's history is checked at every action, each time one prefix longer,
under every configuration of a grid: each message of it is read once
(``check_all(prefix=True)``). Messages are frozen (engine/messages.py): the same objects
in the same order are the same prefix. A tree per history's first message, the last
PREFIX_TREES kept (a log's configurations run in a row), PREFIX_NODES at most.

The spine is the last history checked as a prefix (its messages, and the node after
each): the next history of a grid's run is mostly that one, or a prefix of it (the next
configuration's actions fall at other turns of the same log). Where a view starts with
the spine is found in C (``map(is_not, ...)``), not by a dict step per message, and a
history the spine holds whole has its node at once; its answer is kept there
(``Node.found``), found once for every configuration. The spine is let go whenever the
trees let a node go, so every node of it is one of theirs.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, count, islice
from operator import is_, is_not
from typing import Any

from .messages import Message


@dataclass(slots=True)
class Node:
    message: Message | None
    scan: Any  # validity._Scan, after the prefix that ends here
    after: dict[int, Node]
    found: Any = None  # check_all's answer for that prefix, once a history asked it


ROOT = Node(None, None, {})  # its scan is set by validity.py (the scan of no message)
PREFIX_TREES, PREFIX_NODES = 4, 1 << 15
sizes: dict[int, int] = {}  # nodes per tree, by its first message's id
_LOCK = threading.Lock()  # a library caller may check views from several threads
_NO_SPINE: tuple[list[Message], list[Node]] = ([], [])
_spine = [_NO_SPINE]  # (the last history's messages, the node after each)
# A spine and where each of its messages stands, by id; the index may also hold a longer
# spine's (spine_run asks only for indices within its own)
_index: list[tuple[tuple[list[Message], list[Node]], dict[int, int]]] = [(_NO_SPINE, {})]


def deepest(view: Sequence[Message], path: list[Node] | None = None) -> tuple[Node, int]:
    """The node after the longest prefix of ``view`` the trees hold, and its length:
    along the spine first, then step by step. ``path``: given the nodes along it."""
    messages, nodes = _spine[0]
    done = next(compress(count(), map(is_not, view, messages)), min(len(view), len(messages)))
    node = nodes[done - 1] if done else ROOT
    if path is not None:
        path.extend(nodes[:done])
    for message in islice(view, done, None):
        step = node.after.get(id(message))
        if step is None:
            break
        node, done = step, done + 1
        if path is not None:
            path.append(node)
    return node, done


def spine_run(view: Sequence[Message], at: int) -> tuple[Any, Any, int] | None:
    """Where the spine holds ``view`` from ``at`` on: the scans before and after the
    messages it holds in a row there, and how many; None where ``view[at]`` is not on
    the spine (or is its first message: no scan before it but the root's)."""
    spine = _spine[0]
    messages, nodes = spine
    j = _indexed(spine).get(id(view[at]))
    if not j or j >= len(messages):  # j from a longer spine sharing the index: not here
        return None
    most = min(len(view) - at, len(messages) - j)
    run = next(
        compress(count(), map(is_not, islice(view, at, None), islice(messages, j, None))), most
    )
    return nodes[j - 1].scan, nodes[j + run - 1].scan, run


def _indexed(spine: tuple[list[Message], list[Node]]) -> dict[int, int]:
    """The index of each of the spine's messages, by id (the spine holds them, so no
    other object takes one's id). The next spine is mostly this one grown by a few
    messages (the next history): its index is this one's, those few added."""
    indexed, index = _index[0]
    if indexed is not spine:
        old, messages = indexed[0], spine[0]
        if old and len(old) <= len(messages) and all(map(is_, old, messages)):
            index.update(zip(map(id, islice(messages, len(old), None)), count(len(old))))
        else:
            index = dict(zip(map(id, messages), count()))
        _index[0] = (spine, index)
    return index


def on_spine(view: Sequence[Message]) -> Node | None:
    """The node after the whole of ``view`` when the spine starts with it, else None."""
    messages, nodes = _spine[0]
    n = len(view)
    if n > len(messages):
        return None
    if not n:
        return ROOT
    return nodes[n - 1] if all(map(is_, view, messages)) else None


def follow(view: Sequence[Message], path: list[Node]) -> None:
    """``view``, a history just checked (``path``: the node after each of its messages),
    becomes the spine, unless the trees let its first node go meanwhile."""
    if path and len(path) == len(view):
        with _LOCK:
            if ROOT.after.get(id(view[0])) is path[0]:
                _spine[0] = (list(view), path)


def keep(node: Node, message: Message, scan: Any, tree: int) -> Node:
    """The node after ``node`` for ``message``, kept in its ``tree`` (made if it is
    the tree's first), the oldest trees let go beyond the bounds (and the spine)."""
    with _LOCK:
        if sum(sizes.values()) >= PREFIX_NODES:
            ROOT.after.clear()
            sizes.clear()
            _spine[0] = _NO_SPINE
        if node is ROOT:
            while len(ROOT.after) >= PREFIX_TREES:
                oldest = next(iter(ROOT.after))
                del ROOT.after[oldest]
                sizes.pop(oldest, None)
                _spine[0] = _NO_SPINE
            sizes[tree] = 0
        step = node.after[id(message)] = Node(message, scan, {})
        if tree in sizes:
            sizes[tree] += 1
        return step
