"""A text file that is not JSON: prose (Markdown notes, a README, a chat saved as text)
that no reader of text logs took. It is "not a transcript tsum can read", said once, rather
than one "invalid JSON" per line."""

from __future__ import annotations

from .source import UTF8_BOM

# How many non-blank lines tell a text file from JSON: a JSON log's records are objects
# (or one array), so one of its first lines opens with "{" or "[" even where a line or
# two is broken.
TEXT_PROBE_LINES = 20


def is_text_not_json(data: bytes) -> bool:
    """A file of prose (Markdown, plain text), not JSON records: none of its first
    ``TEXT_PROBE_LINES`` non-blank lines opens with ``{`` or ``[``."""
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    seen = 0
    for line in data.split(b"\n", TEXT_PROBE_LINES * 4)[: TEXT_PROBE_LINES * 4]:
        stripped = line.lstrip()
        if not stripped:
            continue
        if stripped[:1] in (b"{", b"["):
            return False
        seen += 1
        if seen >= TEXT_PROBE_LINES:
            break
    return seen > 0
