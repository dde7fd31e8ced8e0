"""``tsum fidelity PATH...``: each recorded compaction against the policy's replay.

stdout carries the table and the per-runtime summary (or ``--json``); warnings and
bad-input errors go to stderr. Exit code 1 when the agreement is under
``--min-agreement``, 3 when a file failed or no session was read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
import orjson

from ..engine.person_fates import FATES
from ..fidelity import FidelityResult, FidelityRow, RuntimeSummary, fidelity_paths
from ..fidelity.records import UNOBSERVED
from ..formats.inputs import NO_SESSIONS_FOUND
from ..present.numbers import grouped, whole_percent
from ..present.table import text_table
from ..reporter import Callbacks
from ..settings import settings_values
from ..terminal import echo, escape_controls
from .help import TsumCommand, examples
from .outcome import finish
from .policies_cmd import policy_option
from .settings import config_option, explicit_options, format_option

ROW_COLUMNS = (
    "file",
    "runtime",
    "version",
    "model",
    "trigger",
    "window",
    "line",
    "rec call",
    "pred call",
    "rec before",
    "rec after",
    "pred after",
    "size err",
    "rebuilt",
    "rebuilt err",
    "kept rec/pred",
    "fates k/p/d/r",
)
SUMMARY_COLUMNS = (
    "runtime",
    "compactions",
    "scored",
    "same",
    "within one",
    "off",
    "never",
    "unobserved",
    "agreement",
    "median size err",
    "median rebuilt err",
)


def _row(row: FidelityRow, base: str) -> list[str]:
    rel = os.path.relpath(row.path, base) if base else row.path
    fates = row.recorded_person_fates
    kept = (
        "-"
        if row.recorded_kept_messages is None
        else f"{row.recorded_kept_messages}/{grouped(row.predicted_kept_messages)}"
    )
    return [
        escape_controls(rel if len(rel) <= 40 else "…" + rel[-39:]),
        row.runtime,
        row.version or "?",
        escape_controls(row.model or "?"),
        row.trigger or "?",
        f"{row.window:,} ({row.window_from})",
        "-" if row.threshold is None else f"{row.threshold:,.0f}",
        str(row.recorded_call),
        _predicted(row),
        grouped(row.recorded_tokens_before),
        grouped(row.recorded_tokens_after),
        grouped(row.predicted_tokens_after),
        "-" if row.size_error is None else f"{row.size_error:+.0%}",
        grouped(row.rebuilt_tokens_after),
        "-" if row.rebuilt_error is None else f"{row.rebuilt_error:+.0%}",
        kept,
        "-" if fates is None else "/".join(str(fates[k]) for k in FATES),
    ]


def _predicted(row: FidelityRow) -> str:
    """The call the policy fires after; ``-`` where the log holds no call before the
    compaction (unobserved: nothing to fire on, not a miss), else ``never``."""
    if row.outcome == UNOBSERVED:
        return "-"
    return "never" if row.predicted_call is None else grouped(row.predicted_call)


def _summary_row(summary: RuntimeSummary) -> list[str]:
    data = summary.to_json()
    counts = ("compactions", "scored", "same", "within-one", "off", "never", "unobserved")
    return [
        summary.runtime,
        *(str(data[k]) for k in counts),
        whole_percent(summary.agreement),
        whole_percent(summary.median_size_error),
        whole_percent(summary.median_rebuilt_error),
    ]


def _table(header: tuple[str, ...], rows: list[list[str]]) -> str:
    return "\n".join(text_table([list(header), *rows], strip=True))


def render(result: FidelityResult) -> str:
    """The rows, then the summary per runtime and version, per runtime, and overall."""
    paths = [os.path.abspath(r.path) for r in result.rows]  # relative and absolute mixed
    base = os.path.dirname(os.path.commonpath(paths)) if len(set(paths)) > 1 else ""
    by_version = result.summaries(by_version=True)[:-1]
    summaries = [*by_version, *result.summaries()]
    return (
        _table(ROW_COLUMNS, [_row(r, base) for r in result.rows])
        + "\n\n"
        + _table(SUMMARY_COLUMNS, [_summary_row(s) for s in summaries])
    )


def as_json(result: FidelityResult) -> dict[str, Any]:
    return {
        "compactions": [r.to_json() for r in result.rows],
        "summary": [s.to_json() for s in result.summaries()],
        "by_version": [s.to_json() for s in result.summaries(by_version=True)[:-1]],
        "files": result.files,
        "sessions": result.sessions,
        "errors": result.errors,  # as sweep --json and eval --json carry them
    }


@click.command(
    "fidelity",
    cls=TsumCommand,
    epilog=examples(
        "tsum fidelity ~/.claude/projects/",
        "tsum fidelity logs/ --policy claude-code --json > fidelity.json",
        "tsum fidelity logs/ --min-agreement 0.9   # CI: exit 1 below 90% within one call",
    ),
)
@click.argument("paths", nargs=-1, required=True)
@policy_option
@click.option(
    "--json",
    "json_out",
    is_flag=True,
    help="Print one JSON object: compactions, summary, by_version, and files, sessions and "
    "errors (the files that could not be read, as sweep and eval give them).",
)
@click.option(
    "--min-agreement",
    type=click.FloatRange(0, 1),
    default=None,
    help="Exit 1 when fewer than this share (0-1) of the automatic compactions whose runtime "
    "version is known are fired within one call (also when there is none to measure: a gate "
    "that measured nothing does not pass).",
)
@click.option(
    "--as-is",
    is_flag=True,
    help="Replay the presets as they are, not following the runtime release and model "
    "each compaction records.",
)
@format_option
@click.option("--skip-bad-lines", is_flag=True, help="Warn about unreadable lines and go on.")
@config_option
@click.pass_context
def fidelity_command(
    ctx: click.Context,
    paths: tuple[str, ...],
    policy: Any,
    json_out: bool,
    min_agreement: float | None,
    as_is: bool,
    fmt: str | None,
    skip_bad_lines: bool,
    config_path: Path | None,
) -> None:
    """Each compaction the logs record against the policy's replay of the same log: the
    call after which it first fires, the next call's prompt after it, and (Codex) the
    person's messages kept. Without --policy each log is replayed with the preset of its
    own runtime (docs/fidelity.md).

    PATH is a file, a directory (searched for *.jsonl, *.json, *.traj,
    *.aider.chat.history.md, *.aider.llm.history and opencode.db; not *.meta.json,
    nor the folders tsum wrote) or - for stdin.
    """
    values = settings_values(explicit_options({"fmt": fmt}, ctx), config=config_path)
    result = fidelity_paths(
        list(paths),
        policy=policy,
        fmt=values.get("format"),
        skip_bad_lines=skip_bad_lines,
        follow=not as_is,
        reporter=Callbacks(lambda m: echo(m, err=True)),
    )
    if json_out:
        click.echo(orjson.dumps(as_json(result), option=orjson.OPT_INDENT_2).decode())
    elif result.rows:
        echo(render(result))
    failed = f", {result.failed} failed" if result.failed else ""
    skipped = result.skipped_formats
    if skipped:  # their compactions are not in the count: say so beside it
        names = ", ".join(f"{name} {n}" for name, n in skipped.items())
        failed += (
            f"; {sum(skipped.values())} session(s) with compactions skipped ({names}: no preset)"
        )
    echo(
        f"{len(result.rows)} recorded compactions in {result.sessions} sessions,"
        f" {result.files} files{failed}",
        err=True,
    )
    agreement = result.agreement
    below = min_agreement is not None and (agreement is None or agreement < min_agreement)
    if below and min_agreement is not None and not (result.failed or not result.sessions):
        echo(_gate_failure(agreement, min_agreement), err=True)
    nothing = not result.sessions and not result.failed  # an error above says why otherwise
    finish(
        failed=result.failed > 0 or not result.sessions,
        differences=below,
        error=NO_SESSIONS_FOUND if nothing else None,
    )


def _gate_failure(agreement: float | None, min_agreement: float) -> str:
    """Why --min-agreement fails: an agreement under it, or none measured at all."""
    if agreement is None:
        return (
            "tsum: no agreement measured (no automatic compaction with a known runtime version"
            f" in these logs), so --min-agreement {min_agreement:.0%} is not met"
        )
    return (
        f"tsum: agreement {whole_percent(agreement)} is under --min-agreement {min_agreement:.0%}"
    )
