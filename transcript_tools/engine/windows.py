"""The context window a run uses for one log with ``--max-context-tokens auto``, and why.

One rule, in order (docs/fidelity.md, "The window"): the window the log records (Codex's
``model_context_window``), else the documented window of the model the log names (the
small table below, each row with its source), else the policy's own ``trigger.window``,
else the run's configured window — each labelled, so no record says ``auto`` without
saying which window that was.

No maintained model table is a dependency of tsum (LiteLLM's carries one, with a package
far larger than the rule it would serve); the table holds the model families the
runtimes with presets use, and a model it does not know falls through to the next step.
"""

from __future__ import annotations

from .messages import Conversation
from .rules import is_model_call

LOG = "log"
MODEL = "model"
POLICY = "policy"
DEFAULT = "default"

# (model id prefix, window). First match wins; a Claude Code model id ending in "[1m]"
# is the 1M-context variant (Claude Code's /context shows "Auto-compact window: 1m
# tokens" for it; the claudetto wiki's Compaction-And-Context page lists the strings).
MODEL_WINDOWS: tuple[tuple[str, int], ...] = (
    # Anthropic: every current Claude model has a 200K window
    # (https://docs.claude.com/en/docs/about-claude/models/overview)
    ("claude-", 200_000),
    # OpenAI's GPT-5 family as Codex runs it: CONTEXT_WINDOW_272K
    # (openai/codex codex-rs/core/src/openai_model_info.rs; models.json "context_window")
    ("gpt-5", 272_000),
    ("codex-", 272_000),
    # https://platform.openai.com/docs/models (gpt-4.1: 1,047,576; gpt-4o: 128,000;
    # o3 / o4-mini: 200,000)
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    # Gemini CLI's tokenLimit(): 1,048,576 for every Gemini model
    # (google-gemini/gemini-cli packages/core/src/core/tokenLimits.ts @5411f113)
    ("gemini-", 1_048_576),
)
ONE_MILLION_SUFFIX = "[1m]"


def documented_window(model: str | None) -> int | None:
    """The documented context window of ``model``, or None when the table has no row."""
    if not model:
        return None
    name = model.strip().lower()
    if name.endswith(ONE_MILLION_SUFFIX):
        return 1_000_000
    name = name.rsplit("/", 1)[-1]  # provider/model ids (openrouter, bedrock paths)
    for prefix, window in MODEL_WINDOWS:
        if name.startswith(prefix):
            return window
    return None


def conversation_model(conv: Conversation) -> str | None:
    """The model of the log's first model call (None: the log names none)."""
    for message in conv.messages:
        if is_model_call(message):
            model = getattr(message, "model", None)
            if model:
                return str(model)
    return None


def resolve_window(
    recorded: int | None, model: str | None, policy_window: int, configured: int
) -> tuple[int, str]:
    """(window, where it came from): ``log``, ``model``, ``policy`` or ``default``."""
    if recorded:
        return recorded, LOG
    documented = documented_window(model)
    if documented:
        return documented, MODEL
    if policy_window:
        return policy_window, POLICY
    return configured, DEFAULT
