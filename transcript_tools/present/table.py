"""The one text table: columns as wide as their widest cell, two spaces apart."""

from __future__ import annotations

from collections.abc import Container, Sequence


def text_table(
    rows: Sequence[Sequence[str]],
    left: Container[int] = (0,),
    *,
    strip: bool = False,
    rule: bool = False,
) -> list[str]:
    """One line per row: the columns in ``left`` padded on the right, the others on the
    left; ``strip`` drops each line's trailing spaces, ``rule`` puts dashes under the
    first row."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = (
            cell.ljust(width) if i in left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        )
        line = "  ".join(cells)
        lines.append(line.rstrip() if strip else line)
    if rule:
        lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


def fixed_row(cells: Sequence[object], widths: Sequence[int], left: Container[int] = (0,)) -> str:
    """One line of a table whose columns have set widths and no gap: the cells in ``left``
    padded on the right, the others on the left; a wider cell pushes the rest along."""
    return "".join(
        f"{cell:<{width}}" if i in left else f"{cell:>{width}}"
        for i, (cell, width) in enumerate(zip(cells, widths, strict=False))
    )
