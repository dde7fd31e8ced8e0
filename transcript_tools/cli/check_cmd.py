"""``tsum check --baseline DIR PATH...``: replay PATHS, then diff against the baseline.

stdout carries the diff (text, ``--markdown`` or ``--json``, rendered as ``tsum diff``
renders it); the one-line verdict and the replay's end-of-run summary go to stderr.
Exit codes: 0 no differences, 1 differences, 3 could not compare (EXIT_CODES_HELP).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..diff.changes import RunDiff
from ..diff.render import render_gates_markdown
from ..engine.config import DEFAULT_MAX_DROP
from ..errors import ConfigError
from ..providers.retry import public_url
from ..reporter import Callbacks
from ..terminal import echo
from .diff_cmd import OWN_OPTIONS, diff_output_options, finish_diff, render_diff
from .help import TsumCommand, examples
from .main import EXIT_CODES_HELP
from .outcome import finish
from .policies_cmd import given_value
from .replay_cmd import replay_paths
from .setting_options import NonEmptyPath, provider_options
from .settings import resolve, summary_options

if TYPE_CHECKING:
    from ..diff.check import CheckResult


@click.command(
    cls=TsumCommand,
    epilog=examples(
        "tsum check tests/transcripts/ --baseline tests/baseline/ --cache-only",
        "tsum check tests/transcripts/ --baseline tests/baseline/ --markdown > check.md",
        "tsum check tests/transcripts/ --baseline tests/baseline/ --update   (bless)",
    )
    + "\n\n"
    + EXIT_CODES_HELP,
)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--baseline",
    "baseline_dir",
    required=True,
    type=NonEmptyPath(file_okay=False),
    envvar="TSUM_BASELINE",
    show_envvar=True,
    help="The committed baseline: a replay output directory (diffable files only).",
)
@click.option(
    "--update",
    is_flag=True,
    help="Bless: replace the baseline with this run's outputs (never automatic; review the diff first).",
)
@click.option(
    "--out",
    "out_dir",
    type=NonEmptyPath(file_okay=False),
    help="Keep this run's outputs here (default: a temporary directory, removed at the end).",
)
@diff_output_options
@summary_options
@provider_options
@click.option(
    "--silent",
    is_flag=True,
    help="No progress, replay summary or verdict line on stderr; a failing gate's lines "
    "still show.",
)
@click.option(
    "--max-drop",
    type=click.FloatRange(min=0, max=1),
    default=DEFAULT_MAX_DROP,
    show_default=True,
    help="Fail when the summaries' artifact recall (tsum eval) drops by more than this "
    "(0.05 = five percentage points); the lost probes are named.",
)
@click.option(
    "--max-cost-increase",
    type=click.FloatRange(min=0),
    help="Price the run (replay --cost) and fail when its cost exceeds the baseline's by "
    "more than this share (0.05 = 5%); the baseline needs costs.jsonl (--update with this "
    "option writes it). Prices: --price-per-mtok, else genai-prices (docs/cost.md).",
)
@click.pass_context
def check_command(
    ctx: click.Context,
    /,
    paths: tuple[str, ...],
    baseline_dir: Path,
    update: bool,
    out_dir: Path | None,
    silent: bool,
    **opts: Any,
) -> None:
    """Replay PATHS and diff the outputs against a baseline, in one step (a CI gate).

    Summaries come from the response cache, so an unchanged prompt reproduces
    exactly and costs nothing; with --cache-only (CI without API keys) a
    changed prompt whose response was never recorded fails (exit 3) naming the
    sessions and turns and the command that records them. --update rewrites
    the baseline with this run's outputs.
    """
    from ..diff.check import check_corpus

    own = {name: opts.pop(name) for name in OWN_OPTIONS}
    max_drop = opts.pop("max_drop")
    max_cost_increase = opts.pop("max_cost_increase")
    if own["as_json"] and own["markdown"]:
        raise ConfigError("--json and --markdown cannot be combined: choose one")
    resolved = resolve(opts)  # a bad setting fails before anything is read or paid for

    def say(message: str) -> None:
        if not silent:
            echo(message, err=True)

    def show(diff: RunDiff, json_extra: dict[str, Any] | None = None) -> None:
        text = render_diff(diff, own["as_json"], own["markdown"], own["max_diff_lines"], json_extra)
        echo(text, nl=False)

    result = check_corpus(
        list(paths),
        baseline_dir,
        resolved,
        update=update,
        out_dir=out_dir,
        max_drop=max_drop,
        max_cost_increase=max_cost_increase,
        context=own["context"],
        replay=lambda listed, out, cost: replay_paths(
            listed, resolved, out_dir=out, silent=silent, cost=cost
        ),
        reporter=Callbacks(say, lambda message: echo(message, err=True)),
        on_update_diff=show,
        update_command=_command(ctx, add="--update"),
        record_command=_command(ctx, drop=("cache_only",)),
    )
    if result.updated is not None:
        say(result.updated)
        return
    diff = result.diff
    assert diff is not None
    gates_md, gates_json = _gates(result, own["markdown"], silent)
    if result.gate_failed and diff.identical:  # the diff as asked, no "no differences" verdict
        show(diff, gates_json)
        echo(gates_md, nl=False)
        finish(differences=True)
    finish_diff(diff, own, silent, appendix=gates_md, json_extra=gates_json)


def _gates(result: CheckResult, markdown: bool, silent: bool) -> tuple[str, dict[str, Any]]:
    """The gates' lines on stderr (a failing gate's even under ``silent``), and what stdout
    adds: with --markdown their section, with --json the key ``gates``."""
    for gate in result.gates:
        if gate.failed or not silent:
            for line in gate.lines:
                click.echo(f"tsum: {line}", err=True)
    gates_md = ""
    if markdown:  # stdout is the PR comment: the gates' verdicts belong in it
        gates_md = render_gates_markdown([(g.failed, g.lines) for g in result.gates])
    return gates_md, {"gates": result.gates_json()}


def _command(ctx: click.Context, *, drop: tuple[str, ...] = (), add: str = "") -> str:
    """This command line, rebuilt from the options actually given (command line or env).

    Environment-set options become flags, so CI's command can be pasted locally.
    """
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    words = ["tsum", ctx.info_name or "check"]
    args: list[str] = []
    for param in ctx.command.params:
        name = param.name or ""
        if name in drop or name in OWN_OPTIONS or name in ("update", "silent", "out_dir"):
            continue
        value = ctx.params.get(name)
        if isinstance(param, click.Argument):
            args.extend(str(v) for v in (value or ()))
            continue
        if ctx.get_parameter_source(name) not in given or value is None:
            continue
        flag = next((o for o in param.opts if o.startswith("--")), param.opts[0])
        if isinstance(param, click.Option) and param.is_flag:
            if value:
                words.append(flag)
        elif name == "base_url":
            words.extend([flag, public_url(str(value))])  # never echo credentials in a URL
        else:
            words.extend([flag, given_value(ctx, name, value)])
    words.extend(args)
    if add:
        words.append(add)
    return shlex.join(words)
