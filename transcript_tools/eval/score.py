"""Scoring one checkpoint: the probes of its replaced part against each variant's text.

Variants (docs/eval.md "Floors"): ``summary`` (the summary text), ``truncation`` (the
first N estimated tokens of the formatted replaced part, N = the summary's estimated
tokens), ``none`` (no summary: empty text, so 0 by construction — the kept turns
are the same in every variant; ``in_kept`` says which probes they still show).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from math import ceil
from typing import Literal

from ..engine.formatting import MESSAGE_SEPARATOR, format_message
from ..engine.messages import PERSON, Message, SystemMessage, UserMessage, is_turn_start
from ..engine.rules import turn_starts
from ..engine.tokens import ascii_letter_count, cjk_count, estimate_text_tokens
from .artifacts import ARTIFACT_KINDS, CONSTRAINT, ERROR, PATH, REQUEST
from .haystack import Haystack, JoinedHaystack, MemoHaystack
from .normalize import normalize, squash
from .probes import EXTRACTOR_VERSION, Probe, message_probes, request_probe
from .records import Counts, ProbeRow, Recall, ScoreRecord
from .shown import ShownTexts

COVERAGE_THRESHOLD = 0.5  # requests and constraints: share of key terms the text must hold
CJK_LANGUAGE_SHARE = 0.3  # CJK share of letters above which a text counts as CJK
VARIANTS: tuple[Literal["summary", "truncation", "none"], ...] = ("summary", "truncation", "none")
# A summary within 5% of the replaced part's length counts as not shorter: both are
# estimates, and the replaced part's is a sum of per-message estimates (each rounded).
NOT_SHORTER_SHARE = 0.95
_SEP_TOKENS = estimate_text_tokens(MESSAGE_SEPARATOR)


def covers(haystack: Haystack, probe: Probe) -> bool:
    """Key-term coverage of at least ``COVERAGE_THRESHOLD`` (docs/eval.md "Request
    probes"): ASCII terms as words of the text (``normalize.term_set``), counted with a
    C-level set intersection; CJK terms in the squashed text, stopping as soon as it is
    decided. The one home of the rule."""
    terms = probe.terms
    if not terms:
        return False
    need = terms_needed(probe)
    cjk = probe.cjk_terms
    # CJK terms are never ASCII words; with none but CJK terms the word set is not needed
    found = haystack.count_words(terms) if len(cjk) < len(terms) else 0
    if found >= need:
        return True
    if not cjk or found + len(cjk) < need:
        return False
    in_squashed = haystack.in_squashed
    for i, term in enumerate(cjk):
        found += in_squashed(term)
        if found >= need:
            return True
        if found + len(cjk) - i - 1 < need:
            return False
    return False


def terms_needed(probe: Probe) -> int:
    """How many of ``probe``'s key terms a text holds to cover it (``covers``)."""
    return ceil(COVERAGE_THRESHOLD * len(probe.terms))


def contains(haystack: Haystack, key: str) -> bool:
    """Verbatim (normalized) containment; without spaces when ``key`` holds non-ASCII."""
    return haystack.in_text(key) if key.isascii() else haystack.in_squashed(squash(key))


def recalled(probe: Probe, haystack: Haystack | str) -> bool:
    """Is ``probe`` carried by ``haystack``? The rule per kind (docs/eval.md): verbatim
    (normalized) for artifacts, a path by its last two segments; requests and
    constraints by key-term coverage; an error by its name plus half its message's terms."""
    if isinstance(haystack, str):
        haystack = Haystack(haystack)  # normalized
    kind = probe.kind
    if kind in (REQUEST, CONSTRAINT):
        return covers(haystack, probe)
    if kind == ERROR:
        name = probe.key.partition(": ")[0]
        return haystack.in_text(name) and (not probe.terms or covers(haystack, probe))
    if kind == PATH:
        parts = [p for p in probe.key.split("/") if p]
        return contains(haystack, "/".join(parts[-2:]))
    return contains(haystack, probe.key)


def recalled_memo(probe: Probe, haystack: MemoHaystack) -> bool:
    """``recalled``, remembered by the (shared, long-lived) haystack."""
    found = haystack.recalled.get(id(probe))  # probes live as long as their conversation's
    if found is None:
        found = haystack.recalled[id(probe)] = recalled(probe, haystack)
    return found


def in_truncation(probe: Probe, truncation: JoinedHaystack) -> bool:
    """``recalled(probe, truncation)``: a probe its head (the whole blocks) carries is
    carried whatever the cut tail adds (recall only grows with the text), and the head
    is the same at checkpoint after checkpoint."""
    head = truncation.head
    if isinstance(head, MemoHaystack) and recalled_memo(probe, head):
        return True
    return recalled(probe, truncation)


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
    _norm: dict[int, str] = field(default_factory=dict)
    _block_tokens: dict[int, int] = field(default_factory=dict)
    _tokens: list[int] = field(default_factory=lambda: [0])  # prefix sums, non-system blocks
    _range: tuple[int, int, set[tuple[str, str]], list[Probe]] | None = None
    _heads: dict[tuple[int, int], MemoHaystack] = field(default_factory=dict)
    _person_letters: list[tuple[int, int]] = field(default_factory=lambda: [(0, 0)])
    _all_letters: list[tuple[int, int]] = field(default_factory=lambda: [(0, 0)])
    # tool-result cut -> the history as views show it, for every policy scorer of the
    # conversation (eval/policy_probes.py ActionScorer)
    _shown: dict[int, ShownTexts] = field(default_factory=dict)

    def __post_init__(self) -> None:
        starts = turn_starts(list(self.messages))
        turn_of = [0] * len(self.messages)
        for t, start in enumerate(starts):
            end = starts[t + 1] if t + 1 < len(starts) else len(self.messages)
            turn_of[start:end] = [t] * (end - start)
        self._turn_of = turn_of

    def turn_of(self, index: int) -> int:
        return self._turn_of[index]

    def shown(self, cut: int) -> ShownTexts:
        """The history messages as a view shows them, tool results cut at ``cut``
        (eval/shown.py): one for every scorer of the conversation at that cut."""
        shown = self._shown.get(cut)
        if shown is None:
            terms = {
                t
                for i in range(len(self.messages))
                for p in self.message_probes(i)
                for t in p.terms
            }
            shown = self._shown[cut] = ShownTexts(self.messages, cut, frozenset(terms))
        return shown

    def message_probes(self, index: int) -> list[Probe]:
        probes = self._probes.get(index)
        if probes is None:
            message = self.messages[index]
            turn = self._turn_of[index]
            if index in self.skip:
                probes = []
            else:
                probes = message_probes(message, index, turn, self.max_tool_result_chars)
            if index not in self.skip and is_turn_start(message):
                request = request_probe(message, index, turn)
                if request is not None:
                    probes = [request, *probes]
            self._probes[index] = probes
        return probes

    def probes(self, start: int, end: int) -> list[Probe]:
        """Probes of messages[start:end], each (kind, normalized text) once, first kept.

        Checkpoints come in order with growing ranges from the same start: the previous
        range's result is extended, not recomputed (cost linear in the history overall)."""
        cached = self._range
        if cached is not None and cached[0] == start and cached[1] <= end:
            _, done, seen, out = cached
        else:
            done, seen, out = start, set(), []
        for index in range(done, end):
            for probe in self.message_probes(index):
                ident = (probe.kind, probe.key)
                if ident not in seen:
                    seen.add(ident)
                    out.append(probe)
        self._range = (start, end, seen, out)
        return list(out)

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
            n = 0 if isinstance(self.messages[i], SystemMessage) else self.block_tokens(i)
            tokens.append(tokens[-1] + n)
        return tokens[end] - tokens[start]

    def norm_block(self, index: int) -> str:
        """``normalize(block(index))``, once per message: haystacks are joined from these
        (normalizing "A\\n\\nB" is joining the normalized A and B with one space)."""
        text = self._norm.get(index)
        if text is None:
            text = self._norm[index] = normalize(self.block(index))
        return text

    def block_tokens(self, index: int) -> int:
        n = self._block_tokens.get(index)
        if n is None:
            n = self._block_tokens[index] = estimate_text_tokens(self.block(index)) + _SEP_TOKENS
        return n

    def _truncate(self, start: int, end: int, budget: int) -> tuple[list[int], str]:
        """The whole blocks and the cut last block of the first ``budget`` estimated tokens
        of the formatted non-system messages[start:end]."""
        return self.truncate_indices(range(start, end), budget)

    def truncate_indices(self, indices: Iterable[int], budget: int) -> tuple[list[int], str]:
        """``_truncate`` over the messages at ``indices`` (in that order): a policy's
        action removes messages that need not be contiguous (eval/policy_probes.py)."""
        whole: list[int] = []
        used = 0
        for index in indices:
            if isinstance(self.messages[index], SystemMessage):
                continue
            n = self.block_tokens(index)
            if used + n <= budget:
                whole.append(index)
                used += n
                continue
            block = self.block(index)
            lo, hi = 0, len(block)  # the longest prefix that fits
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if estimate_text_tokens(block[:mid]) <= budget - used:
                    lo = mid
                else:
                    hi = mid - 1
            return whole, block[:lo]
        return whole, ""

    def truncation(self, start: int, end: int, budget: int) -> str:
        """The first ``budget`` estimated tokens of the formatted non-system messages[start:end]."""
        whole, cut = self._truncate(start, end, budget)
        parts = [self.block(i) for i in whole] + ([cut] if cut else [])
        return MESSAGE_SEPARATOR.join(parts)

    def truncation_haystack(self, start: int, end: int, budget: int) -> JoinedHaystack:
        """The truncation floor's text, normalized: its whole blocks are a head shared
        by every checkpoint that keeps the same ones (with the answers looked up in
        it), the cut last block its tail."""
        whole, cut = self._truncate(start, end, budget)
        key = (start, whole[-1] if whole else -1)
        head = self._heads.get(key)
        if head is None:
            head = self._heads[key] = MemoHaystack(
                " ".join(p for i in whole if (p := self.norm_block(i)))
            )
        return JoinedHaystack(head, normalize(cut))

    def view_haystack(self, start: int, end: int) -> Haystack:
        """The messages[start:end] as they appear in the view, normalized."""
        return Haystack(" ".join(p for i in range(start, end) if (p := self.norm_block(i))))

    def language(self, end: int) -> str:
        """The conversation's language: what its people wrote up to ``end`` (else everything).

        Running sums of (CJK, letters) over person messages; over all messages only for
        an ``end`` before which no person wrote a letter (rare: most messages are then
        never counted)."""
        pc, pl = self._letter_sums(self._person_letters, end, person_only=True)
        cjk, letters = (pc, pl) if pl else self._letter_sums(self._all_letters, end, False)
        return "cjk" if letters and cjk / letters >= CJK_LANGUAGE_SHARE else "latin"

    def _letter_sums(
        self, sums: list[tuple[int, int]], end: int, person_only: bool
    ) -> tuple[int, int]:
        while len(sums) <= end:
            i = len(sums) - 1
            message = self.messages[i]
            c, n = sums[-1]
            if not person_only or (isinstance(message, UserMessage) and message.origin == PERSON):
                text = self.block(i)
                cjk = cjk_count(text)
                c, n = c + cjk, n + cjk + ascii_letter_count(text)
            sums.append((c, n))
        return sums[end]


def score_checkpoint(
    conv: ConversationProbes,
    *,
    replaced: tuple[int, int],
    kept: tuple[int, int],
    summary: str,
) -> ScoreRecord:
    """Every probe of the replaced part, and whether each variant carries it.

    ``replaced``: the message range the summary replaces (its system messages stay in
    the view and are skipped); ``kept``: the range the next view still shows.
    """
    start, end = replaced
    probes = conv.probes(start, end)
    summary_tokens = estimate_text_tokens(summary)
    replaced_tokens = conv.replaced_tokens(start, end)
    summary_h = Haystack(normalize(summary))
    truncation_h = conv.truncation_haystack(start, end, summary_tokens)
    kept_view: list[Haystack] = []  # built when a lost probe first asks for it
    rows: list[ProbeRow] = []
    tally: dict[str, list[int]] = {}  # kind -> [summary hits, truncation hits, probes]
    for probe in probes:
        in_summary = recalled(probe, summary_h) if summary_h else False
        in_trunc = in_truncation(probe, truncation_h) if truncation_h else False
        # in_kept: a probe the summary lost that the kept turns still show (only asked then)
        in_kept = False
        if not in_summary:
            if not kept_view:
                kept_view.append(conv.view_haystack(*kept))
            in_kept = bool(kept_view[0]) and recalled(probe, kept_view[0])
        rows.append(
            {
                "kind": probe.kind,
                "message": probe.message,
                "turn": probe.turn,
                "text": probe.text,
                "summary": in_summary,
                "truncation": in_trunc,
                "none": False,
                "in_kept": in_kept,
            }
        )
        entry = tally.get(probe.kind)
        if entry is None:
            entry = tally[probe.kind] = [0, 0, 0]
        entry[0] += in_summary
        entry[1] += in_trunc
        entry[2] += 1
    counts = {
        "summary": {k: [e[0], e[2]] for k, e in tally.items()},
        "truncation": {k: [e[1], e[2]] for k, e in tally.items()},
        "none": {k: [0, e[2]] for k, e in tally.items()},
    }
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


def artifact_hits(records: Iterable[ScoreRecord], variant: str) -> tuple[int, int]:
    """(recalled, probed) artifact probes of ``records`` by ``variant`` (the person's
    requests left out)."""
    hits = total = 0
    for record in records:
        for kind, (hit, n) in record["counts"][variant].items():
            if kind in ARTIFACT_KINDS:
                hits, total = hits + hit, total + n
    return hits, total


def recall_of(counts: Counts) -> Recall:
    """``artifact`` (all artifact kinds pooled), ``request``, and each kind: hits / probes."""
    out: Recall = {}
    hits = sum(counts[k][0] for k in counts if k in ARTIFACT_KINDS)
    total = sum(counts[k][1] for k in counts if k in ARTIFACT_KINDS)
    out["artifact"] = round(hits / total, 4) if total else None
    req = counts.get(REQUEST)
    out["request"] = round(req[0] / req[1], 4) if req and req[1] else None
    for kind, (hit, n) in sorted(counts.items()):
        if kind != REQUEST and n:
            out[kind] = round(hit / n, 4) if n else None
    return out
