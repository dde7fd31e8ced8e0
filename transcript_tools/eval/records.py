"""The records ``tsum eval`` writes to ``checkpoints.jsonl`` (docs/eval.md), typed once
as engine/records.py types the replay's: the scorers build them, and the aggregates,
the baseline check, the HTML report and the sweep read them through these types, so
mypy checks every key a reader names.

Two kinds: a summary's scores (``CheckpointRecord``, one per checkpoint of the seed's
eval), and with ``--policy`` one per action of a policy (``PolicyActionRecord``: a
pre-pass, or a summary, scored on what it took out of the view). Keys are optional at
type level: a record is built in steps, and some keys come only with an option.
"""

from __future__ import annotations

from typing import Any, TypedDict

# kind -> [hits, probes]
Counts = dict[str, list[int]]
# "artifact", "request" and each kind -> the share recalled (None: no probe of it)
Recall = dict[str, float | None]


class ProbeRow(TypedDict, total=False):
    """One probe of a summary's replaced part, and who carries it."""

    kind: str  # eval/artifacts.py: a path, a symbol, a command, ... or the request
    message: int  # its message's index in the conversation
    turn: int
    text: str
    summary: bool  # the summary recalls it
    truncation: bool  # the truncation baseline of the same size does
    none: bool  # no summary at all (always False: the replaced part is gone)
    in_kept: bool  # lost by the summary, still shown by the kept turns
    shown: bool  # the summary prompt showed it (False: cut before it, by the 30K cap)


class CheckpointRecord(TypedDict, total=False):
    """One summary (tsum's, or one the agent recorded) and what it keeps."""

    kind: str  # eval/checkpoints.py: TSUM or RECORDED
    label: str  # the template (and model) that wrote it, or the runtime's name
    session: str
    path: str
    turn: int  # the turn after which the summary was made
    position: int  # 1st, 2nd, ... summary of its session (of its label)
    model: str | None
    usage: dict[str, Any] | None
    prompt_sha256: str | None
    shown_messages: list[int] | None
    summary: str
    extractor_version: int
    replaced_messages: list[int]  # [start, end)
    kept_messages: list[int]
    replaced_tokens: int
    summary_tokens: int
    compression: float | None
    not_shorter: bool
    counts: dict[str, Counts]  # variant (summary, truncation, none) -> its counts
    recall: dict[str, Recall]  # variant -> its recall
    language: dict[str, Any]  # conversation, summary, match
    probes: list[ProbeRow]
    # --cost: the artifact probes the next view keeps per 1,000 of its tokens
    retained_probes: int
    next_view_tokens: int
    recall_per_1k_retained_tokens: float
    judged: dict[str, Any]  # --judge: the model's answers to the probes' questions


class PolicyProbeRow(TypedDict, total=False):
    """One probe an action took out of the view, and who still carries it."""

    kind: str
    message: int
    turn: int
    text: str
    carried: bool  # a survivor of an earlier action (its text, not its message)
    view: bool  # the next view still recalls it
    truncation: bool
    none: bool
    ceiling: bool  # the uncompacted history does (what any policy could keep at most)


class PolicyActionRecord(TypedDict, total=False):
    """``--policy``: one action of a policy (a pre-pass or a summary), scored."""

    kind: str  # "policy-action"
    action: str  # eval/policy_probes.py: PREPASS or SUMMARY
    label: str
    session: str
    path: str
    turn: int
    position: int  # 1st, 2nd, ... action of this kind in the session
    removed_messages: int
    removed: list[list[int]]  # [start, end) ranges of history indices
    added_tokens: int
    view_messages: int
    violations: dict[str, int]  # API -> rules the view breaks anew (engine/validity.py)
    violation_rules: dict[str, dict[str, int]]
    violation_examples: dict[str, list[str]]
    uncompacted_violations: dict[str, int]
    counts: dict[str, Counts]
    recall: dict[str, Recall]
    probes: list[PolicyProbeRow]
    # opt-in (ActionScorer.whole_view): [kept, probed] of every artifact probe of the
    # history up to the action against the whole next view (eval/view_recall.py)
    whole_view: list[int]
    uncompacted_tokens: int
    view_tokens_before: int | None
    view_tokens_after: int
    freed_tokens: int | None  # a pre-pass
    summary: str  # a summary: its text, model, usage and prompt
    model: str | None
    usage: dict[str, int] | None
    prompt_sha256: str | None
