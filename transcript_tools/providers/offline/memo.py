"""What the summarizer reads out of one block's content, kept between requests.

Consecutive summaries of a session show mostly the same messages: each prompt holds the
newest 30,000 characters, and the checkpoint fires every few turns. So each content is
scanned (letters counted, decision sentences and identifiers found) once while it stays
in view, not once per summary that shows it. Every value is a pure function of its key,
so a memo changes no output: only which requests pay for the scan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

MEMO_CHARS = 1 << 20  # characters held by one memo (oldest entries go first)
# Counts that add up over the parts of a text (tokens.Counts, letters) are kept packed in
# one int, a field of FIELD_BITS bits per count: the sum of packed ints is the packed
# sums (no field reaches 2**40 characters), so a request adds its texts' counts in one
# C-level ``sum`` instead of a Python loop per text and count.
FIELD_BITS = 40
_FIELD_MASK = (1 << FIELD_BITS) - 1


def packed(counts: Iterable[int]) -> int:
    """The counts in one int, the first in the lowest bits."""
    total = 0
    for shift, count in enumerate(counts):
        total |= count << (shift * FIELD_BITS)
    return total


def unpacked(total: int, fields: int) -> tuple[int, ...]:
    """The ``fields`` counts ``packed`` (or a sum of packed ints) holds."""
    return tuple((total >> (shift * FIELD_BITS)) & _FIELD_MASK for shift in range(fields))


class Memo(Generic[K, V]):
    """Values by key, bounded by the characters the entries stand for (a string key's
    length unless ``put`` is told another size), oldest first out."""

    __slots__ = ("max_chars", "_values", "_sizes", "_chars")

    def __init__(self, max_chars: int = MEMO_CHARS) -> None:
        self.max_chars = max_chars
        self._values: dict[K, V] = {}
        self._sizes: dict[K, int] = {}
        self._chars = 0

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K) -> V | None:
        return self._values.get(key)

    def put(self, key: K, value: V, size: int | None = None) -> None:
        values = self._values
        if key in values:
            return
        values[key] = value
        self._sizes[key] = size = len(key) if size is None else size  # type: ignore[arg-type]
        self._chars += size
        if self._chars > self.max_chars:  # the oldest quarter out, in one pass
            sizes, keep = self._sizes, self.max_chars * 3 // 4
            for oldest in list(values):
                if self._chars <= keep:
                    break
                self._chars -= sizes.pop(oldest)
                del values[oldest]

    def lookup(self, key: K, compute: Callable[[K], V]) -> V:
        value = self._values.get(key)
        if value is None:
            value = compute(key)
            self.put(key, value)
        return value

    def get_all(self, keys: Iterable[K]) -> list[V | None]:
        """``[get(key) for key in keys]``, the loop in C."""
        return list(map(self._values.get, keys))

    def lookup_all(self, keys: Sequence[K], compute: Callable[[K], V]) -> list[V]:
        """``[lookup(key, compute) for key in keys]``, the hits looked up in C."""
        values = self.get_all(keys)
        if None in values:
            for index, value in enumerate(values):
                if value is None:
                    values[index] = value = compute(keys[index])
                    self.put(keys[index], value)
        return values  # type: ignore[return-value]  # no None left


@dataclass(slots=True)
class ScanMemo:
    """One memo per kind of scan; an offline provider keeps one for its requests."""

    # [message, its formatted text, its block, what a summary measured of them]
    # (parse.MemoEntry) by the message's id(): the message is held, so its id is not
    # reused while the entry exists
    blocks: Memo[int, Any] = field(default_factory=Memo)
    # the entries of messages formatted to another text than the one in ``blocks`` (a
    # sweep's configurations cut tool results to different lengths), by that text
    variants: Memo[str, Any] = field(default_factory=Memo)
    counts: Memo[str, int] = field(default_factory=Memo)  # tokens.Counts, packed
    tokens: Memo[str, int] = field(default_factory=Memo)  # estimate_text_tokens
    letters: Memo[str, int] = field(default_factory=Memo)  # (CJK, ASCII letters), packed
    bounds: Memo[str, int] = field(default_factory=Memo)  # facts.letter_bounds
    tool_names: Memo[str, tuple[str, ...]] = field(default_factory=Memo)
    sentences: Memo[str, tuple[str, ...]] = field(default_factory=Memo)  # decision candidates
    # identifiers found in a content, by the weight of its group (prose 2, outputs 1)
    idents: dict[int, Memo[str, Any]] = field(default_factory=lambda: {1: Memo(), 2: Memo()})
