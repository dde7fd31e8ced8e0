"""reporter.py: what a run tells its caller, routed to the right function in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from transcript_tools.reporter import (
    QUIET,
    Callbacks,
    Recorder,
    notes_only,
    replay_to,
)

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_callbacks_route_each_kind() -> None:
    seen: list[str] = []
    reporter = Callbacks(
        lambda m: seen.append(f"warn {m}"),
        lambda m: seen.append(f"error {m}"),
        lambda r: seen.append(f"session {r}"),
    )
    reporter.warn("a")
    reporter.error("b")
    reporter.say("c", True)  # no say function: a note goes to warn
    reporter.session("f.jsonl", "R")
    reporter.session(None)  # a parallel part's session: no result to hand over
    assert seen == ["warn a", "error b", "warn c", "session R"]


def test_errors_go_to_warn_unless_an_error_function_is_given() -> None:
    seen: list[str] = []
    Callbacks(seen.append).error("unreadable")
    assert seen == ["unreadable"]


def test_a_recorder_replays_warnings_and_errors_in_order() -> None:
    recorder = Recorder()
    recorder.warn("w1")
    recorder.error("e1")
    recorder.warn("w2")
    seen: list[str] = []
    replay_to(
        Callbacks(lambda m: seen.append("W" + m), lambda m: seen.append("E" + m)), recorder.events
    )
    assert seen == ["Ww1", "Ee1", "Ww2"]


def test_notes_only_keeps_notes_alone() -> None:
    seen: list[str] = []
    inner = Callbacks(seen.append, say=lambda m, important: seen.append(f"{m} {important}"))
    quiet = notes_only(inner)
    quiet.warn("w")
    quiet.error("e")
    quiet.say("round 1", True)
    assert seen == ["round 1 True"]


def test_quiet_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    QUIET.warn("w")
    QUIET.error("e")
    QUIET.say("n", True)
    assert capsys.readouterr() == ("", "")


def test_the_front_door_hands_each_session_to_on_session() -> None:
    import transcript_tools as tt

    done: list[str] = []
    result = tt.replay_corpus(
        [str(SAMPLES / "long_session.jsonl")],
        tt.SummaryConfig(max_context_tokens=20_000),
        dry_run=True,
        on_session=lambda session: done.append(session.conversation.session_id),
    )
    assert done == [s.conversation.session_id for s in result.sessions] == ["long_session"]
