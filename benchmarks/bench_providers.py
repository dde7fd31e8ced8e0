"""Throughput of SummaryExecutor + OpenAIProvider against a local fake server.

A fake OpenAI-compatible server (asyncio, its own process, 127.0.0.1) answers
every chat completion after a fixed latency (200 ms). N summary calls across
many sessions go through the real SDK client at concurrency C with no cache.
Ideal time = N * latency / C; the target is elapsed / ideal <= 1.25.

    python benchmarks/bench_providers.py                 # 1,000 calls, -j 32 (ideal 6.25 s)
    python benchmarks/bench_providers.py --calls 3000 -j 64
    python benchmarks/bench_providers.py --cache         # + cold and warm cache runs

Nothing leaves the machine: the API key variables are removed from this
process, so the fake server never sees a real key.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import tempfile
import time
import urllib.request
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from transcript_tools.engine.requests import SummaryRequest
from transcript_tools.providers.cache import CacheMode, ResponseCache  # noqa: E402
from transcript_tools.providers.executor import SummaryExecutor  # noqa: E402
from transcript_tools.providers.registry import get_provider  # noqa: E402

# ---- the fake server (runs in a child process) -----------------------------------------


def _completion(text: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1700000000,
            "model": "bench-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1500, "completion_tokens": 120, "total_tokens": 1620},
        }
    ).encode()


def _serve(conn: Connection, latency: float) -> None:
    """A minimal HTTP/1.1 keep-alive server: any POST waits `latency`, then answers."""
    # first/last: when the first request arrived and the last answer left (monotonic
    # seconds), so the e2e benchmark can tell the calls' span from process start-up.
    state: dict[str, Any] = {"active": 0, "peak": 0, "requests": 0, "first": None, "last": None}
    summary = "The user asked for X; the assistant decided Y. " * 8

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *lines = head.decode("latin-1").split("\r\n")
                length = 0
                for line in lines:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                if request_line.startswith("GET /stats"):
                    payload = json.dumps(state).encode()
                    if "reset" in request_line:  # /stats?reset: counters start again (e2e cells)
                        state.update(peak=state["active"], requests=0, first=None, last=None)
                else:
                    state["requests"] += 1
                    if state["first"] is None:
                        state["first"] = time.monotonic()
                    state["active"] += 1
                    state["peak"] = max(state["peak"], state["active"])
                    try:
                        await asyncio.sleep(latency)
                    finally:
                        state["active"] -= 1
                        state["last"] = time.monotonic()
                    payload = _completion(summary)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
        conn.send(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _server_stats(port: int, *, reset: bool = False) -> dict[str, Any]:
    query = "?reset" if reset else ""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats{query}", timeout=5) as response:
        return json.loads(response.read())


# ---- the client side -------------------------------------------------------------------


def _requests(calls: int, sessions: int, prompt_chars: int, salt: str) -> list[SummaryRequest]:
    filler = "User: please look at the build log again\n\nAssistant: the test fails in step 3. "
    body = (filler * (prompt_chars // len(filler) + 1))[:prompt_chars]
    return [
        SummaryRequest(
            session_id=f"session-{i % sessions:04d}",
            turn=3 * (i // sessions + 1),
            prompt=f"Summarize ({salt} {i}):\n<messages>\n{body}\n</messages>",
        )
        for i in range(calls)
    ]


async def _run(
    executor: SummaryExecutor, requests: list[SummaryRequest]
) -> tuple[float, float, int]:
    """Elapsed seconds, worst event-loop lag (ms) and failures for one batch."""
    lag = 0.0
    done = asyncio.Event()

    async def ticker() -> None:  # how late a 5 ms sleep wakes up = loop blocked time
        nonlocal lag
        while not done.is_set():
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            lag = max(lag, time.perf_counter() - before - 0.005)

    tick = asyncio.create_task(ticker())
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(executor.execute(r) for r in requests))
    elapsed = time.perf_counter() - started
    done.set()
    await tick
    return elapsed, lag * 1000, sum(1 for o in outcomes if not o.ok)


async def _bench(args: argparse.Namespace, base_url: str) -> None:
    pool = args.pool or args.concurrency
    provider = get_provider("openai", base_url=base_url, model="bench-model", max_connections=pool)
    executor = SummaryExecutor(provider, concurrency=args.concurrency, timeout=30.0)
    await executor.execute(SummaryRequest("warmup", 0, "warm up"))  # client start-up, not timed
    requests = _requests(args.calls, args.sessions, args.prompt_chars, "run")
    elapsed, lag, failed = await _run(executor, requests)
    ideal = args.calls * args.latency / args.concurrency
    ratio = elapsed / ideal
    verdict = "OK" if ratio <= 1.25 else "ABOVE TARGET"
    print(
        f"no cache:   {args.calls} calls, -j {args.concurrency}, pool {pool}, "
        f"{args.latency * 1000:.0f} ms latency: "
        f"elapsed {elapsed:.2f} s, ideal {ideal:.2f} s, ratio {ratio:.3f} "
        f"(target <= 1.25: {verdict}); {args.calls / elapsed:.0f} calls/s; "
        f"max loop lag {lag:.1f} ms; {failed} failed"
    )
    await executor.aclose()

    if args.cache:
        with tempfile.TemporaryDirectory() as tmp:
            cache = ResponseCache(Path(tmp) / "bench.sqlite3")
            cached = SummaryExecutor(
                get_provider(
                    "openai",
                    base_url=base_url,
                    model="bench-model",
                    max_connections=args.concurrency,
                ),
                cache=cache,
                cache_mode=CacheMode.READ_WRITE,
                concurrency=args.concurrency,
                timeout=30.0,
            )
            requests = _requests(args.calls, args.sessions, args.prompt_chars, "cached")
            elapsed, lag, failed = await _run(cached, requests)
            print(
                f"cold cache: elapsed {elapsed:.2f} s, ratio {elapsed / ideal:.3f} "
                f"(every call + a put); max loop lag {lag:.1f} ms; {failed} failed"
            )
            elapsed, lag, failed = await _run(cached, requests)
            print(
                f"warm cache: elapsed {elapsed * 1000:.0f} ms for {args.calls} hits "
                f"({elapsed / args.calls * 1e6:.0f} us per hit, 0 calls); max loop lag {lag:.1f} ms"
            )
            await cached.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("-j", "--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2, help="server latency in seconds")
    parser.add_argument("--sessions", type=int, default=250, help="spread calls over N sessions")
    parser.add_argument("--prompt-chars", type=int, default=6000)
    parser.add_argument(
        "--pool", type=int, default=0, help="HTTP connection pool size (default: = -j)"
    )
    parser.add_argument("--cache", action="store_true", help="also time cold and warm cache runs")
    args = parser.parse_args()

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TSUM_OFFLINE"):
        os.environ.pop(name, None)  # local server only: no real key is ever sent
    parent, child = multiprocessing.get_context("spawn").Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(child, args.latency), daemon=True
    )
    server.start()
    try:
        port = parent.recv()
        asyncio.run(_bench(args, f"http://127.0.0.1:{port}/v1"))
        stats = _server_stats(port)
        print(f"server: {stats['requests']} requests, peak {stats['peak']} concurrent")
    finally:
        server.terminate()
        server.join(timeout=5)


if __name__ == "__main__":
    main()
