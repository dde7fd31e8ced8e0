"""One row's scored records pooled (a variant, a runtime's recorded compactions, or a
policy): recall per variant, per summary position or kind of action, sizes and cost.

The records are one family (eval/records.py ScoreRecord), scored one of two ways, and a
row pools one of them: a summary on the history it replaced (eval/score.py: recall in
the summary, shorter-only and shown-only recall, compression, language, ``--cost``'s
retained probes, ``--judge``'s grades), or with ``--policy`` an action on what it took
out of the view (eval/policy_probes.py: recall in the next view, carried probes, the
views' sizes and the target APIs they break, engine/validity.py). ``as_json`` gives the
figures of the row's way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.validity import APIS
from .policy_probes import ACTIONS, POLICY_VARIANTS
from .records import Counts, ScoreRecord
from .score import VARIANTS, recall_of

POSITION_CAP = 5  # positions 5 and later are pooled as "5+"


def _pool(target: Counts, counts: Counts) -> None:
    for kind, (hit, n) in counts.items():
        pair = target.setdefault(kind, [0, 0])
        pair[0] += hit
        pair[1] += n


def _variant_counts(on_view: bool) -> dict[str, Counts]:
    return {v: {} for v in (POLICY_VARIANTS if on_view else VARIANTS)}


@dataclass(slots=True)
class Aggregate:
    """One row's records pooled; ``on_view``: a policy's actions (module docstring)."""

    on_view: bool = False
    checkpoints: int = 0  # records pooled: summaries, or a policy's actions
    counts: dict[str, Counts] = field(default_factory=dict)  # variant -> pooled counts
    # the same per group: a summary's position in its session ("5+" pooled), or the
    # kind of action; and each group's records
    by_group: dict[str, dict[str, Counts]] = field(default_factory=dict)
    group_n: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    # summaries on what they replaced: the counts over those shorter than it
    shorter: dict[str, Counts] = field(default_factory=lambda: _variant_counts(False))
    # ... over the probes whose message the summary prompt showed (checkpoints.py)
    shown: dict[str, Counts] = field(default_factory=lambda: _variant_counts(False))
    not_shown: dict[str, int] = field(default_factory=dict)  # kind -> probes never shown
    summary_tokens: int = 0
    replaced_tokens: int = 0
    compression_sum: float = 0.0
    not_shorter: int = 0
    language_match: int = 0
    judged: dict[str, list[int]] = field(default_factory=dict)  # kind -> [sum of grades, n]
    retained_checkpoints: int = 0  # eval --cost: checkpoints with a next-view size
    retained_probes: int = 0
    retained_view_tokens: int = 0
    # a policy's actions on the next view
    carried: list[int] = field(default_factory=lambda: [0, 0])  # [survived again, looked for]
    removed_messages: int = 0
    view_tokens_after: int = 0
    uncompacted_tokens: int = 0
    # api -> [views that break it, violations]
    violations: dict[str, list[int]] = field(default_factory=lambda: {a: [0, 0] for a in APIS})
    rules: dict[str, dict[str, int]] = field(default_factory=dict)
    # api -> uncompacted views (at the same actions) that break it: the log's own share
    uncompacted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(APIS, 0))

    def __post_init__(self) -> None:
        self.counts = _variant_counts(self.on_view)
        if self.on_view:  # every kind of action has its row, acted or not
            self.group_n = dict.fromkeys(ACTIONS, 0)
            self.by_group = {a: _variant_counts(True) for a in ACTIONS}

    def add(self, record: ScoreRecord) -> None:
        self.checkpoints += 1
        if self.on_view:
            group = record["action"]
        else:
            position = record["position"]
            group = str(position) if position < POSITION_CAP else f"{POSITION_CAP}+"
        self.group_n[group] = self.group_n.get(group, 0) + 1
        by_group = self.by_group.setdefault(group, _variant_counts(self.on_view))
        shorter = not self.on_view and not record["not_shorter"]
        for variant, pooled in self.counts.items():
            counts = record["counts"][variant]
            _pool(pooled, counts)
            _pool(by_group[variant], counts)
            if shorter:
                _pool(self.shorter[variant], counts)
        usage = record.get("usage") or {}
        self.input_tokens += int(usage.get("input_tokens") or 0)
        self.output_tokens += int(usage.get("output_tokens") or 0)
        if self.on_view:
            self._add_action(record)
        else:
            self._add_summary(record)

    def _add_summary(self, record: ScoreRecord) -> None:
        for probe in record["probes"]:
            kind = probe["kind"]
            if not probe.get("shown", True):
                self.not_shown[kind] = self.not_shown.get(kind, 0) + 1
                continue
            for variant in VARIANTS:
                pair = self.shown[variant].setdefault(kind, [0, 0])
                pair[0] += probe[variant]
                pair[1] += 1
        self.summary_tokens += record["summary_tokens"]
        self.replaced_tokens += record["replaced_tokens"]
        self.compression_sum += record["compression"] or 0.0
        self.not_shorter += bool(record["not_shorter"])
        self.language_match += bool(record["language"]["match"])
        if "next_view_tokens" in record:
            self.retained_checkpoints += 1
            self.retained_probes += record["retained_probes"]
            self.retained_view_tokens += record["next_view_tokens"]
        for item in (record.get("judged") or {}).get("questions", []):
            if item.get("grade") is not None:
                pair = self.judged.setdefault(item["kind"], [0, 0])
                pair[0] += item["grade"]
                pair[1] += 1

    def _add_action(self, record: ScoreRecord) -> None:
        for probe in record["probes"]:
            if probe["carried"]:
                self.carried[0] += probe["view"]
                self.carried[1] += 1
        self.removed_messages += record["removed_messages"]
        self.view_tokens_after += record.get("view_tokens_after") or 0
        self.uncompacted_tokens += record.get("uncompacted_tokens") or 0
        for api, n in record["violations"].items():
            self.violations[api][0] += 1
            self.violations[api][1] += n
        for api in record["uncompacted_violations"]:
            self.uncompacted[api] += 1
        for api, rules in record["violation_rules"].items():
            mine = self.rules.setdefault(api, {})
            for rule, n in rules.items():
                mine[rule] = mine.get(rule, 0) + n

    def as_json(self) -> dict[str, Any]:
        if self.on_view:
            return self._view_json()
        out = self._replaced_json()
        if self.retained_checkpoints:  # eval --cost only: default outputs unchanged
            out["recall_per_1k_retained_tokens"] = round(
                self.retained_probes / self.retained_view_tokens * 1000, 4
            )
            out["next_view_tokens_mean"] = round(
                self.retained_view_tokens / self.retained_checkpoints, 1
            )
        return out

    def _cost(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}

    def _probes(self, variant: str) -> dict[str, int]:
        return {kind: pair[1] for kind, pair in sorted(self.counts[variant].items()) if pair[1]}

    def _replaced_json(self) -> dict[str, Any]:
        n = self.checkpoints
        return {
            "checkpoints": n,
            "recall": {v: recall_of(self.counts[v]) for v in VARIANTS},
            "recall_where_shorter": {v: recall_of(self.shorter[v]) for v in VARIANTS},
            "recall_where_shown": {v: recall_of(self.shown[v]) for v in VARIANTS},
            "probes_not_shown": dict(sorted(self.not_shown.items())),
            "probes": self._probes("summary"),
            "by_position": {
                pos: {v: recall_of(counts[v])["artifact"] for v in VARIANTS}
                | {"checkpoints": self.group_n[pos]}
                for pos, counts in sorted(self.by_group.items())
            },
            "summary_tokens_mean": round(self.summary_tokens / n, 1) if n else None,
            "compression_mean": round(self.compression_sum / n, 4) if n else None,
            "not_shorter": self.not_shorter,
            "language_match": self.language_match,
            "summary_cost": self._cost(),
            "judged": {kind: round(s / c, 2) for kind, (s, c) in sorted(self.judged.items())}
            or None,
        }

    def _view_json(self) -> dict[str, Any]:
        n = self.checkpoints
        return {
            "actions": dict(self.group_n),
            "probes": self._probes("view"),
            "recall": {v: recall_of(self.counts[v]) for v in POLICY_VARIANTS},
            "recall_by_action": {a: recall_of(self.by_group[a]["view"]) for a in ACTIONS},
            "carried": {"looked_for": self.carried[1], "survived": self.carried[0]},
            "removed_messages": self.removed_messages,
            "view_tokens_after_mean": round(self.view_tokens_after / n, 1) if n else None,
            "uncompacted_tokens_mean": round(self.uncompacted_tokens / n, 1) if n else None,
            "violations": {
                api: {
                    "views": v[0],
                    "violations": v[1],
                    "rules": dict(sorted(self.rules.get(api, {}).items())),
                }
                for api, v in self.violations.items()
            },
            "uncompacted_violations": dict(self.uncompacted),
            "summary_cost": self._cost(),
        }
