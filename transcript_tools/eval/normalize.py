"""Text normalization and key terms: how a probe is matched against a summary.

``normalize``: NFKC (full-width forms → ASCII, compatibility characters folded),
case folded, backslashes → ``/`` (Windows paths), whitespace runs → one space. Text
holding CJK characters is compared without any space (``squash``): Chinese and Japanese
put none between words, and a summary may add or drop one. ``key_terms``: the words that carry a request or a
constraint, used where verbatim recall would be unfair (paraphrase is expected).
"""

from __future__ import annotations

import re
import unicodedata
from itertools import repeat

_SPACE_RE = re.compile(r"\s+")
# The compatibility characters most frequent in the corpus (full-width punctuation, and
# the ellipsis summaries cut with), with their NFKC forms.
_COMMON_COMPAT = tuple((wide, unicodedata.normalize("NFKC", wide)) for wide in "，？：（）！；％…")
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
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
    if text.isascii():  # NFKC changes nothing in ASCII, and casefold is lower
        text = text.lower()
    else:
        # NFKC costs ~70 ns a character; its quick check ~1. Chinese punctuation is mostly
        # full-width forms, which NFKC maps to ASCII: mapped first (the same result: a
        # character replaced by its own compatibility decomposition, a lone starter),
        # most text then passes the check and skips the full normalization.
        for wide, narrow in _COMMON_COMPAT:
            text = text.replace(wide, narrow)
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
        text = text.casefold()
    if "\\" in text:
        text = text.replace("\\", "/")
    return _single_spaced(text)


def _single_spaced(text: str) -> str:
    """``" ".join(text.split())``: whitespace runs -> one space, none at the ends.

    Splitting builds one string per word (~30 us for a 2,000-character summary). When,
    newlines aside, the only whitespace is the ASCII space (``isprintable``: every other
    character ``str.split`` splits at is unprintable), a few C-level replaces give the
    same text."""
    flat = text.replace("\n", " ")
    if not flat.isprintable():  # tabs, NBSP, line separators...: the general form
        return " ".join(text.split())
    while "  " in flat:
        flat = flat.replace("  ", " ")
    return flat.strip(" ")


def squash(text: str) -> str:
    """``text`` (normalized) without spaces: how text holding CJK is compared, since
    CJK writing puts no spaces between words and a summary may add or drop them."""
    return text.replace(" ", "")


def squash_utf8(text: str) -> bytes:
    """``squash(text)`` encoded in UTF-8 (lone surrogates passed through), how haystacks
    keep it: the space is one byte that no other character's encoding holds, so it is
    dropped after encoding (a bytes replace costs a fraction of a str one)."""
    return text.encode("utf-8", "surrogatepass").replace(b" ", b"")


def key_terms(text: str, limit: int = 12) -> list[str]:
    """Distinct content terms of ``text`` (already normalized), in order of appearance.

    ASCII: words of at least 4 characters (identifiers, paths and numbers of at least
    2 characters count whatever their length) that are not stop words. CJK: the
    character bigrams of each run (a run of one character is itself a term), skipping
    bigrams made only of function characters. At most ``limit`` terms, the longest
    ASCII terms first when there are more (they carry the most), then by position.
    """
    # A word starts and ends with [a-z0-9_] (``_WORD_RE``): distinct ones, in order. It
    # is "special" (an identifier, path or number) when it holds a digit, "_", "." or
    # "/": when it is not all letters once its hyphens are gone.
    ascii_terms = [
        w
        for w in dict.fromkeys(_WORD_RE.findall(text))
        if (len(w) >= 4 or (len(w) >= 2 and not w.replace("-", "").isalpha()))
        and w not in STOPWORDS
    ]
    if len(ascii_terms) >= limit:  # no room left for a CJK term: the longest ASCII ones
        longest = sorted(range(len(ascii_terms)), key=lambda i: (-len(ascii_terms[i]), i))
        return [ascii_terms[i] for i in sorted(longest[:limit])]
    # every ASCII term is kept, then CJK bigrams in order, as many as there is room for
    room = limit - len(ascii_terms)
    grams: dict[str, None] = {}
    if not text.isascii():
        for run in _CJK_RUN_RE.findall(text):
            if len(run) == 1:
                grams[run] = None
            else:
                for i in range(len(run) - 1):
                    gram = run[i : i + 2]
                    if not (gram[0] in _CJK_STOP and gram[1] in _CJK_STOP):
                        grams[gram] = None
                        if len(grams) >= room:
                            break  # only the first ``room`` bigrams can be chosen
            if len(grams) >= room:
                break
    return ascii_terms + list(grams)[:room]


# ``term_set`` without the regex: every byte that cannot be part of a word becomes a
# space (a non-ASCII character is first one "?"), the runs left are split out and trimmed
# of the ".-/" a word cannot start or end with. The same set as ``_WORD_RE.findall``
# (a word starts and ends with [a-z0-9_]; a lone "_" is none), in about half the time.
_WORD_CHARS = b"abcdefghijklmnopqrstuvwxyz0123456789_.-/"
_NON_WORD_TO_SPACE = bytes(b if b in _WORD_CHARS else 0x20 for b in range(256))
_LONE_UNDERSCORE = frozenset(["_"])
_NOT_WORDS = frozenset(["", "_"])  # what trimming a run of ".-/" or "_" leaves
# as ints: ``bytes in bytes`` first tries the needle as an int, and the TypeError it
# raises and clears costs ~2 us; an int is looked for at once
_DOT, _HYPHEN, _SLASH = b".-/"


def term_set(text: str) -> frozenset[str]:
    """The ASCII words of ``text`` (normalized), as ``key_terms`` cuts them: ASCII terms
    are matched as words; CJK terms as substrings of the ``squash``-ed text.

    The runs are decoded at once (ASCII: one C-level pass) and split as str; only a text
    holding one of ".-/" can have a run to trim, and only then is each run trimmed."""
    flat = text.encode("ascii", "replace").translate(_NON_WORD_TO_SPACE)
    runs = frozenset(flat.decode("ascii").split())
    if _DOT in flat or _HYPHEN in flat or _SLASH in flat:
        # a C-level loop (``map`` of a method), no bytecode run per word
        return frozenset(map(str.strip, runs, repeat(".-/"))) - _NOT_WORDS
    return runs - _LONE_UNDERSCORE if "_" in runs else runs


_WORD_CHAR_SET = frozenset(_WORD_CHARS.decode("ascii"))


def is_word(text: str, term: str) -> bool:
    """``term in term_set(text)`` without the set, for a few terms in a long text: some
    occurrence of ``term`` is a word when the run of word characters around it, trimmed
    of ".-/", is ``term`` itself (a word is such a run, and holds no other character)."""
    if term in ("", "_") or term[0] in ".-/" or term[-1] in ".-/":
        return False  # never a trimmed run
    if not term.isascii() or term.encode("ascii").translate(None, _WORD_CHARS):
        return False  # a character no run holds
    size, n = len(text), len(term)
    at = text.find(term)
    while at >= 0:
        start, end = at, at + n
        while start and text[start - 1] in ".-/":
            start -= 1
        while end < size and text[end] in ".-/":
            end += 1
        if (not start or text[start - 1] not in _WORD_CHAR_SET) and (
            end == size or text[end] not in _WORD_CHAR_SET
        ):
            return True
        at = text.find(term, at + 1)
    return False
