"""What an extractive summary may show, collected once from the blocks: requests,
decision sentences (cue words), tools, errors, the latest state; and the levels of
detail the renderer trims it to."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import chain, compress

from ...engine.tokens import Counts, ascii_letter_count, cjk_count, text_counts
from .idents import Identifiers, collect_identifiers
from .memo import ScanMemo, packed, unpacked
from .parse import OUTPUT_ROLES, TOOL_CALL_RE, Blocks, has_text

_CUE_WORDS = (
    "decided|decide|decision|conclusion|concluded|agreed|will|won't|we'll|i'll|"
    "should|must|need to|needs to|going to|plan is|instead|switch to|switched to|"
    "fixed|fixes|resolved|found|root cause|turns out|confirmed|implemented|changed|"
    "updated|added|removed|done"
)
_CUE_ZH = (
    "决定|结论|找到|发现|需要|已经|应该|必须|修复|解决|计划|改为|改成|确认|完成|原因|采用|不再"
)
# Two scans, English and Chinese: a match of one never overlaps one of the other (ASCII
# words against CJK characters), so their starts merged are those of one scan of the
# alternation of both. The word boundary first fails at once inside a word; the
# character-set lookahead then skips positions that cannot start a cue word (together
# ~2x faster than the lookahead first, itself 3-4x faster than the bare alternation).
_CUE_EN_RE = re.compile(r"\b(?=[dcawishmnrgpftu])(?:" + _CUE_WORDS + r")\b")
_CUE_ZH_RE = re.compile(_CUE_ZH)
# A sentence ends at ". ", "! ", "? " (or those marks at the end) or at 。！？；or a newline;
# it starts after the last such mark before the cue word. Each pattern is led by one
# character set, so the search skips ahead in C: the end's, to any of its marks (then
# checks what follows a Latin one); the start's, by a greedy ``.*`` backing off from the
# cue word to the nearest mark (one match, not a search per mark).
_SENTENCE_END_RE = re.compile(r"[.!?。！？；\n](?:(?<=[。！？；\n])|(?=\s|$))")
_SENTENCE_START_RE = re.compile(r"(?s:.*)(?:\. |! |\? |[。！？；\n])")
_ERROR_LIKE_RE = re.compile(
    r"\s*(?:(?:error|fatal|traceback|exception|failed)\b|错误|失败|异常)", re.I
)
_LIST_MARKER_RE = re.compile(r"(?:[-*•>#]+|\d+[.)])\s+")
_SENTENCE_WINDOW = 400  # how far a decision sentence may reach around its cue word
_CJK_RATIO = 0.3  # CJK share of letters above which the summary is written in Chinese


@dataclass(frozen=True, slots=True)
class Level:
    """How much of each section to keep; later levels are cheaper (budget trimming)."""

    goal_chars: int
    recent: int  # requests listed after the earliest one (goals.select)
    recent_chars: int
    decisions: int
    decision_chars: int
    errors: int
    error_chars: int
    tools: int
    state_head: int
    state_tail: int
    last_chars: int
    files: int  # identifiers: files, commands, error lines, other verbatim strings
    commands: int
    error_lines: int
    others: int
    ident_chars: int  # the longest identifier kept whole (longer ones are cut)


LEVELS = (
    Level(400, 10, 160, 5, 150, 3, 120, 12, 120, 100, 160, 12, 8, 3, 12, 120),
    Level(240, 8, 120, 3, 130, 2, 110, 8, 100, 80, 120, 8, 5, 2, 8, 90),
    Level(160, 6, 100, 2, 110, 2, 100, 5, 80, 60, 80, 5, 3, 1, 5, 70),
    Level(80, 1, 80, 1, 80, 1, 80, 3, 80, 0, 0, 3, 2, 1, 3, 50),
)


_MAX_IDENTS = max(max(v.files, v.commands, v.error_lines, v.others) for v in LEVELS)


PROSE_ROLES = ("user", "runtime", "assistant", "fragment")  # the text a language is read from


def language(
    blocks: Blocks, memo: ScanMemo | None = None, bounds: tuple[int, int] | None = None
) -> str:
    """ "zh" when CJK characters are more than 30% of the letters (CJK + A-Z) of the user
    and assistant text (of all the text when those have none), else "en". ``bounds``:
    ``letter_bounds`` of that text when the caller counted them (some has text): when
    even as many CJK characters as non-ASCII ones would not make it Chinese, it is
    English, and its CJK characters are not counted (most texts)."""
    if bounds is not None and not _chinese(*bounds):
        return "en"
    prose = [c for r, c in zip(blocks.roles, blocks.contents, strict=True) if r in PROSE_ROLES]
    if not any(map(has_text, prose)):
        prose = blocks.contents
    if memo is None:
        cjk, latin = unpacked(letter_counts("\n".join(prose)), 2)
    else:  # the counts of the texts joined are the sums of theirs
        cjk, latin = unpacked(sum(memo.letters.lookup_all(prose, letter_counts)), 2)
    return "zh" if _chinese(cjk, latin) else "en"


def _chinese(cjk: int, latin: int) -> bool:
    """The rule: CJK characters more than 30% of the letters (CJK + A-Z). It grows with
    ``cjk``: a bound of the CJK characters that fails it rules Chinese out."""
    return bool(cjk) and cjk / (cjk + latin) > _CJK_RATIO


def letter_counts(text: str) -> int:
    """(CJK characters, ASCII letters), ``packed``."""
    return packed((cjk_count(text), ascii_letter_count(text)))


def letter_bounds(text: str, counts: Counts | None = None) -> int:
    """(non-ASCII characters, ASCII letters), ``packed``: the first bounds the CJK
    characters of ``letter_counts``, from the class counts alone (``counts``: the
    text's ``tokens.text_counts``, when the caller has them), without a CJK count."""
    if counts is None:
        counts = text_counts(text)
    letters, digits, punct, spaces, _ = counts
    return packed((len(text) - letters - digits - punct - spaces, letters))


@dataclass(slots=True)
class Facts:
    """Everything the summary may show, collected once; rendering only trims it."""

    counts: Counter[str]
    requests: list[str]  # user messages, oldest first
    decisions: list[str]  # newest first, from assistant messages before the state message
    state_decisions: list[str]  # newest first, from the state message itself
    tools: list[tuple[str, int]]  # (name, calls), most used first
    errors: list[tuple[str, str]]  # (call id, text), newest first, at most the first level's
    error_total: int  # Tool Error blocks and results that start like an error message
    state: str  # the latest assistant message with prose
    pending: bool  # the conversation ends with a user request
    last_output: tuple[str, str] | None  # (call id, content) if it ends with a tool output
    fallback: str  # the last non-empty block, for conversations with none of the above
    idents: Identifiers  # files, commands, error lines and other verbatim strings

    @classmethod
    def collect(cls, blocks: Blocks, memo: ScanMemo | None = None) -> Facts:
        """``memo``: what earlier requests found in the same contents (``ScanMemo``);
        without one, the texts of a kind are scanned joined (fewer calls)."""
        roles, call_ids, contents = blocks.roles, blocks.call_ids, blocks.contents
        counts = Counter(roles)
        # the blocks of a role picked in C (``compress``), not by a Python loop per block
        requests = list(filter(has_text, compress(contents, map("user".__eq__, roles))))
        assistant = list(compress(contents, map("assistant".__eq__, roles)))
        if memo is None:
            tool_counts = Counter(_tool_names("\n".join(assistant)))
            memo = ScanMemo()  # for this request only
        else:
            names = memo.tool_names.lookup_all(assistant, _tool_names)
            tool_counts = Counter(chain.from_iterable(names))
        tools = sorted(tool_counts.items(), key=lambda item: (-item[1], item[0]))
        error_like = _ERROR_LIKE_RE.match
        outputs = compress(
            range(len(roles) - 1, -1, -1), map(OUTPUT_ROLES.__contains__, reversed(roles))
        )
        newest_first = [
            index for index in outputs if roles[index] == "error" or error_like(contents[index])
        ]
        errors = [(call_ids[i], _error_line(contents[i])) for i in newest_first[: LEVELS[0].errors]]
        error_total = len(newest_first)
        state = ""
        state_index = len(assistant)
        for index in range(len(assistant) - 1, -1, -1):
            if has_text(TOOL_CALL_RE.sub("", assistant[index])):
                state, state_index = assistant[index], index
                break
        limit = LEVELS[0].decisions
        last_role, last_content = roles[-1], contents[-1]
        fallback = next((c for c in reversed(contents) if has_text(c)), "")
        return cls(
            counts=counts,
            requests=requests,
            decisions=_decisions(assistant[:state_index], limit, memo),
            state_decisions=_decisions([state], limit, memo) if state else [],
            tools=tools,
            errors=errors,
            error_total=error_total,
            state=state,
            pending=last_role == "user" and has_text(last_content),
            last_output=(call_ids[-1], last_content) if last_role in OUTPUT_ROLES else None,
            fallback=fallback,
            idents=collect_identifiers(blocks, _MAX_IDENTS, memo),
        )


def _error_line(content: str) -> str:
    stripped = content.strip()
    if stripped.startswith("Traceback"):
        # A Python traceback says what went wrong on its last line.
        return stripped.rsplit("\n", 1)[-1]
    return stripped


def _tool_names(content: str) -> tuple[str, ...]:
    return tuple(TOOL_CALL_RE.findall(content))


def _decisions(assistant: list[str], limit: int, memo: ScanMemo) -> list[str]:
    """Sentences with a cue word, newest first; scanning stops once ``limit`` are found."""
    found: list[str] = []
    seen: set[str] = set()
    sentences = memo.sentences
    for content in reversed(assistant):
        for key in sentences.lookup(content, _candidates):
            if key in seen:
                continue
            seen.add(key)
            found.append(key)
            if len(found) >= limit:
                return found
    return found


def _candidates(content: str) -> tuple[str, ...]:
    """The sentences of one message around its cue words, newest first, on one line,
    without a list marker; not those too short, questions or bare tool-call markers."""
    lowered = content.lower()  # same length as content for the cue scripts
    if len(lowered) != len(content):
        lowered = content
    hits = [m.start() for m in _CUE_EN_RE.finditer(lowered)]
    if not lowered.isascii():
        hits = sorted(hits + [m.start() for m in _CUE_ZH_RE.finditer(lowered)])
    found: list[str] = []
    for pos in reversed(hits):
        sentence = _sentence_at(content, pos)
        key = " ".join(sentence.split())
        marker = _LIST_MARKER_RE.match(key)
        if marker:  # a markdown list item or heading: keep its text only
            key = key[marker.end() :]
        if len(key) < 8 or key.endswith(("?", "？")) or TOOL_CALL_RE.fullmatch(key):
            continue
        found.append(key)
    return tuple(found)


def _sentence_at(text: str, pos: int) -> str:
    low = max(0, pos - _SENTENCE_WINDOW)
    start_match = _SENTENCE_START_RE.match(text, low, pos)
    start = start_match.end() if start_match else low
    end_match = _SENTENCE_END_RE.search(text, pos, pos + _SENTENCE_WINDOW)
    end = end_match.end() if end_match else min(len(text), pos + _SENTENCE_WINDOW)
    return text[start:end]
