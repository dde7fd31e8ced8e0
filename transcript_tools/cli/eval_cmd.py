"""``tsum eval``: what survives a summary, per template (and model), next to its floors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import orjson

from ..errors import ConfigError, ExitCode, TsumError
from ..providers.factory import build_executor, cache_only_failure, describe_stats
from .provider_options import provider_options
from .settings import config_option, format_option

EPILOG = """\b
Examples:
  tsum eval samples/ --prompt zh --prompt en
  tsum eval corpus/ --prompt prompts/a.j2 --prompt prompts/b.j2 --provider openai --out eval/ --html eval.html
  tsum eval corpus/ --provider anthropic --judge --cache-only     (CI: judged probes from the cache)

Probes come from the part of the history each summary replaces (docs/eval.md). Every
recall sits next to two floors computed with the same probes: the first N tokens of
the replaced text (truncation, N = the summary's length) and no summary at all."""


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--prompt",
    "prompts",
    multiple=True,
    help="A template to compare (built-in name or file); repeat for several. [default: zh]",
)
@click.option(
    "--compare-model",
    "models",
    multiple=True,
    help="A summary model to compare (repeatable; with --provider).",
)
@config_option
@click.option(
    "--ratio",
    "--trigger-token-ratio",
    "trigger_token_ratio",
    type=float,
    help="Fire when tokens >= max_context_tokens * ratio. [default: 0.75]",
)
@click.option("--max-context-tokens", type=int, help="The model's context window. [default: 32000]")
@click.option(
    "--debounce",
    "--debounce-turns",
    "debounce_turns",
    type=int,
    help="At least this many turns between two summaries. [default: 3]",
)
@click.option(
    "--keep-recent-turns",
    type=int,
    help="Focused view: whole turns kept before the summary. [default: 3]",
)
@click.option(
    "--max-tool-result-chars",
    type=int,
    help="Keep the first N characters of each tool result. [default: 500]",
)
@click.option(
    "--max-transcript-chars",
    type=int,
    help="Cap of the formatted conversation in the summary prompt: probes from older "
    "messages are never shown to the summarizer (the table counts them). [default: 30000]",
)
@click.option(
    "--measure",
    type=click.Choice(["cumulative", "current"]),
    help="Watermark. [default: cumulative]",
)
@click.option(
    "--checkpoint",
    type=click.Choice(["turn", "call"]),
    help="Run the checkpoint after each user turn (the seed) or each model call; with call, "
    "debounce and keep_recent_turns count calls. [default: turn]",
)
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
    type=click.Path(file_okay=False, path_type=Path),
    help="Write checkpoints.jsonl (every probe, survived or not) and eval.json here.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the aggregates as JSON.")
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write an HTML page: the table and checkpoints with the lost probes highlighted.",
)
@click.option("--silent", is_flag=True, help="No notes or end-of-run line on stderr.")
@click.option(
    "--cost",
    is_flag=True,
    help="Add recall per 1,000 retained tokens: the artifact probes the next view still "
    "carries (summary or kept turns) per 1,000 of its estimated tokens (docs/cost.md).",
)
def eval_command(
    paths: tuple[str, ...],
    prompts: tuple[str, ...],
    models: tuple[str, ...],
    judge: bool,
    out_dir: Path | None,
    as_json: bool,
    html_path: Path | None,
    silent: bool,
    cost: bool,
    **opts: Any,
) -> None:
    """Score what survives each summary: probes from the replaced history, per template."""
    from ..eval.evaluation import Evaluation, Variant
    from .settings import resolve

    variants: list[Variant] = []
    resolved_variants: list[Any] = []
    specs: list[str | None] = list(dict.fromkeys(prompts)) or [None]
    model_list: list[str | None] = list(dict.fromkeys(models)) or [opts.get("model")]
    labels: set[str] = set()
    for spec in specs:
        for model in model_list:
            resolved = resolve(dict(opts), overrides={"prompt": spec, "summary_model": model})
            settings, template = resolved.settings, resolved.template
            executor = build_executor(resolved.provider)
            label = template.name + (f"@{model}" if len(model_list) > 1 and model else "")
            if label in labels:
                raise ConfigError(
                    f"--prompt {spec}: two templates named {template.name!r}; rename one"
                )
            labels.add(label)
            variants.append(Variant(label, template, settings, executor, executor.provider.name))
            resolved_variants.append(resolved)
    if resolved_variants[0].provider.get("batch"):
        _batch_prefill(list(paths), resolved_variants, silent)

    notes: list[str] = []
    judge_obj = None
    if judge:
        from ..eval.judge import Judge, judge_unavailable

        reason = judge_unavailable(variants[0].executor.provider.name)
        if reason:
            notes.append(reason)
        else:
            judge_obj = Judge(build_executor(resolve(dict(opts)).provider))

    def warn(message: str) -> None:
        if not silent:
            click.echo(message, err=True)

    records = _Sink(out_dir)
    evaluation = Evaluation(
        variants,
        fmt=resolve(dict(opts)).fmt,
        skip_bad_lines=bool(opts.get("skip_bad_lines")),
        warn=warn,
        error=lambda m: click.echo(m, err=True),
        on_checkpoint=records.write,
        judge=judge_obj,
        cost=cost,
    )
    try:
        result = evaluation.run(list(paths))
    finally:
        records.close()
    notes.extend(result.notes)
    if variants[0].provider_name == "offline" and len(variants) > 1:
        notes.append(
            "the offline provider is extractive: it copies the conversation whatever the template's "
            "instructions say (a template changes only what it is shown: the previous summary or not); "
            "compare templates with --provider openai or anthropic"
        )
    if result.identical_summaries:
        notes.append(
            f"all {len(variants)} variants wrote identical summaries at every checkpoint: their columns are the same "
            "text scored twice, not a finding"
        )
    if out_dir is not None:
        (out_dir / "eval.json").write_bytes(
            orjson.dumps(
                result.as_json() | {"notes": notes},
                option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2,
            )
        )
    if html_path is not None:
        from ..eval.render import render_html

        html_path.write_text(render_html(result, notes), encoding="utf-8")
    if as_json:
        click.echo(
            orjson.dumps(
                result.as_json() | {"notes": notes},
                option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2,
            ).decode()
        )
    else:
        from ..eval.render import render_text

        click.echo(render_text(result), nl=False)
    if result.judged is not None and not silent:
        j = result.judged
        grades = ", ".join(f"{k} {v}" for k, v in j["mean_grade"].items()) or "none"
        click.echo(
            f"tsum: judged {j['checkpoints']} checkpoint(s): {j['requests']} requests, "
            f"{j['api_calls']} API calls, {j['cache_hits']} cached, {j['errors']} failed; "
            f"mean grade (0-5): {grades}",
            err=True,
        )
    if not silent:
        for note in notes:
            click.echo(f"tsum: note: {note}", err=True)
        total = sum(a.checkpoints for a in result.aggregates.values())
        stats = "; ".join(f"{v.label}: {describe_stats(v.executor.stats)}" for v in variants)
        click.echo(
            f"tsum: {result.files} file(s), {result.sessions} session(s), {total} scored checkpoint(s), "
            f"probe extractor v{result.extractor_version}; {stats}",
            err=True,
        )
    for v in variants:
        missing = cache_only_failure(v.executor.stats)
        if missing:
            raise TsumError(missing)  # exit 3: could not run
    if judge_obj is not None and judge_obj.cache_only_missing:
        click.echo(
            f"tsum: error: {judge_obj.cache_only_missing} judged call(s) not in the cache (--cache-only)",
            err=True,
        )
        sys.exit(int(ExitCode.FAILED))
    if result.errors or result.sessions == 0:
        if result.sessions == 0 and not result.errors:
            click.echo("tsum: error: no sessions found in the given paths", err=True)
        sys.exit(int(ExitCode.FAILED))


