"""Every default a command shows is the library's own (a default is defined
once, and --help renders it from there): the option, the front door (api.py), the
library function it calls and the object it builds all agree, so a literal restated in
any one of them fails here."""

from __future__ import annotations

import inspect
from typing import Any

import click
from click.testing import CliRunner

from transcript_tools import api
from transcript_tools.cli.main import _load, cli
from transcript_tools.diff import check as diff_check
from transcript_tools.diff import lineup
from transcript_tools.engine.config import DEFAULT_BATCH_POLL
from transcript_tools.eval import baseline
from transcript_tools.providers.factory import build_executor
from transcript_tools.providers.retry import RetryPolicy, default_timeout


def option(command: str, name: str) -> click.Parameter:
    return next(p for p in _load(command).params if p.name == name)


def default_of(fn: Any, name: str) -> Any:
    return inspect.signature(fn).parameters[name].default


def test_provider_limits_are_the_executors() -> None:
    built = build_executor({"provider": "offline"})  # what a run without the flags gets
    assert option("replay", "max_attempts").default == built.retry.max_attempts
    assert built.retry.max_attempts == RetryPolicy().max_attempts
    assert option("replay", "concurrency").default == built.concurrency
    assert built.timeout == default_timeout(None)
    # --timeout has no click default (a local --base-url changes it): its help says both
    help_text = option("replay", "timeout").help or ""
    local = default_timeout("http://127.0.0.1:8080")
    assert f"[default: {default_timeout(None):g}; {local:g} when --base-url" in help_text
    assert local != default_timeout(None)


def test_the_default_provider_is_the_libraries() -> None:
    for command in ("replay", "sweep", "eval", "check"):
        assert option(command, "provider").default == "offline", command
    for fn in (api.replay_corpus, api.sweep_corpus, api.eval_corpus, api.check):
        assert default_of(fn, "provider") == "offline", fn.__name__


def test_check_and_diff_defaults_are_the_libraries() -> None:
    max_drop = option("check", "max_drop").default
    assert max_drop == default_of(api.check, "max_drop")
    assert max_drop == default_of(diff_check.check_corpus, "max_drop")
    assert max_drop == default_of(baseline.compare_scores, "max_drop")
    context = option("diff", "context").default
    assert context == default_of(api.check, "context") == default_of(api.diff_outputs, "context")
    assert context == default_of(lineup.unified_diff, "context")
    assert context == default_of(diff_check.check_corpus, "context")


def test_batch_poll_default_is_shown_from_its_constant() -> None:
    assert option("replay", "batch_poll").default == DEFAULT_BATCH_POLL
    help_text = CliRunner().invoke(cli, ["replay", "--help"], terminal_width=200).output
    assert f"TSUM_BATCH_POLL; default: {DEFAULT_BATCH_POLL}" in help_text
