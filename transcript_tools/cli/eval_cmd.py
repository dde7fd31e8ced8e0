"""``tsum eval``: what survives a summary, per template (and model), next to its floors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..engine.settings_table import SETTING
from ..errors import TsumError
from .help import TsumCommand
from .outcome import finish
from .policies_cmd import POLICY_HELP, PolicyParam
from .progress import RunStderr, warnings_option
from .setting_options import NonEmptyPath, provider_options, setting_option, shown_default
from .settings import config_option, format_option

EPILOG = """\b
Examples:
  tsum eval samples/ --prompt zh --prompt en
  tsum eval corpus/ --prompt prompts/a.j2 --prompt prompts/b.j2 --provider openai --out eval/ --html eval.html
  tsum eval corpus/ --provider anthropic --judge --cache-only     (CI: judged probes from the cache)
  tsum eval corpus/ --policy seed --policy claude-code --policy clear-tool-uses --max-context-tokens auto

Probes come from the part of the history each summary replaces (docs/eval.md). Every
recall sits next to two floors computed with the same probes: the first N tokens of
the replaced text (truncation, N = the summary's length) and no summary at all. With
--policy, every action of each policy (summary or pre-pass) is scored in the next view,
beside those floors and the uncompacted view (ceiling), with the views' API violations."""


@click.command(cls=TsumCommand, epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--prompt",
    "prompts",
    multiple=True,
    help="A template to compare (built-in name or file); repeat for several. "
    + shown_default("prompt"),
)
@click.option(
    "--compare-model",
    "models",
    multiple=True,
    help="A summary model to compare (repeatable; with --provider).",
)
@click.option(
    "--policy",
    "policies",
    type=PolicyParam(),
    multiple=True,
    help=POLICY_HELP + " Repeat to compare policies side by side: each action (summary or "
    "pre-pass) is scored on what it took out of the view, looked for in the next view, beside "
    "the floors and the uncompacted view (ceiling), with the views' API violations (docs/eval.md).",
)
@config_option
@setting_option("trigger_token_ratio")
@setting_option(
    "max_context_tokens",
    help="The model's context window, or auto: the window the log records (Codex), else its "
    f"model's documented window, else the policy's, else {SETTING['max_context_tokens'].default}.",
)
@setting_option("debounce_turns")
@setting_option("keep_recent_turns")
@setting_option("max_tool_result_chars")
@setting_option(
    "max_transcript_chars",
    help="Cap of the formatted conversation in the summary prompt: probes from older "
    "messages are never shown to the summarizer (the table counts them).",
)
@setting_option("measure", help="Watermark.")
@setting_option("checkpoint")
@setting_option("path")
@format_option
@click.option(
    "--skip-bad-lines", is_flag=True, help="Warn about bad lines and read the rest of the file."
)
@provider_options
@click.option(
    "--judge",
    is_flag=True,
    help="Also ask the provider's model judged questions (recall, artifact, continuation, decision), graded 0-5.",
)
@click.option(
    "--out",
    "out_dir",
    type=NonEmptyPath(file_okay=False),
    help="Write checkpoints.jsonl (every probe, survived or not) and eval.json here.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the aggregates as JSON.")
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write an HTML page: the table and checkpoints with the lost probes highlighted.",
)
@click.option(
    "--chart",
    is_flag=True,
    help="With --html: add the trade-off chart, artifact recall against summary tokens, "
    "beside the floors and the uncompacted run.",
)
@click.option("--silent", is_flag=True, help="No notes or end-of-run line on stderr.")
@warnings_option
@click.option(
    "--cost",
    is_flag=True,
    help="Add recall per 1,000 retained tokens: the artifact probes the next view still "
    "carries (summary or kept turns) per 1,000 of its estimated tokens (docs/cost.md).",
)
@click.option(
    "--person-fates",
    is_flag=True,
    help="Also score each compaction the log records on the person's earlier messages: "
    "kept, partly kept, dropped, re-supplied later (readable summary or not; docs/eval.md).",
)
def eval_command(
    paths: tuple[str, ...],
    prompts: tuple[str, ...],
    models: tuple[str, ...],
    policies: tuple[Any, ...],
    judge: bool,
    out_dir: Path | None,
    as_json: bool,
    html_path: Path | None,
    chart: bool,
    silent: bool,
    warnings_mode: str,
    cost: bool,
    person_fates: bool,
    **opts: Any,
) -> None:
    """Score what survives each summary: probes from the replaced history, per template."""
    if chart and html_path is None:
        raise click.UsageError("--chart draws into the HTML page: give --html FILE too")
    from ..eval.workflow import eval_paths, variant_grid
    from .settings import resolve

    def settings_for(policy: Any, spec: str | None, model: str | None) -> Any:
        overrides = {"prompt": spec, "summary_model": model}
        return resolve(dict(opts) | {"policy": policy}, overrides=overrides)

    variants, policy_names = variant_grid(
        list(dict.fromkeys(policies)), prompts, list(models) or [opts.get("model")], settings_for
    )

    with RunStderr(list(paths), desc="eval", silent=silent, warnings_mode=warnings_mode) as stderr:
        done = eval_paths(
            list(paths),
            variants,
            resolve(dict(opts)),
            judge=judge,
            out_dir=out_dir,
            html_path=html_path,
            chart=chart,
            policy_names=policy_names,
            cost=cost,
            person_fates=person_fates,
            reporter=stderr,
        )
    if done.result.sessions == 0:
        pass  # nothing read: no table to print, only the error below
    elif as_json:
        click.echo(done.to_json_text())
    else:
        from ..eval.render import render_text  # with --policy: the policies' table

        click.echo(render_text(done.result), nl=False)
    if done.result.person_fates is not None and done.result.sessions and not as_json:
        from ..eval.person_fates import render_fates

        click.echo(render_fates(done.result.person_fates), nl=False)
    judged = done.judged_line()
    if judged is not None and not silent:
        click.echo(judged, err=True)
    if not silent:
        for note in done.notes:
            click.echo(f"tsum: note: {note}", err=True)
        click.echo(done.summary_line(), err=True)
    missing = done.cache_only_missing()
    if missing:
        raise TsumError(missing)  # exit 3: could not run
    failure = done.failure()
    finish(failed=failure is not None, error=failure)
