#!/usr/bin/env python3
"""tsum against LangChain's SummarizationMiddleware on the same 3,000-turn file.

    pip install langchain            # not a tsum dependency; this script skips without it
    python benchmarks/bench_langchain.py [--repeat 5] [--file PATH]

Both trigger on the current context at the same threshold: tsum's ``--measure current``
at its defaults (``max_context_tokens`` 32,000 x ratio 0.75 = 24,000 tokens, debounce 3
turns, focused view keeping 3 turns) against ``SummarizationMiddleware(trigger=("tokens",
24000))`` (LangChain's default ``keep``: the last 20 messages).

- **LangChain**, in-process, imports excluded: the file is converted to LangChain
  messages first (``SystemMessage`` / ``HumanMessage`` / ``AIMessage`` with its tool
  calls and recorded usage / ``ToolMessage``, every message with an id, as a LangGraph
  agent's state holds them; timed, as tsum's reading of the file is, and shown
  apart). Then the messages are appended to
  the state in order and ``before_model`` runs where an agent runs it: before every
  model call, i.e. before each AI message of the file (``--langchain-per turn``: once
  per turn instead, as tsum's checkpoint does, which is fewer calls); when it
  summarizes, the state becomes what its update says (the summary message and the kept
  messages). The summary comes from a fake chat model (``FakeListChatModel``: a fixed
  text, instantly), through LangChain's own call path.
- **tsum**, as a whole process (wall time: interpreter start-up, imports, reading the
  file, the replay, the offline extractive summarizer, writing every output file; run
  as ``run.py`` runs it: the installed command, with bytecode caches):
  ``tsum replay FILE --measure current --out DIR --silent``.

The two are interleaved, ``--repeat`` times each (medians); the ratio is tsum / LangChain.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402  (the suite's corpora and its way of running tsum)

THRESHOLD = 24_000  # tsum's default trigger: 32,000 x 0.75
SUMMARY = "Summary: the user asked for several operations tasks; tools ran; nothing pending."


def default_file() -> Path:
    run.WORK.mkdir(parents=True, exist_ok=True)
    return next(run.build_corpus("t3000", 1, 3000).glob("*.jsonl"))


def to_langchain(path: Path) -> list[list[Any]]:
    """The file's turns as LangChain messages: each turn starts at a user message."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    turns: list[list[Any]] = [[]]
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        record = json.loads(line)
        role, content, mid = record["role"], record.get("content") or "", f"m{number}"
        if role == "system":
            message: Any = SystemMessage(content, id=mid)
        elif role == "user":
            message = HumanMessage(content, id=mid)
            if turns[-1] and any(isinstance(m, HumanMessage) for m in turns[-1]):
                turns.append([])
        elif role == "assistant":
            calls = [
                {
                    "name": call["function"]["name"],
                    "args": json.loads(call["function"]["arguments"] or "{}"),
                    "id": call["id"],
                }
                for call in record.get("tool_calls") or []
            ]
            usage = record.get("usage")
            metadata = None
            if usage:
                metadata = {
                    "input_tokens": usage["prompt_tokens"],
                    "output_tokens": usage["completion_tokens"],
                    "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
                }
            message = AIMessage(
                content,
                tool_calls=calls,
                usage_metadata=metadata,
                response_metadata={"model_provider": "openai"},
                id=mid,
            )
        elif role == "tool":
            message = ToolMessage(content, tool_call_id=record["tool_call_id"], id=mid)
        else:
            continue
        turns[-1].append(message)
    return [turn for turn in turns if turn]


def run_langchain(path: Path, per: str) -> tuple[float, float, int]:
    """(seconds converting, seconds replaying, summaries) of one replay through the
    middleware: ``before_model`` before every model call (``per="call"``, as an agent
    runs it) or once per turn."""
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages import AIMessage

    middleware = SummarizationMiddleware(
        FakeListChatModel(responses=[SUMMARY]), trigger=("tokens", THRESHOLD)
    )
    started = time.perf_counter()
    turns = to_langchain(path)
    convert = time.perf_counter() - started
    if per == "call":  # the state before each AI message, and what follows it
        steps: list[list[Any]] = [[]]
        for message in (m for turn in turns for m in turn):
            if isinstance(message, AIMessage):
                steps.append([])
            steps[-1].append(message)
    else:
        steps = turns
    started = time.perf_counter()
    messages: list[Any] = []
    summaries = 0
    for step in steps:
        messages = messages + step
        update = middleware.before_model({"messages": messages}, None)  # type: ignore[arg-type]
        if update is not None:
            summaries += 1
            messages = update["messages"][1:]  # after RemoveMessage(REMOVE_ALL_MESSAGES)
    return convert, time.perf_counter() - started, summaries


def run_tsum(path: Path, out: Path) -> tuple[float, int]:
    """(wall seconds, summaries) of one ``tsum replay --measure current`` process."""
    argv = [*run.tsum_command(), "replay", str(path), "--measure", "current", "--out", str(out)]
    started = time.perf_counter()
    subprocess.run([*argv, "--silent"], check=True, stdout=subprocess.DEVNULL, env=run.child_env())
    seconds = time.perf_counter() - started
    lines = (out / "summaries.jsonl").read_text(encoding="utf-8").splitlines()
    return seconds, sum(1 for line in lines if json.loads(line)["status"] == "ok")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--file", type=Path, help="the conversation (default: t3000)")
    parser.add_argument(
        "--langchain-per",
        choices=["call", "turn"],
        default="call",
        help="before_model before every model call (as an agent runs it; default) or per turn",
    )
    args = parser.parse_args()
    try:
        import langchain.agents.middleware  # noqa: F401  (imports are not timed)
        import langchain_core.language_models.fake_chat_models  # noqa: F401
    except ImportError:
        print(
            "bench_langchain: skipped: langchain is not installed "
            "(pip install langchain; it is not a tsum dependency)"
        )
        return 0
    path = args.file or default_file()
    lang: list[tuple[float, float]] = []  # (converting, replaying)
    tsum: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        run_langchain(path, args.langchain_per)  # warm-up (page cache, lazy imports)
        run_tsum(path, out)
        for _ in range(args.repeat):
            convert, replay, lang_summaries = run_langchain(path, args.langchain_per)
            lang.append((convert, replay))
            seconds, tsum_summaries = run_tsum(path, out)
            tsum.append(seconds)
    t = statistics.median(tsum)
    lc = statistics.median(c + r for c, r in lang)
    convert = statistics.median(c for c, _ in lang)
    print(f"file: {path}; trigger: {THRESHOLD} tokens of current context")
    print(
        f"LangChain SummarizationMiddleware (before every model {args.langchain_per}), "
        f"in-process: {lc:.3f} s median, of which {convert:.3f} s converting the file to "
        f"messages ({lang_summaries} summaries)"
    )
    print(
        f"tsum replay --measure current, whole process: {t:.3f} s median "
        f"({tsum_summaries} summaries)"
    )
    print(
        f"tsum / LangChain: {t / lc:.2f}x (goal <= 0.2x); without the conversion: "
        f"{t / (lc - convert):.2f}x"
    )
    print(
        f"runs (s): tsum {[round(x, 3) for x in tsum]}, LangChain {[round(c + r, 3) for c, r in lang]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
