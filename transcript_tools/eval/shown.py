"""A conversation's history messages as a policy's view shows them verbatim, normalized
once for every scorer of the conversation (eval/policy_probes.py ``ActionScorer``).

A grid replays one conversation under configuration after configuration (sweep/driver.py
runs them one after another); the messages and their probes are the same in every one,
only the views differ (which messages are kept verbatim, which replaced by a summary or a
placeholder). So each message's text, its haystack and the answers given in it are made
once per conversation and tool-result cut (``ConversationProbes.shown``), and kept as long
as the conversation's probes.

A view's text is its messages' texts joined with one space, and its words the union of
theirs (a word never holds a space, ``normalize.term_set``). So whether a view holds a
key term is whether one of its messages does: ``ShownTexts`` keeps, per key term of the
conversation's probes, the history messages whose words hold it as the bits of an int
(``term_mask``), and a view's history messages as one too (``bits``): a term is in the
view's words when the two share a bit (``haystack.ViewHaystack``), with no word set of the
view built at all.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from ..engine.formatting import format_message
from ..engine.messages import AssistantMessage, Message, ToolUseBlock
from .haystack import Edges, Haystack, MemoHaystack, TermMasks, ViewHaystack, _edges, _utf8
from .normalize import normalize
from .probes import Probe

_HIGH_BYTES = bytes(range(0x80, 0x100))
_ASCII_TO_SPACE = bytes(0x20 if b < 0x80 else b for b in range(256))


def _wide_runs(squashed: bytes) -> bytes:
    """The runs of non-ASCII characters of a ``squash_utf8``-ed text (UTF-8: their bytes
    are those >= 0x80), one space between: a needle with no ASCII character (no byte
    < 0x80) is in ``squashed`` exactly when it is in these."""
    return b" ".join(squashed.translate(_ASCII_TO_SPACE).split())


def _end_to_end(parts: list[bytes]) -> tuple[bytes, list[int]]:
    """``parts`` joined, and where each ends in the joined bytes."""
    return b"".join(parts), list(accumulate(map(len, parts)))


def visible_text(message: Message, max_tool_result_chars: int) -> str:
    """What the model sees of a view's message, as text: its formatted block (the
    summarizer's format, tool results cut as the probes are) and the string arguments of
    its tool calls, which that format leaves out but the probes draw commands and paths
    from (eval/probes.py)."""
    text = format_message(message, max_tool_result_chars)
    if not isinstance(message, AssistantMessage):
        return text
    args: list[str] = []
    for block in message.blocks:
        if isinstance(block, ToolUseBlock):
            value = block.input
            if isinstance(value, dict):
                args.extend(v for v in value.values() if isinstance(v, str))
            elif isinstance(value, str):
                args.append(value)
    return " ".join([text, *args]) if args else text


def bits(indices: Iterable[int]) -> int:
    """The int with bit ``i`` set for each of ``indices``."""
    mask = 0
    for index in indices:
        mask |= 1 << index
    return mask


def split_view(
    history: Sequence[Message], entries: list[tuple[int | None, Message]]
) -> tuple[int, list[tuple[int | None, Message]]]:
    """A view's (history index or None, message) entries: its history messages shown
    verbatim as bits (bit ``i``: ``history[i]`` itself), and its other entries
    (summaries, placeholders, cut copies), in order (eval/policy_probes.py)."""
    mask = 0
    others: list[tuple[int | None, Message]] = []
    for i, m in entries:
        if i is not None and history[i] is m:
            mask |= 1 << i
        else:
            others.append((i, m))
    return mask, others


def set_bits(bits: int) -> list[int]:
    """The indices of ``bits``'s set bits, ascending."""
    out: list[int] = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


