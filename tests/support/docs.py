"""What the docs say: a page (or one section of it), and the keys it leaves unexplained.

The one rule of the "every --json key is documented" tests: a key is explained where the
page writes it as code (`key`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def doc_text(page: str, section: str | None = None) -> str:
    """docs/``page``, or only its ``## section`` (up to the next ``## ``)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    if section is None:
        return text
    heading = f"## {section}"
    assert heading in text, f"docs/{page} has no {heading!r} section"
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def undocumented(keys: Iterable[str], text: str) -> list[str]:
    """The ``keys`` ``text`` never writes as code, sorted."""
    return sorted(k for k in set(keys) if not re.search(rf"`{re.escape(k)}`", text))
