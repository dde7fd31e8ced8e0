"""Fake batch APIs of Anthropic and OpenAI on 127.0.0.1, for the real SDK clients.

Serves, on one port: Anthropic ``/v1/messages/batches`` (create, retrieve,
results, cancel) and ``/v1/messages``; OpenAI ``/v1/files`` (multipart upload,
content), ``/v1/batches`` (create, retrieve, cancel) and ``/v1/chat/completions``.
Every answer is a pure function of the prompt (``reply_text``), so a batch run and a
synchronous run against it produce the same summaries. A batch ends ``delay``
seconds after its creation (never while ``hold`` is set); ``fail(prompt)`` names
an error type for requests that must error inside a batch; ``expire`` ends
batches as expired. Counters: ``creates`` (batch ids), ``polls``, ``sync_calls``.

Run standalone (benchmarks, subprocess tests): ``python tests/support/fake_batch_server.py
--delay 2`` prints its URL on stdout and serves until killed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def reply_text(prompt: str) -> str:
    return f"summary {hashlib.sha256(prompt.encode()).hexdigest()[:16]}: {prompt[-40:]!r}"


def prompt_of(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def anthropic_reply(body: dict[str, Any]) -> dict[str, Any]:
    prompt = prompt_of(body)
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "text", "text": reply_text(prompt)}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": len(prompt) // 4 + 1, "output_tokens": 9},
    }


def openai_reply(body: dict[str, Any]) -> dict[str, Any]:
    prompt = prompt_of(body)
    tokens = len(prompt) // 4 + 1
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": reply_text(prompt), "refusal": None},
            }
        ],
        "usage": {"prompt_tokens": tokens, "completion_tokens": 9, "total_tokens": tokens + 9},
    }


@dataclass(slots=True)
class FakeBatch:
    batch_id: str
    api: str  # anthropic | openai
    requests: list[tuple[str, dict[str, Any]]]  # (custom_id, body)
    created: float
    cancelled: bool = False
    input_file_id: str = ""


@dataclass(slots=True)
class _State:
    delay: float
    hold: bool
    expire: bool
    fail: Callable[[str], str | None]
    refuse: int = 0  # answer this many batch creations with 429 first
    refuse_for: float = 0.0  # answer batch creations with 429 + Retry-After this long
    refuse_until: float = 0.0
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    creates: list[str] = field(default_factory=list)
    polls: int = 0
    sync_calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


class FakeBatchServer:
    def __init__(
        self,
        *,
        delay: float = 0.0,
        hold: bool = False,
        expire: bool = False,
        fail: Callable[[str], str | None] = lambda _p: None,
        refuse: int = 0,
        refuse_for: float = 0.0,
        port: int = 0,
    ) -> None:
        self.state = _State(delay, hold, expire, fail, refuse, refuse_for)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._httpd.daemon_threads = True
        self._httpd.request_queue_size = 128
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def creates(self) -> list[str]:
        with self.state.lock:
            return list(self.state.creates)

    @property
    def polls(self) -> int:
        return self.state.polls

    @property
    def sync_calls(self) -> int:
        return self.state.sync_calls

    def release(self) -> None:
        self.state.hold = False

    def __enter__(self) -> FakeBatchServer:
        self.state.refuse_until = time.time() + self.state.refuse_for
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # ---- batch semantics ------------------------------------------------------------

    def ended(self, batch: FakeBatch) -> bool:
        s = self.state
        return batch.cancelled or (not s.hold and time.time() - batch.created >= s.delay)

    def outcome(self, batch: FakeBatch, body: dict[str, Any]) -> str:
        """ok | an error type | expired | canceled"""
        if batch.cancelled:
            return "canceled"
        if self.state.expire:
            return "expired"
        return self.state.fail(prompt_of(body)) or "ok"

    def anthropic_batch(self, batch: FakeBatch) -> dict[str, Any]:
        ended = self.ended(batch)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if not ended:
            counts["processing"] = len(batch.requests)
        else:
            for _cid, body in batch.requests:
                kind = self.outcome(batch, body)
                counts["succeeded" if kind == "ok" else kind if kind in counts else "errored"] += 1
        return {
            "id": batch.batch_id,
            "type": "message_batch",
            "processing_status": "ended"
            if ended
            else ("canceling" if batch.cancelled else "in_progress"),
            "request_counts": counts,
            "created_at": _iso(batch.created),
            "expires_at": _iso(batch.created + 86400),
            "ended_at": _iso(time.time()) if ended else None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{batch.batch_id}/results"
            if ended
            else None,
        }

    def anthropic_results(self, batch: FakeBatch) -> list[dict[str, Any]]:
        out = []
        for cid, body in batch.requests:
            kind = self.outcome(batch, body)
            if kind == "ok":
                result: dict[str, Any] = {"type": "succeeded", "message": anthropic_reply(body)}
            elif kind in ("expired", "canceled"):
                result = {"type": kind}
            else:
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": kind, "message": "x"}},
                }
            out.append({"custom_id": cid, "result": result})
        return out

    def openai_batch(self, batch: FakeBatch) -> dict[str, Any]:
        ended = self.ended(batch)
        status = "in_progress"
        out_id = err_id = None
        completed = failed = 0
        if ended:
            status = (
                "cancelled" if batch.cancelled else "expired" if self.state.expire else "completed"
            )
            ok, bad = self._openai_files(batch)
            completed, failed = len(ok), len(bad)
            with self.state.lock:
                if ok:
                    out_id = f"file-out-{batch.batch_id}"
                    self.state.files[out_id] = b"".join(json.dumps(x).encode() + b"\n" for x in ok)
                if bad:
                    err_id = f"file-err-{batch.batch_id}"
                    self.state.files[err_id] = b"".join(json.dumps(x).encode() + b"\n" for x in bad)
        return {
            "id": batch.batch_id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "created_at": int(batch.created),
            "output_file_id": out_id,
            "error_file_id": err_id,
            "request_counts": {
                "total": len(batch.requests),
                "completed": completed,
                "failed": failed,
            },
        }

    def _openai_files(self, batch: FakeBatch) -> tuple[list[Any], list[Any]]:
        ok, bad = [], []
        for cid, body in batch.requests:
            kind = self.outcome(batch, body)
            if kind == "ok":
                ok.append(
                    {
                        "id": "batch_req_1",
                        "custom_id": cid,
                        "error": None,
                        "response": {
                            "status_code": 200,
                            "request_id": "r",
                            "body": openai_reply(body),
                        },
                    }
                )
            elif kind in ("expired", "canceled"):
                code = "batch_expired" if kind == "expired" else "batch_cancelled"
                bad.append(
                    {
                        "id": "batch_req_1",
                        "custom_id": cid,
                        "response": None,
                        "error": {"code": code, "message": "x"},
                    }
                )
            else:
                bad.append(
                    {
                        "id": "batch_req_1",
                        "custom_id": cid,
                        "error": None,
                        "response": {
                            "status_code": 400,
                            "request_id": "r",
                            "body": {"error": {"type": kind, "code": kind, "message": "x"}},
                        },
                    }
                )
        return ok, bad

    def create(
        self, api: str, requests: list[tuple[str, dict[str, Any]]], file_id: str = ""
    ) -> FakeBatch:
        with self.state.lock:
            n = len(self.state.creates) + 1
            prefix = "msgbatch_" if api == "anthropic" else "batch_"
            batch = FakeBatch(f"{prefix}{n:04d}", api, requests, time.time(), input_file_id=file_id)
            self.state.batches[batch.batch_id] = batch
            self.state.creates.append(batch.batch_id)
        return batch


def _handler(server: FakeBatchServer) -> type[BaseHTTPRequestHandler]:
    state = server.state

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _send(
            self,
            status: int,
            body: Any,
            ctype: str = "application/json",
            headers: tuple[tuple[str, str], ...] = (),
        ) -> None:
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _stream_lines(self, lines: list[bytes]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/binary")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(lines), 200):
                chunk = b"".join(lines[start : start + 200])
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")

        def _not_found(self) -> None:
            self._send(
                404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}}
            )

        def _batch(self, batch_id: str) -> FakeBatch | None:
            with state.lock:
                return state.batches.get(batch_id)

        def do_GET(self) -> None:  # noqa: N802
            parts = self.path.split("?")[0].strip("/").split("/")
            if parts[:3] == ["v1", "messages", "batches"] and len(parts) >= 4:
                batch = self._batch(parts[3])
                if batch is None:
                    return self._not_found()
                if len(parts) == 5 and parts[4] == "results":
                    lines = [
                        json.dumps(x).encode() + b"\n" for x in server.anthropic_results(batch)
                    ]
                    return self._stream_lines(lines)
                state.polls += 1
                return self._send(200, server.anthropic_batch(batch))
            if parts[:2] == ["v1", "batches"] and len(parts) == 3:
                batch = self._batch(parts[2])
                if batch is None:
                    return self._not_found()
                state.polls += 1
                return self._send(200, server.openai_batch(batch))
            if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                with state.lock:
                    data = state.files.get(parts[2])
                if data is None:
                    return self._not_found()
                return self._stream_lines(data.splitlines(keepends=True))
            self._not_found()

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = self.path.split("?")[0].rstrip("/")
            parts = path.strip("/").split("/")
            if path == "/v1/messages":
                state.sync_calls += 1
                return self._send(200, anthropic_reply(json.loads(raw)))
            if path == "/v1/chat/completions":
                state.sync_calls += 1
                return self._send(200, openai_reply(json.loads(raw)))
            left = state.refuse_until - time.time()
            if path in ("/v1/messages/batches", "/v1/batches") and left > 0:
                return self._send(
                    429,
                    {"type": "error", "error": {"type": "rate_limit_error"}},
                    headers=(("retry-after", f"{left:.3f}"),),
                )
            if path in ("/v1/messages/batches", "/v1/batches") and state.refuse > 0:
                state.refuse -= 1
                return self._send(429, {"type": "error", "error": {"type": "rate_limit_error"}})
            if path == "/v1/messages/batches":
                body = json.loads(raw)
                reqs = [(r["custom_id"], r["params"]) for r in body["requests"]]
                return self._send(200, server.anthropic_batch(server.create("anthropic", reqs)))
            if path == "/v1/files":
                data = _multipart_file(self.headers.get("Content-Type", ""), raw)
                with state.lock:
                    file_id = f"file-in-{len(state.files) + 1}"
                    state.files[file_id] = data
                return self._send(
                    200,
                    {
                        "id": file_id,
                        "object": "file",
                        "bytes": len(data),
                        "created_at": int(time.time()),
                        "filename": "in.jsonl",
                        "purpose": "batch",
                        "status": "processed",
                    },
                )
            if path == "/v1/batches":
                body = json.loads(raw)
                with state.lock:
                    data = state.files.get(body["input_file_id"], b"")
                lines = [json.loads(line) for line in data.splitlines() if line.strip()]
                reqs = [(x["custom_id"], x["body"]) for x in lines]
                batch = server.create("openai", reqs, body["input_file_id"])
                return self._send(200, server.openai_batch(batch))
            if len(parts) >= 4 and parts[-1] == "cancel":
                batch = self._batch(parts[-2])
                if batch is None:
                    return self._not_found()
                batch.cancelled = True
                view = server.anthropic_batch if batch.api == "anthropic" else server.openai_batch
                return self._send(200, view(batch))
            self._not_found()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


def _multipart_file(content_type: str, raw: bytes) -> bytes:
    message = BytesParser(policy=email_policy).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True) or b""
    return b""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with FakeBatchServer(delay=args.delay, port=args.port) as server:
        print(server.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
