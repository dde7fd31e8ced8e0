"""Scoring one checkpoint: the probes of its replaced part against each variant's text.

Variants (docs/eval.md "Floors"): ``summary`` (the summary text), ``truncation`` (the
first N estimated tokens of the formatted replaced part, N = the summary's estimated
tokens), ``none`` (no summary: empty text, so 0 by construction — the kept turns
are the same in every variant; ``in_kept`` says which probes they still show).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..messages import PERSON, Message, SystemMessage, UserMessage, starts_turn
from ..replay import turn_starts
from ..tokens import ascii_letter_count, cjk_count, estimate_text_tokens
from ..transcript import MESSAGE_SEPARATOR, format_message
from .normalize import coverage, normalize
from .probes import (
    ARTIFACT_KINDS,
    CONSTRAINT,
    ERROR,
    EXTRACTOR_VERSION,
    PATH,
    REQUEST,
    Probe,
    message_probes,
    request_probe,
)

COVERAGE_THRESHOLD = 0.5  # requests and constraints: share of key terms the text must hold
CJK_LANGUAGE_SHARE = 0.3  # CJK share of letters above which a text counts as CJK
VARIANTS = ("summary", "truncation", "none")
# A summary within 5% of the replaced part's length counts as not shorter: both are
# estimates, and the replaced part's is a sum of per-message estimates (each rounded).
NOT_SHORTER_SHARE = 0.95
_SEP_TOKENS = estimate_text_tokens(MESSAGE_SEPARATOR)


def recalled(probe: Probe, haystack: str) -> bool:
    """Is ``probe`` carried by ``haystack`` (normalized)? The rule per kind (docs/eval.md)."""
    kind = probe.kind
    if kind in (REQUEST, CONSTRAINT):
        return coverage(list(probe.terms), haystack) >= COVERAGE_THRESHOLD
    if kind == ERROR:
        name = probe.key.partition(": ")[0]
        if name not in haystack:
            return False
        return not probe.terms or coverage(list(probe.terms), haystack) >= COVERAGE_THRESHOLD
    if kind == PATH:
        parts = [p for p in probe.key.split("/") if p]
        return "/".join(parts[-2:]) in haystack
    return probe.key in haystack


def language_of(text: str) -> str:
    """``cjk`` when CJK characters are at least 30% of the letters, else ``latin``."""
    cjk = cjk_count(text)
    letters = cjk + ascii_letter_count(text)
    return "cjk" if letters and cjk / letters >= CJK_LANGUAGE_SHARE else "latin"


@dataclass(slots=True)
class ConversationProbes:
    """Probes and formatted text of one conversation, each message worked on once."""

    messages: Sequence[Message]
    max_tool_result_chars: int = 500
    skip: frozenset[int] = frozenset()  # runtime compaction summaries: never probed
    _turn_of: list[int] = field(default_factory=list)
    _probes: dict[int, list[Probe]] = field(default_factory=dict)
    _blocks: dict[int, str] = field(default_factory=dict)
    _tokens: list[int] = field(default_factory=lambda: [0])  # prefix sums, non-system blocks

    def __post_init__(self) -> None:
        starts = turn_starts(list(self.messages))
        turn_of = [0] * len(self.messages)
        for t, start in enumerate(starts):
            end = starts[t + 1] if t + 1 < len(starts) else len(self.messages)
            turn_of[start:end] = [t] * (end - start)
        self._turn_of = turn_of

    def turn_of(self, index: int) -> int:
        return self._turn_of[index]

    def message_probes(self, index: int) -> list[Probe]:
        probes = self._probes.get(index)
        if probes is None:
            message = self.messages[index]
            turn = self._turn_of[index]
            if index in self.skip:
                probes = []
            else:
                probes = message_probes(message, index, turn, self.max_tool_result_chars)
            if index not in self.skip and starts_turn(message):
                request = request_probe(message, index, turn)
                if request is not None:
                    probes = [request, *probes]
            self._probes[index] = probes
        return probes

    def probes(self, start: int, end: int) -> list[Probe]:
        """Probes of messages[start:end], each (kind, normalized text) once, first kept."""
        seen: set[tuple[str, str]] = set()
        out: list[Probe] = []
        for index in range(start, end):
            for probe in self.message_probes(index):
                ident = (probe.kind, probe.key)
                if ident not in seen:
                    seen.add(ident)
                    out.append(probe)
        return out

    def block(self, index: int) -> str:
        text = self._blocks.get(index)
        if text is None:
            text = self._blocks[index] = format_message(
                self.messages[index], self.max_tool_result_chars
            )
        return text

    def replaced_tokens(self, start: int, end: int) -> int:
        """Estimated tokens of the formatted non-system messages[start:end] (start=0 or cached)."""
        tokens = self._tokens
        while len(tokens) <= end:
            i = len(tokens) - 1
            n = (
                0
                if isinstance(self.messages[i], SystemMessage)
                else estimate_text_tokens(self.block(i)) + _SEP_TOKENS
            )
            tokens.append(tokens[-1] + n)
        return tokens[end] - tokens[start]

    def truncation(self, start: int, end: int, budget: int) -> str:
        """The first ``budget`` estimated tokens of the formatted non-system messages[start:end]."""
        parts: list[str] = []
        used = 0
        for index in range(start, end):
            if isinstance(self.messages[index], SystemMessage):
                continue
            block = self.block(index)
            n = estimate_text_tokens(block) + _SEP_TOKENS
            if used + n <= budget:
                parts.append(block)
                used += n
                continue
            lo, hi = 0, len(block)  # the longest prefix that fits
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if estimate_text_tokens(block[:mid]) <= budget - used:
                    lo = mid
                else:
                    hi = mid - 1
            if lo:
                parts.append(block[:lo])
            break
        return MESSAGE_SEPARATOR.join(parts)

    def language(self, end: int) -> str:
        """The conversation's language: what its people wrote up to ``end`` (else everything)."""
        person = [
            self.block(i)
            for i in range(end)
            if isinstance(m := self.messages[i], UserMessage) and m.origin == PERSON
        ]
        return language_of(
            " ".join(person) if person else " ".join(self.block(i) for i in range(end))
        )