@dataclass(slots=True)
class ShownTexts:
    """The history messages' visible texts at one cut, normalized, as haystacks that keep
    their answers (``score.recalled_memo``), and the masks of ``terms``, the key terms of
    the history's probes (module docstring)."""

    messages: Sequence[Message]
    cut: int
    terms: frozenset[str]
    _haystacks: dict[int, MemoHaystack] = field(default_factory=dict)
    _masks: dict[str, int] | None = None  # key term -> its messages' bits, once built
    _term_masks: dict[tuple[str, ...], TermMasks] = field(default_factory=dict)
    _by_probe: dict[int, tuple[int, ...]] = field(default_factory=dict)  # ``word_masks``
    _squashed_masks: dict[str, int] = field(default_factory=dict)
    # every message's squashed text end to end, and where each one's ends in it; the same
    # of their non-ASCII runs (``_wide_runs``), where a needle without ASCII is looked for
    _squashed: tuple[bytes, list[int]] | None = None
    _wide: tuple[bytes, list[int]] | None = None
    _edges: Edges | None = None  # the first and last characters of the messages' texts

    def haystack(self, index: int) -> MemoHaystack:
        """History message ``index``'s normalized visible text as a haystack."""
        haystack = self._haystacks.get(index)
        if haystack is None:
            text = normalize(visible_text(self.messages[index], self.cut))
            haystack = self._haystacks[index] = MemoHaystack(text)
        return haystack

    def term_masks(self, terms: tuple[str, ...]) -> TermMasks:
        """``terms`` once each, and each one's mask: the history messages whose words
        hold it (a CJK term never is a word: 0)."""
        known = self._term_masks.get(terms)
        if known is None:
            distinct = tuple(dict.fromkeys(terms))
            known = self._term_masks[terms] = (distinct, tuple(map(self._mask, distinct)))
        return known

    def word_masks(self, probe: Probe) -> tuple[int, ...]:
        """``term_masks(probe.terms)``'s masks, kept by probe (its terms are not hashed
        again at each view): probes live as long as their conversation's texts."""
        known = self._by_probe.get(id(probe))
        if known is None:
            known = self._by_probe[id(probe)] = self.term_masks(probe.terms)[1]
        return known

    def _mask(self, term: str) -> int:
        masks = self._masks
        if masks is None:
            masks = self._masks = self._build_masks()
        mask = masks.get(term)
        if mask is None:  # not one of ``terms``
            mask = masks[term] = bits(
                i for i in range(len(self.messages)) if term in self.haystack(i).words
            )
        return mask

    def _build_masks(self) -> dict[str, int]:
        """Every one of ``terms``, with the messages whose words hold it: one C-level set
        intersection per message, then a bit per hit."""
        terms = self.terms
        masks = dict.fromkeys(terms, 0)
        for index in range(len(self.messages)):
            bit = 1 << index
            for term in self.haystack(index).words.intersection(terms):
                masks[term] |= bit
        return masks

    def squashed_mask(self, needle: str) -> int:
        """The history messages whose squashed text holds ``needle``: found in the
        squashed history joined end to end, an occurrence counted when it lies within
        one message (one scan in C, then a step per message that holds it). A needle
        with no ASCII character (a CJK term) is looked for in the messages' non-ASCII
        runs alone (``_wide_runs``): a fraction of the bytes to scan."""
        mask = self._squashed_masks.get(needle)
        if mask is None:
            mask = self._squashed_masks[needle] = self._squashed_find(_utf8(needle))
        return mask

    def _squashed_find(self, raw: bytes) -> int:
        if not raw:
            return (1 << len(self.messages)) - 1  # every message holds the empty string
        if raw.translate(None, _HIGH_BYTES):  # an ASCII character: the squashed texts
            if self._squashed is None:
                self._squashed = _end_to_end([h.squashed for h in self._all_haystacks()])
            joined, ends = self._squashed
        else:  # a CJK term: the non-ASCII runs, most of a text being ASCII
            if self._wide is None:
                self._wide = _end_to_end([_wide_runs(h.squashed) for h in self._all_haystacks()])
            joined, ends = self._wide
        mask = 0
        at = joined.find(raw)
        while at >= 0:
            index = bisect_right(ends, at)  # the message the occurrence starts in
            end = ends[index]
            if at + len(raw) <= end:
                mask |= 1 << index
                at = joined.find(raw, end)
            else:
                at = joined.find(raw, at + 1)
        return mask

    def edge_chars(self) -> Edges:
        """The first and the last characters of the messages' non-empty texts: a view's
        two-character needle runs across one of its joints only if its first is one of
        the last and its second one of the first (``ViewHaystack._may_run_across``)."""
        if self._edges is None:
            self._edges = _edges([h.text for h in self._all_haystacks()])
        return self._edges

    def _all_haystacks(self) -> list[MemoHaystack]:
        return [self.haystack(i) for i in range(len(self.messages))]

    def view(
        self, mask: int, extras: Sequence[Haystack], parts: Callable[[], list[Haystack]]
    ) -> ViewHaystack:
        """A view whose history messages are ``mask``'s bits and whose other parts
        (summaries, placeholders, cut copies) are ``extras``; ``parts()``: all of them,
        in the view's order (its text, built only when asked)."""
        return ViewHaystack(mask, self, extras, parts)

    def history(self, end: int) -> ViewHaystack:
        """The uncompacted view: every history message up to ``end``."""
        return self.view((1 << end) - 1, (), lambda: [self.haystack(i) for i in range(end)])
