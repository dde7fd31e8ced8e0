"""Artifacts in one text: the verbatim paths, symbols, commands, URLs, errors, versions,
issues, commits, numbers and constraints an agent needs to carry on (docs/eval.md's
rules R1-R26 and their noise rules).

:func:`extract_text` is what :mod:`.probes` runs on every message's text (a tool call's
arguments are probed there); the patterns and their cheap pre-checks are in
:mod:`.patterns`. A change here changes ``probes.EXTRACTOR_VERSION``.
"""

from __future__ import annotations

import re

from .patterns import (
    _BOILERPLATE_URLS,
    _CASE_SPECIAL_B,
    _CJK_AFTER_RE,
    _CLAUSE_SPLIT_RE,
    _CODE_SPAN_RE,
    _CONSTRAINT_HINT_MAY_B,
    _CONSTRAINT_HINT_RE,
    _CONSTRAINT_MAY_B,
    _CONSTRAINT_RE,
    _DIGITS_B,
    _DIGITS_RE,
    _DOTTED_RE,
    _ERROR_HINTS_MAY_B,
    _ERROR_RE,
    _EXT_HINT_RE,
    _FENCE_RE,
    _GENERIC_ERRORS,
    _HASH_RE,
    _IDENT_RE,
    _IMAGE_URL_RE,
    _ISSUE_MAY_B,
    _ISSUE_RE,
    _LINKED_URL_RE,
    _LS_LINE_RE,
    _NOISE_PATHS,
    _NOISE_SYMBOLS,
    _NUMBER_RE,
    _PATH_RE,
    _PERSON_CONSTRAINT_CHARS,
    _PLACEHOLDER_RE,
    _SENTENCE_RE,
    _SHELL_LINE_RE,
    _SHELL_WORDS,
    _SNAKE_RE,
    _SYSTEM_PARTS,
    _SYSTEM_PATHS,
    _TOOL_VOCABULARY,
    _URL_RE,
    _VERSION_RE,
    _VERSIONISH_RE,
    TOOL_LIST_LIMIT,
)

# probe kinds, in report order
PATH = "path"
SYMBOL = "symbol"
COMMAND = "command"
URL = "url"
ERROR = "error"
VERSION = "version"
ISSUE = "issue"
COMMIT = "commit"
NUMBER = "number"
CONSTRAINT = "constraint"
ARTIFACT_KINDS = (PATH, SYMBOL, COMMAND, URL, ERROR, VERSION, ISSUE, COMMIT, NUMBER, CONSTRAINT)
REQUEST = "request"
# As ints: ``in`` on bytes looks for one byte at C speed, while a bytes needle is first
# tried as an int and the TypeError cleared (~2 us a test); longer needles use ``find``.
_SLASH, _DOT = b"/."


def _is_path_noise(path: str) -> bool:
    low = path.lower().rstrip("/")
    if (
        _PLACEHOLDER_RE.search(path)
        or path.startswith(_SYSTEM_PATHS)
        or any(p in path for p in _SYSTEM_PARTS)
    ):
        return True  # placeholders, system and ephemeral locations (rules R15, R18)
    if low in _NOISE_PATHS or path.startswith("//"):
        return True
    if _VERSIONISH_RE.match(path):
        return True
    parts = [p for p in path.split("/") if p]
    if not parts:
        return True
    # a bare "a/b" of short words is prose ("read/write", "yes/no"), not a path
    return (
        "/" in path and "." not in path and len(parts) == 2 and not path.startswith(("/", "~", "."))
    )


def _error_probe(name: str, message: str | None) -> str:
    message = (message or "").strip().rstrip(".:")
    return f"{name}: {message}" if message else name