def score_checkpoint(
    conv: ConversationProbes,
    *,
    replaced: tuple[int, int],
    kept: tuple[int, int],
    summary: str,
) -> dict[str, Any]:
    """Every probe of the replaced part, and whether each variant carries it.

    ``replaced``: the message range the summary replaces (its system messages stay in
    the view and are skipped); ``kept``: the range the next view still shows.
    """
    start, end = replaced
    probes = conv.probes(start, end)
    summary_tokens = estimate_text_tokens(summary)
    replaced_tokens = conv.replaced_tokens(start, end)
    texts = {
        "summary": normalize(summary),
        "truncation": normalize(conv.truncation(start, end, summary_tokens)),
        "none": "",
    }
    kept_text = (
        normalize(MESSAGE_SEPARATOR.join(conv.block(i) for i in range(*kept))) if probes else ""
    )
    rows = []
    counts: dict[str, dict[str, list[int]]] = {v: {} for v in VARIANTS}
    for probe in probes:
        row = probe.as_json()
        for variant in VARIANTS:
            hit = recalled(probe, texts[variant]) if texts[variant] else False
            row[variant] = hit
            pair = counts[variant].setdefault(probe.kind, [0, 0])
            pair[0] += hit
            pair[1] += 1
        row["in_kept"] = recalled(probe, kept_text) if kept_text else False
        rows.append(row)
    conversation_language = conv.language(kept[1])
    summary_language = language_of(summary)
    return {
        "extractor_version": EXTRACTOR_VERSION,
        "replaced_messages": [start, end],
        "kept_messages": list(kept),
        "replaced_tokens": replaced_tokens,
        "summary_tokens": summary_tokens,
        "compression": round(summary_tokens / replaced_tokens, 4) if replaced_tokens else None,
        "not_shorter": summary_tokens >= NOT_SHORTER_SHARE * replaced_tokens,
        "counts": counts,
        "recall": {v: recall_of(counts[v]) for v in VARIANTS},
        "language": {
            "conversation": conversation_language,
            "summary": summary_language,
            "match": conversation_language == summary_language,
        },
        "probes": rows,
    }


def recall_of(counts: dict[str, list[int]]) -> dict[str, float | None]:
    """``artifact`` (all artifact kinds pooled), ``request``, and each kind: hits / probes."""
    out: dict[str, float | None] = {}
    hits = sum(counts[k][0] for k in counts if k in ARTIFACT_KINDS)
    total = sum(counts[k][1] for k in counts if k in ARTIFACT_KINDS)
    out["artifact"] = round(hits / total, 4) if total else None
    req = counts.get(REQUEST)
    out["request"] = round(req[0] / req[1], 4) if req and req[1] else None
    for kind, (hit, n) in sorted(counts.items()):
        if kind != REQUEST and n:
            out[kind] = round(hit / n, 4) if n else None
    return out
