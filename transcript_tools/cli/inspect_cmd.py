"""``tsum inspect PATH...``: what is in transcript files, one row per session.

stdout carries the table (or ``--json``); warnings, bad-input errors and the end-of-run
line go to stderr. Exit code 3 when any file failed or no session was found.
"""

from __future__ import annotations

import os
from pathlib import Path

import click
import orjson

from ..errors import InputError, error_line
from ..inspection import InspectResult, SessionInfo, inspect_paths
from ..present.table import text_table
from ..settings import settings_values
from ..terminal import echo, escape_controls
from .help import TsumCommand, examples
from .outcome import finish
from .progress import RunStderr, warnings_option
from .setting_options import scale_options
from .settings import config_option, explicit_options, format_option

COLUMNS = (
    ("file", "<"),
    ("session", "<"),
    ("format", "<"),
    ("turns", ">"),
    ("calls", ">"),  # model calls: the units of --checkpoint call
    ("msgs", ">"),
    ("sys/user/asst/tool", ">"),
    ("tool calls", ">"),
    ("recorded", ">"),
    ("estimated", ">"),
    ("est.err med/p90", ">"),
    ("max ctx", ">"),
    ("compactions@turn", "<"),
)


def _short(path: str, base: str, width: int = 48) -> str:
    """The path relative to the common directory of the listing, cut from the left."""
    rel = os.path.relpath(path, base) if base else path
    return rel if len(rel) <= width else "…" + rel[-(width - 1) :]


def _row(info: SessionInfo, base: str) -> list[str]:
    m = info.messages
    err = info.estimate_error
    # Paths and session ids come from the files: escaped before the widths are measured.
    session_id = escape_controls(info.session_id)
    return [
        escape_controls(_short(info.path, base)),
        session_id if len(session_id) <= 40 else session_id[:39] + "…",
        info.format,
        str(info.turns),
        str(info.model_calls),
        str(sum(m.values())),
        f"{m['system']}/{m['user'] + m['user_image']}/{m['assistant']}/{m['tool']}",
        str(info.tool_calls),
        f"{info.recorded_tokens:,}" if info.recorded_tokens is not None else "-",
        f"{info.estimated_tokens:,}",
        f"{err.median:.0%}/{err.p90:.0%}" if err else "-",
        f"{info.largest_context:,}" + ("" if info.largest_context_kind == "recorded" else " est"),
        ",".join(str(c.turn) for c in info.compactions) or "-",
    ]


def render_context(infos: list[SessionInfo]) -> str:
    """What fills the context over every session, and the commands and failures that
    say the context ran out: /clear, /compact, "prompt is too long"."""
    from ..engine.composition import shares

    tokens: dict[str, int] = {}
    commands = {"/clear": 0, "/compact": 0}
    for info in infos:
        for kind, count in info.context_by_kind.items():
            tokens[kind] = tokens.get(kind, 0) + count
        for name in commands:
            commands[name] += info.commands.get(name, 0)
    parts = ", ".join(f"{kind} {share:.1%}" for kind, share in shares(tokens).items())
    overflows = sum(info.context_overflows for info in infos)
    return (
        f"what fills the context (estimated, {sum(tokens.values()):,} tokens of content): {parts}\n"
        + "commands: "
        + ", ".join(f"{name} {count}" for name, count in commands.items())
        + f'; calls failed with "prompt is too long": {overflows}'
    )


def render_table(infos: list[SessionInfo]) -> str:
    paths = [i.path for i in infos if i.path != "-"]
    try:
        base = (
            os.path.dirname(os.path.commonpath(paths))
            if len(set(paths)) > 1
            else os.path.dirname(paths[0])
        )
    except (ValueError, IndexError):  # mixed absolute/relative paths, or stdin only
        base = ""
    rows = [[name for name, _ in COLUMNS]] + [_row(i, base) for i in infos]
    left = [c for c, (_, align) in enumerate(COLUMNS) if align == "<"]
    return "\n".join(text_table(rows, left, strip=True))


