"""The context window a policy is replayed with on one log, and where it came from.

The order of ``--max-context-tokens auto`` (engine/drive.py ``recorded_window``): the
window the log records (Codex's ``model_context_window``), else the policy's own
``trigger.window``, else the seed's default, said as such (docs/fidelity.md, "The window").
"""

from __future__ import annotations

from ..engine.messages import Conversation
from ..engine.policy import Policy
from ..engine.seed_defaults import DEFAULT_MAX_CONTEXT_TOKENS


def resolve_window(conv: Conversation, policy: Policy) -> tuple[int, str]:
    """(window, source): ``log``, ``policy`` or ``default``."""
    if conv.context_window:
        return conv.context_window, "log"
    if policy.trigger.window:
        return policy.trigger.window, "policy"
    return DEFAULT_MAX_CONTEXT_TOKENS, "default"
