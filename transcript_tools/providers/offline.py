"""The offline provider: a deterministic extractive summarizer (no network, no key).

It is not a language model. It reads the conversation back out of the rendered
prompt and copies pieces of it into fixed sections: the user's requests, sentences
where the assistant states a decision or conclusion, the tools used, the errors
seen and the latest state. Same prompt, same summary; no randomness, no clock.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..errors import ProviderConfigError
from ..messages import Usage
from ..tokens import ascii_letter_count, cjk_count, estimate_text_tokens
from .base import SummaryResponse
from .registry import register

ALGORITHM_VERSION = 2  # bump whenever the output for a given prompt changes (cache key)

_ROLE_PREFIX = r"(?:System|User|Assistant|Tool (?:Result|Error) \[[^\]\n]*\]):(?: |$)"
_HEAD = r"(?:(System|User|Assistant)|Tool (Result|Error) \[([^\]\n]*)\]):(?: |$)"
_HEAD_RE = re.compile(_HEAD)
# A block starts at a role prefix right after a blank line; content may itself hold
# blank lines, so a bare "\n\n" is not a boundary. The boundary and the role prefix
# after it are one match, so that ``split`` yields [text before the first boundary,
# role, tool result kind, call id, content, role, ...] in C, with no Python work per
# block.
_SPLIT_RE = re.compile(r"\n\n" + _HEAD)
_ROLE_NAMES = {"System": "system", "User": "user", "Assistant": "assistant", "Result": "result", "Error": "error"}
_LINE_START_RE = re.compile(r"^" + _ROLE_PREFIX, re.MULTILINE)
_TOOL_CALL_RE = re.compile(r"\[Tool: ([^\]\n]+)\]")
_CUE_WORDS = (
    "decided|decide|decision|conclusion|concluded|agreed|will|won't|we'll|i'll|"
    "should|must|need to|needs to|going to|plan is|instead|switch to|switched to|"
    "fixed|fixes|resolved|found|root cause|turns out|confirmed|implemented|changed|"
    "updated|added|removed|done"
)
_CUE_ZH = (
    "决定|结论|找到|发现|需要|已经|应该|必须|修复|解决|计划|改为|改成|确认|完成|原因|采用|不再"
)
# The leading character-set lookahead lets the regex engine skip positions that
# cannot start a cue word (3-4x faster than the bare alternation on 30k chars).
_CUE_RE = re.compile(
    r"(?=[dcawishmnrgpftu决结找发需已应必修解计改确完原采不])(?:\b(?:"
    + _CUE_WORDS
    + r")\b|"
    + _CUE_ZH
    + ")"
)
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)|[。！？；\n]")
_SENTENCE_STARTS = (". ", "! ", "? ", "。", "！", "？", "；", "\n")
_ERROR_LIKE_RE = re.compile(
    r"\s*(?:(?:error|fatal|traceback|exception|failed)\b|错误|失败|异常)", re.I
)
_LIST_MARKER_RE = re.compile(r"(?:[-*•>#]+|\d+[.)])\s+")
_SENTENCE_WINDOW = 400  # how far a decision sentence may reach around its cue word
_CJK_RATIO = 0.3  # CJK share of letters above which the summary is written in Chinese


@dataclass(slots=True)
class _Blocks:
    """The conversation's blocks as parallel lists (no object per block)."""

    roles: list[str]  # system | user | assistant | result | error | fragment
    call_ids: list[str]
    contents: list[str]


@dataclass(frozen=True, slots=True)
class _Level:
    """How much of each section to keep; later levels are cheaper (budget trimming)."""

    goal_chars: int
    recent: int
    recent_chars: int
    decisions: int
    decision_chars: int
    errors: int
    error_chars: int
    tools: int
    state_head: int
    state_tail: int
    last_chars: int


