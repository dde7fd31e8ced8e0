"""The records ``tsum eval`` writes to ``checkpoints.jsonl`` (docs/eval.md), typed once
as engine/records.py types the replay's: the scorer builds them, and the aggregate, the
baseline check, the HTML report and the sweep read them through this type, so mypy
checks every key a reader names.

One family, ``ScoreRecord``: one action of a compaction (a summary, or a policy's
pre-pass) and what survives it. Its ``kind`` says how it was scored: a summary of the
seed's report (``"tsum"``) or one the agent recorded (``"recorded"``) on the history it
replaced (eval/score.py); with ``--policy`` every action (``"policy-action"``) on what it
took out of the view (eval/policy_probes.py). Keys are optional at type level: a record
is built in steps, and some keys come only with one of the two, or with an option.
"""

from __future__ import annotations

from typing import Any, TypedDict

# The label of a runtime's own compactions in eval's records and tables: this prefix and
# the runtime, the first part of the compaction's source ("claude-code:compact_boundary"
# -> "recorded:claude-code")
RECORDED = "recorded:"


def recorded_label(source: str) -> str:
    """``RECORDED`` and the runtime that recorded a compaction of ``source``."""
    return RECORDED + source.split(":")[0]


# kind -> [hits, probes]
Counts = dict[str, list[int]]
# "artifact", "request" and each kind -> the share recalled (None: no probe of it)
Recall = dict[str, float | None]


class ProbeRow(TypedDict, total=False):
    """One probe an action took away, and who still carries it."""

    kind: str  # eval/artifacts.py: a path, a symbol, a command, ... or the request
    message: int  # its message's index in the conversation
    turn: int
    text: str
    # the history a summary replaced
    summary: bool  # the summary recalls it
    in_kept: bool  # lost by the summary, still shown by the kept turns
    shown: bool  # the summary prompt showed it (False: cut before it, by the 30K cap)
    # what an action took out of the view
    carried: bool  # a survivor of an earlier action (its text, not its message)
    view: bool  # the next view still recalls it
    ceiling: bool  # the uncompacted history does (what any policy could keep at most)
    # both: the truncation of the same size does; no summary at all does (replaced
    # history: always False, the replaced part is gone)
    truncation: bool
    none: bool


class ScoreRecord(TypedDict, total=False):
    """One scored action: a summary (tsum's, one the agent recorded, or a policy's) or
    a policy's pre-pass."""

    kind: str  # eval/checkpoints.py TSUM or RECORDED; "policy-action"
    label: str  # the template (and model) that wrote it, the runtime's, or the policy
    session: str
    path: str
    turn: int  # the turn after which the action was taken
    position: int  # 1st, 2nd, ... summary of its session (of its label), or action of its kind
    model: str | None
    usage: dict[str, Any] | None
    prompt_sha256: str | None
    summary: str
    counts: dict[str, Counts]  # variant -> its counts
    recall: dict[str, Recall]  # variant -> its recall
    probes: list[ProbeRow]
    # the history a summary replaced (eval/score.py score_checkpoint)
    shown_messages: list[int] | None
    extractor_version: int
    replaced_messages: list[int]  # [start, end)
    kept_messages: list[int]
    replaced_tokens: int
    summary_tokens: int
    compression: float | None
    not_shorter: bool
    language: dict[str, Any]  # conversation, summary, match
    # --cost: the artifact probes the next view keeps per 1,000 of its tokens
    retained_probes: int
    next_view_tokens: int
    recall_per_1k_retained_tokens: float
    judged: dict[str, Any]  # --judge: the model's answers to the probes' questions
    # --policy: what an action took out of the view (eval/policy_probes.py ActionScorer)
    action: str  # eval/policy_probes.py: PREPASS or SUMMARY
    removed_messages: int
    removed: list[list[int]]  # [start, end) ranges of history indices
    added_tokens: int
    view_messages: int
    violations: dict[str, int]  # API -> rules the view breaks anew (engine/validity.py)
    violation_rules: dict[str, dict[str, int]]
    violation_examples: dict[str, list[str]]
    uncompacted_violations: dict[str, int]
    # opt-in (ActionScorer.whole_view): [kept, probed] of every artifact probe of the
    # history up to the action against the whole next view (eval/view_recall.py)
    whole_view: list[int]
    uncompacted_tokens: int
    view_tokens_before: int | None
    view_tokens_after: int
    freed_tokens: int | None  # a pre-pass
