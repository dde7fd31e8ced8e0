"""Claude Code 2.0's warm-up: at start it sends a small model the prompt ``Warmup`` on a
sidechain (``isSidechain: true``, its own ``agentId``) and logs the exchange, often at the
top of the session's file (or as a subagent file of its own). It is not the conversation:
it must not decide whether the file is a subagent's (its first user/assistant entry does),
and a session's file leaves it out, saying so once. The warm-up is the ``Warmup`` prompt
with no parent and every sidechain entry descending from it (``parentUuid``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..fields import nested
from ..source import Record

WARM_UP_PROMPT = "Warmup"


def _prompt_text(obj: dict[str, Any]) -> str:
    content = nested(obj, "message", "content")
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = texts[0] if len(texts) == 1 else None
    return content.strip() if isinstance(content, str) else ""


@dataclass(slots=True)
class WarmUp:
    """The warm-up entries read before the file's first other user/assistant entry."""

    held: list[Record] = field(default_factory=list)
    uuids: set[str] = field(default_factory=set)
    done: bool = False  # the file's kind is decided: nothing more is held

    def hold(self, obj: dict[str, Any], record: Record) -> bool:
        """Is this entry part of the warm-up (then held here)?"""
        if self.done or obj.get("isSidechain") is not True:
            return False
        kind, parent = obj.get("type"), obj.get("parentUuid")
        if kind not in ("user", "assistant"):
            return False
        if parent not in self.uuids and not (
            kind == "user" and parent is None and _prompt_text(obj) == WARM_UP_PROMPT
        ):
            return False
        uuid = obj.get("uuid")
        if isinstance(uuid, str):
            self.uuids.add(uuid)
        self.held.append(record)
        return True

    def release(self) -> list[Record]:
        """The held entries, once the file's kind is decided (or it ends)."""
        self.done = True
        held, self.held = self.held, []
        return held

    @staticmethod
    def left_out(held: list[Record]) -> str:
        """The warning for a session's file, at the warm-up's first entry."""
        return (
            f"the warm-up sidechain ({len(held)} entries from here: the {WARM_UP_PROMPT!r}"
            " prompt Claude Code 2.0 sends a small model, and its reply) is not the"
            " conversation; left out"
        )
