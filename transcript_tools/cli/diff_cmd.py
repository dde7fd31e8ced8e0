"""``tsum diff OLD NEW`` (``tsum check`` is ``check_cmd.py``).

stdout carries the diff (text, ``--markdown`` or ``--json``); the one-line
verdict and the replay's end-of-run summary go to stderr. Exit codes: 0 no
differences, 1 differences, 3 could not compare (EXIT_CODES_HELP).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..diff.changes import RunDiff
from ..diff.compare import compare_dirs
from ..diff.render import (
    DEFAULT_MAX_DIFF_LINES,
    render_json,
    render_markdown,
    render_text,
    verdict_line,
)
from ..engine.config import DEFAULT_DIFF_CONTEXT
from ..errors import ConfigError
from ..terminal import echo
from .help import TsumCommand, examples
from .main import EXIT_CODES_HELP
from .outcome import finish
from .setting_options import NonEmptyPath

F = TypeVar("F", bound=Callable[..., Any])
OWN_OPTIONS = ("as_json", "markdown", "context", "max_diff_lines")


def diff_output_options(func: F) -> F:
    """--json / --markdown / --context / --max-diff-lines, shared by diff and check."""
    options = [
        click.option(
            "--json", "as_json", is_flag=True, help="Print the diff as JSON (for machines)."
        ),
        click.option(
            "--markdown",
            is_flag=True,
            help="Print the diff as Markdown (for a pull-request comment).",
        ),
        click.option(
            "--context",
            type=click.IntRange(min=0),
            default=DEFAULT_DIFF_CONTEXT,
            show_default=True,
            help="Lines of context around each change in the unified diffs.",
        ),
        click.option(
            "--max-diff-lines",
            type=click.IntRange(min=1),
            default=DEFAULT_MAX_DIFF_LINES,
            show_default=True,
            help="Cut each unified diff after N lines.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def render_diff(
    diff: RunDiff,
    as_json: bool,
    markdown: bool,
    max_diff_lines: int,
    json_extra: dict[str, Any] | None = None,
) -> str:
    """The diff as --json (with ``json_extra``'s keys), --markdown or text (the commands
    refuse both flags up front)."""
    if as_json:
        return render_json(diff, json_extra)
    if markdown:
        return render_markdown(diff, max_diff_lines=max_diff_lines)
    return render_text(diff, max_diff_lines=max_diff_lines)


def finish_diff(
    diff: RunDiff,
    opts: dict[str, Any],
    silent: bool,
    appendix: str = "",
    json_extra: dict[str, Any] | None = None,
) -> None:
    """The diff on stdout (then ``appendix``: check's gates in Markdown; with --json,
    ``json_extra``: check's gates as a key), the verdict line on stderr, and the exit code."""
    rendered = render_diff(
        diff, opts["as_json"], opts["markdown"], opts["max_diff_lines"], json_extra
    )
    echo(rendered + appendix, nl=False)
    if not silent:
        echo(verdict_line(diff), err=True)
    finish(differences=not diff.identical)


@click.command(
    cls=TsumCommand,
    epilog=examples(
        "tsum diff before/ after/                       (two tsum replay --out directories)",
        "tsum diff before/ after/ --markdown > diff.md",
        "tsum diff before/ after/ --json",
    )
    + "\n\n"
    + EXIT_CODES_HELP,
)
@click.argument("old_dir", type=NonEmptyPath())
@click.argument("new_dir", type=NonEmptyPath())
@diff_output_options
@click.option("--silent", is_flag=True, help="No verdict line on stderr.")
def diff_command(old_dir: Path, new_dir: Path, silent: bool, **opts: Any) -> None:
    """Compare two `tsum replay --out` directories, per session and turn.

    Shows changes of the trigger schedule (summaries added, removed, moved),
    the rendered prompts and the summary texts (unified diffs), the template
    (by hash) and other settings in run.json, and token deltas. manifest.json
    (timings) is ignored.
    """
    if opts["as_json"] and opts["markdown"]:
        raise ConfigError("--json and --markdown cannot be combined: choose one")
    finish_diff(compare_dirs(old_dir, new_dir, context=opts["context"]), opts, silent)
