"""Recorded usage adds up field by field (a runtime that logs one call in several records
sums them: formats/codex.py, formats/opencode/session.py), pinned against one-point edits
(a single-point mutation run, docs/testing.md, found a field no test summed).
"""

from __future__ import annotations

from transcript_tools.engine.messages import Usage


def test_usage_sums_every_field_of_the_two_records() -> None:
    """1+10, 2+20, 3+30, 4+40, 5+50 (fails when any one field is subtracted)."""
    total = Usage(1, 2, 3, 4, 5) + Usage(10, 20, 30, 40, 50)
    assert total == Usage(11, 22, 33, 44, 55)
    assert total.total_tokens == 11 + 22  # the prompt and the output, the cache fields in it
    assert sum([Usage(1, 2, 3, 4, 5)] * 3, Usage()) == Usage(3, 6, 9, 12, 15)