class _Sink:
    """checkpoints.jsonl under --out, written as checkpoints are scored."""

    def __init__(self, out_dir: Path | None) -> None:
        self.handle = None
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            self.handle = open(out_dir / "checkpoints.jsonl", "wb")  # noqa: SIM115

    def write(self, record: dict[str, Any]) -> None:
        if self.handle is not None:
            self.handle.write(
                orjson.dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
            )

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


def _batch_prefill(paths: list[str], resolved_variants: list[Any], silent: bool) -> None:
    """``--batch``: every variant's summary calls go through the provider's batch API first
    (in rounds, resumable: the same driver as ``tsum replay --batch``), into the response
    cache under the synchronous path's keys, since eval's engine renders the same prompts.
    The evaluation then reads them from the cache. Judge calls stay synchronous."""
    from ..replay.run import run_replay
    from .batch_cmd import BatchSetup

    for resolved in resolved_variants:

        def driver(executor: Any, options: dict[str, Any] = resolved.provider) -> Any:
            return BatchSetup(options, executor, silent=silent)

        run_replay(
            paths,
            resolved.settings,
            template=resolved.template,
            provider=resolved.provider["provider"],
            provider_options=resolved.provider,
            fmt=resolved.fmt,
            skip_bad_lines=resolved.skip_bad_lines,
            concurrency=resolved.concurrency,
            batch=driver,
        )
