"""The offline provider's fast paths find exactly what their plain forms find.

Each speed-up in ``transcript_tools/providers/offline`` (docs/performance.md) keeps the summary
byte-identical; these tests compare the optimized form with the plain one it replaced, on
generated texts heavy in the characters each one turns on."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.spies import spy
from transcript_tools.engine.formatting import MESSAGE_SEPARATOR, formatted_blocks
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.requests import SummaryRequest, SummaryResponse
from transcript_tools.engine.tokens import estimate_text_tokens
from transcript_tools.providers.offline import (
    OfflineProvider,
    facts,
    goals,
    idents,
    parse,
    render,
    summarize_blocks,
)
from transcript_tools.providers.offline.facts import (
    _ERROR_LIKE_RE,
    LEVELS,
    PROSE_ROLES,
    Facts,
    language,
    letter_bounds,
)
from transcript_tools.providers.offline.goals import previous_requests
from transcript_tools.providers.offline.memo import ScanMemo, unpacked
from transcript_tools.providers.offline.parse import Blocks, blocks_from_messages, has_text

# Dots, slashes, digits (ASCII and others), hex letters, extensions' letters, spaces, CJK
_ALPHABET = "./ ~-_0123456789abcdefghijklmprstvxyz٣１\n\t中A"
TEXTS = st.text(alphabet=_ALPHABET, max_size=80) | st.text(max_size=40)

PLAIN_ANCHOR_RE = re.compile(r"/|\.(?:\d+\.\d|(?:" + idents._EXTENSIONS + r")\b)")


def plain_paths_and_versions(text: str) -> list[tuple[int, int, int, str]]:
    """``_scan``'s paths and versions as one search of the plain anchor pattern found them."""
    found = []
    reverse, size, at = text[::-1], len(text), 0
    while (anchor := PLAIN_ANCHOR_RE.search(text, at)) is not None:
        spot = anchor.start()
        end = idents._end(idents._FORWARD_RE, text, spot)
        start = spot - (idents._end(idents._BACKWARD_RE, reverse, size - spot) - (size - spot))
        at = max(end, spot + 1)
        if start > 0 and text[start - 1] in ":\\":
            continue
        token = text[start:end].rstrip(idents._TRAILING)
        if idents._PATH_RE.fullmatch(token):
            found.append((start, 4, idents._FILES, token))
        elif idents._VERSION_RE.fullmatch(token):
            found.append((start, 4, idents._OTHER, token))
    return found


@settings(max_examples=400, deadline=None)
@given(TEXTS)
@example("see README.md. Then v1.2.3 and ./a.py, 3.14. x.٣.٣ x.pyc .Py a/b/c.1.2.3/d")
@example(" ".join(f"x.{ext}" for ext in idents._EXTENSIONS.split("|")))
def test_the_two_anchor_scans_find_what_the_plain_anchor_finds(text: str) -> None:
    fast = [found for found in idents._scan(text, 1) if found[1] == 4]
    assert fast == plain_paths_and_versions(text)


def plain_hashes(text: str) -> list[tuple[int, str]]:
    """The commit hashes ``_scan`` found before its short-run shortcut."""
    found = []
    reverse, size, at = text[::-1], len(text), 0
    while (hit := idents._HEX_FORWARD_RE.search(text, at)) is not None:
        end = at = hit.end()
        start = hit.start()
        start -= idents._end(idents._HEX_BACKWARD_RE, reverse, size - start) - (size - start)
        if 7 <= end - start <= 40 and not idents._glued(text, start - 1):
            if not idents._glued(text, end) and not text[start:end].isdigit():
                found.append((start, text[start:end]))
    return found


@settings(max_examples=400, deadline=None)
@given(TEXTS)
@example("commit 1a2b3c4 and deadbeef1 and 12345678 and abc٣def0123 and f00d٣")
def test_the_hash_scan_finds_what_the_plain_scan_finds(text: str) -> None:
    found = [(start, s) for start, scan, _, s in idents._scan(text, 2) if scan == 6]
    assert found == plain_hashes(text)


def plain_shortened(window: str, limit: int, more: bool) -> str:
    """``render._shortened`` flattening the whole window, as it did."""
    return render._cut(" ".join(window.split()), limit, more)


SPACED = st.text(alphabet="ab \n\t\u3000中", max_size=300)


