"""What the summarizer reads out of one block's content, kept between requests.

Consecutive summaries of a session show mostly the same messages: each prompt holds the
newest 30,000 characters, and the checkpoint fires every few turns. So each content is
scanned (letters counted, decision sentences and identifiers found) once while it stays
in view, not once per summary that shows it. Every value is a pure function of its key,
so a memo changes no output: only which requests pay for the scan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MEMO_CHARS = 1 << 20  # characters of keys held by one memo (oldest entries go first)


class Memo(Generic[T]):
    """Values of one pure function of a string, by string; bounded by the characters
    of the strings held, oldest first out."""

    __slots__ = ("max_chars", "_values", "_chars")

    def __init__(self, max_chars: int = MEMO_CHARS) -> None:
        self.max_chars = max_chars
        self._values: dict[str, T] = {}
        self._chars = 0

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: str) -> T | None:
        return self._values.get(key)

    def put(self, key: str, value: T) -> None:
        values = self._values
        if key in values:
            return
        values[key] = value
        self._chars += len(key)
        while self._chars > self.max_chars:
            oldest = next(iter(values))
            self._chars -= len(oldest)
            del values[oldest]

    def lookup(self, key: str, compute: Callable[[str], T]) -> T:
        value = self._values.get(key)
        if value is None:
            value = compute(key)
            self.put(key, value)
        return value


@dataclass(slots=True)
class ScanMemo:
    """One memo per kind of scan; an offline provider keeps one for its requests."""

    blocks: Memo[Any] = field(default_factory=Memo)  # (message, its block) by its text
    letters: Memo[tuple[int, int]] = field(default_factory=Memo)  # (CJK, ASCII letters)
    tool_names: Memo[tuple[str, ...]] = field(default_factory=Memo)
    sentences: Memo[tuple[str, ...]] = field(default_factory=Memo)  # decision candidates
    # identifiers found in a content, by the weight of its group (prose 2, outputs 1)
    idents: dict[int, Memo[Any]] = field(default_factory=lambda: {1: Memo(), 2: Memo()})