_LEVELS = (
    _Level(280, 3, 200, 8, 200, 5, 160, 12, 300, 300, 160),
    _Level(200, 2, 160, 5, 150, 3, 120, 8, 200, 200, 120),
    _Level(140, 1, 120, 3, 120, 2, 100, 5, 120, 120, 80),
    _Level(80, 1, 80, 1, 80, 1, 80, 3, 80, 0, 0),
)

_LABELS = {
    "en": {
        "header": "(extractive summary by tsum offline provider: excerpts copied from the "
        "conversation, not written by a model)",
        "counts": "Messages shown: user {user}, assistant {assistant}, tool results {results} "
        "(errors {errors}).",
        "goals": "Goals and requests:",
        "only": "Request",
        "first": "Earliest",
        "recent": "Recent",
        "latest": "Latest",
        "decisions": "Decisions and conclusions:",
        "tools": "Tools used: ",
        "tool_sep": ", ",
        "more_tools": "{n} more",
        "errors": "Errors:",
        "more_errors": "- … and {n} earlier errors",
        "state": "Current state (latest assistant message):",
        "pending": "The latest request has no reply yet.",
        "last_output": "Last tool output",
        "excerpt": "Excerpt:",
    },
    "zh": {
        "header": "（tsum 离线抽取式摘要：内容摘自对话原文，并非模型生成）",
        "counts": "消息：用户 {user} 条，助手 {assistant} 条，工具结果 {results} 条（错误 {errors} 条）。",
        "goals": "目标与请求：",
        "only": "请求",
        "first": "最早",
        "recent": "近期",
        "latest": "最新",
        "decisions": "决定与结论：",
        "tools": "工具：",
        "tool_sep": "、",
        "more_tools": "另有 {n} 个",
        "errors": "错误：",
        "more_errors": "- ……另有 {n} 个更早的错误",
        "state": "当前状态（助手最新消息）：",
        "pending": "最新请求尚未得到回复。",
        "last_output": "最后的工具输出",
        "excerpt": "摘录：",
    },
}


@register
class OfflineProvider:
    """Deterministic extractive summarizer: copies, never writes. No network, no key.

    Sections: goals and requests (the earliest request shown and the latest ones),
    decisions and conclusions (assistant sentences with cue words such as
    decided / will / should / fixed / 决定 / 需要 / 已经), tools used with counts,
    errors seen, and the current state (the latest assistant message). Chinese
    headings when CJK characters (Han, kana, Hangul) are more than 30% of the
    letters (CJK + A-Z) of the user and assistant text, English otherwise. The output fits ``max_tokens`` by
    ``estimate_text_tokens``. Cost is linear in the prompt (regex and str methods,
    no per-character Python loop).
    """

    name = "offline"
    key_env: str | None = None
    DEFAULT_MODEL = "extractive-v1"

    @classmethod
    def create(
        cls,
        *,
        model: str | None,
        base_url: str | None,
        timeout: float,
        temperature: float | None,
        max_connections: int,
        require_key: bool,
    ) -> OfflineProvider:
        """The registry's constructor: refuses settings that mean nothing offline."""
        if base_url:
            raise ProviderConfigError(
                "--base-url applies to --provider openai or anthropic, not offline"
            )
        if model and model != cls.DEFAULT_MODEL:
            raise ProviderConfigError(
                f"the offline provider has one model ({cls.DEFAULT_MODEL}), not {model!r}; "
                "choose --provider anthropic or openai for other models"
            )
        if temperature is not None:
            raise ProviderConfigError(
                "the offline provider is deterministic: it takes no temperature"
            )
        return cls()

    @property
    def default_model(self) -> str:
        return self.DEFAULT_MODEL

    def identity(self, model: str | None) -> dict[str, Any]:
        return {
            "provider": self.name,
            "model": model or self.default_model,
            "algorithm_version": ALGORITHM_VERSION,
        }

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        text = summarize(prompt, max_tokens)
        return SummaryResponse(
            text=text,
            model=model or self.default_model,
            usage=Usage(
                input_tokens=estimate_text_tokens(prompt),
                output_tokens=estimate_text_tokens(text),
            ),
        )


