"""The patterns and word lists of the artifact probes (``artifacts.py``, ``probes.py``),
and the noise rules' lists (R-numbers: docs/eval-probe-audit.md). Changing any of them changes what is
extracted: bump ``probes.EXTRACTOR_VERSION``."""

from __future__ import annotations

import re

_URL_RE = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_EXT = (
    r"py|pyi|js|mjs|cjs|ts|tsx|jsx|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift|scala|sh|bash|"
    r"zsh|md|rst|txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|lock|sql|html|css|scss|vue|svelte|"
    r"j2|tmpl|xml|csv|proto|gradle|mk|dockerfile|log|ipynb"
)
_PATH_RE = re.compile(
    rf"(?<![\w/.@:-])(?:~|\.{{1,2}})?/?(?:[\w@.+-]+/)*[\w@+-][\w.+-]*\.(?:{_EXT})(?![\w/(]|\.\w)"
    r"|(?<![\w/.@:-])(?:~|\.{1,2})?/(?:[\w@.+-]+/)+[\w@.+-]+/?(?![\w/])"
)
_EXT_HINT_RE = re.compile(rf"\.(?:{_EXT})(?![\w])")
_CODE_SPAN_RE = re.compile(r"`([^`\n]{2,80})`")
_IDENT_RE = re.compile(r"[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*(?:\(\))?")
_ERROR_RE = re.compile(
    r"\b((?:[A-Z][a-z0-9]+)*(?:Error|Exception|Failure|Interrupt|Exit)|[A-Z]\w*(?:Error|Exception)|panic|FAILED|FAIL)"
    r"\b(?::[ \t]*([^\n]{0,160}))?"
)
_VERSION_RE = re.compile(
    r"(?<![\w.])(?:v\d+(?:\.\d+){1,3}|\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.]+)?)(?![\w.]*\d)"
    r"|(?:(?<=python )|(?<=node )|(?<=version )|(?<=go ))\d+\.\d+(?![\w.])",
    re.IGNORECASE,
)
_ISSUE_RE = re.compile(
    r"(?:\b(?:PR|pull request|issue|MR|ticket|bug)\s*#?|(?<![\w&#])#)(\d{2,6})\b", re.IGNORECASE
)
_HASH_RE = re.compile(r"(?<![\w=/-])([0-9a-f]{7,12}|[0-9a-f]{40})(?![\w-])")
_UNIT = (
    r"ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|"
    r"[kKmMgGtT]i?B|bytes?|%|tokens?|rows?|lines?|requests?|req/s|rps|qps|users?|items?|files?|"
    r"tests?|retries|times|ms/op|毫秒|秒|分钟|小时|天|周|行|元|倍"
)
_NUMBER_RE = re.compile(
    rf"(?<![\w.#/-])(\d+(?:[.,]\d+)?)\s?((?:万|亿)?(?:{_UNIT})|万|亿)(?![A-Za-z0-9_/])"
)
_SNAKE_RE = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/])")
_SHELL_LINE_RE = re.compile(r"^\s*\$ +(\S[^\n]{1,200})$", re.MULTILINE)
_CONSTRAINT_RE = re.compile(
    r"\b(?:must|mustn't|must not|never|always|only|no more than|at most|at least|make sure|"
    r"should not|shouldn't)\b"
    r"|^(?:please |and |but |also |so )?(?:do not|don't|avoid|keep|without)\b"
    r"|^(?:请|你)?(?:不要|别|保持|只能|只用|不能)|必须|禁止|务必|不得|不超过",
    re.IGNORECASE,
)
_CONSTRAINT_HINT_RE = re.compile(
    r"(?i)must|never|always|only|at most|at least|make sure|should|don'?t|do not|avoid|keep|"
    r"without|不要|别|保持|只能|只用|不能|必须|禁止|务必|不得|不超过"
)
# A sentence: a run of characters other than terminators and newlines, or terminators
# not followed by a space or the end. The run is taken whole (``++``: SRE matched the
# plain one-character alternative ~2.5x slower); the matches are the same.
_SENTENCE_RE = re.compile(r"(?:[^.!?。！？\n]++|[.!?](?!\s|$))+[.!?。！？]?")
# What an IDE extension wraps around a person's message ("The user opened the file … in
# the IDE. This may or may not be related to the current task."): not their request
# (rule Q1, docs/eval.md "Request probes").
_IDE_CONTEXT_RE = re.compile(r"<(ide_[a-z_]+|system-reminder)>.*?</\1>", re.DOTALL)
_IDE_TAG_RE = re.compile(r"</?ide_[a-z_]+>")  # its markup is no symbol; what it names stays (R26)
_FENCE_RE = re.compile(r"```[^\n]*\n?(.*?)(?:```|$)", re.DOTALL)
_IMAGE_URL_RE = re.compile(r"!\[[^\]]*\]\((https?://[^)\s]+)")
_LINKED_URL_RE = re.compile(r"\]\((https?://[^)\s]+)|<(https?://[^>\s]+)>")
TOOL_LIST_LIMIT = 3  # more probes of one kind in one tool result: a listing or a log (rule R9)
_BOILERPLATE_URLS = (
    "https://pip.pypa.io/warnings",
    "https://placehold",
    "https://via.placeholder",
    "http://www.w3.org/",
    "https://www.w3.org/",
)
_SYSTEM_PATHS = ("/nix/store/", "/tmp/", "/proc/", "/usr/", "/private/var/", "/var/folders/")
_SYSTEM_PARTS = (
    "site-packages/",
    "node_modules/",
    "dist-packages/",
    "__pycache__",
    "/go/pkg/mod/",
    "/.cargo/registry/",
    "/.rustup/",
)
_CJK_AFTER_RE = re.compile(r"[\u3400-\u9fff]")
_LS_LINE_RE = re.compile(r"\s*[dl-][rwxsStT-]{9}[@+.]?\s")
_DOTTED_RE = re.compile(r"\d\.\d")
_ERROR_HINTS = ("Error", "Exception", "Fail", "FAIL", "Interrupt", "Exit", "panic")
_CLAUSE_SPLIT_RE = re.compile(r"[,;:，；：]\s*")


