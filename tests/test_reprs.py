"""The library's result objects print as a line of counts, not their every record."""

from __future__ import annotations

from pathlib import Path

import transcript_tools as tt

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SHORT = 400  # characters: one line a person reads in a REPL


def test_replay_result_session_and_conversation_reprs_are_counts() -> None:
    result = tt.replay_corpus(str(SAMPLES))
    text = repr(result)
    assert len(text) < SHORT, len(text)
    assert text.startswith("<ReplayResult ok: 3 file(s), 3 session(s), 28 turn(s), ")
    assert text.endswith("; 3 session(s) kept>")
    session = next(s for s in result.sessions if s.conversation.session_id == "long_session")
    # long_session: 18 turns, 93 messages, 5 summaries, 1 warning (the fixed cadence)
    assert repr(session) == (
        f"<SessionResult long_session ({session.conversation.path}): 18 turn(s), "
        "93 message(s), 5 summaries, 1 warning(s)>"
    )
    assert repr(session.conversation) == (
        f"<Conversation long_session (openai, {session.conversation.path}): "
        "93 message(s), 0 compaction(s)>"
    )


def test_sweep_eval_inspect_and_diff_reprs_are_counts(tmp_path: Path) -> None:
    sweep = repr(tt.sweep_corpus(str(SAMPLES)))
    assert sweep.startswith("<SweepResult 1 configuration(s) over 3 conversation(s) in 3 file(s)")
    evaluation = repr(tt.eval_corpus(str(SAMPLES)))
    assert evaluation.startswith("<EvalRun 3 file(s), 3 session(s), 5 scored checkpoint(s)")
    inspected = repr(tt.inspect_corpus(str(SAMPLES)))
    assert inspected == "<InspectResult 3 session(s) in 3 file(s), 0 failed>"
    for name in ("a", "b"):
        tt.replay_corpus(str(SAMPLES), out=tmp_path / name)
    diff = repr(tt.diff_outputs(tmp_path / "a", tmp_path / "b"))
    assert diff.endswith(": identical, 0 setting(s) changed>"), diff
    for text in (sweep, evaluation, inspected, diff):
        assert len(text) < SHORT and "\n" not in text, text