def summarize(prompt: str, max_tokens: int) -> str:
    """The extractive summary of a rendered prompt; ``""`` when it holds no conversation.

    The conversation is the text inside the last ``<messages>…</messages>`` pair, or
    else the prompt from the first line that starts with a role prefix (the text
    before it is the template's instructions). Blocks are split at a blank line
    followed by ``System: ``, ``User: ``, ``Assistant: ``, ``Tool Result [id]: `` or
    ``Tool Error [id]: ``; text before the first prefix (a message cut by the
    30,000-character limit) has no role and only feeds the language guess and the
    excerpt fallback.

    Known limits of reading text back: content holding a blank line followed by a
    role prefix (e.g. a pasted transcript) is split there, and a literal
    ``<messages>`` inside the conversation moves the start of the section.
    """
    blocks = _parse(_conversation_text(prompt))
    if not any(map(_has_text, blocks.contents)):
        return ""
    lang = _language(blocks)
    facts = _Facts.collect(blocks)
    text = ""
    for level in _LEVELS:
        text = _render(facts, lang, level)
        if estimate_text_tokens(text) <= max_tokens:
            return text
    return _cut_to_tokens(text, max_tokens)


def _conversation_text(prompt: str) -> str:
    end = prompt.rfind("</messages>")
    if end != -1:
        start = prompt.rfind("<messages>", 0, end)
        if start != -1:
            return prompt[start + len("<messages>") : end].strip("\n")
    match = _LINE_START_RE.search(prompt)
    if match is None:
        return prompt.strip("\n")
    return prompt[match.start() :].strip("\n")


def _has_text(text: str) -> bool:
    """``bool(text.strip())`` without the copy: isspace() stops at the first non-space."""
    return bool(text) and not text.isspace()


def _parse(text: str) -> _Blocks:
    parts = _SPLIT_RE.split(text)
    # Text before the first boundary: a block with its own role prefix, or the tail of
    # a message cut by the 30,000-character limit (or a prompt without role prefixes).
    first = parts[0]
    head = _HEAD_RE.match(first)
    if head is None:
        role, call_id, content = "fragment", "", first
    else:
        role = _ROLE_NAMES[head.group(1) or head.group(2)]
        call_id = head.group(3) or ""
        content = first[head.end() :]
    names = _ROLE_NAMES
    roles = [role]
    roles += [names[name or kind] for name, kind in zip(parts[1::4], parts[2::4], strict=True)]
    call_ids = [call_id]
    call_ids += [cid or "" for cid in parts[3::4]]
    contents = [content]
    contents += parts[4::4]
    return _Blocks(roles, call_ids, contents)


def _language(blocks: _Blocks) -> str:
    prose = "\n".join(
        [c for r, c in zip(blocks.roles, blocks.contents, strict=True) if r == "user" or r == "assistant" or r == "fragment"]
    )
    if not _has_text(prose):
        prose = "\n".join(blocks.contents)
    cjk = cjk_count(prose)
    latin = ascii_letter_count(prose)
    if cjk and cjk / (cjk + latin) > _CJK_RATIO:
        return "zh"
    return "en"


