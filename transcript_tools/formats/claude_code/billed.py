"""Claude Code calls the replay does not read but the provider billed (docs/cost.md,
"The whole bill"): an inline subagent's (Task) responses, logged in the session file with
``isSidechain: true``, and the responses of a branch the person rewound (the reader drops
those messages: the model never saw them again). Each is kept as an ``OffChainCall`` with
its recorded usage, once per response (``message.id``: a response spans several lines
that repeat its usage, the last one with the final output count)."""

from __future__ import annotations

from typing import Any

from ...engine.messages import REWOUND, SIDECHAIN, SYNTHETIC_MODEL, OffChainCall, Usage
from ..anthropic_api import usage_from_anthropic
from ..assembly import PendingAssistant
from ..fields import str_or_none
from ..source import Warn


class BilledElsewhere:
    def __init__(self) -> None:
        self.sidechain: dict[str, tuple[str | None, Usage]] = {}  # response id -> its call
        self.rewound: list[OffChainCall] = []

    def sidechain_entry(self, obj: dict[str, Any], warn: Warn) -> None:
        """A sidechain line of a main session file: its response's usage, if it has one."""
        msg = obj.get("message")
        if obj.get("type") != "assistant" or not isinstance(msg, dict):
            return
        model = str_or_none(msg.get("model"))
        if model == SYNTHETIC_MODEL:
            return
        usage = usage_from_anthropic(msg.get("usage"), warn)
        key = msg.get("id") or obj.get("requestId") or obj.get("uuid")
        if usage is not None and isinstance(key, str):
            self.sidechain[key] = (model, usage)

    def dropped(self, messages: list[Any]) -> None:
        """Messages of a rewound branch: its model calls were billed all the same."""
        for message in messages:
            if isinstance(message, PendingAssistant) and message.usage is not None:
                if message.model != SYNTHETIC_MODEL:
                    self.rewound.append(OffChainCall(message.model, message.usage, REWOUND))

    def calls(self) -> list[OffChainCall]:
        side = [OffChainCall(m, u, SIDECHAIN) for m, u in self.sidechain.values()]
        return side + self.rewound
