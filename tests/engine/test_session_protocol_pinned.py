"""The session engine's request protocol and the prompt it builds (``engine/session.py``),
pinned against one-point edits (a single-point mutation run, docs/testing.md, found these
unpinned): the stream path's unit count, a summary taken back with none pending, a policy
summary that would replace nothing, the 30K cut's prompt, and the previous summary in the
next prompt.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.support.fakes import FakeProvider, drive, turn
from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.messages import Usage
from transcript_tools.engine.policy_engine import with_policy
from transcript_tools.engine.policy_toml import preset
from transcript_tools.engine.requests import SummaryOutcome, SummaryResponse
from transcript_tools.engine.session import SessionEngine
from transcript_tools.errors import TsumError

EVERY_TURN = {"max_context_tokens": 20, "trigger_token_ratio": 0.5, "debounce_turns": 1}


def test_the_stream_path_counts_one_unit_per_finalized_turn() -> None:
    engine = SessionEngine("s")
    drive(engine, [turn("a"), turn("b"), turn("c")], FakeProvider(), path="stream")
    assert engine.stream_units == 3
    drive(engine, [turn("d")], FakeProvider())  # the sync path counts none
    assert engine.stream_units == 3


def test_a_summary_taken_back_with_none_pending_is_an_error() -> None:
    """Nothing pending, or a unit pending with no request (fails on ``None and ...``:
    the engine would apply an outcome it never asked for)."""
    outcome = SummaryOutcome(SummaryResponse("text", "m"))
    engine = SessionEngine("s")
    with pytest.raises(TsumError, match="without a pending summary request"):
        engine.complete_summary(outcome)
    engine.submit_turn_stream(turn("a"))
    with pytest.raises(TsumError, match="without a pending summary request"):
        engine.complete_summary(outcome)


def test_a_policy_summary_that_would_replace_nothing_is_skipped_empty() -> None:
    """The seed's rule keeping the last 50 messages instead (a policy, not the seed's
    path), firing every turn: in the first three turns nothing is dropped and there is no summary yet to replace, so each
    checkpoint is skipped_empty and no request is made (fails on ``or`` -> ``and``)."""
    seed = preset("seed")
    trigger, keep = (
        replace(seed.trigger, debounce=0),
        replace(seed.keep, kind="messages", messages=50),
    )
    policy = replace(seed, trigger=trigger, keep=keep)
    settings = with_policy(ReplaySettings(summary=SummaryConfig(max_context_tokens=100)), policy)
    engine = SessionEngine("s", settings)
    provider = FakeProvider()
    drive(engine, [turn(f"t{i}", usage=Usage(1_000, 10)) for i in range(3)], provider)
    assert [d["decision"] for d in engine.decisions] == ["skipped_empty"] * 3
    assert provider.prompts == []


def test_a_history_past_the_transcript_cap_is_sent_as_its_one_cut_block() -> None:
    """Over ``max_transcript_chars`` the formatted history is cut to one block, and the
    prompt holds that block (fails when another block is taken: there is none)."""
    cfg = SummaryConfig(**EVERY_TURN, max_transcript_chars=60)
    engine = SessionEngine("s", ReplaySettings(summary=cfg))
    engine.submit_turn(turn("x" * 40, "y" * 40))
    request = engine.submit_turn(turn("z" * 40, "w" * 100))
    assert request is not None and request.formatted_cut
    assert len(request.formatted) == 1
    assert request.formatted[0] in request.prompt


def test_the_next_prompt_carries_the_previous_summary_and_the_first_an_empty_one() -> None:
    cfg = SummaryConfig(**EVERY_TURN, summary_prompt="Prev:[{{ previous_summary }}] {{ messages }}")
    engine = SessionEngine("s", ReplaySettings(summary=cfg))
    provider = FakeProvider(replies=["first", "second"])
    drive(engine, [turn("a"), turn("b"), turn("c")], provider)
    assert provider.prompts[0].startswith("Prev:[] ")
    assert provider.prompts[1].startswith("Prev:[first] ")
