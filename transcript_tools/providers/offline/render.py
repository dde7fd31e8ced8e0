"""The extractive summary's text: fixed sections in English or Chinese, trimmed to a
level of detail, cut to the token budget."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from ...engine.tokens import estimate_text_tokens
from .facts import Facts, Level
from .goals import select

LABELS = {
    "en": {
        "header": "(extractive summary by tsum offline provider: excerpts copied from the "
        "conversation, not written by a model)",
        "counts": "Messages shown: user {user}, assistant {assistant}, tool results {results} "
        "(errors {errors}).",
        "goals": "Goals and requests:",
        "only": "Request",
        "first": "Earliest",
        "more_requests": "- … {n} other requests not shown",
        "latest": "Latest",
        "decisions": "Decisions and conclusions:",
        "tools": "Tools used: ",
        "tool_sep": ", ",
        "more_tools": "{n} more",
        "idents": "Identifiers (copied verbatim):",
        "files": "Files",
        "commands": "Commands",
        "error_lines": "Error lines",
        "others": "Other",
        "ident_sep": ", ",
        "quoted_sep": "; ",
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
        "more_requests": "- ……另有 {n} 条请求未列出",
        "latest": "最新",
        "decisions": "决定与结论：",
        "tools": "工具：",
        "tool_sep": "、",
        "more_tools": "另有 {n} 个",
        "idents": "标识（原文照录）：",
        "files": "文件",
        "commands": "命令",
        "error_lines": "错误行",
        "others": "其他",
        "ident_sep": "、",
        "quoted_sep": "；",
        "errors": "错误：",
        "more_errors": "- ……另有 {n} 个更早的错误",
        "state": "当前状态（助手最新消息）：",
        "pending": "最新请求尚未得到回复。",
        "last_output": "最后的工具输出",
        "excerpt": "摘录：",
    },
}


def render_summary(facts: Facts, lang: str, level: Level) -> str:
    labels = LABELS[lang]
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

    lines += _goals(facts.requests, labels, level, sep, n)

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

    lines += _identifiers(facts, labels, level, sep)

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


def _goals(
    requests: list[str], labels: dict[str, str], level: Level, sep: str, n: Callable[[int], int]
) -> list[str]:
    """Every request a person made while they fit (each is something the work was asked
    to do), else the earliest, the latest and a choice of the others (``goals.select``);
    the ones left out are counted."""
    if not requests:
        return []
    lines = ["", labels["goals"]]
    if len(requests) == 1:
        return [*lines, f"- {labels['only']}{sep}{_shorten(requests[0], n(level.goal_chars))}"]
    chosen = select(requests, level.recent)
    lines.append(f"- {labels['first']}{sep}{_shorten(requests[0], n(level.goal_chars))}")
    if len(chosen) < len(requests):
        lines.append(labels["more_requests"].format(n=len(requests) - len(chosen)))
    for i in chosen[1:-1]:
        lines.append(f"- {_shorten(requests[i], n(level.recent_chars))}")
    lines.append(f"- {labels['latest']}{sep}{_shorten(requests[-1], n(level.recent_chars))}")
    return lines


def _identifiers(facts: Facts, labels: dict[str, str], level: Level, sep: str) -> list[str]:
    """The identifiers section: one line per kind, strings copied whole (or cut with "…")."""
    ids = facts.idents
    rows = (
        ("files", ids.files[: level.files], False),
        ("commands", ids.commands[: level.commands], True),
        ("error_lines", ids.errors[: level.error_lines], True),
        ("others", ids.other[: level.others], False),
    )
    lines: list[str] = []
    limit = level.ident_chars
    for key, items, quoted in rows:
        if not items:
            continue
        cut = [t if len(t) <= limit else t[: limit - 1].rstrip() + "…" for t in items]
        if quoted:
            text = labels["quoted_sep"].join(f"`{t}`" for t in cut)
        else:
            text = labels["ident_sep"].join(cut)
        lines.append(f"- {labels[key]}{sep}{text}")
    return ["", labels["idents"], *lines] if lines else []


@lru_cache(maxsize=256)  # the state message, at each level (see ``_shortened``)
def _fits(text: str, limit: int) -> bool:
    """Whether ``text`` on one line has at most ``limit`` characters."""
    if len(text) <= limit:  # flattening only shortens
        return True
    return len(text) <= 3 * limit + 16 and len(" ".join(text.split())) <= limit


def _shorten(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters, cut at a word if one is near."""
    if limit <= 0:
        return ""
    window = text[: limit * 3 + 16]  # collapsing whitespace only makes it shorter
    return _shortened(window, limit, len(window) < len(text))


# A session's consecutive summaries, and a sweep's configurations of one conversation,
# show mostly the same requests, sentences and messages, each at up to four levels:
# each is flattened and cut once per limit. Keyed by the window (bounded memory; the
# same string object while the text fits it, so its hash is computed once).
@lru_cache(maxsize=4096)
def _shortened(window: str, limit: int, more: bool) -> str:
    """``_shorten`` of a text that starts with ``window`` (``more``: and goes on).

    The flattened start of a text is the start of the text flattened: when the start
    of the window is long enough once flattened, the rest of it changes nothing."""
    head = window[: limit + limit // 2]
    flat = " ".join(head.split())
    if len(flat) <= limit and len(head) < len(window):
        flat = " ".join(window.split())
    return _cut(flat, limit, more)


def _cut(flat: str, limit: int, more: bool) -> str:
    """A flattened text at most ``limit`` characters long: whole if it fits (``…`` after
    it when the text goes on), else cut at a space in its second half, with ``…``."""
    if len(flat) <= limit:
        return flat + ("…" if more else "")
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
    return _shortened_tail(window, limit, len(window) < len(text))


@lru_cache(maxsize=1024)
def _shortened_tail(window: str, limit: int, more: bool) -> str:
    """``_shorten_tail`` of a text that ends with ``window`` (``more``: after more)."""
    flat = " ".join(window.split())
    if len(flat) <= limit:
        return ("…" if more else "") + flat
    cut = flat[-(limit - 1) :]
    space = cut.find(" ", 0, limit // 2)
    if space >= 0:
        cut = cut[space + 1 :]
    return "…" + cut.lstrip()


@lru_cache(maxsize=256)
def _head_and_tail(text: str, head: int, tail: int) -> str:
    """``text`` on one line; if longer than ``head + tail``, its start … its end."""
    if tail <= 0:
        return _shorten(text, head)
    if _fits(text, head + tail):
        return " ".join(text.split())
    start = _shorten(text, head).removesuffix("…")
    end = _shorten_tail(text, tail).removeprefix("…")
    return f"{start} … {end}"


def cut_to_tokens(text: str, max_tokens: int) -> str:
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
