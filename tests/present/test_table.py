"""The one text table (transcript_tools/present/table.py) on hand-written rows."""

from __future__ import annotations

from transcript_tools.present.table import fixed_row, text_table


def test_text_table_pads_to_the_widest_cell_two_spaces_apart() -> None:
    rows = [("name", "kind", "n"), ("a", "long kind", "12"), ("bbbbbb", "x", "3")]
    assert text_table(rows) == [
        "name         kind   n",
        "a       long kind  12",
        "bbbbbb          x   3",
    ]
    assert text_table(rows, (0, 1)) == [
        "name    kind        n",
        "a       long kind  12",
        "bbbbbb  x           3",
    ]


def test_text_table_strips_and_rules() -> None:
    rows = [("k", "v"), ("longer", "")]
    assert text_table(rows, (0, 1), strip=True, rule=True) == ["k       v", "------  -", "longer"]
    assert text_table(rows, (0, 1))[1] == "longer   "


def test_fixed_row_keeps_set_widths_and_lets_a_wide_cell_push() -> None:
    assert fixed_row(["ab", 3, "x"], [4, 3, 2]) == "ab    3 x"
    assert fixed_row(["abcdef", 3], [4, 3]) == "abcdef  3"
    assert fixed_row(["a", "b"], [2, 2, 9], left=(0, 1)) == "a b "
