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
from dataclasses import dataclass

from .parse import Blocks

_EXTENSIONS = (
    "py|pyi|ipynb|js|jsx|mjs|cjs|ts|tsx|vue|json|jsonl|toml|yaml|yml|ini|cfg|conf|env|lock|"
    "md|rst|txt|csv|tsv|xml|html|css|scss|sql|sh|bash|zsh|ps1|go|mod|rs|java|kt|scala|"
    "c|h|cc|cpp|hpp|cs|rb|php|swift|m|proto|gradle|j2|jinja|tf|dockerfile|log|patch|diff"
)
_SEG = r"[\w.@+-]+"
# One pass per block: every kind is a named alternative. A path is a name with a known
# extension, or a "/"-separated name that starts at a root ("/", "~/", "./", "../") or
# has at least two separators ("and/or" is not a path).
_IDENT_RE = re.compile(
    r"(?P<url>https?://[^\s<>\"'`)\]}]+)"
    r"|(?P<error>\b[A-Z]\w*(?:Error|Exception)\b(?::[^\n]*)?)"
    r"|(?<![\w@/.:\\-])(?P<path>(?:~|\.{1,2})?/(?:" + _SEG + "/)*" + _SEG
    + r"|(?:" + _SEG + "/){2,}" + _SEG
    + r"|(?:" + _SEG + "/)*[\\w-]+(?:\\.[\\w-]+)*\\.(?:" + _EXTENSIONS + r"))(?![\w/-])"
    r"|(?<![\w.])(?P<version>v?\d+\.\d+\.\d+(?:[-+][\w.]+)?|v\d+\.\d+)(?![\w.]*\d)"
    r"|(?<![\w&])(?P<issue>#\d{1,6})\b"
    r"|(?<![\w/])(?P<commit>(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40})\b"
    r"|`(?P<code>[^`\n]{3,80})`"
)
_PATH_ONLY_RE = re.compile(r"(?:(?!https?://)[^\s`])*(?:/|\.(?:" + _EXTENSIONS + r"))[\w.@+-]*")
_TRAILING = ".,;:!?'\""
_ERROR_LINE_CHARS = 160


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
        self.last[text] = position

    def ranked(self, limit: int) -> list[str]:
        order = sorted(self.weight, key=lambda t: (-self.weight[t], -self.last[t]))
        return order[:limit]


def collect_identifiers(blocks: Blocks, limit: int) -> Identifiers:
    """At most ``limit`` strings of each kind from the blocks and the tool calls."""
    files, commands, errors, other = _Ranked(), _Ranked(), _Ranked(), _Ranked()
    kinds = {"path": files, "error": errors}
    finditer = _IDENT_RE.finditer

    def scan(text: str, weight: int, position: int) -> None:
        for match in finditer(text):
            kind = match.lastgroup
            value = match.group(kind)
            if kind == "error":
                value = value[:_ERROR_LINE_CHARS].rstrip()
            elif kind == "code":
                if _PATH_ONLY_RE.fullmatch(value) and "://" not in value:
                    kind = "path"  # `src/app.py` in a code span is a file all the same
            else:
                value = value.rstrip(_TRAILING)
            if len(value) > 1:
                kinds.get(kind, other).add(value, weight, position)

    step = len(blocks.tool_args) + 1  # positions: block index, then call order within it
    for index, (role, content) in enumerate(zip(blocks.roles, blocks.contents, strict=True)):
        if role == "system":  # always in the model's view: nothing to carry
            continue
        scan(content, 1 if role in ("result", "error") else 2, index * step)
    for order, (index, kind, value) in enumerate(blocks.tool_args, 1):
        position = index * step + order
        if kind == "command":
            commands.add(value.split("\n", 1)[0].strip(), 2, position)
        elif kind == "path":
            if "/" in value or "." in value.strip("."):  # not "." nor a bare directory name
                files.add(value, 2, position)
        elif kind == "url":
            other.add(value, 2, position)
        scan(value, 1 if kind == "text" else 0, position)
    return Identifiers(
        files=_without_bare_names(files).ranked(limit),
        commands=commands.ranked(limit),
        errors=errors.ranked(limit),
        other=other.ranked(limit),
    )


def _without_bare_names(files: _Ranked) -> _Ranked:
    """A bare ``name.py`` is folded into the one longer path ending in ``/name.py``."""
    longer: dict[str, str | None] = {}
    for path in files.weight:
        if "/" in path:
            name = path.rsplit("/", 1)[1]
            longer[name] = None if name in longer and longer[name] != path else path
    for name, path in longer.items():
        if path is not None and name in files.weight:
            files.add(path, files.weight.pop(name), max(files.last.pop(name), files.last[path]))
    return files
