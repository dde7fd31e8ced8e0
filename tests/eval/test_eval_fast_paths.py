"""tsum eval's speed tricks (benchmarks/bench_eval.py) give what their plain forms give:
same normalization, same words, same key terms, same answers from a joined haystack as
from the joined text, same pre-checks as the regular expressions they spare."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.eval import patterns
from transcript_tools.eval.artifacts import ARTIFACT_KINDS, REQUEST, _constraint_hint
from transcript_tools.eval.haystack import Haystack, JoinedHaystack, MemoHaystack, _holds
from transcript_tools.eval.normalize import (
    STOPWORDS,
    _single_spaced,
    is_word,
    key_terms,
    normalize,
    squash,
    term_set,
)
from transcript_tools.eval.probes import Probe
from transcript_tools.eval.score import recalled

# Characters that exercise the rules: ASCII words and separators, full-width forms and
# the ellipsis (mapped before NFKC), characters NFKC or casefold change (ﬁ, Ⅻ, ß, İ),
# the four that regular expressions fold specially, CJK with its function characters,
# and whitespace of several kinds.
PIECES = [
    *"aAbBzZ09_./-# :'",
    *"，？：（）！；％…",
    *"ﬁⅫßİıſ\u212aÉé\u0301",
    *"的了是中文修复日志不要必须保持",
    *" \t\n\u3000\xa0\u2028",
    "must",
    "Don't",
    "KEEP",
    "issue",
    "pr",
    "Error",
    "src/app.py",
    "v1.2",
]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def reference_normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(text.replace("\\", "/").split())


_WORD_RE = re.compile(r"[a-z0-9_][a-z0-9_.\-/]*[a-z0-9_]|[a-z0-9]")
_CJK_RUN_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_CJK_STOP = set("的了是在我你他她它们这那和与及或就都也还把被给吗呢吧啊呀么个有没不要请")


def reference_key_terms(text: str, limit: int = 12) -> list[str]:
    """key_terms as extractor version 1 wrote it (regex per word, no early stop)."""
    words: dict[str, None] = {}
    for word in _WORD_RE.findall(text):
        word = word.strip("./-")
        if len(word) >= 4 or (len(word) >= 2 and re.search(r"[\d_./]", word)):
            words[word] = None
    ascii_terms = [w for w in words if w not in STOPWORDS]
    grams: dict[str, None] = {}
    for run in _CJK_RUN_RE.findall(text):
        if len(run) == 1:
            grams[run] = None
            continue
        for i in range(len(run) - 1):
            gram = run[i : i + 2]
            if not (gram[0] in _CJK_STOP and gram[1] in _CJK_STOP):
                grams[gram] = None
    cjk_terms = list(grams)[:limit]
    if len(ascii_terms) + len(cjk_terms) <= limit:
        return ascii_terms + cjk_terms
    longest = sorted(range(len(ascii_terms)), key=lambda i: (-len(ascii_terms[i]), i))[:limit]
    chosen_ascii = [ascii_terms[i] for i in sorted(longest)]
    return chosen_ascii + cjk_terms[: limit - len(chosen_ascii)]


@settings(max_examples=400)
@given(texts)
def test_normalize_equals_nfkc_casefold_and_spaces(text: str) -> None:
    assert normalize(text) == reference_normalize(text)


@settings(max_examples=400)
@given(texts)
def test_words_and_key_terms_equal_the_regex_forms(text: str) -> None:
    key = normalize(text)
    assert term_set(key) == frozenset(_WORD_RE.findall(key))
    assert key_terms(key) == reference_key_terms(key)
    assert key_terms(key, limit=3) == reference_key_terms(key, limit=3)


# Many distinct words (some stop words, short ones, identifiers) among CJK runs: texts
# with more ASCII terms than the limit, with exactly as many, and with room for bigrams.
WORDY = [
    *("alpha", "bravo", "charlie", "delta", "echo_1", "foxtrot", "golf", "hotel", "india"),
    *("juliet", "kilo", "lima", "mike", "a.b", "v2", "the", "must", "src/app.py", "x-y"),
    *("修复日志", "不要", "中", "的了", "文", "必须保持", " ", " ", "，"),
]
wordy = st.lists(st.sampled_from(WORDY), max_size=60).map(" ".join)


@settings(max_examples=500)
@given(wordy, st.integers(min_value=0, max_value=16))
def test_key_terms_stop_at_the_room_left_by_ascii_terms(text: str, limit: int) -> None:
    """Past ``limit`` ASCII terms no bigram is looked for, and then only as many as fit."""
    key = normalize(text)
    assert key_terms(key, limit=limit) == reference_key_terms(key, limit=limit)


@pytest.mark.parametrize(
    "text", ["_", "_ .", "a _ b-", "._. /_/ -_-", "x.y -z- ..", "a/b_ _c", "中_文 _"]
)
def test_words_of_lone_underscores_and_trimmed_runs(text: str) -> None:
    """``term_set`` trims runs only in a text holding one of ".-/": a lone "_" is no word
    either way (the cases a random text seldom hits)."""
    assert term_set(text) == frozenset(_WORD_RE.findall(text))


# few word characters, so a term recurs inside longer runs and beside trimmed ".-/"
_RUNS = st.text(alphabet="ab_.-/ 中A", max_size=24)
_TERMS = st.text(alphabet="ab_.-/中A", min_size=0, max_size=4)
# words of ``texts`` (in head, tail or both), and some that are none
ASKED = ["must", "src/app.py", "a", "b", "z", "09", "issue", "error", "keep", "v1.2", "pr", "alpha"]


@settings(max_examples=600)
@given(_RUNS, st.lists(_TERMS, max_size=6))
def test_a_word_looked_for_alone_is_one_of_the_word_set(text: str, drawn: list[str]) -> None:
    """``is_word`` answers as the word set: for drawn terms, the text's words and every
    slice of the text (occurrences inside longer runs, beside trimmed ".-/")."""
    words = term_set(text)
    cuts = [text[i : i + n] for i in range(len(text)) for n in (1, 2, 3, 4)]
    for term in [*drawn, *words, *cuts]:
        assert is_word(text, term) == (term in words), (text, term)


@settings(max_examples=300)
@given(texts, texts, st.lists(st.lists(st.sampled_from(ASKED), max_size=12), max_size=6))
def test_a_joined_haystack_counts_words_as_the_joined_text(
    head: str, tail: str, asked: list[list[str]]
) -> None:
    """Term after term looked for in the tail alone, then (past the budget) in its word
    set: the counts of the joined text's word set every time."""
    head, tail = normalize(head), normalize(tail)
    joined = Haystack(" ".join(p for p in (head, tail) if p))
    view = JoinedHaystack(MemoHaystack(head), tail)
    for terms in asked:
        assert view.count_words(tuple(terms)) == joined.count_words(tuple(terms))