def extract_text(text: str, person: bool, tool: bool = False) -> list[tuple[str, str]]:
    """(kind, text) of every artifact in ``text``, in order; ``person``: a person wrote it;
    ``tool``: a tool's output (no bare identifiers: listings are full of them)."""
    if not text:
        return []  # an assistant message with tool calls only (the calls are probed apart)
    found: list[tuple[str, str]] = []
    taken: list[tuple[int, int]] = []
    fences = [m.span() for m in _FENCE_RE.finditer(text)] if "```" in text else []
    for m in _FENCE_RE.finditer(text) if fences else ():
        for shell_line in _SHELL_LINE_RE.finditer(m.group(1)):  # a shell session shown in a fence
            found.append((COMMAND, " ".join(shell_line.group(1).split())))
    if fences:  # code written out in full is content, not artifacts to carry (noise rule R1)
        text = _FENCE_RE.sub(lambda m: " " * (m.end() - m.start()), text)
    # Cheap C-level tests first: most messages hold no candidate for most kinds, and each
    # pattern below costs a scan of the whole text (benchmarks/bench_eval.py). They run on
    # the UTF-8 bytes: an ASCII needle in Chinese text costs a conversion per ``in``.
    raw = text.encode("utf-8", "surrogatepass")
    low = raw.lower()  # ASCII case only: what the literal pre-checks need (patterns.py)
    has_url = raw.find(b"://") >= 0  # not ``in`` (_SLASH)
    has_digit = raw.translate(None, _DIGITS_B) != raw
    images = {m.group(1) for m in _IMAGE_URL_RE.finditer(text)} if has_url else set()
    if has_url and not person and not tool:  # an assistant's citations and link lists (rule R12)
        images.update(m.group(1) or m.group(2) for m in _LINKED_URL_RE.finditer(text))

    def add(kind: str, value: str, span: tuple[int, int] | None = None) -> None:
        if span is not None:
            taken.append(span)
        found.append((kind, value))

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= a or span[0] >= b for a, b in taken)

    for m in _URL_RE.finditer(text) if has_url else ():
        url = m.group().rstrip(".,;:!?。，、；：！？）”’")
        if url in images or url.startswith(_BOILERPLATE_URLS) or _PLACEHOLDER_RE.search(url):
            taken.append(m.span())
            continue
        add(URL, url, m.span())
    paths = _SLASH in raw or (_DOT in raw and _EXT_HINT_RE.search(text) is not None)
    for m in _PATH_RE.finditer(text) if paths else ():
        value = m.group().rstrip(".")
        if tool and _LS_LINE_RE.match(_line_of(text, m.start())):
            continue  # a long directory listing (rule R25)
        if free(m.span()) and not _is_path_noise(value):
            add(PATH, value, m.span())
    errors = _ERROR_HINTS_MAY_B.search(raw) is not None
    for m in _ERROR_RE.finditer(text) if errors else ():
        name, message = m.group(1), m.group(2)
        if name in ("FAIL", "FAILED", "panic") and not message:
            continue
        if name in _GENERIC_ERRORS and not message:
            continue
        if (tool and message is None) or text[max(0, m.start() - 7) : m.start()].endswith(
            ("import ", "except ")
        ):
            continue
        if name.endswith("Exit") and name != "SystemExit":
            continue
        add(ERROR, _error_probe(name, message), m.span())
    for m in _VERSION_RE.finditer(text) if has_digit and _DOTTED_RE.search(text) else ():
        after = text[m.end() : m.end() + 1]
        line = _line_of(text, m.start())
        heading = line.lstrip().startswith(m.group()) and not line.lstrip().startswith("v")
        if (
            tool
            and text[max(0, m.start() - 2) : m.start()] in ("==", ">=", "<=", "~=")
            or text[m.start() - 1 : m.start()] == "-"
        ):
            continue  # package pins in install output, versions inside file names (rule R21)
        if (
            free(m.span())
            and not _looks_like_ip(m.group())
            and not _CJK_AFTER_RE.match(after)
            and not heading
        ):
            add(VERSION, m.group(), m.span())
    for m in _ISSUE_RE.finditer(text) if has_digit and _ISSUE_MAY_B.search(low) else ():
        add(ISSUE, "#" + m.group(1), m.span())
    for m in _HASH_RE.finditer(text) if has_digit else ():
        value = m.group(1)
        if _line_of(text, m.start()).lstrip().startswith("index "):
            continue  # a diff's blob ids, not commits (rule R20)
        if free(m.span()) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            add(COMMIT, value, m.span())
    for m in _NUMBER_RE.finditer(text) if has_digit and not tool else ():
        if free(m.span()) and len(_DIGITS_RE.findall(_line_of(text, m.start()))) < 5:
            add(NUMBER, m.group(), m.span())
    for m in _CODE_SPAN_RE.finditer(text) if "`" in text else ():
        span = m.group(1).strip()
        if not free(m.span(1)):
            continue
        if _IDENT_RE.fullmatch(span):
            if (
                not tool
                and len(span) >= 3
                and span.lower() not in _NOISE_SYMBOLS
                and span not in _TOOL_VOCABULARY
                and _is_identifier(span)
            ):
                add(SYMBOL, span, m.span())
        elif " " in span and not person and not tool and span.split(" ", 1)[0] in _SHELL_WORDS:
            add(COMMAND, " ".join(span.split()), m.span())
    if not tool and "_" in text:
        for m in _SNAKE_RE.finditer(text):
            if free(m.span()) and m.group() not in _TOOL_VOCABULARY:
                add(SYMBOL, m.group(), m.span())
    for m in _SHELL_LINE_RE.finditer(text) if "$ " in text else ():
        if "<<" not in m.group(1):
            add(COMMAND, " ".join(m.group(1).split()))
    if person and len(text) <= _PERSON_CONSTRAINT_CHARS and _constraint_hint(text, low):
        for m in _SENTENCE_RE.finditer(text):
            sentence = " ".join(m.group().split())
            if not 8 <= len(sentence) <= 240 or not _CONSTRAINT_MAY_B.search(
                sentence.encode("utf-8", "surrogatepass").lower()
            ):
                continue
            clauses = _CLAUSE_SPLIT_RE.split(sentence)
            if any(_CONSTRAINT_RE.search(c) for c in clauses):
                add(CONSTRAINT, sentence)
    if person and len(text) > _PERSON_CONSTRAINT_CHARS:  # pasted material (rule R22)
        found = [(k, v) for k, v in found if k in (PATH, ERROR, COMMIT, ISSUE, COMMAND)]
    if tool:
        kinds: dict[str, int] = {}
        for kind, _ in found:
            kinds[kind] = kinds.get(kind, 0) + 1
        found = [(k, v) for k, v in found if k == ERROR or kinds[k] <= TOOL_LIST_LIMIT]
    return found


def _constraint_hint(text: str, low: bytes) -> bool:
    """``_CONSTRAINT_HINT_RE.search(text)``, answered by the literal pre-check on the
    lowered bytes alone unless what it found is one of the characters the regex folds
    specially (patterns.py): then by the regex."""
    found = _CONSTRAINT_HINT_MAY_B.search(low)
    if found is None:
        return False
    return found.group() not in _CASE_SPECIAL_B or bool(_CONSTRAINT_HINT_RE.search(text))


def _is_identifier(span: str) -> bool:
    """A name a program defines, not a word: it has ``_``, ``.``, ``::`` or ``()``, or
    inner capitals (camelCase, PascalCase with two humps)."""
    if any(mark in span for mark in ("_", ".", "::", "()")):
        return any(c.isalpha() for c in span)
    return bool(re.search(r"[a-z][A-Z]", span))


def _line_of(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end >= 0 else len(text)]


def _looks_like_ip(value: str) -> bool:
    parts = value.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts)
