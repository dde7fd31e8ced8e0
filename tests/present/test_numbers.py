"""The number formats (transcript_tools/present/numbers.py) on hand-picked values, their
boundaries included."""

from __future__ import annotations

from transcript_tools.present.numbers import (
    binary_size,
    compact,
    grouped,
    kilo,
    percent,
    short,
    whole_percent,
)


def test_grouped_separates_thousands_of_ints_only() -> None:
    assert [grouped(v) for v in (1234567, 0, None, True, "auto")] == [
        "1,234,567",
        "0",
        "-",
        "True",
        "auto",
    ]


def test_percents() -> None:
    assert [percent(v) for v in (0.1234, 1.0, None)] == ["12.3%", "100.0%", "—"]
    assert [whole_percent(v) for v in (0.126, 0.0, None)] == ["13%", "0%", "-"]


def test_compact_keeps_two_or_three_digits() -> None:
    values = (999, 1000, 9949, 9950, 10_000, 999_999, 1_000_000, 9_940_000, 12_345_678, -1500)
    assert [compact(v) for v in values] == [
        "999",
        "1.0k",
        "9.9k",
        "9.9k",  # 9.95 is 9.9499… in binary
        "10k",
        "1000k",
        "1.0M",
        "9.9M",
        "12M",
        "-1.5k",
    ]
    assert compact(None) == "-" and compact("auto") == "auto"


def test_short_and_kilo() -> None:
    assert [short(v) for v in (800, 1250, 2_000_000, 123_456, "auto")] == [
        "800",
        "1.25k",
        "2M",
        "123.456k",
        "auto",
    ]
    assert [kilo(v) for v in (800, 999.6, 1000, 12_345)] == ["800", "1000", "1.0k", "12.3k"]


def test_binary_size_picks_the_largest_unit_up_to_gib() -> None:
    sizes = (0, 1023, 1024, 1536, 1024**2, 1024**3, 5 * 1024**4)
    assert [binary_size(s) for s in sizes] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "1.5 KiB",
        "1.0 MiB",
        "1.0 GiB",
        "5120.0 GiB",
    ]
