"""Text normalization and key terms: how a probe is matched against a summary.

``normalize``: NFKC (full-width forms → ASCII, compatibility characters folded),
case folded, backslashes → ``/`` (Windows paths), whitespace runs → one space, and
no space at all next to a CJK character (Chinese and Japanese text has none, and a
summary may add or drop one). ``key_terms``: the words that carry a request or a
constraint, used where verbatim recall would be unfair (paraphrase is expected).
"""

from __future__ import annotations

import re
import unicodedata

_SPACE_RE = re.compile(r"\s+")
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_SPACE_RE = re.compile(rf"(?<=[{_CJK}]) | (?=[{_CJK}])")
_CJK_RUN_RE = re.compile(rf"[{_CJK}]+")
_WORD_RE = re.compile(r"[a-z0-9_][a-z0-9_.\-/]*[a-z0-9_]|[a-z0-9]")
_CJK_STOP = set("的了是在我你他她它们这那和与及或就都也还把被给吗呢吧啊呀么个有没不要请")

STOPWORDS = frozenset(
    """
    a about above after again all also an and any are as at be because been before being
    below between both but by can could did do does doing done down during each else
    few for from further get got had has have having he her here hers him his how i if
    in into is it its itself just let like make me more most my no nor not now of off
    on once only or other our out over own please same she should so some such than
    that the their them then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    can't don't won't isn't it's i'm let's we're thanks thank okay ok yes sure want need
    use using used could also something anything everything look see check try run
    """.split()
)


def normalize(text: str) -> str:
    """The form in which probes and summaries are compared (see module docstring)."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("\\", "/")
    text = _SPACE_RE.sub(" ", text).strip()
    if not text.isascii():
        text = _CJK_SPACE_RE.sub("", text)
    return text


def key_terms(text: str, limit: int = 12) -> list[str]:
    """Distinct content terms of ``text`` (already normalized), in order of appearance.

    ASCII: words of at least 4 characters (identifiers, paths and numbers of at least
    2 characters count whatever their length) that are not stop words. CJK: the
    character bigrams of each run (a run of one character is itself a term), skipping
    bigrams made only of function characters. At most ``limit`` terms, the longest
    ASCII terms first when there are more (they carry the most), then by position.
    """
    terms: list[str] = []
    seen: set[str] = set()
    for match in _WORD_RE.finditer(text):
        word = match.group().strip("./-")
        special = any(c.isdigit() or c in "_./" for c in word)
        if word in STOPWORDS or (len(word) < 4 and not (special and len(word) >= 2)):
            continue
        if word not in seen:
            seen.add(word)
            terms.append(word)
    for run in _CJK_RUN_RE.findall(text):
        grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        for gram in grams:
            if all(c in _CJK_STOP for c in gram) or gram in seen:
                continue
            seen.add(gram)
            terms.append(gram)
    if len(terms) <= limit:
        return terms
    order = sorted(
        range(len(terms)), key=lambda i: (-len(terms[i]) if terms[i].isascii() else -2, i)
    )
    return [terms[i] for i in sorted(order[:limit])]


def coverage(terms: list[str], haystack: str) -> float:
    """Share of ``terms`` found in ``haystack`` (normalized); 0.0 for no terms."""
    if not terms:
        return 0.0
    return sum(1 for term in terms if term in haystack) / len(terms)
