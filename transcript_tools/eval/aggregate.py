"""Aggregates of scored checkpoints, per variant: pooled recall, compression, cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .records import ScoreRecord
from .score import VARIANTS, recall_of

POSITION_CAP = 5  # positions 5 and later are pooled as "5+"


@dataclass(slots=True)
class Aggregate:
    checkpoints: int = 0
    counts: dict[str, dict[str, list[int]]] = field(
        default_factory=lambda: {v: {} for v in VARIANTS}
    )
    # the same, over checkpoints whose summary is shorter than what it replaces
    shorter: dict[str, dict[str, list[int]]] = field(
        default_factory=lambda: {v: {} for v in VARIANTS}
    )
    # the same, over the probes whose message the summary prompt showed (checkpoints.py)
    shown: dict[str, dict[str, list[int]]] = field(
        default_factory=lambda: {v: {} for v in VARIANTS}
    )
    not_shown: dict[str, int] = field(default_factory=dict)  # kind -> probes never shown
    by_position: dict[str, dict[str, dict[str, list[int]]]] = field(default_factory=dict)
    position_n: dict[str, int] = field(default_factory=dict)
    summary_tokens: int = 0
    replaced_tokens: int = 0
    compression_sum: float = 0.0
    not_shorter: int = 0
    language_match: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    judged: dict[str, list[int]] = field(default_factory=dict)  # kind -> [sum of grades, n]
    retained_checkpoints: int = 0  # eval --cost: checkpoints with a next-view size
    retained_probes: int = 0
    retained_view_tokens: int = 0

    def add(self, record: ScoreRecord) -> None:
        self.checkpoints += 1
        position = record["position"]
        key = str(position) if position < POSITION_CAP else f"{POSITION_CAP}+"
        slot = self.by_position.setdefault(key, {v: {} for v in VARIANTS})
        self.position_n[key] = self.position_n.get(key, 0) + 1
        for variant in VARIANTS:
            for kind, (hit, n) in record["counts"][variant].items():
                targets = [self.counts[variant], slot[variant]]
                if not record["not_shorter"]:
                    targets.append(self.shorter[variant])
                for target in targets:
                    pair = target.setdefault(kind, [0, 0])
                    pair[0] += hit
                    pair[1] += n
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
        usage = record.get("usage") or {}
        self.input_tokens += int(usage.get("input_tokens") or 0)
        self.output_tokens += int(usage.get("output_tokens") or 0)
        if "next_view_tokens" in record:
            self.retained_checkpoints += 1
            self.retained_probes += record["retained_probes"]
            self.retained_view_tokens += record["next_view_tokens"]
        for item in (record.get("judged") or {}).get("questions", []):
            if item.get("grade") is not None:
                pair = self.judged.setdefault(item["kind"], [0, 0])
                pair[0] += item["grade"]
                pair[1] += 1

    def as_json(self) -> dict[str, Any]:
        out = self._as_json()
        if self.retained_checkpoints:  # eval --cost only: default outputs unchanged
            out["recall_per_1k_retained_tokens"] = round(
                self.retained_probes / self.retained_view_tokens * 1000, 4
            )
            out["next_view_tokens_mean"] = round(
                self.retained_view_tokens / self.retained_checkpoints, 1
            )
        return out

    def _as_json(self) -> dict[str, Any]:
        n = self.checkpoints
        return {
            "checkpoints": n,
            "recall": {v: recall_of(self.counts[v]) for v in VARIANTS},
            "recall_where_shorter": {v: recall_of(self.shorter[v]) for v in VARIANTS},
            "recall_where_shown": {v: recall_of(self.shown[v]) for v in VARIANTS},
            "probes_not_shown": dict(sorted(self.not_shown.items())),
            "probes": {
                kind: pair[1] for kind, pair in sorted(self.counts["summary"].items()) if pair[1]
            },
            "by_position": {
                pos: {v: recall_of(counts[v])["artifact"] for v in VARIANTS}
                | {"checkpoints": self.position_n[pos]}
                for pos, counts in sorted(self.by_position.items())
            },
            "summary_tokens_mean": round(self.summary_tokens / n, 1) if n else None,
            "compression_mean": round(self.compression_sum / n, 4) if n else None,
            "not_shorter": self.not_shorter,
            "language_match": self.language_match,
            "summary_cost": {
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
            },
            "judged": {kind: round(s / c, 2) for kind, (s, c) in sorted(self.judged.items())}
            or None,
        }
