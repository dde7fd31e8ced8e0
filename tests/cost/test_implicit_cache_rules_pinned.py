"""What Gemini's and DeepSeek's implicit caches read (``cost/cache_rules.py``), pinned
against one-point edits (a single-point mutation run, docs/testing.md, found these
unpinned): Gemini 2.5 caches a prefix of 2,048 tokens or more, a later Gemini 4,096, to
the token; DeepSeek any prefix, to the token. Reads worked out by hand from ``split``.
"""

from __future__ import annotations

from transcript_tools.cost.cache_rules import rules_for


def test_gemini_2_5_reads_a_prefix_from_2048_tokens_to_the_token() -> None:
    rules = rules_for("gemini-2.5-flash")
    assert rules.split(10_000, 2_047) == (0, 0, 10_000)  # below the minimum
    assert rules.split(10_000, 2_048) == (2_048, 0, 7_952)
    assert rules.split(10_000, 2_049) == (2_049, 0, 7_951)  # no step: every token


def test_a_gemini_after_2_5_reads_from_4096_tokens() -> None:
    rules = rules_for("gemini-3-pro-preview")
    assert rules.split(10_000, 4_095) == (0, 0, 10_000)
    assert rules.split(10_000, 4_096) == (4_096, 0, 5_904)


def test_deepseek_reads_any_shared_prefix_to_the_token() -> None:
    assert rules_for("deepseek-chat").split(100, 11) == (11, 0, 89)
