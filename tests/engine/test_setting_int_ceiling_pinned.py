"""An integer setting may be as large as 2^63-1 (the largest a settings file's TOML or a
JSON record can hold, transcript_tools/writable.py ``MAX_SETTING_INT``) and no larger:
pinned at the boundary in the run's config (engine/config.py ``validate``) and in a
policy (engine/policy.py ``_int``) against ``value > MAX`` -> ``>=`` (a mutation run,
docs/testing.md)."""

from __future__ import annotations

import pytest

from transcript_tools.engine.config import SummaryConfig, validate
from transcript_tools.engine.policy import PrePass
from transcript_tools.errors import ConfigError

LARGEST = 2**63 - 1


def test_the_runs_debounce_may_be_2_63_minus_1_and_no_more() -> None:
    validate(SummaryConfig(debounce_turns=LARGEST))
    with pytest.raises(ConfigError, match=r"debounce_turns must be at most 9223372036854775807"):
        validate(SummaryConfig(debounce_turns=LARGEST + 1))


def test_a_policys_integer_may_be_2_63_minus_1_and_no_more() -> None:
    PrePass(protect_turns=LARGEST)
    with pytest.raises(ConfigError, match=r"prepass.protect_turns: must be at most"):
        PrePass(protect_turns=LARGEST + 1)
