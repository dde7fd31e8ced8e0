"""The action scorer's view (``haystack.ViewHaystack`` over ``shown.ShownTexts``) answers
every question exactly as a ``Haystack`` of the same parts' texts joined in order: the
words from per-message term masks, the squashed needles from per-message masks plus the
joints, the text from the joined parts. Random texts mix ASCII words, punctuation a word
is trimmed of, CJK characters and spaces, so needles run across the joints too."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine.messages import AssistantMessage, Message
from transcript_tools.eval import next_view
from transcript_tools.eval.artifacts import CONSTRAINT, ERROR, PATH, REQUEST
from transcript_tools.eval.haystack import Haystack, JoinedHaystack, MemoHaystack
from transcript_tools.eval.next_view import NextView
from transcript_tools.eval.normalize import key_terms, normalize
from transcript_tools.eval.probes import Probe
from transcript_tools.eval.score import ConversationProbes, recalled
from transcript_tools.eval.shown import ShownTexts, visible_text

# few distinct letters, so words, needles and CJK pairs repeat across parts
_TEXT = st.text(alphabet="ab1_./- 中文字\n", max_size=14)
_NEEDLE = st.text(alphabet="ab1_./- 中文字", min_size=0, max_size=5)


def _view(
    history: list[str], extras: list[str], order: list[int], shown: list[bool], terms: list[str]
) -> tuple[ShownTexts, Haystack, Haystack]:
    """History messages of ``history`` (those ``shown`` in the view) and ``extras``,
    laid out in ``order`` (indices into history + extras), as the scorer's view and as
    the reference joined parts."""
    messages: list[Message] = [AssistantMessage.text(text) for text in history]
    index = ShownTexts(messages, 500, frozenset(terms))
    extra_parts = [MemoHaystack(normalize(text)) for text in extras]
    kept = [i for i in order if i >= len(history) or shown[i]]

    def part(i: int) -> Haystack:
        return index.haystack(i) if i < len(history) else extra_parts[i - len(history)]

    mask = sum(1 << i for i in kept if i < len(history))
    view = index.view(
        mask, [part(i) for i in kept if i >= len(history)], lambda: [part(i) for i in kept]
    )
    return index, view, _joined([part(i) for i in kept])


def _joined(parts: list[Haystack]) -> Haystack:
    """The plain form: the parts' non-empty texts joined with one space."""
    return Haystack(" ".join(part.text for part in parts if part.text))


@st.composite
def _views(draw: st.DrawFn) -> tuple[list[str], list[str], list[int], list[bool], list[str]]:
    history = draw(st.lists(_TEXT, max_size=6))
    extras = draw(st.lists(_TEXT, max_size=3))
    order = draw(st.permutations(range(len(history) + len(extras))))
    shown = draw(st.lists(st.booleans(), min_size=len(history), max_size=len(history)))
    terms = draw(st.lists(st.sampled_from(["a", "ab", "b1", "a.b", "1", "_a", "ab1"]), max_size=4))
    return history, extras, list(order), shown, terms


def _needles(reference: Haystack, drawn: list[str]) -> list[str]:
    """Random needles, and slices of the joined text and of its squashed form (those
    that run across a joint among them)."""
    text = reference.text
    squashed = text.replace(" ", "")
    cuts = [text[i : i + n] for i in range(len(text)) for n in (1, 2, 3, 5)]
    cuts += [squashed[i : i + n] for i in range(len(squashed)) for n in (1, 2, 3, 4)]
    return [*drawn, *cuts]


@settings(max_examples=300, deadline=None)
@given(
    _views(),
    st.lists(_NEEDLE, max_size=6),
    st.lists(st.sampled_from(["a", "ab", "b1", "zz", "中文"]), max_size=4),
)
def test_the_view_answers_as_its_joined_parts(
    drawn: tuple[list[str], list[str], list[int], list[bool], list[str]],
    needles: list[str],
    asked: list[str],
) -> None:
    index, view, reference = _view(*drawn)
    for needle in _needles(reference, needles):
        assert view.in_text(needle) is reference.in_text(needle), needle
        assert view.in_squashed(needle) is reference.in_squashed(needle), needle
    for terms in (tuple(asked), tuple(drawn[4]), tuple(drawn[4] + asked)):
        assert view.count_words(terms) == reference.count_words(terms), terms
        assert set(view.words_among(terms)) == set(reference.words.intersection(terms))
    assert view.text == reference.text
    assert view.squashed == reference.squashed
    assert view.words == reference.words
    assert bool(view) is bool(reference)