@settings(max_examples=400)
@given(texts, texts, st.lists(st.sampled_from(PIECES), max_size=4).map("".join))
def test_a_joined_haystack_answers_as_the_joined_text(head: str, tail: str, needle: str) -> None:
    head, tail, needle = normalize(head), normalize(tail), normalize(needle) or "a"
    joined = Haystack(" ".join(p for p in (head, tail) if p))
    # the squashed text is searched as UTF-8 bytes: the same answers as in the str
    assert joined.squashed == squash(joined.text).encode("utf-8")
    assert joined.in_squashed(squash(needle)) == (squash(needle) in squash(joined.text))
    for part in (Haystack(head), MemoHaystack(head)):
        view = JoinedHaystack(part, tail)
        for _ in range(2):  # the memo's second answer is its first
            assert bool(view) == bool(joined)
            assert view.text == joined.text
            assert view.in_text(needle) == joined.in_text(needle)
            assert view.in_squashed(squash(needle)) == joined.in_squashed(squash(needle))
            terms = tuple(key_terms(needle)) + ("a", "src/app.py")
            assert view.count_words(terms) == joined.count_words(terms)


@settings(max_examples=300)
@given(texts, texts)
def test_a_joined_haystack_finds_what_runs_across_its_joint(head: str, tail: str) -> None:
    """Every slice of the joined squashed text, those across the joint among them, is
    found by the joined haystack as in the joined text."""
    head, tail = normalize(head), normalize(tail)
    joined = Haystack(" ".join(p for p in (head, tail) if p))
    squashed = squash(joined.text)
    view = JoinedHaystack(MemoHaystack(head), tail)
    at = len(squash(head))
    for needle in {squashed[i : i + n] for i in range(max(0, at - 4), at + 1) for n in (2, 3, 4)}:
        assert view.in_squashed(needle) == joined.in_squashed(needle), needle
        assert view.in_squashed(needle + "中") == joined.in_squashed(needle + "中"), needle


