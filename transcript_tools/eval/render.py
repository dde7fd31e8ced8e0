"""The text table of ``tsum eval`` and the HTML page (``templates/eval.html.j2``), with,
when asked, its trade-off chart (``present.chart``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..present.chart import Point, Reference, render_svg
from ..present.numbers import percent
from ..present.page import page_template
from ..present.table import fixed_row
from .artifacts import ARTIFACT_KINDS, REQUEST
from .evaluation import EvalResult
from .policy_probes import POLICY_ACTION
from .policy_table import render_policy_text
from .records import RECORDED

_ORDINAL = {"1": "1st", "2": "2nd", "3": "3rd"}


def _columns(result: EvalResult) -> list[tuple[str, str, str]]:
    """(header, label, variant) of each column; variants that wrote identical text share one."""
    cols: list[tuple[str, str, str]] = []
    labels = list(result.labels)
    tsum = [label for label in labels if not label.startswith(RECORDED)]
    if result.identical_summaries and len(tsum) > 1:
        labels = [tsum[0], *[label for label in labels if label.startswith(RECORDED)]]
    for label in labels:
        header = (
            "=".join(tsum)
            if result.identical_summaries and label == tsum[0] and len(tsum) > 1
            else label
        )
        cols.append((header, label, "summary"))
        cols.append(("  truncation", label, "truncation"))
    if result.labels:
        cols.append(("no summary", result.labels[0], "none"))
    return cols


@dataclass(slots=True)
class RecallTable:
    """The comparison table as cells: the text table and the HTML page both render it."""

    columns: list[str]  # the value columns' headers (a floor's starts with spaces)
    recall: list[tuple[str, list[str]]]  # (row name, cells): recall per probe kind
    stats: list[tuple[str, list[str]]]  # (row name, cells): counts, under the summaries
    notes: list[str] = field(default_factory=list)  # the lines after it ("" between blocks)


def recall_table(result: EvalResult) -> RecallTable | None:
    """Recall per probe kind, each summary next to its floors; None: nothing was scored."""
    data = {label: result.aggregates[label].as_json() for label in result.labels}
    cols = _columns(result)
    if not any(d["checkpoints"] for d in data.values()):
        return None
    shown = [k for k in ARTIFACT_KINDS if any(d["probes"].get(k) for d in data.values())]
    table = RecallTable([c[0] for c in cols], [], [])
    for kind in ["artifact", *shown, REQUEST]:
        own = {label: _probe_count(data[label]["probes"], kind) for _, label, _ in cols}
        counts = set(own.values()) - {0} or {0}
        name = kind if kind in ("artifact", REQUEST) else f"  {kind}"
        if len(counts) == 1:  # every column stands on the same probes: its count once
            name += f" ({counts.pop()})"
        cells = [
            _recall_cell(data[label]["recall"][variant].get(kind), own[label], len(counts) > 1)
            for _, label, variant in cols
        ]
        table.recall.append((name, cells))
    for name, key, kind in (
        ("artifact, shorter only", "recall_where_shorter", "artifact"),
        ("artifact, shown only", "recall_where_shown", "artifact"),
        ("request, shown only", "recall_where_shown", REQUEST),
    ):
        cells = [percent(data[label][key][variant].get(kind)) for _, label, variant in cols]
        table.recall.append((name, cells))
    for name, get in _stat_rows(data):
        cells = [get(data[label]) if variant == "summary" else "" for _, label, variant in cols]
        table.stats.append((name, cells))
    table.notes = _table_notes(data, cols)
    return table


def _probe_count(probes: dict[str, int], kind: str) -> int:
    """A variant's probes of ``kind``; of every artifact kind for "artifact"."""
    if kind == "artifact":
        return sum(probes.get(k, 0) for k in ARTIFACT_KINDS)
    return probes.get(kind, 0)


def _recall_cell(recall: float | None, count: int, own_count: bool) -> str:
    """A recall; with ``own_count`` (the columns of its row stand on different probes,
    e.g. a recorded compaction's beside tsum's summaries) the probes it stands on."""
    if own_count and recall is not None and count:
        return f"{percent(recall)} ({count})"
    return percent(recall)


