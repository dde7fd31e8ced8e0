"""Anthropic Messages API through the official SDK (imported only when selected).

The seed's call: one user message = the rendered prompt, no tools,
``max_tokens`` from the request. Retries are ours (``max_retries=0``); every SDK
exception is turned into a sanitized ``ProviderCallError``.
"""

from __future__ import annotations

from typing import Any

from ..engine.requests import SummaryResponse
from ..formats.anthropic_api import usage_from_anthropic
from .registry import register
from .retry import ProviderCallError
from .sdk import SdkProvider

DEFAULT_MODEL = "claude-haiku-4-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
KEY_ENV = "ANTHROPIC_API_KEY"
# The SDK's own variable, resolved here so the cache key sees it.
BASE_URL_ENV = "ANTHROPIC_BASE_URL"


@register
class AnthropicProvider(SdkProvider):
    """Summaries from Claude. The key comes only from ``ANTHROPIC_API_KEY``."""

    name = "anthropic"
    key_env = KEY_ENV
    base_url_env = BASE_URL_ENV  # the SDK's variable: the timeout's default reads it too
    api = "messages"
    path = "/v1/messages"
    DEFAULT_MODEL = DEFAULT_MODEL
    DEFAULT_BASE_URL = DEFAULT_BASE_URL
    sdk_module = "anthropic"
    client_class_name = "AsyncAnthropic"
    base_error_name = "AnthropicError"

    def _body(self, prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
        messages = [{"role": "user", "content": prompt}]
        return {"model": model, "max_tokens": max_tokens, "messages": messages}

    def _response(self, raw: Any, requested: str) -> SummaryResponse:
        return _to_response(raw, requested)


def _to_response(message: Any, requested: str) -> SummaryResponse:
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise ProviderCallError("anthropic: malformed response (no content)")
    stop_reason = getattr(message, "stop_reason", None)
    usage = usage_from_anthropic(getattr(message, "usage", None))  # billed, summary or not
    if stop_reason == "refusal":  # a refusal is a failed summary, never a summary
        raise ProviderCallError("anthropic: the model refused (stop_reason=refusal)", usage=usage)
    # All text blocks joined: the API may split one answer over several blocks.
    text = "".join(
        block.text
        for block in content
        if getattr(block, "type", None) == "text" and isinstance(getattr(block, "text", None), str)
    )
    if not text.strip():
        raise ProviderCallError(
            f"anthropic: empty summary (stop_reason={stop_reason})", usage=usage
        )
    model = getattr(message, "model", None)
    return SummaryResponse(
        text=text,
        model=model if isinstance(model, str) and model else requested,
        usage=usage,
    )