@settings(max_examples=400)
@given(
    st.sampled_from([*ARTIFACT_KINDS, REQUEST]),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join),
    texts,
    st.booleans(),
    texts,
)
def test_a_probe_the_rest_of_a_view_carries_the_whole_view_carries(
    kind: str, text: str, around: str, holds: bool, tail: str
) -> None:
    """The action scorer reads ``none`` (the view without what the action added) first,
    and a hit there is a hit in the view and the truncation (eval/policy_probes.py):
    recall only grows with the text, for every kind's rule."""
    key = normalize(text)
    terms = tuple(key_terms(key.partition(": ")[2] if kind == "error" else key))
    probe = Probe(kind, 0, 0, text, key, terms, tuple(t for t in terms if not t.isascii()))
    alone = MemoHaystack(normalize(around + " " + text if holds else around))
    assert not recalled(probe, alone) or recalled(probe, JoinedHaystack(alone, normalize(tail)))
    if holds and len(key) > 1 and (terms or kind not in ("constraint", REQUEST)):
        # the probe's own text carries it (a coverage kind needs its terms): the case above
        assert recalled(probe, alone)


@settings(max_examples=600)
@given(texts)
def test_literal_pre_checks_never_miss_a_match(text: str) -> None:
    low = text.encode("utf-8", "surrogatepass").lower()
    expected = patterns._CONSTRAINT_HINT_RE.search(text) is not None
    assert _constraint_hint(text, low) == expected
    if patterns._ISSUE_RE.search(text):
        assert patterns._ISSUE_MAY_B.search(low)
    if patterns._CONSTRAINT_RE.search(text):
        assert patterns._CONSTRAINT_MAY_B.search(low)
    raw = text.encode("utf-8", "surrogatepass")
    errors = patterns._ERROR_HINTS_MAY_B.search(raw) is not None
    assert errors == any(hint in text for hint in patterns._ERROR_HINTS)
    has_digit = raw.translate(None, patterns._DIGITS_B) != raw
    assert has_digit == any(c in "0123456789" for c in text)


def test_the_characters_regexes_fold_specially_defer_to_the_regex() -> None:
    # "wıthout" (dotless i) and "KEEP" with a Kelvin sign match case-insensitively
    for text in ("wıthout tests", "\u212aeep it", "muſt not"):
        assert patterns._CONSTRAINT_HINT_RE.search(text)
        assert _constraint_hint(text, text.encode().lower())


@settings(max_examples=400)
@given(st.binary(max_size=40), st.binary(max_size=4))
def test_holds_is_bytes_in_bytes(squashed: bytes, raw: bytes) -> None:
    # ``find`` in place of ``in`` (which first tries the needle as an int): same answer,
    # the empty needle included
    assert _holds(squashed, raw) == (raw in squashed)
    assert _holds(squashed + raw, raw)


@settings(max_examples=400)
@given(texts)
def test_single_spacing_equals_split_and_join(text: str) -> None:
    for variant in (text, text.replace("\t", " "), text.replace("\t", "").replace("\xa0", "")):
        assert _single_spaced(variant) == " ".join(variant.split())


_PLAIN_SENTENCE_RE = re.compile(r"(?:[^.!?。！？\n]|[.!?](?!\s|$))+[.!?。！？]?")


@settings(max_examples=600)
@given(
    st.lists(st.sampled_from([*PIECES, ".", "!", "?", "。", "！", "？", ". ", "\n"]), max_size=40)
)
def test_the_sentence_pattern_matches_as_its_plain_form(pieces: list[str]) -> None:
    text = "".join(pieces)
    fast = [m.span() for m in patterns._SENTENCE_RE.finditer(text)]
    assert fast == [m.span() for m in _PLAIN_SENTENCE_RE.finditer(text)]
