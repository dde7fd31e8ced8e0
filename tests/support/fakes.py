"""A scripted fake provider (one level above the SDKs) and helpers to drive the engine."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from transcript_tools.engine.messages import AssistantMessage, Message, Usage, UserMessage
from transcript_tools.engine.requests import SummaryOutcome, SummaryResponse
from transcript_tools.engine.session import SessionEngine
from transcript_tools.errors import ProviderError


@dataclass
class FakeProvider:
    """Replays queued replies: a string is a summary, an Exception is raised. Records prompts."""

    replies: list[Any] = field(default_factory=list)
    default: str | None = "summary"
    name: str = "fake"
    key_env: str | None = None
    prompts: list[str] = field(default_factory=list)

    @property
    def default_model(self) -> str:
        return "fake-model"

    def identity(self, model: str | None) -> dict[str, Any]:
        return {"provider": self.name, "model": model or self.default_model}

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        self.prompts.append(prompt)
        reply = self.replies.pop(0) if self.replies else self.default
        if isinstance(reply, Exception):
            raise reply
        if reply is None:
            raise ProviderError("no scripted reply")
        return SummaryResponse(
            reply, model or self.default_model, Usage(len(prompt) // 4, len(reply) // 4)
        )


DEFAULT_USAGE = Usage(10, 5)


def turn(text: str, reply: str = "ok", usage: Usage | None = DEFAULT_USAGE) -> list[Message]:
    return [UserMessage.text(text), AssistantMessage.text(reply, usage)]


def drive(
    engine: SessionEngine,
    turns: Iterable[list[Message]],
    provider: FakeProvider,
    path: str = "sync",
) -> None:
    """Feed turns through one of the two paths, executing requests with the provider."""
    for messages in turns:
        if path == "sync":
            request = engine.submit_turn(messages)
        else:
            engine.submit_turn_stream(messages)
            request = engine.finalize_turn()
        if request is None:
            continue
        try:
            response = asyncio.run(
                provider.complete(request.prompt, request.model, request.max_tokens)
            )
            outcome = SummaryOutcome(response, attempts=1)
        except ProviderError as exc:
            outcome = SummaryOutcome(None, error=str(exc), attempts=1)
        engine.complete_summary(outcome)


class CallCounter:
    """Counts the calls of ``module.name`` (monkeypatched for the test), still calling it."""

    def __init__(self, monkeypatch: Any, module: Any, name: str) -> None:
        self.calls = 0
        real = getattr(module, name)

        def counting(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)
