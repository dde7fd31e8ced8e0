"""Judged probes: questions about the replaced part, answered from the next view only.

Per checkpoint, four calls through the provider layer (executor + response cache, so a
rerun is free and ``--cache-only`` is deterministic):

1. questions: from the replaced part, one question of each kind — recall (the original
   problem or error), artifact (which files changed and how), continuation (the next
   step), decision (what was decided, and why);
2. reference answers, from the full history up to the checkpoint;
3. answers from the next view only: the summary plus the kept turns;
4. grades, 0-5, of each answer against its reference.

Every prompt is fixed text plus the conversation (no clock, no randomness), so the
same checkpoint makes the same requests. Replies are parsed leniently (the first JSON
array in the text); an unparseable reply is recorded as an error for that checkpoint.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..engine.formatting import format_messages_as_text
from ..engine.requests import SummaryRequest
from ..providers.executor import SummaryExecutor
from .checkpoints import SummaryReplacement
from .score import ConversationProbes

KINDS = ("recall", "artifact", "continuation", "decision")
JUDGE_MAX_TOKENS = 1024
_ARRAY_RE = re.compile(r"\[.*\]", re.DOTALL)

QUESTIONS_PROMPT = """You are preparing an exam about the EARLY part of a conversation between a user and an AI agent; the agent will continue the work without seeing this part again.
Write exactly four questions that the agent must be able to answer to carry on, one of each kind:
- recall: what was the original problem or error?
- artifact: which files (or other artifacts) changed, and how?
- continuation: what is the next step?
- decision: what was decided, and why?
Reply with JSON only: [{"kind": "recall", "question": "..."}, {"kind": "artifact", "question": "..."}, {"kind": "continuation", "question": "..."}, {"kind": "decision", "question": "..."}]

<conversation>
%s
</conversation>"""

ANSWER_PROMPT = """Answer each question using ONLY the context below. If the context does not contain the answer, answer "unknown".
Reply with JSON only: [{"kind": "...", "answer": "..."}] in the order of the questions.

<context>
%s
</context>

Questions:
%s"""

GRADE_PROMPT = """Grade each candidate answer against its reference answer: 5 = same facts, 0 = wrong, missing or "unknown"; use the whole scale.
Reply with JSON only: [{"kind": "...", "grade": 0}] in the order given.

%s"""


def judge_unavailable(provider: str) -> str | None:
    """Why judged probes cannot run with this provider, or None."""
    if provider == "offline":
        return (
            "the offline provider cannot judge (it is not a language model): judged probes "
            "skipped; the deterministic probes still run (use --provider openai or anthropic)"
        )
    return None


def parse_array(text: str) -> list[dict[str, Any]] | None:
    """The first JSON array of objects in ``text`` (fenced or not), or None."""
    match = _ARRAY_RE.search(text)
    if match is None:
        return None
    try:
        value = orjson.loads(match.group())
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return None
    return value


class Judge:
    """Runs the four judged calls per checkpoint through one executor."""

    def __init__(self, executor: SummaryExecutor, *, max_chars: int = 30_000) -> None:
        self.executor = executor
        self.max_chars = max_chars
        self.checkpoints = 0
        self.errors = 0
        self.cache_only_missing = 0
        self.grades: dict[str, list[int]] = {}

    async def _call(self, cp: SummaryReplacement, prompt: str) -> list[dict[str, Any]] | str:
        request = SummaryRequest(cp.session, cp.turn, prompt, None, JUDGE_MAX_TOKENS)
        outcome = await self.executor.execute(request)
        if outcome.response is None:
            if "--cache-only" in (outcome.error or ""):
                self.cache_only_missing += 1
            return outcome.error or "no response"
        parsed = parse_array(outcome.response.text)
        return parsed if parsed is not None else "unparseable reply: " + outcome.response.text[:80]

    def _text(self, probes: ConversationProbes, start: int, end: int) -> str:
        messages = list(probes.messages[start:end])
        return format_messages_as_text(messages, probes.max_tool_result_chars, self.max_chars)

    async def judge(self, cp: SummaryReplacement, probes: ConversationProbes) -> dict[str, Any]:
        self.checkpoints += 1
        replaced = self._text(probes, *cp.replaced)
        full = self._text(probes, cp.replaced[0], cp.kept[1])
        kept = self._text(probes, *cp.kept)
        view = f"[summary of the earlier conversation] {cp.summary}" + (
            f"\n\n{kept}" if kept else ""
        )
        result: dict[str, Any] = {"questions": [], "error": None}
        questions = await self._call(cp, QUESTIONS_PROMPT % replaced)
        if isinstance(questions, str):
            return self._fail(result, questions)
        items: list[dict[str, Any]] = [
            {"kind": str(q.get("kind")), "question": str(q.get("question") or "")}
            for q in questions
            if q.get("kind") in KINDS and q.get("question")
        ][: len(KINDS)]
        if not items:
            return self._fail(result, "no questions of a known kind")
        listing = orjson.dumps(items).decode()
        reference = await self._call(cp, ANSWER_PROMPT % (full, listing))
        answers = await self._call(cp, ANSWER_PROMPT % (view, listing))
        for name, got in (("reference", reference), ("answers", answers)):
            if isinstance(got, str):
                return self._fail(result, f"{name}: {got}")
        assert not isinstance(reference, str) and not isinstance(answers, str)
        for i, item in enumerate(items):
            item["reference"] = str(reference[i].get("answer", "")) if i < len(reference) else ""
            item["answer"] = str(answers[i].get("answer", "")) if i < len(answers) else ""
        grades = await self._call(cp, GRADE_PROMPT % orjson.dumps(items).decode())
        if isinstance(grades, str):
            return self._fail(result, f"grades: {grades}")
        for i, item in enumerate(items):
            grade: Any = grades[i].get("grade") if i < len(grades) else None  # JSON; checked by ok
            ok = isinstance(grade, int | float) and not isinstance(grade, bool) and 0 <= grade <= 5
            item["grade"] = int(grade) if ok else None
            if ok:
                pair = self.grades.setdefault(item["kind"], [0, 0])
                pair[0] += int(grade)
                pair[1] += 1
        result["questions"] = items
        return result

    def _fail(self, result: dict[str, Any], error: str) -> dict[str, Any]:
        self.errors += 1
        result["error"] = error
        return result

    def summary(self) -> dict[str, Any]:
        stats = self.executor.stats
        return {
            "checkpoints": self.checkpoints,
            "errors": self.errors,
            "requests": stats.requests,
            "api_calls": stats.calls,
            "cache_hits": stats.cache_hits,
            "cache_only_missing": self.cache_only_missing,
            "mean_grade": {k: round(s / n, 2) for k, (s, n) in sorted(self.grades.items())},
        }
