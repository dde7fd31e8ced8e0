"""The texts probes are looked for in (docs/eval.md "Normalization", "Request probes").

``Haystack``: one normalized text, with its word set and its squashed form (no spaces)
built on need. Three questions are asked of it: is a string in the text, is a string
in the squashed text (keys holding CJK, CJK key terms), and how many of some ASCII
terms are words of it.

``PartsHaystack``: the texts of several haystacks joined with spaces, its word set and
squashed form made from theirs (the parts keep them): a policy's view is its messages'
texts, and the same messages are in view after view.

``JoinedHaystack``: the text ``head + " " + tail`` answering the same questions as a
``Haystack`` of that text would, without building it: the head is shared and keeps
the answers already looked up in it. The truncation floor is one: the first N tokens of
a conversation are the same whole messages at checkpoint after checkpoint (only N, the
summary's length, moves the cut in the last one), and the same probes are looked for
in them every time (benchmarks/bench_eval.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from .normalize import squash_utf8, term_set


def _utf8(needle: str) -> bytes:
    return needle.encode("utf-8", "surrogatepass")


class Haystack:
    """A variant's text, normalized once; its word set and squashed form built on need."""

    __slots__ = ("_squashed", "_text", "_words")

    def __init__(self, text: str) -> None:
        self._text = text  # normalized
        self._words: frozenset[str] | None = None
        self._squashed: bytes | None = None

    @property
    def text(self) -> str:
        return self._text

    def __bool__(self) -> bool:
        return bool(self._text)

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = term_set(self._text)
        return self._words

    @property
    def squashed(self) -> bytes:
        """The squashed text in UTF-8 (``squash_utf8``): searched as bytes, a CJK term
        not there costs ~40% less than in a str (and squashing costs less too)."""
        if self._squashed is None:
            self._squashed = squash_utf8(self._text)
        return self._squashed

    def in_text(self, needle: str) -> bool:
        return needle in self._text

    def in_squashed(self, needle: str) -> bool:
        return _utf8(needle) in self.squashed

    def count_words(self, terms: tuple[str, ...]) -> int:
        """How many of ``terms`` (distinct) are words of the text."""
        return len(self.words.intersection(terms))


class MemoHaystack(Haystack):
    """A ``Haystack`` that remembers its answers: one looked up again is a dict hit."""

    __slots__ = ("_in_squashed", "_in_text", "recalled")

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._in_text: dict[str, bool] = {}
        self._in_squashed: dict[str, bool] = {}
        self.recalled: dict[int, bool] = {}  # id(probe) -> recalled (score.recalled_memo)

    def in_text(self, needle: str) -> bool:
        found = self._in_text.get(needle)
        if found is None:
            found = self._in_text[needle] = needle in self._text
        return found

    def in_squashed(self, needle: str) -> bool:
        found = self._in_squashed.get(needle)
        if found is None:
            found = self._in_squashed[needle] = _utf8(needle) in self.squashed
        return found


class JoinedHaystack(Haystack):
    """``head.text + " " + tail`` (the space only when both are non-empty), answered
    from the parts: a needle is in the joined text when it is in one part or in the
    window around the joint that an occurrence across it would lie in. Words never
    cross the joint (a space separates them); the squashed joint has no space."""

    __slots__ = ("_head", "_tail")

    def __init__(self, head: Haystack, tail: str) -> None:
        super().__init__("")  # the text is derived from the parts (``text``)
        self._head = head
        self._tail = Haystack(tail)

    @property
    def head(self) -> Haystack:
        return self._head

    @property
    def text(self) -> str:
        """The joined text (built on each call: the parts answer every probe)."""
        return " ".join(p for p in (self._head.text, self._tail.text) if p)

    def __bool__(self) -> bool:
        return bool(self._head.text or self._tail.text)

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = self._head.words | self._tail.words
        return self._words

    @property
    def squashed(self) -> bytes:
        if self._squashed is None:
            self._squashed = self._head.squashed + self._tail.squashed
        return self._squashed

    def in_text(self, needle: str) -> bool:
        head, tail = self._head.text, self._tail.text
        if not (head and tail):
            return needle in (head or tail)
        if self._head.in_text(needle) or needle in tail:
            return True
        k = len(needle) - 1  # an occurrence across the joint lies in this window
        return k > 0 and needle in head[-k:] + " " + tail[:k]

    def in_squashed(self, needle: str) -> bool:
        if self._head.in_squashed(needle):
            return True
        tail = self._tail.squashed
        raw = _utf8(needle)
        if raw in tail:
            return True
        k = len(raw) - 1  # in bytes: UTF-8 is self-synchronizing, a match is a match of characters
        head = self._head.squashed
        return k > 0 and bool(head) and bool(tail) and raw in head[-k:] + tail[:k]

    def count_words(self, terms: tuple[str, ...]) -> int:
        head = self._head.words.intersection(terms)
        tail = self._tail.words.intersection(terms)
        return len(head | tail) if tail else len(head)


class PartsHaystack(MemoHaystack):
    """The non-empty texts of ``parts`` joined with one space, as a ``MemoHaystack`` of
    that text: its words are the union of the parts' (a word never holds a space, so
    none runs across a joint), its squashed form the parts' squashed forms end to end
    (the joints' spaces are what squashing drops). Each part builds its own once."""

    __slots__ = ("_parts",)

    def __init__(self, parts: Sequence[Haystack]) -> None:
        self._parts = [part for part in parts if part.text]
        super().__init__(" ".join([part.text for part in self._parts]))

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset[str]().union(*[part.words for part in self._parts])
        return self._words

    @property
    def squashed(self) -> bytes:
        if self._squashed is None:
            self._squashed = b"".join([part.squashed for part in self._parts])
        return self._squashed
