"""Which records are Claude Code's: the entry types it writes, the fields that tell its
records from other formats' (detection), and the user lines its runtime writes."""

from __future__ import annotations

from typing import Any

from ...engine.messages import (
    PERSON,
    SYNTHETIC_MODEL,
    AssistantMessage,
    Block,
    Message,
    UserImageMessage,
    UserMessage,
)
from ...engine.rules import is_model_call
from .queued import RUNTIME_PREFIXES
from .text import first_text

# Session bookkeeping Claude Code 2.1 writes, often before the first prompt: the last
# prompt and the titles (for `claude --resume`'s list), the input and permission modes.
# Each names its session; none carries a message.
BOOKKEEPING_TYPES = frozenset(
    {"permission-mode", "last-prompt", "mode", "ai-title", "custom-title", "agent-name"}
)
# Entry types Claude Code writes (docs/formats.md, "Claude Code"); only user/assistant/system carry messages.
KNOWN_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
        *BOOKKEEPING_TYPES,
    }
)


def is_entry(obj: dict[str, Any]) -> bool:
    """A record only Claude Code writes: its type with the field that type carries."""
    kind = obj.get("type")
    if kind in ("user", "assistant") and isinstance(obj.get("message"), dict):
        return "sessionId" in obj or "parentUuid" in obj
    if kind == "summary":
        return "leafUuid" in obj
    if kind == "file-history-snapshot":
        return "snapshot" in obj
    if kind == "attachment":  # hook results, queued prompts, file and memory context
        return isinstance(obj.get("attachment"), dict) and "sessionId" in obj
    return kind in ("system", "queue-operation", "progress", *BOOKKEEPING_TYPES) and (
        "sessionId" in obj
    )


def runtime_notice(obj: dict[str, Any], blocks: list[Block]) -> bool:
    """A user line the runtime wrote to tell the model something (a background task or
    a Monitor event finished): ``origin.kind`` says so (2.1.1xx), or its text is the
    notice itself, as when the same notice is queued (queued.py)."""
    origin = obj.get("origin")
    if isinstance(origin, dict) and origin.get("kind") == "task-notification":
        return True
    return first_text(blocks).lstrip().startswith(RUNTIME_PREFIXES)


def nobody_there(messages: list[Message], meta_prompts: int) -> str | None:
    """Why a session has nothing to replay — no prompt a person wrote and no model call —
    or None. An SDK that is not logged in sends ``isMeta`` prompts and gets only
    ``<synthetic>`` replies ("Not logged in · Please run /login")."""
    if not messages or any(is_model_call(m) for m in messages):
        return None
    if any(
        isinstance(m, UserImageMessage) or (isinstance(m, UserMessage) and m.origin == PERSON)
        for m in messages
    ):
        return None
    synthetic = [m for m in messages if isinstance(m, AssistantMessage)]
    said = first_text(list(synthetic[0].blocks)).strip() if synthetic else ""
    replies = f"{len(synthetic)} {SYNTHETIC_MODEL} replies" + (f" ({said[:60]!r})" if said else "")
    return (
        f"no prompt a person wrote ({meta_prompts} isMeta prompts, sent by an SDK or the"
        f" runtime) and no model call ({replies})"
    )
