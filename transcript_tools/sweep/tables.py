"""The sweep's table, CSV and JSON forms (of :class:`~.driver.SweepResult`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import orjson

from ..errors import ConfigError
from ..present.numbers import compact
from ..present.table import text_table
from .config import auto_window_cell
from .cost_table import COST_COLUMNS, COST_KEY, cost_cell, cost_legend, cost_notes


class _ConfigFigures(Protocol):
    def to_json(self) -> dict[str, Any]: ...


class SweepTableSource(Protocol):
    """What the forms read of a ``driver.SweepResult`` (no import of the driver)."""

    @property
    def configs(self) -> Sequence[object]: ...
    @property
    def stats(self) -> Sequence[_ConfigFigures]: ...
    @property
    def files(self) -> int: ...
    @property
    def conversations(self) -> int: ...
    @property
    def turns(self) -> int: ...
    @property
    def fast_runs(self) -> int: ...
    @property
    def engine_runs(self) -> int: ...
    @property
    def errors(self) -> Sequence[str]: ...
    @property
    def summary_source(self) -> str: ...


# ---- sorting and output ----------------------------------------------------------------

SORT_KEYS: dict[str, tuple[str, str]] = {
    "config": ("", "the order of the grid"),
    "calls": ("summary_calls", "total summary calls"),
    "cost": ("summarizer_input_tokens_estimated", "tokens sent to the summarizer"),
    "summarizing": ("summarizing_conversations", "conversations that ever summarize"),
    "first": ("first_trigger_turn_p50", "median first-trigger turn"),
    "peak": ("view_peak_with_summaries", "peak view with summaries"),
    "mean-view": ("view_mean_with_summaries", "mean view with summaries"),
    "overflow": ("overflow_turns", "turns above max_context_tokens"),
    "cadence": ("fixed_cadence_conversations", "conversations in a fixed cadence"),
}


def sort_key(sort: str) -> str:
    """The ``SORT_KEYS`` name of a row order (``-`` before it: descending), else a ConfigError."""
    key_name = sort.lstrip("-")
    if key_name not in SORT_KEYS:
        raise ConfigError(f"unknown sort key {key_name!r} (known: {', '.join(SORT_KEYS)})")
    return key_name


def sorted_rows(result: SweepTableSource, sort: str = "calls") -> tuple[list[dict[str, Any]], str]:
    """Rows (JSON dicts, with their grid index as ``config``), and how they are sorted."""
    descending = sort.startswith("-")
    key_name = sort_key(sort)
    rows = []
    for index, stats in enumerate(result.stats):
        row = {"config": index + 1}
        row.update(stats.to_json())
        rows.append(row)
    field_name, text = SORT_KEYS[key_name]
    if field_name:

        def key(row: dict[str, Any]) -> tuple[int, float, int]:
            value = row[field_name]
            if value is None:  # nothing to compare: last
                return (1, 0.0, row["config"])
            return (0, -value if descending else value, row["config"])

        rows.sort(key=key)
    order = "descending" if descending else "ascending"
    return rows, f"sorted by {text}" + (f" ({order}, ties in grid order)" if field_name else "")


COLUMNS: list[tuple[str, str]] = [
    ("#", "config"),
    ("ratio", "trigger_token_ratio"),
    ("max_ctx", "max_context_tokens"),
    ("deb", "debounce_turns"),
    ("mode", "mode"),
    ("measure", "measure"),
    ("summarize", "summarizing"),
    ("calls", "summary_calls"),
    ("mean", "calls_per_conversation_mean"),
    ("p50", "calls_per_conversation_p50"),
    ("p95", "calls_per_conversation_p95"),
    ("max", "calls_per_conversation_max"),
    ("1st p50", "first_trigger_turn_p50"),
    ("1st range", "first_range"),
    ("sum.tok", "summarizer_input_tokens_estimated"),
    ("recall", "artifact_recall"),
    ("peak w/o", "view_peak_without_summaries"),
    ("peak with", "view_peak_with_summaries"),
    ("mean w/o", "view_mean_without_summaries"),
    ("mean with", "view_mean_with_summaries"),
    ("over", "overflow_turns"),
    ("cadence", "fixed_cadence_conversations"),
    ("Δcompact", "compaction_delta_median"),
]


# Why a configuration has no recall figure (its table cell -> the reason): none of these
# is a finding, so none is ever shown as 0%.
RECALL_NOT_MEASURED: dict[str, str] = {
    "-": "not measured: no summary fired",
    "full": "not measured: in Full mode a summary replaces nothing (nothing to probe)",
    "no text": (
        "not measured: no summary text was made (the schedule does not depend on it: "
        "every schedule came from the token series); tsum eval scores these summaries"
    ),
    "no probes": "not measured: the history the summaries replaced held no artifact to probe",
}


def recall_not_measured(row: dict[str, Any]) -> str | None:
    """The RECALL_NOT_MEASURED key of a row (``ConfigStats.to_json``) without a recall
    figure, or None when it has one: artifact probes scored on summary text (engine path)."""
    if row["artifact_probes"]:
        return None
    if not row["summary_calls"]:
        return "-"

    if row["mode"] == "full":
        return "full"
    return "no probes" if row["artifact_recall_conversations"] else "no text"


def recall_cell(row: dict[str, Any]) -> str:
    """The recall as shown: the share, and over how many of the summarizing conversations
    when not all of them had summary text; or why there is none."""
    missing = recall_not_measured(row)
    if missing is not None:
        return missing
    scored, summarizing = row["artifact_recall_conversations"], row["summarizing_conversations"]
    share = f"{row['artifact_recall']:.0%}"
    return share if scored == summarizing else f"{share} ({scored}/{summarizing})"


def recall_note(row: dict[str, Any]) -> str:
    """What the recall cell stands on, in words (the HTML table's tooltip)."""
    missing = recall_not_measured(row)
    if missing is not None:
        return RECALL_NOT_MEASURED[missing]
    scored, summarizing = row["artifact_recall_conversations"], row["summarizing_conversations"]
    text = f"{row['artifact_probes']} artifact probe(s)"
    if scored == summarizing:
        return f"{text}, on every summarizing conversation"
    return (
        f"{text}, on {scored} of the {summarizing} summarizing conversations (the others "
        "had no summary text to score)"
    )


def cell(row: dict[str, Any], key: str) -> str:
    """One cell of the table: ``key`` of ``row`` (a ``sorted_rows`` row), as shown."""
    if key == "artifact_recall":
        return recall_cell(row)
    if key.startswith("cost_"):
        return cost_cell(row, key)
    if key == "summarizing":
        return f"{row['summarizing_conversations']}/{row['conversations']}"
    if key == "first_range":
        lo, hi = row["first_trigger_turn_min"], row["first_trigger_turn_max"]
        return "-" if lo is None else f"{lo}-{hi}"
    if key == "compaction_delta_median":
        if not row["compaction_conversations"]:
            return "-"
        value = row[key]
        missed = row["compaction_never_triggered"]
        text = "-" if value is None else f"{value:+d}"
        return text + (f" ({missed} never)" if missed else "")
    if key == "trigger_token_ratio":
        if row.get("trigger", "ratio") != "ratio":
            return "-"  # a policy whose line is not a plain ratio of the window
        return f"{row[key]:g}"
    if key in POLICY_CELLS:
        return POLICY_CELLS[key](row)
    if key == "calls_per_conversation_mean":
        return f"{row[key]:.1f}"
    if key == "summarizer_input_tokens_estimated" and row.get("summarizer_cost") is not None:
        return f"{compact(row[key])} ${row['summarizer_cost']:.2f}"
    if key == "checkpoint":  # absent on turn configurations (default outputs unchanged)
        return str(row.get(key, "turn"))
    if key in (
        "mode",
        "measure",
        "config",
        "debounce_turns",
        "summary_calls",
        "overflow_turns",
        "fixed_cadence_conversations",
    ):
        value = row[key]
        return str(value) if value is not None else "-"
    return compact(row[key])


def has_unit(rows: list[dict[str, Any]]) -> bool:
    """Whether the table has the ``unit`` column (and its legend line): a grid with
    ``--checkpoint call`` configurations (a turn configuration's row has no such key)."""
    return any("checkpoint" in row for row in rows)


def has_policy(rows: list[dict[str, Any]]) -> bool:
    """Whether the table has the policy columns (and their legend): a --policy grid
    other than the seed alone."""
    return any("policy" in row for row in rows)


def table_columns(rows: list[dict[str, Any]]) -> tuple[list[tuple[str, str]], set[int]]:
    """The table's columns and its text columns; ``unit`` (turn / call) only when the grid
    has ``--checkpoint call`` configurations, so default tables are unchanged."""
    columns, left = list(COLUMNS), {1, 4, 5}
    if has_unit(rows):
        columns.insert(6, ("unit", "checkpoint"))
        left.add(6)
    if has_policy(rows):  # tsum sweep --policy (docs/policies.md)
        columns.insert(1, ("policy", "policy"))
        left = {n + 1 if n >= 1 else n for n in left} | {1}
        columns += POLICY_COLUMNS
    if any(COST_KEY in row for row in rows):  # --cost only: default tables unchanged
        columns.extend(COST_COLUMNS)
        if any(row.get("cost_with_outcome") for row in rows):  # a log that scores its task
            columns.append(("$/solved", "cost_with_outcome"))
    return columns, left


# tsum sweep --policy: what its actions did to the views (engine/validity.py) and where
# its first trigger fell against the compaction the log recorded.
POLICY_COLUMNS = [
    ("cleared", "tool_results_cleared"),
    ("invalid views a/o/g/s", "violations"),
    ("agree =/±1/never", "compaction_agreement"),
]


# --max-context-tokens auto: what its max_ctx cells say (sweep/config.auto_window_cell)
AUTO_LEGEND = (
    "max_ctx auto=W (source): --max-context-tokens auto ran every conversation of the row "
    "at one window W, the one its log records (log), else its model's documented window "
    "(model), else the policy's own (policy), else the default (default); auto (mixed): "
    "at several (--json: max_context_tokens_used counts the conversations at each).\n"
)

# What each policy column says: the text table's legend line and the report's terms.
POLICY_LEGEND = (
    ("policy", "the row's compaction policy (tsum policies show NAME)"),
    ("cleared", "tool results its pre-pass replaced by a placeholder, all conversations"),
    (
        "recall of a policy row",
        "of the probes each action (a summary, or a pre-pass clearing tool results) took "
        "out of the view, the share the next view carries: a policy that never summarizes "
        "has one too",
    ),
    (
        "invalid views a/o/g/s",
        "of the views its summaries made (of N), those breaking a rule of Anthropic's, "
        "OpenAI's or Gemini's API, or of strictly alternating roles, that the log itself "
        "does not break (engine/validity.py)",
    ),
    (
        "agree =/±1/never",
        "of the N conversations where Claude Code or Codex recorded a compaction, those "
        "whose first trigger falls at its unit, within one unit of it (those at it "
        "included), or never",
    ),
)


def _violations_cell(row: dict[str, Any]) -> str:
    found = row["violations"]
    counts = "/".join(str(found.get(api, 0)) for api in ("anthropic", "openai", "gemini", "strict"))
    return f"{counts} of {row['views_checked']}"


def _agreement_cell(row: dict[str, Any]) -> str:
    agree = row["compaction_agreement"]
    if not agree["of"]:
        return "-"
    return f"{agree['same']}/{agree['within_one']}/{agree['never']} of {agree['of']}"


POLICY_CELLS: dict[str, Callable[[dict[str, Any]], str]] = {
    "policy": lambda row: str(row["policy"]),
    "tool_results_cleared": lambda row: compact(row["tool_results_cleared"]),
    "violations": _violations_cell,
    "compaction_agreement": _agreement_cell,
    "max_context_tokens": auto_window_cell,  # auto: the windows it found
}


def render_table(result: SweepTableSource, sort: str = "calls") -> str:
    rows, how = sorted_rows(result, sort)
    columns, left = table_columns(rows)
    cells = [[h for h, _ in columns]] + [[cell(r, k) for _, k in columns] for r in rows]
    lines = text_table(cells, left, strip=True, rule=True)
    legend = (
        f"{result.conversations} conversation(s), {result.turns} turn(s), {len(result.configs)} configuration(s); "
        f"{how}.\n"
        "summarize: conversations that ever summarize; calls: summary calls (total, then per conversation); "
        "1st: first-trigger turn; sum.tok: estimated tokens sent to the summarizer; "
        "peak/mean: tokens of the view the model is sent, without / with summaries; "
        "over: turns above max_context_tokens with summaries; cadence: conversations that fell into a fixed "
        "cadence (one summary every debounce turns to the end); Δcompact: median turns from the recorded "
        "Claude Code / Codex compaction to the first trigger (negative: earlier); "
        "recall: share of tsum eval's artifact probes (paths, identifiers, commands, … from the "
        "replaced history) the summaries carry, scored only where summary text was made (engine "
        "path: the current measure in Focused mode); (n/m) after it: scored on n of the m "
        "summarizing conversations, the others had no summary text; never 0% for what was not "
        "measured: 'no text' = no summary text was made (the schedule came from the token "
        "series; tsum eval scores those summaries), 'no probes' = nothing to probe, "
        "'full' = Full mode (a summary replaces nothing), '-' = no summary fired.\n"
        + (
            "unit call (--checkpoint call): the checkpoint runs after every model call; deb, 1st, over, "
            "mean and Δcompact count calls on those rows.\n"
            if has_unit(rows)
            else ""
        )
        + (
            "; ".join(f"{term}: {text}" for term, text in POLICY_LEGEND) + ".\n"
            if has_policy(rows)
            else ""
        )
        + (AUTO_LEGEND if any(row.get("max_context_tokens_used") for row in rows) else "")
        + f"summaries: {result.summary_source}."
        + (cost_legend(rows) + cost_notes(rows) if any(COST_KEY in row for row in rows) else "")
    )
    return "\n".join(lines) + "\n\n" + legend + "\n"


def render_json(result: SweepTableSource, sort: str = "calls") -> str:
    rows, how = sorted_rows(result, sort)
    doc = {
        "conversations": result.conversations,
        "turns": result.turns,
        "files": result.files,
        "errors": result.errors,
        "summary_source": result.summary_source,
        "fast_runs": result.fast_runs,
        "engine_runs": result.engine_runs,
        "sort": how,
        "configs": rows,
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def render_csv(result: SweepTableSource, sort: str = "calls") -> str:
    rows, _ = sorted_rows(result, sort)
    buffer = io.StringIO()
    if not rows:
        return ""
    names = [k for k, v in rows[0].items() if not isinstance(v, dict)]
    if "checkpoint" not in names and any("checkpoint" in row for row in rows):
        names.append("checkpoint")  # a turn,call grid: turn rows have no such key
    writer = csv.DictWriter(buffer, fieldnames=names, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        values = {"checkpoint": "turn", **row}
        writer.writerow({k: ("" if values.get(k) is None else values[k]) for k in names})
    return buffer.getvalue()