@dataclass(slots=True)
class _Facts:
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

    @classmethod
    def collect(cls, blocks: _Blocks) -> _Facts:
        roles, call_ids, contents = blocks.roles, blocks.call_ids, blocks.contents
        counts = Counter(roles)
        requests = [c for r, c in zip(roles, contents, strict=True) if r == "user" and _has_text(c)]
        assistant = [c for r, c in zip(roles, contents, strict=True) if r == "assistant"]
        tool_counts = Counter(_TOOL_CALL_RE.findall("\n".join(assistant)))
        tools = sorted(tool_counts.items(), key=lambda item: (-item[1], item[0]))
        errors: list[tuple[str, str]] = []
        error_total = 0
        max_errors = _LEVELS[0].errors
        error_like = _ERROR_LIKE_RE.match
        for index in range(len(roles) - 1, -1, -1):
            role = roles[index]
            if role == "error" or (role == "result" and error_like(contents[index])):
                error_total += 1
                if len(errors) < max_errors:
                    errors.append((call_ids[index], _error_line(contents[index])))
        state = ""
        state_index = len(assistant)
        for index in range(len(assistant) - 1, -1, -1):
            if _has_text(_TOOL_CALL_RE.sub("", assistant[index])):
                state, state_index = assistant[index], index
                break
        limit = _LEVELS[0].decisions
        last_role, last_content = roles[-1], contents[-1]
        fallback = next((c for c in reversed(contents) if _has_text(c)), "")
        return cls(
            counts=counts,
            requests=requests,
            decisions=_decisions(assistant[:state_index], limit),
            state_decisions=_decisions([state], limit) if state else [],
            tools=tools,
            errors=errors,
            error_total=error_total,
            state=state,
            pending=last_role == "user" and _has_text(last_content),
            last_output=(call_ids[-1], last_content) if last_role in ("result", "error") else None,
            fallback=fallback,
        )


def _error_line(content: str) -> str:
    stripped = content.strip()
    if stripped.startswith("Traceback"):
        # A Python traceback says what went wrong on its last line.
        return stripped.rsplit("\n", 1)[-1]
    return stripped


def _decisions(assistant: list[str], limit: int) -> list[str]:
    """Sentences with a cue word, newest first; scanning stops once ``limit`` are found."""
    found: list[str] = []
    seen: set[str] = set()
    for content in reversed(assistant):
        lowered = content.lower()  # same length as content for the cue scripts
        if len(lowered) != len(content):
            lowered = content
        hits = [m.start() for m in _CUE_RE.finditer(lowered)]
        for pos in reversed(hits):
            sentence = _sentence_at(content, pos)
            key = " ".join(sentence.split())
            marker = _LIST_MARKER_RE.match(key)
            if marker:  # a markdown list item or heading: keep its text only
                key = key[marker.end() :]
            if len(key) < 8 or key.endswith(("?", "？")) or key in seen:
                continue
            if _TOOL_CALL_RE.fullmatch(key):
                continue
            seen.add(key)
            found.append(key)
            if len(found) >= limit:
                return found
    return found


def _sentence_at(text: str, pos: int) -> str:
    low = max(0, pos - _SENTENCE_WINDOW)
    start = low
    for mark in _SENTENCE_STARTS:
        found = text.rfind(mark, low, pos)
        if found != -1:
            start = max(start, found + len(mark))
    end_match = _SENTENCE_END_RE.search(text, pos, pos + _SENTENCE_WINDOW)
    end = end_match.end() if end_match else min(len(text), pos + _SENTENCE_WINDOW)
    return text[start:end]


