"""Presets that follow the runtime: a preset's values by the log's runtime version and model.

A runtime's compaction rule moved with its releases; a log records which release wrote
it. :func:`follow_runtime` gives, for the unmodified preset of that runtime, the values
that release used (each with its source); any other policy — a file, a preset changed by
a flag — is returned as it is. ``--max-context-tokens auto`` (engine/drive.py
``session_window``) and ``tsum fidelity`` apply it; without them no preset changes
(docs/policies.md, "Presets that follow the runtime").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TypeVar

from .policy import Policy
from .reinjection import Reinjection

# Claude Code's autocompact buffer below its window, by release. /context printed
# "Autocompact buffer: 45.0k tokens (22.5%)" in 2.0.x (anthropics/claude-code#10266,
# 2.0.x, 2025-10-24; #11781, v2.0.42) and "33k tokens (16.5%)" in 2.1.x
# (anthropics/claude-code#23409, claude-opus-4-6, 2026-02-05) — the 33,000 of
# min(max output, 20,000) + 13,000 (docs/policies.md). The 1.0.x logs of the shared
# corpus fire between 154,424 and 155,202 tokens of a 200K window: the same 45K buffer.
CLAUDE_CODE_BUFFERS: tuple[tuple[tuple[int, ...], int], ...] = (
    ((2, 1), 33_000),  # 2.1.0 and later
    ((0,), 45_000),  # 1.0.x and 2.0.x
)
# A model whose output reserve moves Claude Code's buffer: Claude Opus 4.5 reserves its
# 64,000-token output, so 77,000 below the window — /context printed "Autocompact buffer:
# 77.0k tokens (38.5%)" for claude-opus-4-5-20251101 (anthropics/claude-code#17660,
# 2026-01-12), and six automatic 2.0.76 compactions of another user's public logs came
# at preTokens 123,067-129,046, each after a call of 122,807-124,221 (docs/fidelity.md,
# "The 2.0.76 line"). Checked before the release table: no source shows Opus 4.5 at 33K.
CLAUDE_CODE_MODEL_BUFFERS: tuple[tuple[str, int], ...] = (("claude-opus-4-5", 77_000),)
# Gemini CLI's DEFAULT_COMPRESSION_TOKEN_THRESHOLD: 0.7 (google-gemini/gemini-cli#5721,
# "by default we auto-compress at 70%"), 0.5 from google-gemini/gemini-cli#13517
# (merged 2025-11-20; the first release after it taken as 0.18.0, unverified).
GEMINI_CLI_RATIOS: tuple[tuple[tuple[int, ...], float], ...] = (
    ((0, 18), 0.5),
    ((0,), 0.7),
)
# What Claude Code writes into its prompt after compacting besides the summary: the most
# recently read files, re-read from disk (up to 5 of at most 5,000 tokens each; the files
# Claude Code re-injects: docs/fidelity.md, "Sizes"). Validated on the 2.0.76 logs there.
CLAUDE_CODE_REINJECTION = Reinjection(files=5, file_tokens=5_000, tool="Read", path="file_path")

# A log's format -> the preset of the runtime that wrote it (``tsum fidelity`` replays it
# without --policy; a release the log records is that runtime's, no other preset's).
RUNTIME_PRESETS = {
    "claude-code": "claude-code",
    "codex": "codex",
    "gemini-cli": "gemini-cli",
    "opencode": "opencode",
    "opencode-db": "opencode",
    "cline": "cline",
    "aider-chat": "aider",
    "aider-llm": "aider",
    "pi": "pi",
}

_T = TypeVar("_T")
_VERSION = re.compile(r"(\d+(?:\.\d+)*)")


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``"2.1.112"`` -> (2, 1, 112); ``"0.104.0-alpha.1"`` -> (0, 104, 0); None if none."""
    if not text:
        return None
    found = _VERSION.search(text)
    return tuple(int(p) for p in found.group(1).split(".")) if found else None


def _by_version(table: tuple[tuple[tuple[int, ...], _T], ...], version: tuple[int, ...]) -> _T:
    for since, value in table:
        if version >= since:
            return value
    return table[-1][1]


def follow_runtime(
    policy: Policy, version: str | None, model: str | None, *, log_format: str | None = None
) -> Policy:
    """``policy`` with the values of the runtime release that wrote the log, where
    ``policy`` is that runtime's unmodified preset and the release is known. ``log_format``:
    the log's format; a version another runtime wrote (a Codex release under the
    claude-code preset) is no release of this one, and nothing follows it."""
    from .policy_toml import preset, preset_names

    if policy.name not in preset_names() or policy != preset(policy.name):
        return policy
    own = log_format is None or RUNTIME_PRESETS.get(log_format) == policy.name
    release = parse_version(version) if own else None
    trigger = policy.trigger
    if policy.name == "claude-code":
        if model and model.strip().lower().endswith("[1m]"):
            trigger = replace(trigger, window=1_000_000)
        if release is not None:
            trigger = replace(trigger, reserve_tokens=claude_code_buffer(release, model))
    elif policy.name == "gemini-cli" and release is not None:
        trigger = replace(trigger, ratio=_by_version(GEMINI_CLI_RATIOS, release))
    return policy if trigger == policy.trigger else replace(policy, trigger=trigger)


def claude_code_buffer(release: tuple[int, ...], model: str | None) -> int:
    """Claude Code's autocompact buffer below the window for ``release`` and ``model``."""
    name = (model or "").strip().lower()
    for prefix, buffer in CLAUDE_CODE_MODEL_BUFFERS:
        if name.startswith(prefix):
            return buffer
    return _by_version(CLAUDE_CODE_BUFFERS, release)


def reinjection(policy: Policy) -> Reinjection | None:
    """The files the runtime re-injects after compacting, where ``policy`` is that
    runtime's unmodified preset; else None."""
    from .policy_toml import preset, preset_names

    if policy.name != "claude-code" or policy.name not in preset_names():
        return None
    return CLAUDE_CODE_REINJECTION if policy == preset(policy.name) else None
