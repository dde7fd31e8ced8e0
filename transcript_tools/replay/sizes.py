"""The size model a policy's replay of one log measures with (engine/sizes.py).

Built from the log's own recording (``cost/sizes.py`` ``calibrate``: each message's
billed size from the growth between calls, the hidden prefix from the first prompt).
Only a policy other than the seed's reads it: the seed's path stays the estimate's, byte
for byte, and a log that records no usage gets no model (every size its estimate).
"""

from __future__ import annotations

from collections.abc import Callable

from ..cost.sizes import calibrate
from ..engine.config import ReplaySettings
from ..engine.messages import Conversation
from ..engine.sizes import SizeModel


def log_sizes(conv: Conversation, unseen: frozenset[int] = frozenset()) -> SizeModel | None:
    """The size model of ``conv``'s recording; None when it records no usage. ``unseen``:
    restarts whose first prompt is not read for the hidden prefix (``calibrate``)."""
    measured = calibrate(conv, unseen)
    if not measured.calibrated:
        return None
    messages = conv.messages
    restarts = frozenset(
        id(messages[c.message_index]) for c in conv.compactions if c.message_index < len(messages)
    )
    return SizeModel(measured.by_id, measured.hidden, restarts)


def policy_sizes(
    conv: Conversation,
    settings: ReplaySettings,
    sizes_of: Callable[[Conversation], SizeModel | None] = log_sizes,
) -> SizeModel | None:
    """The size model of ``conv`` when ``settings`` run a policy, else None. ``sizes_of``:
    ``log_sizes``, or one that remembers its answer for a conversation every configuration
    of a grid replays (sweep/engine_path.py ``SharedWork``)."""
    return None if settings.policy is None else sizes_of(conv)
