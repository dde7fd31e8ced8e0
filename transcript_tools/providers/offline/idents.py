"""Identifiers copied verbatim out of the conversation: the files touched, the commands
run, the error lines seen and other exact strings (URLs, versions, issue numbers,
commit hashes, code spans) that an agent needs to carry on and cannot paraphrase.

The rules are the provider's own and deliberately simple (a few regular expressions
and the tool calls' argument keys). They are NOT taken from ``transcript_tools.eval``:
the summarizer must not be built on the scorer that grades it, or the score would
measure the agreement of two copies of one rule set rather than the summary.

Ranking: most frequent first (a mention in a tool call's arguments, a person's or an
assistant's text counts twice, one in a tool's output once), then most recent.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from operator import is_not, not_

from .memo import Memo, ScanMemo
from .parse import OUTPUT_ROLES, Blocks

_EXTENSIONS = (
    "py|pyi|ipynb|js|jsx|mjs|cjs|ts|tsx|vue|json|jsonl|toml|yaml|yml|ini|cfg|conf|env|lock|"
    "md|rst|txt|csv|tsv|xml|html|css|scss|sql|sh|bash|zsh|ps1|go|mod|rs|java|kt|scala|"
    "c|h|cc|cpp|hpp|cs|rb|php|swift|m|proto|gradle|j2|jinja|tf|dockerfile|log|patch|diff"
)
# Speed: every pattern starts with a literal or a rarer character (a URL's "http", a
# backtick, "#", "Error"/"Exception", "/", ".", "v", a digit), so the regex engine skips
# ahead in C instead of trying a pattern at every position (one alternation of all the
# kinds tried everywhere cost ~10x more). Paths, versions, error names and hashes are
# found from such an anchor and grown to the whole token around it: forward in the
# text, backward in the reversed text.
_URL_RE = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_CODE_RE = re.compile(r"`([^`\n]{3,80})`")
_ISSUE_RE = re.compile(r"#\d{1,6}\b")
_ERROR_END_RE = re.compile(r"(?:Error|Exception)\b")  # found by its end, grown backward
_NAME_BACKWARD_RE = re.compile(r"\w*")
_LINE_REST_RE = re.compile(r"(?::[^\n]*)?")
# After a ".", what can follow it in a match (a digit or an extension's first letter),
# looked ahead first: a sentence's full stop fails at once, not once per extension.
_AFTER_DOT = r"[\d" + "".join(sorted({ext[0] for ext in _EXTENSIONS.split("|")})) + "]"
# An anchor is a "/" (found by ``str.find``) or a dot before a version's digits or an
# extension: two scans led by one character each cost less than one for either.
_DOT_ANCHOR_RE = re.compile(r"\.(?=" + _AFTER_DOT + r")(?:\d+\.\d|(?:" + _EXTENSIONS + r")\b)")
_SHORT_VERSION_RE = re.compile(r"v\d+\.\d+\b(?!\.\d)")
_TOKEN_CHARS = r"[\w.@+~/-]*"
_FORWARD_RE = re.compile(_TOKEN_CHARS)
_BACKWARD_RE = re.compile(r"[\w.@+~-]*")  # a token's start, read in the reversed text
# A path: a name with a known extension, or a "/"-separated name that starts at a
# root ("/", "~/", "./", "../") or has at least two separators ("and/or" is not one).
_PATH_RE = re.compile(
    r"(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)*"
    r"|[\w.@+-]+(?:/[\w.@+-]+){2,}"
    r"|(?:[\w.@+-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:" + _EXTENSIONS + r")"
)
_VERSION_RE = re.compile(r"v?\d+\.\d+\.\d+(?:[-+][\w.]+)?")
_HEX_FORWARD_RE = re.compile(r"\d[0-9a-f]*")  # a commit hash: from a digit, both ways
_HEX_BACKWARD_RE = re.compile(r"[0-9a-f]*")
_HEX_CHARS = frozenset("0123456789abcdef")
_HASH_MIN = 7  # a commit hash's shortest abbreviation
_WORD_CHAR_RE = re.compile(r"[\w@&/.:\\-]")  # a character that glues onto a token
_JOIN = "\n\x00\n"  # between two blocks: no token runs across it
_TRAILING = ".,;:!?'\""
_ERROR_LINE_CHARS = 160
_NOT_PROSE = OUTPUT_ROLES | {"system"}


@dataclass(slots=True)
class Identifiers:
    """Each kind's strings, deduplicated, ranked (most frequent, then most recent first)."""

    files: list[str]
    commands: list[str]
    errors: list[str]
    other: list[str]  # URLs, versions, issue numbers, commit hashes, code spans

    def __bool__(self) -> bool:
        return bool(self.files or self.commands or self.errors or self.other)


class _Ranked:
    """Weighted counts and the latest position of each string, in first-seen order."""

    def __init__(self) -> None:
        self.weight: dict[str, int] = {}
        self.last: dict[str, int] = {}

    def add(self, text: str, weight: int, position: int) -> None:
        self.weight[text] = self.weight.get(text, 0) + weight
        last = self.last.get(text, position)
        self.last[text] = position if position > last else last

    def ranked(self, limit: int) -> list[str]:
        order = sorted(self.weight, key=lambda t: (-self.weight[t], -self.last[t]))
        return order[:limit]


