"""The least value of each bounded setting (engine/settings_table.py), pinned at its
boundary so a one-point edit of a row's ``low`` or ``low_open`` fails (a mutation run,
docs/testing.md): a count of summary calls or attempts is at least 1; a timeout and a
batch's poll interval are more than 0 seconds (0 would never wait); a temperature is at
least 0 (0 is the most likely text). ``auto`` is a window's word only."""

from __future__ import annotations

import pytest

from transcript_tools.engine.settings_table import SETTING, value_problem


@pytest.mark.parametrize("key", ["concurrency", "max_attempts", "workers"])
def test_a_count_of_one_is_the_least(key: str) -> None:
    assert value_problem(SETTING[key], 1) is None
    assert value_problem(SETTING[key], 0) == "must be an integer >= 1, got 0"


@pytest.mark.parametrize("key", ["timeout", "batch_poll"])
def test_a_wait_must_be_more_than_zero_seconds(key: str) -> None:
    assert value_problem(SETTING[key], 0.5) is None
    assert value_problem(SETTING[key], 0) == "must be a number > 0, got 0"


def test_a_temperature_of_zero_is_allowed_and_below_it_refused() -> None:
    assert value_problem(SETTING["temperature"], 0) is None
    assert value_problem(SETTING["temperature"], -0.5) == "must be a number >= 0, got -0.5"


def test_auto_is_a_value_of_the_window_only() -> None:
    """``kind == WINDOW and value == AUTO`` -> ``or`` would take "auto" for any number."""
    assert value_problem(SETTING["max_context_tokens"], "auto") is None
    assert value_problem(SETTING["debounce_turns"], "auto") == "must be an integer, got 'auto'"
