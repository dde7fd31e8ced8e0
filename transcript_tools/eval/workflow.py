"""``tsum eval`` as a library call: variants, the batch prefill, the judge, the records.

Each variant is one template (and model) with the settings the precedence rule gave it
(``settings.load_settings`` with that prompt and model as flags). The scored
checkpoints go to ``checkpoints.jsonl`` and the aggregates to ``eval.json`` under
``out_dir``; ``html_path`` gets the HTML page. What the run found is an ``EvalRun``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..engine.config import RunSettings
from ..engine.policy import Policy
from ..errors import ConfigError
from ..formats.inputs import NO_SESSIONS_FOUND, OUTPUT_MARKER
from ..providers.factory import build_executor, cache_only_failure, describe_stats
from ..reporter import QUIET, Reporter, notes_only
from ..writable import check_output_dir, check_output_file, drop_links, refuse_input_folder
from .evaluation import EvalResult, Evaluation, Variant
from .records import ScoreRecord

JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2

# (prompt as given: a built-in name, a file or None; model or None; its settings)
VariantSettings = tuple[str | None, str | None, RunSettings]


@dataclass(slots=True)
class EvalRun:
    """An evaluation's result with the notes that qualify it and what it cost."""

    result: EvalResult
    variants: list[Variant]
    notes: list[str] = field(default_factory=list)
    judge: Any = None  # eval.judge.Judge, or None

    def __repr__(self) -> str:  # counts, not every kept record
        line = self.summary_line().removeprefix("tsum: ")
        return f"<EvalRun {line}; {len(self.result.errors)} error(s)>"

    def as_json(self) -> dict[str, Any]:
        return self.result.as_json() | {"notes": self.notes}

    def to_json_text(self) -> str:
        return orjson.dumps(self.as_json(), option=JSON_OPTIONS).decode()

    def judged_line(self) -> str | None:
        """The judge's one line (None: no judge ran)."""
        j = self.result.judged
        if j is None:
            return None
        grades = ", ".join(f"{k} {v}" for k, v in j["mean_grade"].items()) or "none"
        return (
            f"tsum: judged {j['checkpoints']} checkpoint(s): {j['requests']} requests, "
            f"{j['api_calls']} API calls, {j['cache_hits']} cached, {j['errors']} failed; "
            f"mean grade (0-5): {grades}"
        )

    def summary_line(self) -> str:
        result = self.result
        total = sum(a.checkpoints for a in result.aggregates.values())  # --policy: actions too
        stats = "; ".join(f"{v.label}: {describe_stats(v.executor.stats)}" for v in self.variants)
        return (
            f"tsum: {result.files} file(s), {result.sessions} session(s), {total} scored checkpoint(s), "
            f"probe extractor v{result.extractor_version}; {stats}"
        )

    def cache_only_missing(self) -> str | None:
        """Why a --cache-only run could not run (exit 3), or None."""
        for v in self.variants:
            missing = cache_only_failure(v.executor.stats)
            if missing:
                return missing
        return None

    def failure(self) -> str | None:
        """Why the evaluation failed (exit 1), or None; bad input was reported already."""
        if self.judge is not None and self.judge.cache_only_missing:
            return f"{self.judge.cache_only_missing} judged call(s) not in the cache (--cache-only)"
        if self.result.sessions == 0:
            return NO_SESSIONS_FOUND if not self.result.errors else NONE_READ
        return "" if self.result.errors else None


