"""formats/fields.py: a log's fields read one way by every reader."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from transcript_tools.formats.fields import nested

KEYS = st.sampled_from(["a", "b", "c"])
JSON = st.recursive(
    st.none() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=10,
)


def test_nested_walks_objects_and_stops_at_anything_else() -> None:
    obj = {"info": {"model_stats": {"api_calls": 3}, "list": [1]}}
    assert nested(obj, "info", "model_stats", "api_calls") == 3
    assert nested(obj, "info", "missing", "api_calls") is None
    assert nested(obj, "info", "list", "x") is None  # a list is not an object
    assert nested("text", "a") is None
    assert nested(obj) is obj


@given(JSON, st.lists(KEYS, min_size=1, max_size=4))
def test_nested_is_the_chain_readers_wrote_by_hand(value: Any, keys: list[str]) -> None:
    expected = value
    for key in keys:  # x.get(key) if isinstance(x, dict) else None, step by step
        expected = expected.get(key) if isinstance(expected, dict) else None
    assert nested(value, *keys) == expected
