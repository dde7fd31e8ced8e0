"""Every citation in the repository points into the repository.

The design notes, the design review and the issue tracker the project was built from are
not part of a clone, so a comment citing them ("DESIGN §2", "issue 22 §3h") cannot be
followed by a reader of this repository. The seed's rule codes (F1–F8, N1–N4) and tsum's
own decisions are in ``docs/spec.md``; a citation of one of its sections must name a
section that exists there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "spec.md"

# What a clone can read: the package, its tests and benchmarks, the docs, CI and packaging.
SOURCES = sorted(
    {
        *ROOT.glob("transcript_tools/**/*.py"),
        *ROOT.glob("transcript_tools/**/*.toml"),
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("benchmarks/*.py"),
        *ROOT.glob("benchmarks/*.md"),
        *ROOT.glob("benchmarks/*.sh"),
        *ROOT.glob("docs/*.md"),
        ROOT / "README.md",
        ROOT / "pyproject.toml",
        ROOT / "setup.py",
        ROOT / ".ci" / "run",
    }
)

# Built from parts so that this file does not match itself.
_DESIGN = "DESIGN" + r"(\.md)?\s*§"
_REVIEW = "REVIEW" + r"\.md"
_ISSUE = r"\b[Ii]ssues?\s+\d"  # "issue 22", "issues 10 and 11"; "issue #58" is data, not ours
_SECTION = r"(?<![\w.])\d{1,2}\s*§\s*\d"  # "22 §3h"
UNREADABLE = re.compile("|".join((_DESIGN, _REVIEW, _ISSUE, _SECTION)))

SPEC_CITATION = re.compile(r'docs/spec\.md,\s*"([^"]+)"')
SPEC_LINK = re.compile(r"spec\.md#([\w-]+)")


def _lines(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), 1))


def _spec_sections() -> set[str]:
    text = SPEC.read_text(encoding="utf-8")
    headings = {m.group(1).strip() for m in re.finditer(r"^#+\s+(.+)$", text, re.M)}
    bold = {m.group(1).strip("` ") for m in re.finditer(r"\*\*([^*]+)\*\*", text)}
    return headings | bold


def test_the_sources_were_found() -> None:
    assert len(SOURCES) > 150
    assert all(path.is_file() for path in SOURCES)


def test_no_citation_points_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in SOURCES
        for number, line in _lines(path)
        if path != Path(__file__).resolve() and UNREADABLE.search(line)
    ]
    assert found == [], "\n".join(found)


def test_spec_citations_name_a_section_of_docs_spec() -> None:
    sections = _spec_sections()
    cited = {
        (f"{path.relative_to(ROOT)}:{number}", m.group(1))
        for path in SOURCES
        for number, line in _lines(path)
        for m in SPEC_CITATION.finditer(line)
    }
    assert cited, "nothing cites docs/spec.md: the pattern no longer matches the comments"
    unknown = sorted(f"{where}: {name!r}" for where, name in cited if name not in sections)
    assert unknown == [], f"not a section of docs/spec.md: {unknown}"


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub renders it: lower case, punctuation gone, spaces -> '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_into_docs_spec_name_a_heading() -> None:
    text = SPEC.read_text(encoding="utf-8")
    anchors = {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.+)$", text, re.M)}
    assert "where-the-seed-is-silent-tsums-decisions" in anchors  # the slug rule itself
    linked = [
        (f"{path.relative_to(ROOT)}:{number}", m.group(1))
        for path in SOURCES
        for number, line in _lines(path)
        for m in SPEC_LINK.finditer(line)
    ]
    assert linked
    assert [f"{where}: #{anchor}" for where, anchor in linked if anchor not in anchors] == []


@pytest.mark.parametrize(
    "line",
    [
        "# the runtime's message (DESIGN §2 Turns)",
        "see DESIGN.md §1",
        "the layout of REVIEW.md",
        "# issue 22 §3h: detection",
        "(issues 10 and 11)",
        "before openai (22 §3h)",
    ],
)
def test_the_pattern_catches_what_it_is_for(line: str) -> None:
    assert UNREADABLE.search(line)


@pytest.mark.parametrize(
    "line",
    ["see issue #58.", "an issue with the cache", "Python 3.11 §", "version 1.2 § 3"],
)
def test_the_pattern_spares_what_is_not_a_citation(line: str) -> None:
    assert not UNREADABLE.search(line)