def variant_grid(
    policies: Sequence[Policy],
    prompts: Sequence[str],
    models: Sequence[str | None],
    settings_for: Callable[[Policy | None, str | None, str | None], RunSettings],
) -> tuple[list[VariantSettings], list[str]]:
    """``tsum eval``'s variants: every policy (none: the run's own), prompt (none: the
    run's) and model, in that nesting, with ``settings_for``'s settings; and each one's
    policy name when a policy is not the seed's (``--policy``: every action scored)."""
    from ..engine.policy_engine import is_seed

    policy_list: list[Policy | None] = list(policies) or [None]
    specs: list[str | None] = list(dict.fromkeys(prompts)) or [None]
    combos = [(p, s, m) for p in policy_list for s in specs for m in dict.fromkeys(models)]
    variants = [(spec, model, settings_for(policy, spec, model)) for policy, spec, model in combos]
    if all(policy is None or is_seed(policy) for policy in policy_list):
        return variants, []
    return variants, [policy.name for policy, _, _ in combos if policy is not None]


NONE_READ = "no session could be read (the errors above say why): nothing to score"


def eval_paths(
    paths: list[str],
    variants: Sequence[VariantSettings],
    base: RunSettings,
    *,
    judge: bool = False,
    out_dir: Path | None = None,
    html_path: Path | None = None,
    chart: bool = False,
    policy_names: Sequence[str] = (),
    cost: bool = False,
    person_fates: bool = False,
    reporter: Reporter = QUIET,
) -> EvalRun:
    """Score every variant's summaries over ``paths``. ``base`` (the settings without a
    variant's prompt or model) gives the judge's provider and the format; ``reporter`` gets
    the warnings, errors, progress and ``--batch``'s lines. ``policy_names``: the compaction policy of each variant
    (``tsum eval --policy``, at least one not the seed's): every action, summary or
    pre-pass, is scored on what it took out of the view (eval/policy_probes.py), and every
    row names its policy. ``cost`` (``tsum eval --cost``) adds each checkpoint's recall
    per 1,000 retained tokens (docs/cost.md); ``person_fates`` (``--person-fates``) each
    recorded compaction's fate of the person's earlier messages (eval/person_fates.py)."""
    if out_dir is not None:
        check_output_dir(out_dir, "--out")  # before any work, not after it
        refuse_input_folder(out_dir, paths)
    if html_path is not None:
        check_output_file(html_path, "--html")
    built = _built_variants(variants, policy_names)
    policy_mode = bool(policy_names)
    if variants[0][2].provider.get("batch"):
        _batch_prefill(paths, [run for _, _, run in variants], reporter)

    judge_obj, unavailable = _judge(built, base) if judge else (None, None)
    notes = [unavailable] if unavailable else []

    records = _Records(out_dir)
    evaluation = Evaluation(
        built,
        fmt=base.fmt,
        skip_bad_lines=base.skip_bad_lines,
        reporter=reporter,
        on_checkpoint=records.write,
        judge=judge_obj,
        cost=cost,
        person_fates=person_fates,
        policy_mode=policy_mode,
        # one tool-result cut for every policy's probes: the seed's (or the one given)
        probe_tool_result_chars=_probe_cap(base) if policy_mode else None,
    )
    try:
        result = evaluation.run(list(paths))
    finally:
        records.close()
    notes.extend(result.notes)
    unscored = [flag for flag, on in (("--cost", cost), ("--judge", judge_obj)) if on]
    notes.extend(_run_notes(result, built, policy_mode, unscored))
    done = EvalRun(result, built, notes, judge_obj)
    _write_outputs(done, out_dir, html_path, chart)
    return done


def _built_variants(
    variants: Sequence[VariantSettings], policy_names: Sequence[str]
) -> list[Variant]:
    """Each variant with its executor and its row's label (unique, or a ConfigError)."""
    built: list[Variant] = []
    labels: set[str] = set()
    several_models = len({model for _, model, _ in variants}) > 1
    several_templates = len({spec for spec, _, _ in variants}) > 1
    policy_mode = bool(policy_names)
    for number, (spec, model, run) in enumerate(variants):
        executor = build_executor(run.provider)
        template = run.template
        label = template.name + (f"@{model}" if several_models and model else "")
        if policy_mode:  # every row names its policy (and template, when several)
            policy = policy_names[number]
            label = (
                f"{policy}/{label}" if several_templates else policy + label[len(template.name) :]
            )
        if label in labels:
            raise ConfigError(
                f"--policy {policy_names[number]}: two variants named {label!r}; rename one"
                if policy_mode
                else f"--prompt {spec}: two templates named {template.name!r}; rename one"
            )
        labels.add(label)
        built.append(Variant(label, template, run.settings, executor, executor.provider.name))
    return built


