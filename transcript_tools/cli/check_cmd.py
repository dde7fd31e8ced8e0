"""``tsum check --baseline DIR PATH...``: replay PATHS, then diff against the baseline.

stdout carries the diff (text, ``--markdown`` or ``--json``, rendered as ``tsum diff``
renders it); the one-line verdict and the replay's end-of-run summary go to stderr.
Exit codes: 0 no differences, 1 differences, 3 could not compare (EXIT_CODES_HELP).
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any

import click

from ..diff.baseline import cache_only_message, cache_only_misses, seed_cache, update_baseline
from ..diff.compare import ReplayOutput, diff_outputs, load_output
from ..diff.render import (
    verdict_line,
)
from ..errors import ConfigError, ExitCode, TsumError
from ..providers.cache import CacheMode
from ..providers.factory import build_executor
from ..providers.retry import public_url
from ..replay.run import RunStatus
from ..terminal import echo
from .diff_cmd import OWN_OPTIONS, diff_output_options, finish_diff, render_diff
from .main import EXIT_CODES_HELP
from .provider_options import provider_options
from .replay_cmd import replay_paths
from .settings import ResolvedSettings, resolve, summary_options


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--baseline",
    "baseline_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
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
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep this run's outputs here (default: a temporary directory, removed at the end).",
)
@diff_output_options
@summary_options
@provider_options
@click.option(
    "--silent", is_flag=True, help="No progress, replay summary or verdict line on stderr."
)
@click.option(
    "--max-drop",
    type=click.FloatRange(min=0, max=1),
    default=0.05,
    show_default=True,
    help="Fail when the summaries' artifact recall (tsum eval) drops by more than this "
    "(0.05 = five percentage points); the lost probes are named.",
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
    own = {name: opts.pop(name) for name in OWN_OPTIONS}
    max_drop = opts.pop("max_drop")
    if own["as_json"] and own["markdown"]:
        raise ConfigError("--json and --markdown cannot be combined: choose one")
    if out_dir is not None and out_dir.resolve() == baseline_dir.resolve():
        raise ConfigError(
            "--out must not be the --baseline directory (use --update to rewrite the baseline)"
        )
    resolved = resolve(opts)  # a bad setting fails before anything is read or paid for
    baseline = None
    if baseline_dir.exists() or not update:
        try:
            baseline = load_output(baseline_dir)  # fail before paying for a replay
        except TsumError as exc:
            if not update:
                raise TsumError(
                    f"baseline: {exc}\n(create or rewrite it with: {_command(ctx, add='--update')})"
                ) from None
            if not silent:
                echo(f"tsum: warning: baseline unreadable, it will be replaced: {exc}", err=True)

    if baseline is not None:
        seeded = _seed(baseline, resolved)
        if seeded and not silent:
            echo(
                f"tsum: {seeded} summary response(s) taken from the baseline into the cache",
                err=True,
            )

    with tempfile.TemporaryDirectory(prefix="tsum-check-") as tmp:
        fresh_dir = out_dir if out_dir is not None else Path(tmp) / "fresh"
        replay_error = _replay(paths, fresh_dir, silent, resolved)
        missing = cache_only_misses(fresh_dir) if opts.get("cache_only") else []
        fresh = None
        if replay_error is None or missing:
            try:
                fresh = load_output(fresh_dir)
            except TsumError:
                if replay_error is None:
                    raise
        diff = None
        if baseline is not None and fresh is not None:
            diff = diff_outputs(
                baseline,
                fresh,
                old_label=str(baseline_dir),
                new_label="this run",
                context=own["context"],
            )
        if missing:
            raise TsumError(cache_only_message(missing, diff, _command(ctx, drop=("cache_only",))))
        if replay_error is not None:
            raise replay_error
        assert fresh is not None
        from ..eval.baseline import gate  # tsum eval's recall gate (docs/eval.md)

        scores = gate(
            list(paths),
            fresh_dir,
            baseline_dir if baseline else None,
            max_drop=max_drop,
            fmt=opts.get("fmt"),
        )
        if update:
            failed = sum(
                1
                for r in fresh.sessions.values()
                for s in r.summaries.values()
                if s["status"] != "ok"
            )
            if failed:
                raise TsumError(
                    f"--update refused: {failed} summary call(s) failed in this run "
                    "(see summaries.jsonl); a baseline must not record failures"
                )
            if diff is not None:
                echo(
                    render_diff(diff, own["as_json"], own["markdown"], own["max_diff_lines"]),
                    nl=False,
                )
            update_baseline(fresh_dir, baseline_dir)
            if (fresh_dir / "eval.json").is_file():
                shutil.copyfile(fresh_dir / "eval.json", baseline_dir / "eval.json")
            if not silent:
                if diff is None:
                    what = "written (new baseline)"
                elif diff.identical:
                    what = "rewritten (no differences)"
                else:
                    what = "updated (" + verdict_line(diff).removeprefix("tsum: ") + ")"
                echo(f"tsum: baseline {baseline_dir} {what}", err=True)
            return
        assert diff is not None
        for line in scores.lines if scores is not None and not silent else ():
            click.echo(f"tsum: {line}", err=True)
        if scores is not None and scores.failed and diff.identical:
            ctx.exit(int(ExitCode.DIFFERENCES))
        finish_diff(ctx, diff, own, silent)


class _ReplayFailed(TsumError):
    """The replay inside check could not run (its errors are already on stderr)."""


def _replay(
    paths: tuple[str, ...], out: Path, silent: bool, resolved: ResolvedSettings
) -> TsumError | None:
    """Replay PATHS into OUT through the library, as ``tsum replay`` would; its failure, if any."""
    result = replay_paths(list(paths), resolved, out_dir=out, silent=silent)
    if result.status is RunStatus.OK:
        return None
    if result.status in (RunStatus.CACHE_MISS, RunStatus.ALL_SUMMARIES_FAILED):
        return TsumError(result.message or result.status.value)
    if result.status is RunStatus.NO_SESSIONS:
        echo(f"tsum: error: {result.message}", err=True)
    # bad input: each error is already on stderr
    return _ReplayFailed(
        "the replay failed (see above): nothing compared, the baseline is unchanged"
    )


def _seed(baseline: ReplayOutput, resolved: ResolvedSettings) -> int:
    """The baseline's summaries into the cache this run reads (none: no cache, or --refresh)."""
    executor = build_executor(resolved.provider)
    try:
        if executor.cache is None or executor.cache_mode is CacheMode.REFRESH:
            return 0
        return seed_cache(baseline, executor.cache, executor.provider)
    finally:
        executor.close()


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
            words.extend([flag, str(value)])
    words.extend(args)
    if add:
        words.append(add)
    return shlex.join(words)
