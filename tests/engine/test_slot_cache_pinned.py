"""The seed's slot caches its summary's size; the cache is no part of the slot's state
(``engine/slot.py``), pinned against one-point edits (a single-point mutation run,
docs/testing.md, found it unpinned): two slots of the same messages and summary are
equal and print alike whether or not one has measured its view.
"""

from __future__ import annotations

from transcript_tools.engine.messages import AssistantMessage, UserMessage
from transcript_tools.engine.slot import ContextSlot


def _slot() -> ContextSlot:
    slot = ContextSlot()
    slot.append_messages([UserMessage.text("u1"), AssistantMessage.text("a1")])
    return slot


def test_a_slot_equals_and_prints_as_one_that_never_measured_its_summary() -> None:
    """Both slots measured their messages; only one measured its summary (fails when
    the summary-size cache takes part in ``==`` or ``repr``)."""
    measured, fresh = _slot(), _slot()
    fresh.view_size()
    for slot in (measured, fresh):
        slot.set_summary("the summary")
    measured.view_size()
    assert measured == fresh
    assert repr(measured) == repr(fresh)
    assert "_summary_cache" not in repr(measured)