def _render(facts: _Facts, lang: str, level: _Level) -> str:
    labels = _LABELS[lang]
    # CJK packs about twice the meaning per character: half the characters.
    scale = 0.5 if lang == "zh" else 1.0

    def n(chars: int) -> int:
        return int(chars * scale)

    lines = [labels["header"]]
    c = facts.counts
    if c.total() > c["fragment"]:  # some role blocks, not only unlabelled text
        lines.append(
            labels["counts"].format(
                user=c["user"],
                assistant=c["assistant"],
                results=c["result"] + c["error"],
                errors=c["error"],
            )
        )
    sep = "：" if lang == "zh" else ": "

    if facts.requests:
        lines += ["", labels["goals"]]
        reqs = facts.requests
        if len(reqs) == 1:
            lines.append(f"- {labels['only']}{sep}{_shorten(reqs[0], n(level.goal_chars))}")
        else:
            lines.append(f"- {labels['first']}{sep}{_shorten(reqs[0], n(level.goal_chars))}")
            recent = reqs[1:][-level.recent :]
            for i, req in enumerate(recent):
                label = labels["latest"] if i == len(recent) - 1 else labels["recent"]
                lines.append(f"- {label}{sep}{_shorten(req, n(level.recent_chars))}")

    # Sentences of the state message are left out while it is shown whole below.
    state_whole = _fits(facts.state, level.state_head + level.state_tail)
    decisions = facts.decisions
    if not state_whole:
        decisions = list(dict.fromkeys(facts.state_decisions + facts.decisions))
    if decisions and level.decisions:
        lines += ["", labels["decisions"]]
        chosen = decisions[: level.decisions]
        for sentence in reversed(chosen):  # oldest first, like the conversation
            lines.append(f"- {_shorten(sentence, n(level.decision_chars))}")

    if facts.tools:
        shown = [f"{name} ×{count}" for name, count in facts.tools[: level.tools]]
        hidden = len(facts.tools) - len(shown)
        if hidden > 0:
            shown.append(labels["more_tools"].format(n=hidden))
        lines += ["", labels["tools"] + labels["tool_sep"].join(shown)]

    if facts.errors:
        lines += ["", labels["errors"]]
        chosen_errors = facts.errors[: level.errors]
        for call_id, text in reversed(chosen_errors):
            lines.append(f"- [{call_id}] {_shorten(text, n(level.error_chars))}")
        hidden = facts.error_total - len(chosen_errors)
        if hidden > 0:
            lines.append(labels["more_errors"].format(n=hidden))

    if facts.state:
        lines += [
            "",
            labels["state"],
            _head_and_tail(facts.state, n(level.state_head), n(level.state_tail)),
        ]
    if facts.pending:
        lines += ["", labels["pending"]]
    elif facts.last_output is not None and level.last_chars:
        call_id, content = facts.last_output
        lines += [
            "",
            f"{labels['last_output']} [{call_id}]{sep}{_shorten(content, n(level.last_chars))}",
        ]

    if not facts.requests and not facts.state and not decisions:
        lines += [
            "",
            labels["excerpt"],
            _head_and_tail(facts.fallback, n(level.state_head), n(level.state_tail)),
        ]
    return "\n".join(lines)


def _fits(text: str, limit: int) -> bool:
    """Whether ``text`` on one line has at most ``limit`` characters."""
    return len(text) <= 3 * limit + 16 and len(" ".join(text.split())) <= limit


def _shorten(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters, cut at a word if one is near."""
    if limit <= 0:
        return ""
    window = text[: limit * 3 + 16]  # collapsing whitespace only makes it shorter
    flat = " ".join(window.split())
    if len(flat) <= limit:
        return flat + ("…" if len(window) < len(text) else "")
    cut = flat[: limit - 1]
    space = cut.rfind(" ", limit // 2)
    if space > 0:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _shorten_tail(text: str, limit: int) -> str:
    """The end of ``text`` on one line, at most ``limit`` characters."""
    if limit <= 0:
        return ""
    window = text[-(limit * 3 + 16) :]
    flat = " ".join(window.split())
    if len(flat) <= limit:
        return ("…" if len(window) < len(text) else "") + flat
    cut = flat[-(limit - 1) :]
    space = cut.find(" ", 0, limit // 2)
    if space >= 0:
        cut = cut[space + 1 :]
    return "…" + cut.lstrip()


def _head_and_tail(text: str, head: int, tail: int) -> str:
    """``text`` on one line; if longer than ``head + tail``, its start … its end."""
    if tail <= 0:
        return _shorten(text, head)
    if _fits(text, head + tail):
        return " ".join(text.split())
    start = _shorten(text, head).removesuffix("…")
    end = _shorten_tail(text, tail).removeprefix("…")
    return f"{start} … {end}"


def _cut_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` (with "…" if that fits too) within ``max_tokens``."""
    if max_tokens <= 0:
        return ""
    for marker in ("…", ""):
        lo, hi = 0, len(text)
        while lo < hi:  # the estimate grows with the prefix: binary search
            mid = (lo + hi + 1) // 2
            if estimate_text_tokens(text[:mid] + marker) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        if lo:
            return text[:lo] + marker
    return ""
