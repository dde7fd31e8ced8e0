"""OpenAI Chat Completions through the official SDK, and any OpenAI-compatible server.

``base_url`` points it at vLLM, Ollama, llama.cpp, LM Studio, ... Local servers
usually need no key, so with a custom base URL a missing ``OPENAI_API_KEY`` is
replaced by a placeholder; against api.openai.com the key is required. The SDK
module is imported only when this provider is selected.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ..engine.messages import Usage
from ..engine.requests import SummaryResponse
from ..errors import ProviderConfigError
from .registry import register
from .retry import ProviderCallError, public_url
from .sdk import SdkProvider

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_ENV = "OPENAI_API_KEY"
# The SDK's own variable, resolved here so the cache key sees it.
BASE_URL_ENV = "OPENAI_BASE_URL"
PLACEHOLDER_KEY = "not-needed"  # sent to keyless local servers; the SDK insists on some value


@register
class OpenAIProvider(SdkProvider):
    """Summaries from OpenAI or an OpenAI-compatible server."""

    name = "openai"
    key_env = KEY_ENV
    base_url_env = BASE_URL_ENV  # the SDK's variable: the timeout's default reads it too
    api = "chat.completions"
    path = "/chat/completions"
    DEFAULT_MODEL = DEFAULT_MODEL
    DEFAULT_BASE_URL = DEFAULT_BASE_URL
    key_hint = " (a local OpenAI-compatible server needs --base-url, and no key)"
    sdk_module = "openai"
    client_class_name = "AsyncOpenAI"
    base_error_name = "OpenAIError"

    def _key(self, base_url: str, model: str | None, require_key: bool) -> str:
        official = urlsplit(base_url).hostname == "api.openai.com"  # base_url is stripped
        key = super()._key(base_url, model, require_key and official)
        if not model and not official:
            # gpt-4o-mini means nothing to a local server: fail now, not on call 1.
            raise ProviderConfigError(
                f"--model is required with --base-url {public_url(base_url)} "
                "(the name the server serves, e.g. the one in its /v1/models list)"
            )
        # api.openai.com's newer models reject `max_tokens`; compatible servers
        # (older vLLM, llama.cpp, Ollama) may only know `max_tokens`.
        self._tokens_param = "max_completion_tokens" if official else "max_tokens"
        return key or PLACEHOLDER_KEY

    def identity(self, model: str | None) -> dict[str, Any]:
        return {**super().identity(model), "tokens_param": self._tokens_param}

    def _body(self, prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
        messages = [{"role": "user", "content": prompt}]
        return {"model": model, "messages": messages, self._tokens_param: max_tokens}

    def _response(self, raw: Any, requested: str) -> SummaryResponse:
        return _to_response(raw, requested)


def _to_response(completion: Any, requested: str) -> SummaryResponse:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ProviderCallError("openai: malformed response (no choices)")
    choice = choices[0]
    message = getattr(choice, "message", None)
    finish_reason = getattr(choice, "finish_reason", None)
    refusal = getattr(message, "refusal", None)
    usage = _usage(getattr(completion, "usage", None))  # billed, summary or not
    # A refusal is a failed summary, never a summary.
    if isinstance(refusal, str) and refusal.strip():
        raise ProviderCallError("openai: the model refused (message.refusal)", usage=usage)
    if finish_reason == "content_filter":
        raise ProviderCallError(
            "openai: the answer was filtered (finish_reason=content_filter)", usage=usage
        )
    content = getattr(message, "content", None)
    if isinstance(content, list):  # some compatible servers send content parts
        content = "".join(
            part.get("text", "") if isinstance(part, dict) else str(getattr(part, "text", ""))
            for part in content
        )
    if not isinstance(content, str) or not content.strip():
        raise ProviderCallError(
            f"openai: empty summary (finish_reason={finish_reason})", usage=usage
        )
    model = getattr(completion, "model", None)
    return SummaryResponse(
        text=content,
        model=model if isinstance(model, str) and model else requested,
        usage=usage,
    )


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return Usage(
        input_tokens=prompt if isinstance(prompt, int) else 0,
        output_tokens=completion if isinstance(completion, int) else 0,
        cache_read_tokens=cached if isinstance(cached, int) else 0,  # already part of prompt_tokens
    )