def _stat_rows(data: dict[str, Any]) -> list[tuple[str, Callable[..., str]]]:
    rows: list[tuple[str, Callable[..., str]]] = [
        ("checkpoints", lambda d: str(d["checkpoints"])),
        ("probes", lambda d: str(sum(d["probes"].values()))),
        ("language match", lambda d: f"{d['language_match']}/{d['checkpoints']}"),
        ("summary tokens (mean)", lambda d: str(d["summary_tokens_mean"])),
        ("compression (mean)", lambda d: str(d["compression_mean"])),
        ("not shorter (flag)", lambda d: str(d["not_shorter"])),
        (
            "summary cost in/out",
            lambda d: f"{d['summary_cost']['input_tokens']}/{d['summary_cost']['output_tokens']}",
        ),
    ]
    if any("recall_per_1k_retained_tokens" in d for d in data.values()):  # eval --cost
        rows.append(
            (
                "probes per 1k retained",
                lambda d: str(d.get("recall_per_1k_retained_tokens", "—")),
            )
        )
    judged_kinds = sorted({k for d in data.values() for k in (d["judged"] or {})})
    for kind in judged_kinds:
        rows.append(
            (f"judged {kind} (0-5)", lambda d, k=kind: str((d["judged"] or {}).get(k, "—")))
        )
    return rows


def _table_notes(data: dict[str, Any], cols: list[tuple[str, str, str]]) -> list[str]:
    lines: list[str] = []
    unseen = [
        (label, d["probes_not_shown"], sum(d["probes"].values()))
        for label, d in data.items()
        if d["probes_not_shown"]
    ]
    if unseen:
        lines.append("")
        lines.append(
            "never shown to the summarizer (older than the prompt's character limit, "
            "--max-transcript-chars):"
        )
        for label, missing, total in unseen:
            artifacts = sum(n for k, n in missing.items() if k in ARTIFACT_KINDS)
            requests = missing.get(REQUEST, 0)
            lines.append(
                f"  {label}: {sum(missing.values())} of {total} probes "
                f"({artifacts} artifact, {requests} request)"
            )
    lines.append("")
    lines.append("artifact recall by the summary's position in its session (summary / truncation):")
    for label in dict.fromkeys(c[1] for c in cols):
        parts = []
        for pos, item in data[label]["by_position"].items():
            ordinal = _ORDINAL.get(pos, pos if pos.endswith("+") else pos + "th")
            parts.append(
                f"{ordinal} {percent(item['summary'])} / {percent(item['truncation'])} (n={item['checkpoints']})"
            )
        lines.append(f"  {label}: " + ("; ".join(parts) or "—"))
    return lines


NOTHING_SCORED = "no checkpoint fired: nothing to score (lower --max-context-tokens or --ratio?)"


def render_text(result: EvalResult) -> str:
    """The table ``tsum eval`` prints: with ``--policy`` the policies'
    (eval/policy_table.py), else recall per probe kind, each summary next to its floors."""
    if result.policies:
        return render_policy_text(
            {label: agg.as_json() for label, agg in result.policies.items()},
            {label: result.aggregates[label].as_json() for label in result.labels},
            result.failed,
        )
    table = recall_table(result)
    if table is None:
        return NOTHING_SCORED + "\n"
    width = max(12, *(len(c) for c in table.columns))

    def row(name: str, cells: list[str]) -> str:
        return fixed_row([name, *cells], [22, *[width + 2] * len(cells)])

    lines = [row("recall", table.columns)]
    lines.extend(row(name, cells) for name, cells in table.recall)
    lines.append("")
    lines.extend(row(name, cells) for name, cells in table.stats)
    lines.extend(table.notes)
    return "\n".join(lines) + "\n"


# ---- HTML ---------------------------------------------------------------------------


