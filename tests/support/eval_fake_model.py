"""A local fake LLM that answers as a model following each prompt would (for eval tests).

Summary prompts: the offline provider's extractive summary of the prompt (a stand-in
for a model following the template), "OK" for a template that asks only for OK, and
the summary without any file path for a template that forbids paths. Judge prompts:
fixed questions, answers copied from the context (the first path of interest, or
"unknown"), grades 5 for an answer equal to its reference and 0 otherwise.
"""

from __future__ import annotations

import asyncio
import json
import re

from tests.support.fake_llm_server import RecordedRequest, Reply, openai_completion
from transcript_tools.providers.offline import OfflineProvider

OK_TEMPLATE = "Reply with the single word OK and nothing else.\n\n{messages}\n"
NO_PATHS_TEMPLATE = "Summarize the conversation. Never mention file names or paths.\n\n{messages}\n"
_PATH_RE = re.compile(r"[\w./-]+\.(?:py|md|csv|json|toml)\b|\b[\w.-]+(?:/[\w.-]+)+")


def _prompt(request: RecordedRequest) -> str:
    return str(request.body["messages"][0]["content"])


def model_reply(request: RecordedRequest) -> Reply:
    prompt = _prompt(request)
    if prompt.startswith("You are preparing an exam"):
        questions = [
            {"kind": "recall", "question": "Which file held the original bug?"},
            {"kind": "artifact", "question": "Which files changed?"},
            {"kind": "continuation", "question": "What is the next step?"},
            {"kind": "decision", "question": "What was decided?"},
        ]
        text = json.dumps(questions)
    elif prompt.startswith("Answer each question"):
        context = prompt.split("<context>", 1)[1].split("</context>", 1)[0]
        paths = _PATH_RE.findall(context)
        answer = paths[0] if paths else "unknown"
        text = json.dumps(
            [
                {"kind": k, "answer": answer}
                for k in ("recall", "artifact", "continuation", "decision")
            ]
        )
    elif prompt.startswith("Grade each"):
        items = json.loads(prompt.rsplit("\n\n", 1)[1])
        text = json.dumps(
            [
                {"kind": i["kind"], "grade": 5 if i["answer"] == i["reference"] != "unknown" else 0}
                for i in items
            ]
        )
    elif prompt.startswith("Reply with the single word OK"):
        text = "OK"
    else:
        text = asyncio.run(OfflineProvider().complete(prompt, None, 1024)).text
        if prompt.startswith("Summarize the conversation. Never mention file"):
            text = _PATH_RE.sub("(a file)", text)
    return Reply(
        body=openai_completion(
            text, prompt_tokens=len(prompt) // 4, completion_tokens=len(text) // 4
        )
    )