@settings(max_examples=500, deadline=None)
@given(SPACED, st.integers(1, 120), st.booleans())
@example("a" + " " * 200 + "b c d", 4, False)
def test_shortening_flattens_only_what_it_needs(window: str, limit: int, more: bool) -> None:
    assert render._shortened.__wrapped__(window, limit, more) == plain_shortened(
        window, limit, more
    )


@settings(max_examples=300, deadline=None)
@given(SPACED, st.integers(-2, 120))
def test_fits_agrees_with_the_flattened_length(text: str, limit: int) -> None:
    plain = len(text) <= 3 * limit + 16 and len(" ".join(text.split())) <= limit
    assert render._fits.__wrapped__(text, limit) == plain


WORDS = st.sampled_from(
    ["we", "decided", "to", "fix", "src/app.py", "v1.2.3", "错误", "需要", "3", "\n", "done."]
)
PROSE = st.lists(WORDS, max_size=25).map(" ".join)
MESSAGES = st.one_of(
    PROSE.map(UserMessage.text),
    st.builds(
        lambda text, path: AssistantMessage(
            (TextBlock(text),)
            + ((ToolUseBlock("c1", "Read", {"file_path": path}),) if path else ())
        ),
        PROSE,
        st.sampled_from(["", "src/app.py", "docs/a.md"]),
    ),
    st.builds(ToolResultMessage, st.sampled_from(["c1", "c2"]), PROSE, st.booleans()),
)


def requests_over(messages: list[Message], max_chars: int) -> list[SummaryRequest]:
    """A session's requests: each turn's prompt over the messages so far, as the engine
    makes them (with the formatted blocks)."""
    made = []
    for end in range(1, len(messages) + 1):
        shown = messages[:end]
        texts, cut = formatted_blocks(shown, 500, max_chars)
        prompt = load_template("en").render(MESSAGE_SEPARATOR.join(texts))
        kept = tuple(shown[len(shown) - len(texts) :])
        made.append(
            SummaryRequest(
                "s",
                end,
                prompt,
                max_tokens=400,
                messages=kept,
                max_tool_result_chars=500,
                max_transcript_chars=max_chars,
                formatted=tuple(texts),
                formatted_cut=cut,
            )
        )
    return made


def answer(provider: OfflineProvider, request: SummaryRequest) -> object:
    return asyncio.run(provider.complete_request(request, "extractive-v1"))


def plain_answer(request: SummaryRequest) -> SummaryResponse:
    """The summary and usage of a request made without a memo: the blocks' texts
    scanned joined, the prompt and the summary estimated whole."""
    assert request.messages is not None
    blocks = blocks_from_messages(
        request.messages, request.max_tool_result_chars, request.max_transcript_chars
    )
    text = summarize_blocks(blocks, request.max_tokens, previous_requests(request.prompt))
    usage = Usage(
        input_tokens=estimate_text_tokens(request.prompt),
        output_tokens=estimate_text_tokens(text),
    )
    return SummaryResponse(text=text, model="extractive-v1", usage=usage)


@settings(max_examples=60, deadline=None)
@given(st.lists(MESSAGES, min_size=1, max_size=14), st.sampled_from([120, 30_000]))
def test_a_warm_memo_answers_as_the_plain_path_does(
    messages: list[Message], max_chars: int
) -> None:
    """One provider across a session's requests (its memo warm: what it measured of each
    message is summed, not measured again), and a new provider per request (its memo
    cold), against the plain path without a memo."""
    warm = OfflineProvider()
    for request in requests_over(messages, max_chars):
        plain = plain_answer(request)
        assert answer(warm, request) == plain
        assert answer(OfflineProvider(), request) == plain


@settings(max_examples=150, deadline=None)
@given(st.lists(MESSAGES, min_size=1, max_size=10))
def test_identifiers_without_finds_are_what_ranking_nothing_gives(messages: list[Message]) -> None:
    """``collect_identifiers`` returns at once when no block holds one and there are no
    tool calls: the same as ranking every block's (empty) finds."""
    blocks = blocks_from_messages(messages, 500, 30_000)
    fast = idents.collect_identifiers(blocks, 12, ScanMemo())
    memo = ScanMemo()
    found = []
    for role_set, weight in (
        ({"user", "runtime", "assistant", "fragment"}, 2),
        ({"result", "error"}, 1),
    ):
        indices = [i for i, role in enumerate(blocks.roles) if role in role_set]
        if indices:
            texts = [blocks.contents[i] for i in indices]
            found.append((idents._found_in(texts, weight, memo.idents[weight]), indices, weight))
    assert fast == idents._ranked(blocks, found, 12, memo)


