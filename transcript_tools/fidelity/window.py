"""The policy and window one recorded compaction is replayed with.

The preset follows the release and model that wrote that part of the log
(engine/runtime_policy.py; ``follow=False`` keeps it as it is), and the window is
``--max-context-tokens auto``'s (engine/drive.py ``recorded_window``): the log's own,
else the model's documented window, else the policy's, else the seed's default — named
on every row (docs/fidelity.md, "The window").
"""

from __future__ import annotations

from ..engine.drive import recorded_window
from ..engine.messages import Compaction, Conversation
from ..engine.policy import Policy
from ..engine.runtime_policy import follow_runtime
from ..engine.seed_defaults import DEFAULT_MAX_CONTEXT_TOKENS


def replay_policy(
    conv: Conversation, comp: Compaction, policy: Policy, *, follow: bool = True
) -> tuple[Policy, int, str]:
    """(the policy, its window, where the window came from) for ``comp``."""
    if follow:
        version = comp.version or conv.runtime_version
        policy = follow_runtime(policy, version, comp.model, log_format=conv.format)
    window, source = recorded_window(conv, DEFAULT_MAX_CONTEXT_TOKENS, policy.trigger.window)
    return policy, window, source