def _judge(built: list[Variant], base: RunSettings) -> tuple[Any, str | None]:
    """The --judge, or None and why where the variants' provider cannot be judged."""
    from .judge import Judge, judge_unavailable

    reason = judge_unavailable(built[0].executor.provider.name)
    if reason:
        return None, reason
    return Judge(build_executor(base.provider)), None


def _run_notes(
    result: EvalResult, built: list[Variant], policy_mode: bool, unscored: Sequence[str] = ()
) -> list[str]:
    """What the table's reader must know to read it right; ``unscored``: the flags given
    that score summaries only (--cost, --judge), which a policy's actions do not get."""
    notes: list[str] = []
    if policy_mode:
        notes.append(
            "--policy: each action (summary or pre-pass) is scored on the probes of the messages it "
            'took out of the view, looked for in the next view (docs/eval.md, "Policies")'
        )
        if unscored:
            notes.append(
                f"{' and '.join(unscored)} under --policy: only the compactions the logs record "
                'get it, not the policies\' actions (docs/eval.md, "Policies")'
            )
    elif built[0].provider_name == "offline" and len(built) > 1:
        notes.append(
            "the offline provider is extractive: it copies the conversation whatever the template's "
            "instructions say (a template changes only what it is shown: the previous summary or not); "
            "compare templates with --provider openai or anthropic"
        )
    if result.identical_summaries:
        notes.append(
            f"all {len(built)} variants wrote identical summaries at every checkpoint: their columns are the same "
            "text scored twice, not a finding"
        )
    return notes


def _write_outputs(
    done: EvalRun, out_dir: Path | None, html_path: Path | None, chart: bool
) -> None:
    """eval.json under --out; the --html page."""
    if out_dir is not None:
        (out_dir / "eval.json").write_bytes(orjson.dumps(done.as_json(), option=JSON_OPTIONS))
    if html_path is not None:
        from .render import render_html

        page = render_html(done.result, done.notes, chart=chart)
        html_path.write_text(page, encoding="utf-8")


def _probe_cap(base: RunSettings) -> int:
    """The tool-result cut every policy's probes are drawn with: the seed's (or the one
    given), whatever each policy's summarizer is shown (eval/evaluation.py)."""
    summary = base.settings.summary
    assert summary is not None
    return summary.max_tool_result_chars


class _Records:
    """checkpoints.jsonl under ``out_dir``, written as checkpoints are scored."""

    def __init__(self, out_dir: Path | None) -> None:
        self.handle = None
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            drop_links(out_dir, ("checkpoints.jsonl", "eval.json", OUTPUT_MARKER))
            # tsum's output, as replay's --out: a walk of a corpus holding it skips it
            (out_dir / OUTPUT_MARKER).write_bytes(b"written by tsum eval\n")
            self.handle = open(out_dir / "checkpoints.jsonl", "wb")  # noqa: SIM115

    def write(self, record: ScoreRecord) -> None:
        if self.handle is not None:
            self.handle.write(
                orjson.dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
            )

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


def _batch_prefill(paths: list[str], runs: list[RunSettings], reporter: Reporter) -> None:
    """``--batch``: every variant's summary calls go through the provider's batch API first
    (in rounds, resumable: the same driver as ``tsum replay --batch``), into the response
    cache under the synchronous path's keys, since eval's engine renders the same prompts.
    The evaluation then reads them from the cache. Judge calls stay synchronous."""
    from ..replay.run import replay_paths

    for run in runs:
        replay_paths(paths, run, reporter=notes_only(reporter))  # the evaluation warns
