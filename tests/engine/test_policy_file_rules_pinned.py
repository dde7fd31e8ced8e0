"""How a policy file is read and written back (``engine/policy_toml.py``), pinned against
one-point edits (a single-point mutation run, docs/testing.md, found these unpinned):
a non-finite float refused, TOML strings escaped exactly where TOML requires it, and the
one-line summary of when a policy acts. Expected strings are written out by hand.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from transcript_tools.engine import policy as P
from transcript_tools.engine.policy_toml import parse_policy, preset, to_toml, trigger_summary
from transcript_tools.errors import ConfigError


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_float_key_refuses_a_non_finite_number(value: str) -> None:
    """TOML reads ``nan`` and ``inf`` as floats; a float key refuses them by name (fails
    when the finiteness check is made for the other annotations instead)."""
    with pytest.raises(ConfigError, match=rf"ratio: must be a finite number, got {value}"):
        parse_policy(f"[trigger]\nratio = {value}\n", "p.toml")


def test_toml_strings_escape_control_characters_and_nothing_printable() -> None:
    """Below U+0020 and U+007F are written as \\uXXXX; a space and every printable
    character stay as they are (fails when the boundary moves: the space, or "!",
    escaped)."""
    policy = replace(preset("seed"), description="a b! \x01\x1f\x7f")
    line = to_toml(policy).splitlines()[1]
    assert line == 'description = "a b! \\u0001\\u001F\\u007F"'


def test_a_ratio_trigger_with_only_a_floor_shows_its_range() -> None:
    """A floor alone still shows the range, its ceiling open (fails on ``floor and
    ceiling``: no range)."""
    seed = preset("seed")
    policy = replace(seed, trigger=replace(seed.trigger, floor_tokens=4_096))
    assert trigger_summary(policy) == (
        "summarize (cumulative >= window x 0.75 in [4,096, inf], debounce 3), per turn"
    )


def test_an_every_trigger_says_every_n_units() -> None:
    trigger = P.Trigger(threshold="every", every=5, unit="call", debounce=0)
    policy = replace(preset("seed"), trigger=trigger)
    assert trigger_summary(policy) == "summarize (every 5 calls), per call"