# Pre-checks on a text's UTF-8 bytes (ASCII literals in UTF-8 are found exactly: no
# multi-byte character holds an ASCII byte), so that a costly pattern only runs when it
# can match. The case-insensitive ones take the bytes lowered (ASCII only): the pattern
# can only match where one of its literals is, case folded as the regex folds ASCII,
# except for four characters it also folds (dotless ı, long ſ, dotted İ, the Kelvin
# sign), which make the pre-check answer "maybe" whatever else the text holds.
_CASE_SPECIAL_B = tuple(c.encode("utf-8") for c in ("ı", "ſ", "İ", "\u212a"))


def _may_b(*literals: str) -> re.Pattern[bytes]:
    alternatives = [a.encode("utf-8") for a in literals] + list(_CASE_SPECIAL_B)
    return re.compile(b"|".join(re.escape(a) for a in alternatives))


_DIGITS_B = b"0123456789"  # a text has a digit when deleting these shortens it (one pass)
# case-sensitive; one alternation scan costs less than a memmem per hint (~2 vs ~5 us)
_ERROR_HINTS_MAY_B = re.compile(b"|".join(re.escape(h.encode()) for h in _ERROR_HINTS))
_ISSUE_MAY_B = _may_b("#", "pr", "pull request", "issue", "mr", "ticket", "bug")  # _ISSUE_RE
_CONSTRAINT_HINT_MAY_B = _may_b(  # _CONSTRAINT_HINT_RE's alternatives
    *("must", "never", "always", "only", "at most", "at least", "make sure", "should"),
    *("don't", "dont", "do not", "avoid", "keep", "without"),
    *("不要", "别", "保持", "只能", "只用", "不能", "必须", "禁止", "务必", "不得", "不超过"),
)
_CONSTRAINT_MAY_B = _may_b(  # _CONSTRAINT_RE's alternatives
    *("must", "never", "always", "only", "no more than", "at most", "at least", "make sure"),
    *("should not", "shouldn't", "do not", "don't", "avoid", "keep", "without"),
    *("不要", "别", "保持", "只能", "只用", "不能", "必须", "禁止", "务必", "不得", "不超过"),
)
_DIGITS_RE = re.compile(r"(?<![\w.#])\d+(?:[.,]\d+)?%?(?![\w.])")
_PERSON_CONSTRAINT_CHARS = 2000  # longer person messages are pasted material, not instructions
_COMMAND_KEYS = ("command", "cmd", "script")
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "notebook_path")

# Noise rules (docs/eval-probe-audit.md tells which sample probe each one answers).
_NOISE_PATHS = frozenset(
    {"and/or", "/dev/null", "n/a", "i/o", "/tmp", "/", "./", "../", "input/output"}
)
_NOISE_SYMBOLS = frozenset({"true", "false", "none", "null", "self", "yes", "no", "ok", "todo"})
_GENERIC_ERRORS = frozenset({"Exception", "Error", "BaseException"})
# an agent runtime's own tool vocabulary (OpenHands / SWE-agent editors), not the work's (rule R16)
_TOOL_VOCABULARY = frozenset(
    {
        "str_replace",
        "old_str",
        "new_str",
        "view_range",
        "file_text",
        "insert_line",
        "str_replace_editor",
        "undo_edit",
        "create",
        "view",
        "insert",
    }
)
_PLACEHOLDER_RE = re.compile(
    r"path/to|(?:^|//|@|www\.)example\.(?:com|org|net)\b|your[-_]|<[^>]*>|xxx", re.IGNORECASE
)
_VERSIONISH_RE = re.compile(r"^\d+(?:\.\d+)+$")

_SHELL_WORDS = frozenset(
    "git npm npx pnpm yarn pip pip3 python python3 pytest uv cargo go make docker kubectl "
    "curl ruff mypy tsc node bun deno gh sed grep rg ls cd cat mv cp rm mkdir poetry bundle "
    "rake rails terraform helm psql sqlite3 brew apt apt-get tox nox just".split()
)
