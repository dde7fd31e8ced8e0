"""A scripted LLM HTTP server on 127.0.0.1 for testing the real SDK clients.

The anthropic and openai SDKs send through httpx2, which respx / pytest-httpx do
not intercept, so the tests talk HTTP to this stdlib server instead. It serves
both ``POST /v1/messages`` (Anthropic) and ``POST /v1/chat/completions``
(OpenAI), replays queued ``Reply`` objects in order (then a default reply), and
records every request so tests can count calls and inspect what was sent.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted HTTP response. ``body`` may be a JSON value or raw bytes."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (timeouts, latency)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # decoded JSON, or the raw text if it was not JSON


def openai_completion(
    text: str | None,
    *,
    model: str = "gpt-test",
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    refusal: str | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": refusal},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def anthropic_message(
    texts: Iterable[str] = ("summary",),
    *,
    model: str = "claude-test",
    input_tokens: int = 13,
    output_tokens: int = 5,
    stop_reason: str = "end_turn",
) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": t} for t in texts],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def error_body(kind: str, message: str) -> dict[str, Any]:
    """An error body shaped like both APIs' (``{"error": {"type", "message"}}``)."""
    return {"type": "error", "error": {"type": kind, "message": message}}


def default_reply(request: RecordedRequest) -> Reply:
    """A successful answer in the flavour the request's path asks for."""
    if request.path.endswith("/messages"):
        return Reply(body=anthropic_message(["a summary"]))
    return Reply(body=openai_completion("a summary"))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the stdlib's 5 drops bursts of concurrent connects


class FakeLLMServer:
    """``with FakeLLMServer([Reply(...), ...]) as server:`` then point ``base_url`` at it."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Callable[[RecordedRequest], Reply] = default_reply,
    ) -> None:
        self._replies: deque[Reply] = deque(replies)
        self._default = default
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self._httpd = _Server(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url  # the SDK appends /v1/messages

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def __enter__(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # wakes handlers still sleeping in a delay
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._replies:
                return self._replies.popleft()
        return self._default(request)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like real APIs

            def do_POST(self) -> None:  # noqa: N802 (stdlib name)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                request = RecordedRequest(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                reply = server._next_reply(request)
                if reply.delay and server._stopping.wait(reply.delay):
                    return
                if isinstance(reply.body, bytes | str):
                    payload = reply.body.encode() if isinstance(reply.body, str) else reply.body
                else:
                    payload = json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

        return Handler


SECRET_PREFIXES = ("ANTHROPIC_", "OPENAI_", "TSUM_")


def isolate_env(monkeypatch: Any, home: Any) -> None:
    """STYLE "Tests": no API keys, no TSUM_* settings, home in tmp, kill switch on."""
    import os

    for name in list(os.environ):
        if name.startswith(SECRET_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TSUM_HOME", str(home))
    monkeypatch.setenv("TSUM_OFFLINE", "1")