@settings(max_examples=200, deadline=None)
@given(_views(), st.lists(_TEXT, min_size=1, max_size=4), _TEXT)
def test_every_probe_is_recalled_by_the_view_as_by_its_joined_parts(
    drawn: tuple[list[str], list[str], list[int], list[bool], list[str]],
    keys: list[str],
    tail: str,
) -> None:
    """``score.recalled`` of probes of every kind, on the view and on the view with a
    text after it (the next view, the truncation floor: ``JoinedHaystack``)."""
    probes = []
    for raw in keys:
        key = normalize(raw)
        terms = tuple(key_terms(key))
        cjk = tuple(t for t in terms if not t.isascii())
        probes += [
            Probe(kind, 0, 0, raw, key, terms, cjk)
            for kind in (REQUEST, CONSTRAINT, PATH, "symbol")
        ]
        probes.append(Probe(ERROR, 0, 0, raw, f"{key}: {key}", terms, cjk))
    terms = [t for p in probes for t in p.terms]
    index, view, reference = _view(*drawn[:4], terms)
    rest = NextView(ConversationProbes([]), view, [], "")
    for probe in probes:
        assert recalled(probe, view) is recalled(probe, reference), probe
        assert rest.in_rest(probe) is recalled(probe, reference), probe
        joined, expected = (
            JoinedHaystack(view, normalize(tail)),
            JoinedHaystack(reference, normalize(tail)),
        )
        assert recalled(probe, joined) is recalled(probe, expected), probe


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet="ab1 .中文字é\u3000\n", max_size=12), max_size=6),
    st.lists(st.text(alphabet="ab1.中文字é", max_size=4), max_size=6),
)
def test_a_needle_s_mask_is_the_messages_whose_squashed_text_holds_it(
    texts: list[str], drawn: list[str]
) -> None:
    """``squashed_mask``, for needles with and without ASCII (these are looked for in
    the messages' non-ASCII runs alone), as each message's squashed text says."""
    messages: list[Message] = [AssistantMessage.text(text) for text in texts]
    index = ShownTexts(messages, 500, frozenset())
    squashed = [index.haystack(i).text.replace(" ", "") for i in range(len(messages))]
    cuts = [s[i : i + n] for s in squashed for i in range(len(s)) for n in (1, 2, 3)]
    for needle in [*drawn, *cuts, "".join(squashed)[-3:]]:
        expected = sum(1 << i for i, s in enumerate(squashed) if needle in s)
        assert index.squashed_mask(needle) == expected, needle


def test_a_request_its_history_messages_carry_is_found_without_a_look_at_the_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A carried request is looked for at every summary: when the view's history
    messages hold enough of its terms (as words, CJK ones in the squashed text), its
    per-message masks answer; neither the view's text nor ``recalled`` is asked."""
    messages: list[Message] = [
        AssistantMessage.text("deploy the billing service"),
        AssistantMessage.text("部署服务 later"),
        AssistantMessage.text("unrelated"),
    ]
    key = "deploy billing 部署 服务 zzzz"
    terms = tuple(key_terms(key))
    probe = Probe(REQUEST, 9, 0, key, key, terms, tuple(t for t in terms if not t.isascii()))
    index = ShownTexts(messages, 500, frozenset(terms))

    def unbuilt() -> list[Haystack]:
        raise AssertionError("the view's text was built")

    def no_look(*_args: object) -> bool:
        raise AssertionError("recalled was asked")

    monkeypatch.setattr(next_view, "recalled", no_look)
    assert NextView(ConversationProbes([]), index.view(0b011, (), unbuilt), [], "").in_rest(probe)
    monkeypatch.undo()
    parts = [index.haystack(2)]
    assert not NextView(
        ConversationProbes([]), index.view(0b100, (), lambda: parts), [], ""
    ).in_rest(probe)


def test_a_history_message_is_shown_as_its_visible_text() -> None:
    """The index's haystack of a history message is its visible text, normalized, and
    its term masks say which messages hold a term as a word (bits by index)."""
    messages: list[Message] = [
        AssistantMessage.text("Fix ./src/A.py now"),
        AssistantMessage.text("nothing here"),
        AssistantMessage.text("src/a.py, again"),
    ]
    index = ShownTexts(messages, 500, frozenset({"src/a.py", "now"}))
    assert index.haystack(0).text == normalize(visible_text(messages[0], 500))
    assert index.term_masks(("src/a.py", "now", "src/a.py", "zz")) == (
        ("src/a.py", "now", "zz"),
        (0b101, 0b001, 0),
    )
    assert index.squashed_mask("a.py,") == 0b100
    assert index.history(2).text == _joined([index.haystack(0), index.haystack(1)]).text