ROLES = st.sampled_from(["system", "user", "runtime", "assistant", "result", "error", "fragment"])
CONTENTS = st.one_of(
    PROSE,
    st.sampled_from(["", " \n", "Error: boom", "  failed to build", "错误 x", "ok", "see #12"]),
)


@st.composite
def any_blocks(draw: st.DrawFn) -> Blocks:
    """Blocks of every role in any order (a cut conversation starts with a fragment)."""
    pairs = draw(st.lists(st.tuples(ROLES, CONTENTS), min_size=1, max_size=12))
    roles = [role for role, _ in pairs]
    return Blocks(roles, [f"c{i}" for i in range(len(roles))], [c for _, c in pairs])


@settings(max_examples=300, deadline=None)
@given(any_blocks())
def test_facts_pick_the_blocks_the_plain_loops_pick(blocks: Blocks) -> None:
    """``Facts.collect`` picks a role's blocks in C (``compress``): the requests and the
    errors are those of the plain loops over the blocks."""
    roles, contents = blocks.roles, blocks.contents
    facts = Facts.collect(blocks, ScanMemo())
    assert facts.requests == [
        c for r, c in zip(roles, contents, strict=True) if r == "user" and has_text(c)
    ]
    newest_first = [
        i
        for i in range(len(roles) - 1, -1, -1)
        if roles[i] == "error" or (roles[i] == "result" and _ERROR_LIKE_RE.match(contents[i]))
    ]
    assert facts.error_total == len(newest_first)
    assert [call_id for call_id, _ in facts.errors] == [
        blocks.call_ids[i] for i in newest_first[: LEVELS[0].errors]
    ]


@settings(max_examples=300, deadline=None)
@given(any_blocks())
def test_identifiers_come_from_the_blocks_the_plain_loops_pick(blocks: Blocks) -> None:
    """``collect_identifiers`` picks each kind's blocks in C, and ``_found_in`` drops
    the texts without finds in C: the same as the plain loops."""
    memo = ScanMemo()
    found = []
    for indices, weight in (
        ([i for i, r in enumerate(blocks.roles) if r not in ("result", "error", "system")], 2),
        ([i for i, r in enumerate(blocks.roles) if r == "result" or r == "error"], 1),
    ):
        if indices:
            texts = [blocks.contents[i] for i in indices]
            finds = idents._found_in(texts, weight, memo.idents[weight])
            scanned = memo.idents[weight].get_all(texts)  # what the scan found, kept
            assert finds == [(i, f) for i, f in enumerate(scanned) if f is not idents._NOTHING]
            found.append((finds, indices, weight))
    assert idents.collect_identifiers(blocks, 12, ScanMemo()) == idents._ranked(
        blocks, found, 12, memo
    )


def test_a_message_formatted_with_two_limits_is_made_a_block_once_per_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sweep's configurations cut tool results to different lengths: the memo keeps
    each text's block (the second in ``variants``), made once, not once per request."""
    memo = ScanMemo()
    result = ToolResultMessage("c1", "0123456789" * 10)
    history: list[Message] = [UserMessage.text("go"), result]
    limits = (500, 20, 500, 20, 20)
    plain = {limit: blocks_from_messages(history, limit, 30_000) for limit in limits}
    formatted = {limit: formatted_blocks(history, limit, 30_000) for limit in limits}
    made = spy(monkeypatch, parse, "_block")
    for limit in limits:
        kept = blocks_from_messages(
            history, limit, 30_000, formatted[limit], memo.blocks, memo.variants
        )
        assert kept == plain[limit]
    assert len(made) == 3  # the two messages, and the result's text cut to 20 characters


