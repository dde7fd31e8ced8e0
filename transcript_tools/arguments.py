"""The library front door's typed arguments turned into a run's settings (``api.py``).

One rule, the CLI's: arguments over ``run_settings`` (``settings.load_settings()``) over the
defaults; a typed ``SummaryConfig`` / ``ReplaySettings`` wins over both, but for a ``prompt``
or ``model`` given beside it, which sets its template or model (as ``--prompt`` / ``--model``).
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from .engine.config import ReplaySettings, RunSettings, SummaryConfig
from .providers.base import Provider
from .providers.factory import ProviderOptions
from .settings import load_settings


def run_settings_from(
    loaded: RunSettings | None,
    config: SummaryConfig | None,
    settings: ReplaySettings | None,
    prompt: str | None,
    format: str | None,
    provider: str | Provider,
    options: ProviderOptions | dict[str, Any],
    dry_run: bool,
    skip_bad_lines: bool,
    workers: int | None = None,
) -> RunSettings:
    """A library function's arguments over ``loaded`` (else over the defaults), the typed
    ``config`` / ``settings`` objects winning: what ``tsum``'s flags are to the CLI."""
    _refuse_unknown(options)
    flags: dict[str, Any] = {
        "prompt": prompt,
        "format": format,
        "workers": workers,
        "provider": provider if isinstance(provider, str) and provider != "offline" else None,
        "summary_model": options.get("model"),
        "base_url": options.get("base_url"),
        "temperature": options.get("temperature"),
        "concurrency": options.get("concurrency"),
    }
    if loaded is not None:  # its template is kept unless a prompt is given
        kept = {k: v for k, v in loaded.values.items() if k not in ("prompt", "summary_prompt")}
        flags = {**kept, **{k: v for k, v in flags.items() if v is not None}}
    run = load_settings(
        flags,
        env={},
        read_file=False,
        provider_options={**(loaded.provider if loaded else {}), **options},
        dry_run=dry_run,
        skip_bad_lines=skip_bad_lines,
    )
    if loaded is not None and prompt is None:
        summary = run.settings.summary
        if summary is not None:
            summary = replace(summary, summary_prompt=loaded.template.source)
        chosen = replace(run.settings, summary=summary, template_name=loaded.template.name)
        run = replace(run, settings=chosen, template=loaded.template)
    if not isinstance(provider, str):
        run.provider["provider"] = provider
    if loaded is not None and settings is None:  # its settings, a --policy's included
        settings = _loaded_settings(loaded, prompt)
    if settings is not None or config is not None:
        run = _typed(run, config, settings, prompt is not None, options.get("model"), dry_run)
    return run


def _loaded_settings(loaded: RunSettings, prompt: str | None) -> ReplaySettings:
    """``loaded``'s settings, under its policy where it has one (``load_settings(policy=)``,
    ``tsum --policy``); ``prompt`` is the policy's template then, as ``--prompt`` is."""
    settings = replace(loaded.settings, dry_run=False)
    if prompt is not None and settings.policy is not None:
        from .engine.policy_engine import policy_with_flags

        settings = replace(settings, policy=policy_with_flags(settings.policy, {"prompt": prompt}))
    return settings


def _refuse_unknown(options: ProviderOptions | dict[str, Any]) -> None:
    """``**options`` are ``ProviderOptions``: any other keyword would be dropped unread
    (``replay_corpus(log, max_context_tokens=...)`` replayed at the default window)."""
    unknown = sorted(set(options) - set(ProviderOptions.__annotations__))
    if unknown:
        fielded = set(unknown) & {f.name for f in fields(SummaryConfig)}
        hint = " (SummaryConfig fields: pass config=SummaryConfig(...))" if fielded else ""
        raise TypeError(f"unexpected keyword argument(s) {', '.join(unknown)}{hint}")


def _typed(
    run: RunSettings,
    config: SummaryConfig | None,
    settings: ReplaySettings | None,
    prompted: bool,
    model: str | None,
    dry_run: bool,
) -> RunSettings:
    """``run`` with the typed ``config`` / ``settings`` in place: ``model`` (``--model``) and,
    when ``prompted``, ``run``'s template (``--prompt``) still set their summary's."""
    chosen = settings or replace(run.settings, summary=config)
    if config is not None:
        chosen = replace(chosen, summary=config)  # else settings.summary, None included (N2)
    chosen = replace(chosen, dry_run=dry_run or chosen.dry_run)
    summary = chosen.summary
    if summary is None:
        return replace(run, settings=chosen, template=None)
    if model is not None:  # as --model
        summary = replace(summary, summary_model=model)
    if prompted:  # as --prompt
        summary = replace(summary, summary_prompt=run.template.source)
        chosen = replace(chosen, template_name=run.template.name)
    chosen = replace(chosen, summary=summary)
    from .engine.prompt import template_from_config

    template = template_from_config(summary.summary_prompt, chosen.template_name)
    return replace(run, settings=chosen, template=template)


def given_only(**values: Any) -> dict[str, Any]:
    """The keywords actually given (None: the callee's own default)."""
    return {k: v for k, v in values.items() if v is not None}
