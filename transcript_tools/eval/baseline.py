"""Scores of a ``tsum replay --out`` directory, and the gate ``tsum check`` applies to them.

``score_replay_output`` scores the summaries a replay wrote (``summaries.jsonl``) with
the probes of the transcripts they came from: no provider call. ``compare_scores``
compares a baseline's scores with a fresh run's: the pooled artifact recall may drop
by at most ``max_drop`` (default 0.05, five percentage points), and the probes a
baseline summary carried that the fresh one lost are named with where they came from.
Scores record the probe extractor's version; a baseline scored by another version is
rescored from its own summaries, never compared number to number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson

from ..engine.config import DEFAULT_MAX_DROP
from ..engine.messages import Conversation
from ..engine.records import SummaryRecord, summary_failed, summary_ok
from ..engine.rules import turn_starts
from ..engine.seed_defaults import DEFAULT_KEEP_RECENT_TURNS, DEFAULT_MAX_TOOL_RESULT_CHARS
from ..errors import TsumError
from ..formats.corpus import CorpusReader
from ..writable import drop_links
from .aggregate import Aggregate
from .artifacts import ARTIFACT_KINDS
from .checkpoints import TSUM, SummaryReplacement, compaction_message_indices, score_record
from .probes import EXTRACTOR_VERSION
from .records import ScoreRecord
from .score import ConversationProbes

SCORES_FILE = "eval.json"
LOST_SHOWN = 20


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def score_replay_output(
    paths: list[str],
    out_dir: Path,
    *,
    fmt: str | None = None,
    skip_bad_lines: bool = False,
) -> dict[str, Any] | None:
    """The scores of every successful summary in ``out_dir``; None when the run was not in
    Focused mode (a summary then replaces nothing) or wrote no run.json. ``fmt`` and
    ``skip_bad_lines``: the transcripts are read as the replay read them."""
    run_path = out_dir / "run.json"
    if not run_path.is_file():
        return None
    run = orjson.loads(run_path.read_bytes())
    if run.get("mode") != "focused" or run.get("dry_run"):
        return None
    keep = int(run.get("keep_recent_turns") or DEFAULT_KEEP_RECENT_TURNS)
    max_tool = int(
        (run.get("summary_config") or {}).get("max_tool_result_chars")
        or DEFAULT_MAX_TOOL_RESULT_CHARS
    )
    label = str((run.get("template") or {}).get("name") or "summary")
    by_session: dict[str, list[SummaryRecord]] = {}
    for record in cast(list[SummaryRecord], _read_jsonl(out_dir / "summaries.jsonl")):
        if summary_ok(record) and isinstance(record.get("text"), str):
            by_session.setdefault(str(record["session"]), []).append(record)
    aggregate = Aggregate()
    checkpoints: list[dict[str, Any]] = []
    for conv in CorpusReader(fmt, skip_bad_lines).conversations(paths):
        summaries = by_session.get(conv.session_id)
        if not summaries:
            continue
        for scored in score_summaries(
            conv, summaries, keep=keep, max_tool_result_chars=max_tool, label=label
        ):
            aggregate.add(scored)
            checkpoints.append(
                {
                    "session": conv.session_id,
                    "path": conv.path,
                    "turn": scored["turn"],
                    "position": scored["position"],
                    "recall": scored["recall"],
                    "compression": scored["compression"],
                    "probes": [
                        {k: p[k] for k in ("kind", "message", "turn", "text", "summary")}
                        for p in scored["probes"]
                    ],
                }
            )
    return {
        "extractor_version": EXTRACTOR_VERSION,
        "template": run.get("template"),
        "aggregate": aggregate.as_json(),
        "checkpoints": checkpoints,
    }


def score_summaries(
    conv: Conversation,
    summaries: Sequence[SummaryRecord],
    *,
    keep: int,
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
    label: str = "summary",
    starts: list[int] | None = None,
) -> list[ScoreRecord]:
    """Score successful summary records (``{"turn", "text", "status"}``) of one conversation,
    replayed in Focused mode with ``keep`` recent turns: the replaced part of the summary
    made after turn t is everything before the first of the last ``keep`` turns.

    ``starts``: the checkpoint's units when they are not the turns (``--checkpoint call``:
    the records' ``turn`` is then the unit index)."""
    probes = ConversationProbes(
        conv.messages, max_tool_result_chars, compaction_message_indices(conv)
    )
    starts = turn_starts(conv.messages) if starts is None else starts
    out: list[ScoreRecord] = []
    for summary in sorted(summaries, key=lambda r: int(r["turn"])):
        turn = int(summary["turn"])
        text = summary.get("text")
        if summary_failed(summary) or not isinstance(text, str) or turn >= len(starts):
            continue
        cut = starts[turn + 1 - keep] if turn + 1 > keep else 0
        end = starts[turn + 1] if turn + 1 < len(starts) else len(conv.messages)
        if cut == 0:
            continue  # the window still holds everything: nothing was replaced
        cp = SummaryReplacement(
            TSUM, label, conv.session_id, conv.path, turn, len(out) + 1, text, (0, cut), (cut, end)
        )
        out.append(score_record(cp, probes))
    return out


