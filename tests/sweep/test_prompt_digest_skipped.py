"""The sweep's engine runs digest no summary prompt (``SessionEngine.digest_prompts``
off: a sha256 pass over every prompt, read by nothing the sweep reports): every record
but the digest is the digesting engine's, and each summary's prompt tokens, read from
the prompts the sweep takes from the requests, are those read from the engine's kept
prompts.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine.config import SummaryConfig
from transcript_tools.engine.drive import drive_conversation
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.requests import SummaryOutcome, SummaryRequest
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.tokens import estimate_text_tokens
from transcript_tools.sweep.driver import _offline_executor
from transcript_tools.sweep.engine_path import engine_for, prompt_tokens

from .test_grid_shortcuts import _conversation, small_window_config, turn_specs


def _run(turns: list[Any], name: str, digest: bool) -> tuple[SessionEngine, list[str]]:
    conv = _conversation(turns)
    cfg = small_window_config(name)
    engine = engine_for(conv, cfg, SummaryConfig(), load_template(None), 3, "offline")
    engine.digest_prompts = digest
    executor = _offline_executor()
    prompts: list[str] = []

    async def execute(request: SummaryRequest, _left: int) -> SummaryOutcome:
        prompts.append(request.prompt)
        return await executor.execute(request)

    asyncio.run(drive_conversation(conv, engine, execute))
    return engine, prompts


@settings(max_examples=30, deadline=None)
@given(turn_specs, st.sampled_from(["seed", "aider", "langchain", "codex"]))
def test_an_engine_that_digests_no_prompt_records_all_else_the_same(
    turns: list[Any], name: str
) -> None:
    digested, _ = _run(turns, name, True)
    plain, prompts = _run(turns, name, False)
    assert plain.decisions == digested.decisions
    assert plain.snapshots == digested.snapshots
    assert plain.prompts == {}
    assert len(plain.summaries) == len(digested.summaries) == len(prompts)
    for mine, theirs, prompt in zip(plain.summaries, digested.summaries, prompts, strict=True):
        assert mine["prompt_sha256"] == ""
        assert {**mine, "prompt_sha256": theirs["prompt_sha256"]} == theirs
        assert digested.prompts[theirs["prompt_sha256"]] == prompt
        # another provider's usage (a cached response): the prompt itself is estimated
        other = {**theirs, "provider": "anthropic", "usage": None}
        kept = digested.prompts[theirs["prompt_sha256"]]
        assert prompt_tokens(other, prompt) == estimate_text_tokens(kept)  # type: ignore[arg-type]
        assert prompt_tokens(other, kept) == estimate_text_tokens(prompt)  # type: ignore[arg-type]
        assert prompt_tokens(mine, prompt) == prompt_tokens(theirs, kept)
