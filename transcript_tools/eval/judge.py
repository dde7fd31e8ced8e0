"""Judged probes (placeholder until step 4)."""

from __future__ import annotations

from typing import Any


def judge_unavailable(provider: str) -> str | None:
    if provider == "offline":
        return "the offline provider cannot judge (it is not a language model): judged probes skipped; the deterministic probes still run"
    return None


class Judge:
    def __init__(self, executor: Any) -> None:
        self.executor = executor
        self.cache_only_missing = 0
