"""The texts probes are looked for in (docs/eval.md "Normalization", "Request probes").

``Haystack``: one normalized text, with its word set and its squashed form (no spaces)
built on need. Three questions are asked of it: is a string in the text, is a string
in the squashed text (keys holding CJK, CJK key terms), and how many of some ASCII
terms are words of it.

``ViewHaystack``: a policy's view, the texts of several haystacks joined with spaces,
answering from its history messages' per-conversation masks (eval/shown.py) and building
the joined text only for the questions that need it: a policy's view is its messages'
texts, and the same messages are in view after view.

``JoinedHaystack``: the text ``head + " " + tail`` answering the same questions as a
``Haystack`` of that text would, without building it: the head is shared and keeps
the answers already looked up in it. The truncation floor is one: the first N tokens of
a conversation are the same whole messages at checkpoint after checkpoint (only N, the
summary's length, moves the cut in the last one), and the same probes are looked for
in them every time (benchmarks/bench_eval.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from .normalize import is_word, squash_utf8, term_set
from .probes import Probe

TermMasks = tuple[tuple[str, ...], tuple[int, ...]]  # distinct terms, each one's mask
Edges = tuple[frozenset[str], frozenset[str]]  # the first and the last characters of texts


def _utf8(needle: str) -> bytes:
    return needle.encode("utf-8", "surrogatepass")


def _holds(squashed: bytes, raw: bytes) -> bool:
    """``raw in squashed``, a third cheaper: ``bytes in bytes`` first tries ``raw`` as an
    int, and the TypeError it raises and clears costs more than the search itself."""
    return squashed.find(raw) >= 0


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
        return _holds(self.squashed, _utf8(needle))

    def count_words(self, terms: tuple[str, ...]) -> int:
        """How many of ``terms`` (distinct) are words of the text."""
        return len(self.words.intersection(terms))

    def words_among(self, terms: tuple[str, ...]) -> frozenset[str] | set[str]:
        """Those of ``terms`` that are words of the text."""
        return self.words.intersection(terms)


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
            found = self._in_squashed[needle] = _holds(self.squashed, _utf8(needle))
        return found


class JoinedHaystack(Haystack):
    """``head.text + " " + tail`` (the space only when both are non-empty), answered
    from the parts: a needle is in the joined text when it is in one part or in the
    window around the joint that an occurrence across it would lie in. Words never
    cross the joint (a space separates them); the squashed joint has no space."""

    __slots__ = ("_head", "_looked", "_tail")

    def __init__(self, head: Haystack, tail: str) -> None:
        super().__init__("")  # the text is derived from the parts (``text``)
        self._head = head
        self._tail = Haystack(tail)
        self._looked = 0  # terms looked for in the tail's text one by one (``count_words``)

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
        # a match across the joint holds the tail's first byte past its own first: the
        # head's squashed form (a view's: all its parts) is not needed otherwise
        if k <= 0 or not tail or raw.find(tail[:1], 1) < 0:
            return False
        head = self._head.squashed
        return bool(head) and raw in head[-k:] + tail[:k]

    def count_words(self, terms: tuple[str, ...]) -> int:
        """The head's words among ``terms``, and those the tail adds: while the tail's
        word set is not built, a few terms are looked for in its text one by one
        (``normalize.is_word``); past a budget that grows with the text, the set is built
        (building it costs about as much as that many look-ups)."""
        head = self._head.words_among(terms)
        missing = [term for term in terms if term not in head]
        if not missing:
            return len(head)
        tail = self._tail
        if tail._words is None and self._looked + len(missing) <= 8 + len(tail.text) // 128:
            self._looked += len(missing)
            text = tail.text
            return len(head) + len({term for term in missing if is_word(text, term)})
        return len(head) + len(tail.words.intersection(missing))


def _edges(texts: list[str]) -> Edges:
    """The first and the last characters of ``texts``' non-empty ones (spaces stripped:
    as the squashed joints are made, ``ViewHaystack._joint_pairs``)."""
    kept = [t for text in texts if (t := text.strip(" "))]
    return frozenset([t[0] for t in kept]), frozenset([t[-1] for t in kept])


class HistoryIndex(Protocol):
    """What a ``ViewHaystack`` asks of its conversation's history (eval/shown.py)."""

    def term_masks(self, terms: tuple[str, ...]) -> TermMasks: ...

    def word_masks(self, probe: Probe) -> tuple[int, ...]: ...

    def squashed_mask(self, needle: str) -> int: ...

    def edge_chars(self) -> Edges: ...