def collect_identifiers(blocks: Blocks, limit: int, memo: ScanMemo | None = None) -> Identifiers:
    """At most ``limit`` strings of each kind from the blocks and the tool calls.

    ``memo``: the identifiers found in each content by earlier requests (scanned once)."""
    memo = memo if memo is not None else ScanMemo()
    roles, contents = blocks.roles, blocks.contents
    # tool outputs count once; what a person or the assistant wrote twice; a system
    # message is always in the view: nothing to carry
    # (the indices of a kind picked in C, ``compress``, not by a Python loop per block)
    outputs = list(compress(range(len(roles)), map(OUTPUT_ROLES.__contains__, roles)))
    prose = list(compress(range(len(roles)), map(not_, map(_NOT_PROSE.__contains__, roles))))
    # (what each text with a find holds, the block index of each text, weight)
    found: list[tuple[list[tuple[int, _Found]], list[int], int]] = []
    for indices, weight in ((prose, 2), (outputs, 1)):
        if indices:
            texts = list(map(contents.__getitem__, indices))
            found.append((_found_in(texts, weight, memo.idents[weight]), indices, weight))
    if not blocks.tool_args and not any(finds for finds, _, _ in found):
        return Identifiers([], [], [], [])  # nothing to rank (most requests)
    return _ranked(blocks, found, limit, memo)


def _ranked(
    blocks: Blocks,
    found: list[tuple[list[tuple[int, _Found]], list[int], int]],
    limit: int,
    memo: ScanMemo,
) -> Identifiers:
    """``collect_identifiers`` of the tool calls and what was ``found`` in the blocks."""
    files, commands, errors, other = _Ranked(), _Ranked(), _Ranked(), _Ranked()
    # Positions order mentions in time: a block's index, then its tool calls' order.
    step = len(blocks.tool_args) + 1
    named: list[str] = []  # commands and free-form arguments: the files they name
    named_at: list[int] = []
    for order, (index, kind, value) in enumerate(blocks.tool_args, 1):
        position = index * step + order
        if kind == "command":
            commands.add(value.split("\n", 1)[0].strip(), 2, position)
        elif kind == "path":
            if "/" in value or "." in value.strip("."):  # not "." nor a bare directory name
                files.add(value, 2, position)
        elif kind == "url":
            other.add(value, 2, position)
        if kind == "command" or kind == "text":
            named.append(value)
            named_at.append(position)
    # (finds, where each text is, the position per step of that, weight): a position is
    # worked out for a find only
    groups = [(finds, at, step, weight) for finds, at, weight in found]
    if named:
        groups.append((_found_in(named, 1, memo.idents[1]), named_at, 1, 1))
    ranked = (files, errors, other)
    for finds, at, scale, weight in groups:
        for index, which, text in _finds(finds):
            ranked[which].add(text, weight, at[index] * scale)
    return Identifiers(
        files=_without_bare_names(files).ranked(limit),
        commands=commands.ranked(limit),
        errors=errors.ranked(limit),
        other=other.ranked(limit),
    )


# What ``_scan`` finds in one text: per kind of scan (in scan order), the (kind, string)
# pairs in the order found; kinds index ``(files, errors, other)``.
_Found = tuple[tuple[tuple[int, str], ...], ...]
_FILES, _ERRORS, _OTHER = 0, 1, 2
_SCANS = 7  # URLs, code spans, issues, error names, paths and versions, short versions, hashes
_NOTHING: _Found = ((),) * _SCANS


def _finds(found: list[tuple[int, _Found]]) -> Iterator[tuple[int, int, str]]:
    """(index of the text, kind, string) of each identifier ``_found_in`` texts, in the
    order one scan of the texts joined finds them: kind of scan first, then the texts in
    order (ties in the ranking keep the first seen first)."""
    for scan in range(_SCANS):
        for index, by_scan in found:
            for which, text in by_scan[scan]:
                yield index, which, text


def _found_in(texts: list[str], weight: int, memo: Memo[str, _Found]) -> list[tuple[int, _Found]]:
    """(index, what ``_scan`` finds) of each text with a find, from the memo, or else
    from one scan of the texts not in it, joined (a scan per text costs more in calls
    than in matching); a find is given to its text by its offset."""
    results = memo.get_all(texts)
    missing = [i for i, found in enumerate(results) if found is None] if None in results else []
    if missing:
        joined = _JOIN.join([texts[i] for i in missing])
        starts = list(accumulate((len(texts[i]) + len(_JOIN) for i in missing), initial=0))
        per_text: dict[int, list[list[tuple[int, str]]]] = {}
        for offset, scan, kind, text in _scan(joined, weight):
            j = bisect_right(starts, offset) - 1
            by_scan = per_text.get(j)
            if by_scan is None:
                by_scan = per_text[j] = [[] for _ in range(_SCANS)]
            by_scan[scan].append((kind, text))
        for j, i in enumerate(missing):
            lists = per_text.get(j)
            found = _NOTHING if lists is None else tuple(map(tuple, lists))
            memo.put(texts[i], found)
            results[i] = found
    with_finds = map(is_not, results, repeat(_NOTHING))
    return list(compress(enumerate(results), with_finds))  # type: ignore[arg-type]


