"""The official SDK alone: N chat completions at concurrency J, nothing else.

The floor under ``tsum replay``'s end-to-end figure (bench_replay_e2e.py): the same
number of calls, with the same prompts (``prompts.jsonl`` of the tsum run), through
the same SDK, transport and request path tsum uses (``openai.AsyncOpenAI`` with its
aiohttp client, ``client.post``), but no reading, no checkpoint, no outputs and no
chains: every call is independent. Timed from process start (the SDK's import
included, as in tsum's wall time) to the last answer.

    python benchmarks/sdk_alone.py PORT CALLS JOBS PROMPTS_JSONL
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import asyncio  # noqa: E402
import sys  # noqa: E402

import httpx2  # noqa: E402
import openai  # noqa: E402
import orjson  # noqa: E402


async def main(port: int, calls: int, jobs: int, prompts: list[str]) -> None:
    limits = httpx2.Limits(max_connections=jobs, max_keepalive_connections=jobs)
    client = openai.AsyncOpenAI(
        api_key="sdk-alone",
        base_url=f"http://127.0.0.1:{port}/v1",
        max_retries=0,
        http_client=openai.DefaultAioHttpClient(limits=limits),
    )
    slots = asyncio.Semaphore(jobs)

    async def one(index: int) -> str:
        body = {
            "model": "bench-model",
            "messages": [{"role": "user", "content": prompts[index % len(prompts)]}],
            "max_tokens": 1024,
        }
        async with slots:
            response = await client.post("/chat/completions", body=body, cast_to=httpx2.Response)
        return str(orjson.loads(response.content)["choices"][0]["message"]["content"])

    answers = await asyncio.gather(*(one(i) for i in range(calls)))
    assert len(answers) == calls and all(answers)
    await client.close()


if __name__ == "__main__":
    port, calls, jobs, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(path, "rb") as handle:
        texts = [orjson.loads(line)["text"] for line in handle]
    asyncio.run(main(port, calls, jobs, texts))
    print(f"{time.perf_counter() - STARTED:.4f}")