class ViewHaystack(Haystack):
    """A policy's view, answering as the ``Haystack`` of its parts' non-empty texts joined
    with one space would, mostly
    without its text: its history messages are the bits of ``mask``, ``extras`` its other
    parts (summaries, placeholders, cut copies), and ``history`` gives, per key term or
    squashed needle, the history messages that hold it as bits (eval/shown.py). A term is
    one of its words when it shares a bit with ``mask`` or is a word of an extra; a
    needle is in its squashed text when one part holds it, or it runs across the joint of
    two parts (two characters: the last of one and the first of the next; longer ones are
    looked for in the joined form). The text and squashed form are built from ``parts()``
    (every part, in order) when first asked."""

    __slots__ = (
        "_extra_edges",
        "_extra_words",
        "_extras",
        "_history",
        "_in_squashed",
        "_in_text",
        "_joints",
        "_mask",
        "_parts",
    )

    def __init__(
        self,
        mask: int,
        history: HistoryIndex,
        extras: Sequence[Haystack],
        parts: Callable[[], list[Haystack]],
    ) -> None:
        super().__init__("")  # the text is built from the parts on need (``text``)
        self._mask = mask
        self._history = history
        self._extras = extras
        self._extra_words: frozenset[str] | None = None  # the extras' words, once asked
        self._parts: Callable[[], list[Haystack]] | list[Haystack] = parts
        self._in_text: dict[str, bool] = {}
        self._in_squashed: dict[str, bool] = {}
        self._joints: set[str] | None = None
        self._extra_edges: Edges | None = None

    @property
    def mask(self) -> int:
        """The history messages the view shows, as bits."""
        return self._mask

    @property
    def history(self) -> HistoryIndex:
        """Its conversation's history: per term or needle, the messages that hold it."""
        return self._history

    def _built(self) -> list[Haystack]:
        parts = self._parts
        if callable(parts):
            parts = self._parts = [part for part in parts() if part.text]
            self._text = " ".join([part.text for part in parts])
        return parts

    @property
    def text(self) -> str:
        self._built()
        return self._text

    def __bool__(self) -> bool:
        return bool(self.text)

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset[str]().union(*[part.words for part in self._built()])
        return self._words

    @property
    def squashed(self) -> bytes:
        if self._squashed is None:
            self._squashed = b"".join([part.squashed for part in self._built()])
        return self._squashed

    def in_text(self, needle: str) -> bool:
        found = self._in_text.get(needle)
        if found is None:
            found = self._in_text[needle] = needle in self.text
        return found

    def in_squashed(self, needle: str) -> bool:
        found = self._in_squashed.get(needle)
        if found is None:
            found = self._in_squashed[needle] = self._squashed_has(needle)
        return found

    def _squashed_has(self, needle: str) -> bool:
        if self._history.squashed_mask(needle) & self._mask or not needle:
            return True
        if self._extras:  # most views have none: the needle is then not encoded
            raw = _utf8(needle)
            if any(_holds(part.squashed, raw) for part in self._extras):
                return True
        if len(needle) == 2:  # across a joint: one character on each side
            return self._may_run_across(needle) and needle in self._joint_pairs()
        return len(needle) > 2 and _holds(self.squashed, _utf8(needle))

    def _may_run_across(self, needle: str) -> bool:
        """Can a two-character needle run across a joint: is its first character the
        last of some part (a history message or an extra) and its second the first of
        some part? Seldom so: the joints are then worked out from the parts."""
        firsts, lasts = self._history.edge_chars()
        if self._extra_edges is None:
            self._extra_edges = _edges([part.text for part in self._extras])
        extra_firsts, extra_lasts = self._extra_edges
        return (needle[0] in lasts or needle[0] in extra_lasts) and (
            needle[1] in firsts or needle[1] in extra_firsts
        )

    def _joint_pairs(self) -> set[str]:
        """The last character of each part's squashed text and the first of the next's:
        the two-character strings that run across a joint of the squashed form."""
        if self._joints is None:
            ends = [t for part in self._built() if (t := part.text.strip(" "))]
            self._joints = {a[-1] + b[0] for a, b in zip(ends, ends[1:], strict=False)}
        return self._joints

    def _extras_words(self) -> frozenset[str]:
        words = self._extra_words
        if words is None:
            words = self._extra_words = frozenset[str]().union(*[p.words for p in self._extras])
        return words

    def count_words(self, terms: tuple[str, ...]) -> int:
        distinct, masks = self._history.term_masks(terms)
        mask, extra = self._mask, self._extra_words
        if extra is None:
            extra = self._extras_words()
        if not extra:
            return len([held for held in masks if held & mask])
        pairs = zip(distinct, masks, strict=True)
        return len([term for term, held in pairs if held & mask or term in extra])

    def words_among(self, terms: tuple[str, ...]) -> frozenset[str] | set[str]:
        distinct, masks = self._history.term_masks(terms)
        mask, extra = self._mask, self._extras_words()
        return {t for t, m in zip(distinct, masks, strict=True) if m & mask or t in extra}
