"""The one retry policy for summary calls, and the sanitized errors it classifies.

The SDKs' own retries are switched off (``max_retries=0``) so there is exactly
one place that decides: retry 408 / 409 / 429 / 5xx, connection errors and
timeouts; honour ``Retry-After`` (capped); otherwise back off exponentially
with jitter. The clock and randomness are injectable so tests never sleep long.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from ..engine.config import DEFAULT_MAX_ATTEMPTS, DEFAULT_TIMEOUT_S, LOCAL_TIMEOUT_S
from ..engine.messages import Usage
from ..errors import ProviderError

# Statuses worth another attempt: the SDKs' own list (request timeout, lock
# conflict, rate limit, server errors incl. Anthropic's 529 "overloaded").
RETRYABLE_STATUSES = frozenset({408, 409, 429})
# Statuses that will fail for every request of the run (bad key, no access,
# wrong model or base URL): the executor stops calling after the first one.
FATAL_STATUSES = frozenset({401, 403, 404})

_REASONS = {
    400: "bad request",
    401: "authentication failed (check the API key)",
    402: "payment required",
    403: "permission denied",
    404: "not found (check --model and --base-url)",
    408: "request timeout",
    409: "conflict",
    413: "request too large",
    422: "unprocessable request",
    429: "rate limited",
    500: "internal server error",
    502: "bad gateway",
    503: "service unavailable",
    504: "gateway timeout",
    529: "overloaded",
}


class ProviderCallError(ProviderError):
    """A failed call, already sanitized: status + short reason, never keys, headers or prompts.

    ``retry_after`` carries the server's ``Retry-After`` (seconds); ``fatal``
    marks errors that every later call would repeat (auth, kill switch); ``usage`` is
    what an answer that is no summary (a refusal, an empty answer) was billed.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        fatal: bool = False,
        usage: Usage | None = None,
    ) -> None:
        super().__init__(message, retryable=retryable, status=status)
        self.retry_after = retry_after
        self.fatal = fatal
        self.usage = usage


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or status >= 500


_CODE_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,48}$")


# A prompt longer than the model's context, by the body's error code or type: OpenAI's
# code, llama.cpp's server's type. Other servers say it only in words (vLLM, LM Studio:
# "maximum context length"; Anthropic: "prompt is too long").
CONTEXT_OVERFLOW_IDS = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_CONTEXT_OVERFLOW_TEXT = re.compile(r"context (length|size|window)|prompt is too long", re.I)
CONTEXT_OVERFLOW_HINT = (
    "the prompt is longer than the model's context: lower --max-transcript-chars "
    "(or give the server a larger context)"
)


def is_context_overflow(status: int, identifiers: tuple[object, ...], text: object) -> bool:
    """Whether an HTTP error says the prompt does not fit the model's context.

    ``identifiers`` are the body's error code and type, ``text`` its message: read here,
    never shown (it may quote the prompt)."""
    if status not in (400, 413):
        return False
    if any(isinstance(i, str) and i in CONTEXT_OVERFLOW_IDS for i in identifiers):
        return True
    return isinstance(text, str) and _CONTEXT_OVERFLOW_TEXT.search(text) is not None


def status_error(
    provider: str,
    status: int,
    *,
    headers: Mapping[str, str] | None = None,
    error_type: object = None,
    error_code: object = None,
    detail: object = None,
    now: float | None = None,
) -> ProviderCallError:
    """A sanitized error for an HTTP status from the API.

    Only the status, a fixed reason phrase and the body's error *type* (a short
    identifier such as ``rate_limit_error``) are kept: error messages may echo
    the key (OpenAI's 401 does) or pieces of the prompt. ``error_code`` and ``detail``
    (the body's code and message) are only read, to recognise a context overflow,
    which gets a fixed hint naming the setting that shortens the prompt.
    """
    reason = _REASONS.get(status, "server error" if status >= 500 else "HTTP error")
    kind = f" ({error_type})" if isinstance(error_type, str) and _CODE_RE.match(error_type) else ""
    if is_context_overflow(status, (error_type, error_code), detail):
        kind += f": {CONTEXT_OVERFLOW_HINT}"
    retry_after = parse_retry_after(headers, now=now) if headers is not None else None
    return ProviderCallError(
        f"{provider}: HTTP {status} {reason}{kind}",
        retryable=is_retryable_status(status),
        status=status,
        retry_after=retry_after,
        fatal=status in FATAL_STATUSES,
    )


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = -1.0
        if value >= 0:
            return value
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        # An HTTP date is rare here (servers send seconds), and email.utils costs ~10 ms
        # of every run's start-up: imported only for one.
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:  # Python < 3.10 returned None
            return None  # type: ignore[unreachable]
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if seconds == seconds else None  # NaN guard


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry one summary call.

    Attempt ``n`` (1-based) that fails retryably waits ``Retry-After`` when the
    server sent one (capped at ``retry_after_cap``, plus up to 10% jitter so a
    burst of 429s does not come back in lockstep), else an "equal jitter"
    exponential backoff: half of ``min(max_delay, base_delay * 2**(n-1))`` fixed,
    the other half random.
    """

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    base_delay: float = 0.5
    max_delay: float = 20.0
    retry_after_cap: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0 or self.retry_after_cap < 0:
            raise ValueError("delays must not be negative")

    def should_retry(self, error: ProviderError, attempt: int) -> bool:
        return error.retryable and attempt < self.max_attempts

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            wait = min(retry_after, self.retry_after_cap)
            return min(self.retry_after_cap, wait * (1.0 + 0.1 * rng.random()))
        ceiling = min(self.max_delay, self.base_delay * (2.0 ** (attempt - 1)))
        return ceiling / 2.0 + rng.uniform(0.0, ceiling / 2.0)


KILL_SWITCH_ENV = "TSUM_OFFLINE"


def kill_switch_on() -> bool:
    """``TSUM_OFFLINE=1`` (tests set it): network providers refuse before sending."""
    return os.environ.get(KILL_SWITCH_ENV, "").strip().lower() not in ("", "0", "false", "no")


def refuse_if_offline(provider: str) -> None:
    if kill_switch_on():
        raise ProviderCallError(
            f"{provider}: network calls are disabled ({KILL_SWITCH_ENV} is set); "
            "unset it, or use --provider offline",
            fatal=True,
        )


def public_url(url: str) -> str:
    """A base URL without userinfo, query or fragment (they may carry credentials).

    Used in cache identities and error messages; the SDK still gets the full URL.
    """
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal: urlsplit dropped the brackets
        host = f"[{host}]"
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme.lower(), host.lower(), parts.path.rstrip("/"), "", ""))


def is_local_url(url: str | None) -> bool:
    """Whether ``url`` points at this machine: localhost, 127.0.0.0/8 or ::1."""
    if not url:
        return False
    host = (urlsplit(url.strip()).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    import ipaddress  # only when a base URL is given

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name, not an address
        return False


def default_timeout(base_url: str | None) -> float:
    """The per-attempt timeout when none is given: longer for a server on this machine."""
    return LOCAL_TIMEOUT_S if is_local_url(base_url) else DEFAULT_TIMEOUT_S
