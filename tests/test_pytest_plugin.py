"""The pytest plugin (transcript_tools/pytest_plugin.py): fixtures, marker, entry point."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_registered_as_a_pytest11_entry_point() -> None:
    (point,) = [e for e in entry_points(group="pytest11") if e.name == "tsum"]
    assert point.value == "transcript_tools.pytest_plugin"


def test_fixtures_and_marker_in_a_projects_own_suite(pytester: pytest.Pytester) -> None:
    log = SAMPLES / "long_session.jsonl"
    pytester.makepyfile(
        f"""
        import pytest

        LOG = {str(log)!r}

        def test_schedule_and_cost_under_the_seeds_defaults(tsum):
            replay = tsum.replay(LOG)
            # threshold 24,000 = 32,000 x 0.75: over it from turn 5, then every 3 turns
            assert tsum.schedule(replay) == {{"long_session": [5, 8, 11, 14, 17]}}
            tokens_in, tokens_out = tsum.summary_tokens(replay)
            stats = replay.executor
            assert (tokens_in, tokens_out) == (
                stats["summary_input_tokens"], stats["summary_output_tokens"]
            )
            assert tokens_out > 0

        @pytest.mark.tsum(max_context_tokens=200_000)
        def test_the_marker_sets_the_window(tsum):
            # 121,789 tokens at most: never over 150,000
            assert tsum.schedule(tsum.replay(LOG)) == {{"long_session": []}}

        @pytest.mark.tsum(max_context_tokens=200_000)
        def test_a_call_overrides_the_marker(tsum):
            replay = tsum.replay(LOG, max_context_tokens=32_000)
            assert tsum.schedule(replay)["long_session"][0] == 5

        def test_recall(tsum):
            scores = tsum.eval(LOG)
            aggregate = scores.result.aggregates["zh"].as_json()["recall"]["summary"]
            assert tsum.recall(scores) == aggregate["artifact"]
            assert tsum.recall(scores, "path") == aggregate["path"]
            assert 0 < tsum.recall(scores) <= 1

        @pytest.mark.tsum(max_context_tokens=200_000)
        def test_nothing_scored_is_zero(tsum):
            assert tsum.recall(tsum.eval(LOG)) == 0.0

        def test_a_failing_gate_fails_the_test(tsum):
            assert tsum.schedule(tsum.replay(LOG))["long_session"] == []
        """
    )
    result = pytester.runpytest("-q")  # loaded through its entry point
    result.assert_outcomes(passed=5, failed=1)
    assert "test_a_failing_gate_fails_the_test" in result.stdout.str()
    markers = pytester.runpytest("--markers").stdout.str()
    assert "@pytest.mark.tsum(**options)" in markers


def test_the_markers_prompt_reaches_replay_and_eval(pytester: pytest.Pytester) -> None:
    """The README's example: ``prompt=`` beside a ``SummaryConfig`` field in the marker."""
    log = SAMPLES / "long_session.jsonl"
    pytester.makefile(".j2", handoff="HANDOFF NOTE\n{{ messages }}\n")
    pytester.makepyfile(
        f"""
        import pytest

        LOG = {str(log)!r}

        @pytest.mark.tsum(prompt="handoff.j2", max_context_tokens=20_000)
        def test_prompt(tsum):
            replay = tsum.replay(LOG)
            (session,) = replay.sessions
            prompts = list(session.engine.prompts.values())
            assert len(prompts) == 5
            assert all(p.startswith("HANDOFF NOTE") for p in prompts)
            scores = tsum.eval(LOG)
            assert scores.result.labels == ["handoff.j2"]
            assert scores.result.aggregates["handoff.j2"].checkpoints == 5
        """
    )
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)


def test_a_misspelt_option_fails_the_test_naming_it(pytester: pytest.Pytester) -> None:
    log = SAMPLES / "long_session.jsonl"
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.tsum(max_context_token=20_000)  # max_context_tokens
        def test_marker(tsum):
            tsum.replay({str(log)!r})

        def test_call(tsum):
            tsum.eval({str(log)!r}, promts=["en"])
        """
    )
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    assert "TypeError: tsum: unknown option(s) max_context_token (marker or call)" in output
    assert "TypeError: tsum: unknown option(s) promts (marker or call)" in output


def test_a_markers_option_reaches_only_the_calls_that_take_it(pytester: pytest.Pytester) -> None:
    log = SAMPLES / "long_session.jsonl"
    pytester.makepyfile(
        f"""
        import pytest

        LOG = {str(log)!r}

        @pytest.mark.tsum(dry_run=True, prompts=["en", "zh"])  # replay's, then eval's
        def test_both(tsum):
            replay = tsum.replay(LOG)
            assert replay.sessions[0].engine.summaries == []  # a dry run: no summary call
            assert tsum.eval(LOG).result.labels == ["en", "zh"]
        """
    )
    pytester.runpytest("-q").assert_outcomes(passed=1)
