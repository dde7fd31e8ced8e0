"""What a summary record says of its call, named once: the engine writes these values
into ``summaries.jsonl`` (docs/replay.md) and every reader of the records asks through
:func:`summary_ok`, never by comparing string literals of its own."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any


class SummaryStatus(StrEnum):
    """A summary record's ``status`` (a ``StrEnum``: the JSON is the plain string)."""

    OK = "ok"
    FAILED = "failed"  # N3: the call failed or came back empty; nothing changed


def summary_ok(record: Mapping[str, Any]) -> bool:
    """Did the summary call of ``record`` (a summaries.jsonl record) succeed?"""
    return record.get("status") == SummaryStatus.OK


def summary_failed(record: Mapping[str, Any]) -> bool:
    """Did it fail (N3)? A record without a status is neither."""
    return record.get("status") == SummaryStatus.FAILED