LETTERS = st.text(alphabet="ab .中文한🙂é", max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ROLES, LETTERS), min_size=1, max_size=8))
def test_the_language_from_letter_bounds_is_the_counted_one(pairs: list[tuple[str, str]]) -> None:
    """The non-ASCII characters bound the CJK ones: the language read with the bounds
    (CJK counted only when they cannot rule Chinese out) is the one the counts give."""
    roles = [role for role, _ in pairs]
    blocks = Blocks(roles, [""] * len(roles), [text for _, text in pairs])
    prose = [t for r, t in pairs if r in PROSE_ROLES]
    if not any(map(has_text, prose)):
        return  # the caller passes bounds only then
    bounds = unpacked(sum(map(letter_bounds, prose)), 2)
    assert language(blocks, ScanMemo(), bounds) == language(blocks)


def test_an_english_request_counts_no_cjk_characters() -> None:
    """A request whose non-ASCII characters could not make it Chinese is read as
    English from its class counts: no text's CJK characters are counted."""
    messages: list[Message] = [
        UserMessage.text("Please fix the build 🙂 and the 中 test."),
        AssistantMessage.text("We decided to fix src/app.py first."),
    ]
    provider = OfflineProvider()
    for request in requests_over(messages, 30_000):
        assert answer(provider, request) == plain_answer(request)
    assert len(provider._memo.bounds) > 0 and len(provider._memo.letters) == 0


def test_a_text_is_reversed_only_when_a_token_grows_backward(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``_scan`` grows paths, error names and hashes backward in the reversed text: a
    text without any (most) is not copied reversed."""
    made: list[str] = []
    real = idents._backward

    def spying(text: str) -> Any:
        reverse = real(text)

        def spy() -> str:
            made.append(text)
            return reverse()

        return spy

    monkeypatch.setattr(idents, "_backward", spying)
    assert idents._scan("We decided to keep the plan 🙂, then ran 12 steps. 需要", 2) == []
    assert made == []
    found = idents._scan("See src/app.py: TypeError: x at 1a2b3c4d", 2)
    assert [text for _, _, _, text in found] == [
        "TypeError: x at 1a2b3c4d",
        "src/app.py",
        "1a2b3c4d",
    ]
    assert made


PLAIN_RULE_RE = re.compile(
    r"\b(?:must|never|always|only|keep|don't|do not|avoid|without|make sure|at most|at least)\b"
    r"|不要|别|必须|保持|只能|只用|务必|禁止|不能|不得",
    re.IGNORECASE,
)
RULE_WORDS = st.sampled_from(
    ["MUST", "Never", "keep", "don't", "do not", "ſ", "K", "at  most", "别", "不要", "不", "x"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(RULE_WORDS | st.text(max_size=4), max_size=8).map(" ".join))
@example("muſt keep")
def test_a_rule_is_found_as_the_one_pattern_of_both_languages_finds_it(text: str) -> None:
    """``goals._sets_rule`` searches the English words and the Chinese ones apart (the
    latter without IGNORECASE: they have no case): a rule where one search of both
    (IGNORECASE) finds one."""
    assert not goals._RULE_ZH_RE.flags & re.IGNORECASE  # the search that skips ahead
    assert goals._sets_rule.__wrapped__(text) == (PLAIN_RULE_RE.search(text) is not None)


PLAIN_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)|[。！？；\n]")
SENTENCE_STARTS = (". ", "! ", "? ", "。", "！", "？", "；", "\n")


def plain_sentence_at(text: str, pos: int) -> str:
    """``facts._sentence_at`` as it was: the start after the last of each mark (one
    search per mark), the end by the alternation of the Latin and the other marks."""
    low = max(0, pos - facts._SENTENCE_WINDOW)
    start = low
    for mark in SENTENCE_STARTS:
        found = text.rfind(mark, low, pos)
        if found != -1:
            start = max(start, found + len(mark))
    end_match = PLAIN_SENTENCE_END_RE.search(text, pos, pos + facts._SENTENCE_WINDOW)
    end = end_match.end() if end_match else min(len(text), pos + facts._SENTENCE_WINDOW)
    return text[start:end]


SENTENCES = st.text(alphabet="ab .!?\n\t。！？；x", max_size=900)


@settings(max_examples=400, deadline=None)
@given(SENTENCES, st.integers(0, 900))
@example("a. b! c? d。e\nf. ", 9)
@example("x" * 500 + ". " + "y" * 450 + "? z", 960)
def test_a_sentence_is_cut_where_the_plain_searches_cut_it(text: str, pos: int) -> None:
    pos = min(pos, len(text))
    assert facts._sentence_at(text, pos) == plain_sentence_at(text, pos)