def _glued(text: str, index: int) -> bool:
    """Whether the character at ``index`` continues a token (so a match there is a part)."""
    return index >= 0 and _WORD_CHAR_RE.match(text, index) is not None


def _scan(text: str, weight: int) -> list[tuple[int, int, int, str]]:
    """The identifiers in ``text`` as (offset, kind of scan, kind, string), in scan order."""
    found: list[tuple[int, int, int, str]] = []
    add = found.append
    if "http" in text:
        for match in _URL_RE.finditer(text):
            add((match.start(), 0, _OTHER, match.group().rstrip(_TRAILING)))
    if "`" in text:
        for match in _CODE_RE.finditer(text):
            code = match.group(1)
            if "://" not in code and _PATH_RE.fullmatch(code):
                add((match.start(), 1, _FILES, code))  # `src/app.py`: a file all the same
            elif not code.isspace():
                add((match.start(), 1, _OTHER, code))
    if "#" in text:
        for match in _ISSUE_RE.finditer(text):
            if not _glued(text, match.start() - 1):
                add((match.start(), 2, _OTHER, match.group()))
    reverse = _backward(text)
    size = len(text)
    if "Error" in text or "Exception" in text:
        for match in _ERROR_END_RE.finditer(text):
            end = match.end()
            start = end - _end(_NAME_BACKWARD_RE, reverse(), size - end) + (size - end)
            if text[start].isupper() and not _glued(text, start - 1):
                line = text[start : _end(_LINE_REST_RE, text, end)]
                add((start, 3, _ERRORS, line[:_ERROR_LINE_CHARS].rstrip()))
    for start, end in _anchored_tokens(text, reverse):
        if start > 0 and text[start - 1] in ":\\":  # a URL's or a Windows path's inside
            continue
        token = text[start:end].rstrip(_TRAILING)
        if _PATH_RE.fullmatch(token):
            add((start, 4, _FILES, token))
        elif _VERSION_RE.fullmatch(token):
            add((start, 4, _OTHER, token))
    for match in _SHORT_VERSION_RE.finditer(text):
        if not _glued(text, match.start() - 1):
            add((match.start(), 5, _OTHER, match.group()))
    # Commit hashes (7-40 hex digits, not all decimal): in what a person or the assistant
    # wrote only; the bulky tool outputs hold too many digit runs for the cost.
    at = 0
    search = _HEX_FORWARD_RE.search
    while weight > 1 and (hit := search(text, at)) is not None:
        end = at = hit.end()
        start = hit.start()
        if end - start < _HASH_MIN and (start == 0 or text[start - 1] not in _HEX_CHARS):
            continue  # a short digit run with no hex digit before it: the usual case
        start -= _end(_HEX_BACKWARD_RE, reverse(), size - start) - (size - start)
        if _HASH_MIN <= end - start <= 40 and not _glued(text, start - 1) and not _glued(text, end):
            found_hash = text[start:end]
            if not found_hash.isdigit():
                add((start, 6, _OTHER, found_hash))
    return found


def _anchored_tokens(text: str, reverse: Callable[[], str]) -> Iterator[tuple[int, int]]:
    """(start, end) of the token grown around each anchor, from the text's start: the
    next anchor searched for from the end of the token before (``reverse``: the text
    reversed, ``_backward``)."""
    size = len(text)
    slash, dot = text.find("/"), _DOT_ANCHOR_RE.search(text)
    at = 0
    while True:
        if slash != -1 and slash < at:
            slash = text.find("/", at)
        if dot is not None and dot.start() < at:
            dot = _DOT_ANCHOR_RE.search(text, at)
        if dot is None:
            if slash == -1:
                return
            spot = slash
        else:
            spot = dot.start() if slash == -1 or dot.start() < slash else slash
        end = _end(_FORWARD_RE, text, spot)
        at = max(end, spot + 1)
        yield spot - (_end(_BACKWARD_RE, reverse(), size - spot) - (size - spot)), end


def _backward(text: str) -> Callable[[], str]:
    """``text`` reversed (where tokens are grown backward), made at the first call: few
    texts hold an anchor, an error name or a hash to grow one from."""
    made: list[str] = []

    def reverse() -> str:
        if not made:
            made.append(text[::-1])
        return made[0]

    return reverse


def _end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``pattern`` (which may match empty) stops matching at ``pos``."""
    found = pattern.match(text, pos)
    return found.end() if found is not None else pos


def _without_bare_names(files: _Ranked) -> _Ranked:
    """A bare ``name.py`` is folded into the one longer path ending in ``/name.py``."""
    longer: dict[str, str | None] = {}
    for path in files.weight:
        if "/" in path:
            name = path.rsplit("/", 1)[1]
            longer[name] = None if name in longer and longer[name] != path else path
    for name, full in longer.items():
        if full is not None and name in files.weight:
            files.add(full, files.weight.pop(name), max(files.last.pop(name), files.last[full]))
    return files