def _show(done: InspectResult, as_json: bool, with_errors: bool) -> None:
    """stdout: --json's list of sessions (--with-errors: the object that also names every
    file it leaves out), else the table and what fills the context."""
    if as_json:
        doc = done.to_json() if with_errors else [i.to_json() for i in done.sessions]
        click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    elif done.sessions:
        echo(render_table(done.sessions))
        echo(render_context(done.sessions))


@click.command(
    "inspect",
    cls=TsumCommand,
    epilog=examples(
        "tsum inspect samples/",
        "tsum inspect ~/.claude/projects/ --json > inventory.json",
        "tsum inspect corpus/ --json --with-errors > inventory.json",
        "tsum inspect corpus/ --format codex --skip-bad-lines",
    ),
)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a JSON list, one object per session; its warnings are every warning the"
    " text run prints for it (the file's, while it was read, and its own).",
)
@click.option(
    "--with-errors",
    is_flag=True,
    help="With --json: print one object instead of the list, {sessions: the list, files,"
    " failed, errors: [{path, line, item, error}] for each file that failed, skipped:"
    " [{path, warnings}] for each file read without a session}: the JSON alone names"
    " every file it leaves out.",
)
@format_option
@click.option("--skip-bad-lines", is_flag=True, help="Warn about unreadable lines and go on.")
@config_option
@warnings_option
@scale_options
@click.pass_context
def inspect_command(
    ctx: click.Context,
    paths: tuple[str, ...],
    as_json: bool,
    with_errors: bool,
    fmt: str | None,
    skip_bad_lines: bool,
    config_path: Path | None,
    warnings_mode: str,
    workers: int | None,
    ray_address: str | None,
) -> None:
    """Per session: format, turns, messages by role, tool calls, recorded vs estimated
    tokens, largest context and the compactions the agent recorded.

    PATH: a file, a directory (searched for *.jsonl, *.json, *.traj, *.aider.chat.history.md,
    *.aider.llm.history, opencode.db; not *.meta.json, nor folders tsum wrote) or - (stdin).
    "est.err" compares tsum's estimate of each call's prompt with the recorded input tokens
    (median / p90 of the relative error); "max ctx" is the largest recorded input, or the
    largest estimated context ("est") when the log has no usage.

    Below the table: what fills the context (the estimated tokens of tool results, tool calls,
    assistant text, thinking, the person's text, attachments, runtime injections and system
    prompts, as shares of all sessions' content), the /clear and /compact commands the logs
    record, and the calls that failed with "prompt is too long". --json gives them per
    session (context_by_kind, commands, context_overflows).
    """
    from ..parallel.pool import backend_for

    if with_errors and not as_json:
        raise click.UsageError("--with-errors shapes the output of --json: give --json too")
    stderr = RunStderr(list(paths), desc="inspect", silent=False, warnings_mode=warnings_mode)

    def error(exc: InputError) -> None:
        stderr.error(error_line(exc.location_text()))

    # The settings file's format and workers apply here too (settings.PRECEDENCE).
    values = settings_values(
        explicit_options({"fmt": fmt, "workers": workers}, ctx), config=config_path
    )
    backend = backend_for(values.get("workers"), ray_address)
    done = inspect_paths(
        list(paths),
        fmt=values.get("format"),
        skip_bad_lines=skip_bad_lines,
        backend=backend,
        warn=stderr.warn,
        error=error,
        on_session=lambda info: stderr.session(info.path),
    )
    stderr.close()
    infos, run = done.sessions, done
    _show(done, as_json, with_errors)
    failed = f", {run.failed} failed" if run.failed else ""
    echo(f"{len(infos)} sessions in {run.files} files{failed}", err=True)
    finish(
        failed=bool(run.failed or not infos),
        error="no sessions found" if not infos and not run.failed else None,
    )
