"""The person's requests for the summary's "Goals and requests" section.

The engine shows the summarizer the newest messages that fit its character limit
(``max_transcript_chars``) and, when the template asks for it, the session's previous
summary. A long session's first requests soon fall out of the shown messages: an
extractive summary that read the messages alone would lose the task it was given.
So the requests the previous summary of this session listed are carried over, as a
model asked to "update the earlier summary rather than repeat it" would: the requests
it listed that the shown messages no longer hold come first, then the shown ones.

Only this provider's own summaries are read back (its fixed headings); another
writer's summary in the prompt is left alone.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .parse import conversation_span

HEADERS = (
    "(extractive summary by tsum offline provider:",
    "（tsum 离线抽取式摘要：",
)
GOAL_HEADINGS = ("Goals and requests:", "目标与请求：")
# "- Label: text": the labels of both languages (a session may change language), and
# "Recent", which version 4 wrote before each of the latest requests
_LABEL_RE = re.compile(r"- (?:(?:Request|Earliest|Recent|Latest): |(?:请求|最早|近期|最新)：)?")
# Context an IDE extension wraps around what the person typed ("The user opened the file
# … in the IDE. This may or may not be related to the current task."): not the request.
_IDE_CONTEXT_RE = re.compile(r"<(ide_[a-z_]+|system-reminder)>.*?</\1>", re.DOTALL)
_MORE_RE = re.compile(r"- … \d+ other requests not shown|- ……另有 \d+ 条请求未列出")
# A request that sets a rule for the rest of the work ("keep the old signature working",
# "don't touch the engine", "不要改接口"): listed even when older requests are left out.
# Two searches: the Chinese words have no case, and without IGNORECASE their search
# skips in C to their first characters instead of trying every word at every position.
_RULE_RE = re.compile(
    r"\b(?:must|never|always|only|keep|don't|do not|avoid|without|make sure|at most|at least)\b",
    re.IGNORECASE,
)
_RULE_ZH_RE = re.compile("不要|别|必须|保持|只能|只用|务必|禁止|不能|不得")


def previous_requests(prompt: str) -> list[str]:
    """The requests listed by this provider's summary in the prompt's instructions part
    (the previous summary of the session), oldest first; [] when there is none."""
    head = prompt[: conversation_span(prompt)[0]]
    at = -1
    for header in HEADERS:
        at = max(at, head.rfind(header))
    if at < 0:
        return []
    found: list[str] = []
    lines = iter(head[at:].splitlines())
    for line in lines:
        if line.strip() in GOAL_HEADINGS:
            break
    for line in lines:
        if not line.startswith("- "):
            break  # the section ends at its blank line
        if _MORE_RE.match(line):
            continue
        text = line[_LABEL_RE.match(line).end() :].strip()  # type: ignore[union-attr]
        if text:
            found.append(text)
    return found


def requests(shown: list[str], carried: list[str]) -> list[str]:
    """The requests to list, oldest first: ``carried`` (from the previous summary) that
    no shown request repeats, then ``shown`` without the IDE's context around them. A
    carried request may be a shown one cut short (it ends with "…")."""
    shown = [_without_ide_context(text) for text in shown]
    if not carried:
        return shown
    flat = [" ".join(s.split()) for s in shown]
    out: list[str] = []
    for text in carried:
        stem = text.removesuffix("…").rstrip()
        if stem and not any(f.startswith(stem) for f in flat):
            out.append(text)
    return out + shown


def select(requests: list[str], slots: int) -> list[int]:
    """Which requests to list when there are more than the earliest plus ``slots``: the
    earliest (the task, usually), the latest, those that set a rule (newest first, at
    most half the slots), then the newest of the others; in conversation order."""
    last = len(requests) - 1
    if last <= slots:
        return list(range(len(requests)))
    chosen = {0, last}
    middle = range(last - 1, 0, -1)  # newest first
    rules = [i for i in middle if _sets_rule(requests[i])]
    chosen.update(rules[: max(0, slots // 2 - 1)])
    for i in middle:
        if len(chosen) > slots:
            break
        chosen.add(i)
    return sorted(chosen)


# A session's consecutive summaries list mostly the same requests, and each summary
# tries up to four levels: each request is searched once, not once per level and summary.
@lru_cache(maxsize=4096)
def _sets_rule(text: str) -> bool:
    return _RULE_RE.search(text) is not None or _RULE_ZH_RE.search(text) is not None


def _without_ide_context(text: str) -> str:
    if "</" not in text:
        return text
    rest = _IDE_CONTEXT_RE.sub("", text).strip()
    return rest or text  # nothing but context: keep it, it is all there is
