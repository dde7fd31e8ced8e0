"""tsum: replay stored LLM conversations through the automatic-summary checkpoint.

The front door (plain synchronous functions; they also work inside a running event
loop, e.g. Jupyter)::

    import transcript_tools as tt

    for conv in tt.read("logs/"):                       # format detected per file
        print(conv.session_id, len(conv.messages))
    result = tt.replay_corpus("logs/", tt.SummaryConfig(max_context_tokens=128_000))
    result.status, result.sessions[0].engine.decisions  # RunStatus, per-turn records
    tt.sweep_corpus("logs/", ratios=[0.5, 0.75])        # SweepResult
    tt.diff_runs("old-out/", "new-out/")                # RunDiff

The session engine, for a runtime that drives turns itself: ``SessionEngine``
hands out a ``SummaryRequest`` when the checkpoint fires and takes back a
``SummaryOutcome``.

Importing this package has no side effects and imports nothing until a name is used
(never an LLM SDK): ``tsum --version`` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

# public name -> module that defines it (imported on first use, PEP 562)
_EXPORTS = {
    # functions
    "read": "api",
    "replay_corpus": "api",
    "sweep_corpus": "api",
    "diff_runs": "api",
    "format_messages_as_text": "engine.formatting",
    "load_template": "engine.prompt",
    # settings
    "SummaryConfig": "engine.config",
    "ReplaySettings": "engine.config",
    "SlotMode": "engine.config",
    "TurnPath": "engine.config",
    "Measure": "engine.config",
    # results
    "ReplayResult": "replay.run",
    "RunStatus": "replay.run",
    "RunStats": "replay.driver",
    "SessionResult": "replay.conversation",
    "SweepResult": "sweep.driver",
    "RunDiff": "diff.changes",
    # the engine and what it exchanges
    "SessionEngine": "engine.session",
    "SummaryRequest": "engine.requests",
    "SummaryOutcome": "engine.requests",
    "SummaryResponse": "engine.requests",
    "Provider": "providers.base",
    "ContextSlot": "engine.slot",
    "FocusedConfig": "engine.slot",
    "SessionMemory": "engine.slot",
    "PromptTemplate": "engine.prompt",
    # messages
    "AssistantMessage": "engine.messages",
    "Conversation": "engine.messages",
    "Message": "engine.messages",
    "OtherBlock": "engine.messages",
    "SystemMessage": "engine.messages",
    "TextBlock": "engine.messages",
    "ToolResultMessage": "engine.messages",
    "ToolUseBlock": "engine.messages",
    "Usage": "engine.messages",
    "UserImageMessage": "engine.messages",
    "UserMessage": "engine.messages",
    # errors
    "TsumError": "errors",
    "ConfigError": "errors",
    "InputError": "errors",
    "ProviderError": "errors",
    "TemplateError": "errors",
    "ExitCode": "errors",
}

__all__ = [
    "AssistantMessage",
    "ConfigError",
    "ContextSlot",
    "Conversation",
    "ExitCode",
    "FocusedConfig",
    "InputError",
    "Measure",
    "Message",
    "OtherBlock",
    "PromptTemplate",
    "Provider",
    "ProviderError",
    "ReplayResult",
    "ReplaySettings",
    "RunDiff",
    "RunStats",
    "RunStatus",
    "SessionEngine",
    "SessionMemory",
    "SessionResult",
    "SlotMode",
    "SummaryConfig",
    "SummaryOutcome",
    "SummaryRequest",
    "SummaryResponse",
    "SweepResult",
    "SystemMessage",
    "TemplateError",
    "TextBlock",
    "ToolResultMessage",
    "ToolUseBlock",
    "TsumError",
    "TurnPath",
    "Usage",
    "UserImageMessage",
    "UserMessage",
    "diff_runs",
    "format_messages_as_text",
    "load_template",
    "read",
    "replay_corpus",
    "sweep_corpus",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'transcript_tools' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from .api import diff_runs, read, replay_corpus, sweep_corpus
    from .diff.changes import RunDiff
    from .engine.config import Measure, ReplaySettings, SlotMode, SummaryConfig, TurnPath
    from .engine.formatting import format_messages_as_text
    from .engine.messages import (
        AssistantMessage,
        Conversation,
        Message,
        OtherBlock,
        SystemMessage,
        TextBlock,
        ToolResultMessage,
        ToolUseBlock,
        Usage,
        UserImageMessage,
        UserMessage,
    )
    from .engine.prompt import PromptTemplate, load_template
    from .engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
    from .engine.session import SessionEngine
    from .engine.slot import ContextSlot, FocusedConfig, SessionMemory
    from .errors import ConfigError, ExitCode, InputError, ProviderError, TemplateError, TsumError
    from .providers.base import Provider
    from .replay.conversation import SessionResult
    from .replay.driver import RunStats
    from .replay.run import ReplayResult, RunStatus
    from .sweep.driver import SweepResult
