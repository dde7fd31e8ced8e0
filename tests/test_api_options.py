"""Every option of a workflow command reaches its library function (``api``).

A command's option is either a keyword of the function, a field of the typed settings the
function takes (``SummaryConfig`` via ``config=``, ``ReplaySettings`` via ``settings=``),
a call or cache option (``ProviderOptions`` keywords), or only about how the CLI shows a
result (``SHOWN_ONLY``). A new option that fits none fails here, naming itself.
"""

from __future__ import annotations

import inspect
from dataclasses import fields
from typing import get_type_hints

import pytest

import transcript_tools as tt
from transcript_tools.cli.main import _load
from transcript_tools.providers.factory import ProviderOptions

# how the command prints (the library hands every warning to its caller: `warn`)
SHOWN_ONLY = {
    "silent",
    "as_json",
    "as_csv",
    "markdown",
    "max_diff_lines",
    "warnings_mode",
    "with_errors",  # inspect --json's shape: InspectResult.to_json, the library's
    "json_out",  # fidelity --json
    "min_agreement",  # fidelity's exit-code gate over the result's own figure (.agreement)
}
# the CLI's parameter name -> the function's keyword
RENAMED = {
    "prompt_spec": "prompt",
    "fmt": "format",
    "out_dir": "out",
    "config_path": "run_settings",  # tt.load_settings(config=...)
    "ray_address": "ray",
    "turn_path": "path",  # ReplaySettings.path
    "summary_marker": "summary_marker",
    "max_tokens": "max_context_tokens",
    "cache_path": "cache",
    "report_path": "report",
    "html_path": "html",
    "baseline_dir": "baseline",
    "old_dir": "old",
    "prices_file": "prices",
    "new_dir": "new",
}
FUNCTIONS = {
    "replay": tt.replay_corpus,
    "sweep": tt.sweep_corpus,
    "eval": tt.eval_corpus,
    "check": tt.check,
    "inspect": tt.inspect_corpus,
    "diff": tt.diff_outputs,
    "fidelity": tt.fidelity_corpus,
}
SUMMARY_FIELDS = {f.name for f in fields(tt.SummaryConfig)}
REPLAY_FIELDS = {f.name for f in fields(tt.ReplaySettings)}


@pytest.mark.parametrize("command", list(FUNCTIONS))
def test_every_option_reaches_the_library(command: str) -> None:
    function = FUNCTIONS[command]
    keywords = set(inspect.signature(function).parameters)
    if "options" in keywords:  # **options: Unpack[ProviderOptions]
        keywords |= set(get_type_hints(ProviderOptions))
    missing = []
    for param in _load(command).params:
        name = RENAMED.get(param.name or "", param.name or "")
        if name in SHOWN_ONLY or name in keywords or name == "paths":
            continue
        if name in SUMMARY_FIELDS and "config" in keywords:
            continue
        if name in REPLAY_FIELDS and "settings" in keywords:
            continue
        if name == "workers" and "run_settings" in keywords:  # tt.load_settings({"workers": N})
            continue
        missing.append(param.name)
    assert not missing, f"tsum {command} options the library does not take: {missing}"
