"""tsum: replay stored LLM conversations through the automatic-summary checkpoint.

The front door (``api``): every workflow of the CLI as a plain synchronous function
(they also work inside a running event loop, e.g. Jupyter)::

    import transcript_tools as tt

    for conv in tt.read_corpus("logs/"):                # format detected per file
        print(conv.session_id, len(conv.messages))
    result = tt.replay_corpus("logs/", tt.SummaryConfig(max_context_tokens=128_000))
    tt.sweep_corpus("logs/", ratios=[0.5, 0.75])         # SweepResult
    tt.eval_corpus("logs/", prompts=["zh", "en"])        # EvalRun
    tt.check("logs/", "baseline/")                       # CheckResult
    tt.inspect_corpus("logs/")                           # InspectResult
    tt.diff_outputs("old-out/", "new-out/")              # RunDiff
    tt.replay_corpus("logs/", run_settings=tt.load_settings())  # the CLI's settings

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
    "read_corpus": "api",
    "replay_corpus": "api",
    "sweep_corpus": "api",
    "eval_corpus": "api",
    "check": "api",
    "inspect_corpus": "api",
    "fidelity_corpus": "api",
    "diff_outputs": "api",
    "load_settings": "settings",
    "format_messages_as_text": "engine.formatting",
    "load_template": "engine.prompt",
    # settings
    "SummaryConfig": "engine.config",
    "ReplaySettings": "engine.config",
    "SlotMode": "engine.config",
    "TurnPath": "engine.config",
    "Measure": "engine.config",
    "Checkpoint": "engine.config",
    "RunSettings": "engine.config",
    "ProviderOptions": "providers.factory",
    # results
    "ReplayResult": "replay.run",
    "RunStatus": "replay.run",
    "ReplayStats": "replay.driver",
    "SessionResult": "replay.conversation",
    "SweepResult": "sweep.driver",
    "RunDiff": "diff.changes",
    "EvalRun": "eval.workflow",
    "CheckResult": "diff.check",
    "InspectResult": "inspection",
    "FidelityResult": "fidelity",
    "SessionInfo": "inspection",
    "Decision": "engine.rules",
    # the records the workflows write (typed once: engine/records.py, eval/, cost/)
    "DecisionRecord": "engine.records",
    "SummaryRecord": "engine.records",
    "SnapshotRecord": "engine.records",
    "SummaryStatus": "engine.records",
    "ScoreRecord": "eval.records",
    "CostRecord": "cost.records",
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
    "ProviderConfigError": "errors",
    "UnknownFormatError": "errors",
    "TemplateError": "errors",
    "ExitCode": "errors",
}

__all__ = [
    "AssistantMessage",
    "CheckResult",
    "Checkpoint",
    "ConfigError",
    "ContextSlot",
    "Conversation",
    "CostRecord",
    "Decision",
    "DecisionRecord",
    "EvalRun",
    "ExitCode",
    "FocusedConfig",
    "InputError",
    "FidelityResult",
    "InspectResult",
    "Measure",
    "Message",
    "OtherBlock",
    "PromptTemplate",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "ProviderOptions",
    "ReplayResult",
    "ReplaySettings",
    "ReplayStats",
    "RunDiff",
    "RunSettings",
    "RunStatus",
    "ScoreRecord",
    "SessionEngine",
    "SessionInfo",
    "SessionMemory",
    "SessionResult",
    "SlotMode",
    "SnapshotRecord",
    "SummaryConfig",
    "SummaryOutcome",
    "SummaryRecord",
    "SummaryRequest",
    "SummaryResponse",
    "SummaryStatus",
    "SweepResult",
    "SystemMessage",
    "TemplateError",
    "TextBlock",
    "ToolResultMessage",
    "ToolUseBlock",
    "TsumError",
    "TurnPath",
    "UnknownFormatError",
    "Usage",
    "UserImageMessage",
    "UserMessage",
    "check",
    "diff_outputs",
    "eval_corpus",
    "fidelity_corpus",
    "format_messages_as_text",
    "inspect_corpus",
    "load_settings",
    "load_template",
    "read_corpus",
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
    from .api import (
        check,
        diff_outputs,
        eval_corpus,
        fidelity_corpus,
        inspect_corpus,
        read_corpus,
        replay_corpus,
        sweep_corpus,
    )
    from .cost.records import CostRecord
    from .diff.changes import RunDiff
    from .diff.check import CheckResult
    from .engine.config import (
        Checkpoint,
        Measure,
        ReplaySettings,
        RunSettings,
        SlotMode,
        SummaryConfig,
        TurnPath,
    )
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
    from .engine.records import DecisionRecord, SnapshotRecord, SummaryRecord, SummaryStatus
    from .engine.requests import SummaryOutcome, SummaryRequest, SummaryResponse
    from .engine.rules import Decision
    from .engine.session import SessionEngine
    from .engine.slot import ContextSlot, FocusedConfig, SessionMemory
    from .errors import (
        ConfigError,
        ExitCode,
        InputError,
        ProviderConfigError,
        ProviderError,
        TemplateError,
        TsumError,
        UnknownFormatError,
    )
    from .eval.records import ScoreRecord
    from .eval.workflow import EvalRun
    from .fidelity import FidelityResult
    from .inspection import InspectResult, SessionInfo
    from .providers.base import Provider
    from .providers.factory import ProviderOptions
    from .replay.conversation import SessionResult
    from .replay.driver import ReplayStats
    from .replay.run import ReplayResult, RunStatus
    from .settings import load_settings
    from .sweep.driver import SweepResult