def _segments(text: str, needles: list[str]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_lost_probe) segments, case-insensitively."""
    needles = sorted({n for n in needles if n.strip()}, key=len, reverse=True)
    if not needles:
        return [(text, False)]
    pattern = re.compile("|".join(re.escape(n) for n in needles), re.IGNORECASE)
    out: list[tuple[str, bool]] = []
    at = 0
    for m in pattern.finditer(text):
        if m.start() > at:
            out.append((text[at : m.start()], False))
        out.append((m.group(), True))
        at = m.end()
    if at < len(text):
        out.append((text[at:], False))
    return out


def _policy_tradeoff(result: EvalResult) -> dict[str, Any]:
    """--policy: each policy's artifact recall in the next view against the tokens that
    view holds (mean over its actions, summaries and pre-passes alike), beside the
    uncompacted history (every probe: 100%) and no summary at all (0%)."""
    points: list[Point] = []
    kept_whole: list[float] = []
    for label, agg in result.policies.items():
        data = agg.as_json()
        recall, tokens = data["recall"]["view"].get("artifact"), data["view_tokens_after_mean"]
        if recall is None or tokens is None:
            continue
        actions = sum(data["actions"].values())
        detail = (
            f"{label}: artifact recall {recall:.0%} in the next view over {actions} action(s), "
            f"{tokens:,.0f} tokens in that view (mean)"
        )
        points.append(Point(label, float(tokens), float(recall), detail))
        if data["uncompacted_tokens_mean"] is not None:
            kept_whole.append(float(data["uncompacted_tokens_mean"]))
    references = [Reference("no summary, nothing kept", 0.0, 0.0)]
    if kept_whole:  # the same logs under every policy: one uncompacted run (the mean)
        references.insert(0, Reference("uncompacted", 1.0, sum(kept_whole) / len(kept_whole)))
    svg = render_svg(
        points,
        references,
        x_title="tokens in the view after each action (mean): summary, kept messages, placeholders",
    )
    caption = (
        f"One point per policy with a recall figure ({len(points)}): its actions' artifact "
        "recall in the next view against that view's size; the Pareto front (no other policy "
        "keeps fewer tokens and more probes) is joined and labelled. Reference marks: the "
        "uncompacted history (every probe kept, at its mean size) and no summary at all (0%). "
        "Every size in one size model, the table's view tok: the log's messages as billed where "
        "it records usage, the seed's too. The per-action floors are in the table above."
    )
    return {"svg": svg, "points": len(points), "caption": caption}


def _tradeoff(result: EvalResult) -> dict[str, Any]:
    """Each variant's artifact recall against the tokens its summaries put in the view
    (mean per checkpoint), beside the floors of docs/eval.md "Floors": truncation, at the
    summary's own length by construction, and no summary (0 tokens, 0%); and the
    uncompacted run, which keeps the replaced part whole (every probe: 100%)."""
    points: list[Point] = []
    floors: dict[tuple[float, float], list[str]] = {}
    kept_whole: dict[float, list[str]] = {}
    for label in result.labels:
        agg = result.aggregates[label]
        data = agg.as_json()
        recall = data["recall"]["summary"].get("artifact")
        if not agg.checkpoints or recall is None:
            continue
        tokens = agg.summary_tokens / agg.checkpoints
        detail = (
            f"{label}: artifact recall {recall:.0%} over {agg.checkpoints} checkpoint(s), "
            f"{tokens:.0f} summary tokens (mean)"
        )
        points.append(Point(label, tokens, recall, detail))
        truncation = data["recall"]["truncation"].get("artifact")
        if truncation is not None:
            floors.setdefault((tokens, truncation), []).append(label)
        kept_whole.setdefault(round(agg.replaced_tokens / agg.checkpoints), []).append(label)
    references = [
        Reference(
            "uncompacted" + (f" ({', '.join(labels)})" if len(kept_whole) > 1 else ""), 1.0, x
        )
        for x, labels in kept_whole.items()
    ]
    references += [
        Reference(
            "truncation floor" + (f" ({' = '.join(labels)})" if len(floors) > 1 else ""), y, x
        )
        for (x, y), labels in floors.items()
    ]
    references.append(Reference("no summary", 0.0, 0.0))
    svg = render_svg(
        points,
        references,
        x_title="summary tokens in the view in place of the replaced history (mean per checkpoint)",
    )
    return {"svg": svg, "points": len(points)}


def html_context(result: EvalResult, notes: list[str], *, chart: bool = False) -> dict[str, Any]:
    """The page's values."""
    checkpoints = []
    actions = [r for r in result.kept if r["kind"] == POLICY_ACTION]
    for record in (r for r in result.kept if r["kind"] != POLICY_ACTION):
        lost = [p for p in record["probes"] if not p["summary"]]
        lost_texts = [p["text"] for p in lost if p["kind"] != REQUEST]
        lost_at = {p["message"] for p in lost}
        blocks = [
            {"index": i, "segments": _segments(text, lost_texts), "lost": i in lost_at}
            for i, text in record["replaced_text"]
        ]
        checkpoints.append({**record, "lost": lost, "blocks": blocks})
    return {
        "table": render_text(result),
        # the standard table as cells (a <table>); --policy's own table stays text
        "recall_table": None if result.policies else recall_table(result),
        "nothing_scored": NOTHING_SCORED,
        "notes": notes,
        "checkpoints": checkpoints,
        "policy_actions": [
            {**a, "lost": [p for p in a["probes"] if not p["view"]]} for a in actions
        ],
        "summary": result.as_json(),
        "tradeoff": (_policy_tradeoff(result) if result.policies else _tradeoff(result))
        if chart
        else None,
    }


def render_html(result: EvalResult, notes: list[str], *, chart: bool = False) -> str:
    """The page; ``chart``: the trade-off chart after the table."""
    context = html_context(result, notes, chart=chart)
    return page_template("eval.html.j2", strict=False).render(**context)