def write_scores(scores: dict[str, Any], out_dir: Path) -> None:
    drop_links(out_dir, (SCORES_FILE,))  # never written through a link
    (out_dir / SCORES_FILE).write_bytes(
        orjson.dumps(scores, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    )


def load_scores(directory: Path) -> dict[str, Any] | None:
    path = directory / SCORES_FILE
    if not path.is_file():
        return None
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise TsumError(
            f"{path}: not valid JSON ({exc}); rewrite the baseline with --update"
        ) from None


def _pooled(scores: dict[str, Any]) -> tuple[int, int]:
    hits = total = 0
    for cp in scores["checkpoints"]:
        for probe in cp["probes"]:
            if probe["kind"] in ARTIFACT_KINDS:
                hits += bool(probe["summary"])
                total += 1
    return hits, total


@dataclass(slots=True)
class Comparison:
    old_recall: float | None
    new_recall: float | None
    max_drop: float
    failed: bool = False
    lines: list[str] = field(default_factory=list)


def compare_scores(
    old: dict[str, Any],
    new: dict[str, Any],
    max_drop: float = DEFAULT_MAX_DROP,
    scores_at: str | None = SCORES_FILE,
) -> Comparison:
    """Did artifact recall drop by more than ``max_drop``? Lost probes named either way;
    ``scores_at`` is where the fresh scores are kept (None: nowhere, they were temporary)."""
    if old.get("extractor_version") != new.get("extractor_version"):
        raise TsumError(
            f"scores made by probe extractor v{old.get('extractor_version')} and v{new.get('extractor_version')} "
            "cannot be compared; rescore the baseline's summaries with this version"
        )
    (oh, on), (nh, nn) = _pooled(old), _pooled(new)
    old_recall = oh / on if on else None
    new_recall = nh / nn if nn else None
    result = Comparison(old_recall, new_recall, max_drop)
    if old_recall is None or new_recall is None:
        result.lines.append("eval: no scored checkpoint on one side: recall not compared")
        return result
    drop = old_recall - new_recall
    result.failed = drop > max_drop + 1e-9
    verdict = "FAILED" if result.failed else "ok"
    change = round(-drop, 3) + 0.0  # no "-0.0%" for an unchanged recall
    result.lines.append(
        f"eval: artifact recall {old_recall:.1%} -> {new_recall:.1%} ({change:+.1%}; allowed drop {max_drop:.1%}): {verdict}"
    )
    fresh = {(cp["session"], cp["turn"]): cp for cp in new["checkpoints"]}
    lost: list[str] = []
    for cp in old["checkpoints"]:
        now = fresh.get((cp["session"], cp["turn"]))
        if now is None:
            continue
        kept = {(p["kind"], p["text"]) for p in now["probes"] if p["summary"]}
        for p in cp["probes"]:
            if p["summary"] and p["kind"] in ARTIFACT_KINDS and (p["kind"], p["text"]) not in kept:
                lost.append(
                    f"  lost [{p['kind']}] {p['text']}  (session {cp['session']} summary at turn {cp['turn']}; "
                    f"from message {p['message']}, turn {p['turn']} of {cp['path']})"
                )
    if lost:
        result.lines.append(
            f"eval: {len(lost)} probe(s) the baseline's summaries carried are lost:"
        )
        result.lines.extend(lost[:LOST_SHOWN])
        if len(lost) > LOST_SHOWN:
            where = (
                f"see {scores_at}" if scores_at else f"keep this run's {SCORES_FILE} with --out DIR"
            )
            result.lines.append(f"  ... and {len(lost) - LOST_SHOWN} more ({where})")
    return result


def gate(
    paths: list[str],
    fresh_dir: Path,
    baseline_dir: Path | None,
    *,
    max_drop: float = DEFAULT_MAX_DROP,
    fmt: str | None = None,
    scores_at: str | None = SCORES_FILE,
    skip_bad_lines: bool = False,
) -> Comparison | None:
    """Score the fresh run (written to its ``eval.json``) and compare with the baseline.
    ``scores_at``: where that file is kept, as the lost-probe list names it.

    The baseline's stored scores are used when they come from this extractor; otherwise
    its summaries are rescored now (and the comparison says so). None: nothing to score."""
    new = score_replay_output(paths, fresh_dir, fmt=fmt, skip_bad_lines=skip_bad_lines)
    if new is None:
        return None
    write_scores(new, fresh_dir)
    if baseline_dir is None or not (baseline_dir / "summaries.jsonl").is_file():
        return None
    old = load_scores(baseline_dir)
    note = None
    if old is None or old.get("extractor_version") != EXTRACTOR_VERSION:
        was = (
            "no stored scores"
            if old is None
            else f"scores from probe extractor v{old.get('extractor_version')}"
        )
        note = f"eval: baseline has {was}; its summaries were rescored with v{EXTRACTOR_VERSION}"
        old = score_replay_output(paths, baseline_dir, fmt=fmt, skip_bad_lines=skip_bad_lines)
        if old is None:
            return None
    comparison = compare_scores(old, new, max_drop, scores_at)
    if note:
        comparison.lines.insert(0, note)
    return comparison
