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

# The one list of exports is the block of imports below, under TYPE_CHECKING: type checkers
# and IDEs read it as written; at run time ``_exports`` reads the same block from this
# file's source on the first use of a name (PEP 562), so importing the package imports
# nothing more.
if TYPE_CHECKING:
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


_EXPORTS: dict[str, str] = {}  # filled from the block above on first use


def _exports() -> dict[str, str]:
    """Public name -> the module that defines it: the TYPE_CHECKING imports above."""
    if not _EXPORTS:
        import ast
        from pathlib import Path

        tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
        block = next(
            n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
        )
        for node in block.body:
            assert isinstance(node, ast.ImportFrom) and node.module
            _EXPORTS.update((alias.name, node.module) for alias in node.names)
    return _EXPORTS


def __getattr__(name: str) -> Any:
    if name == "__all__":
        value: Any = sorted(_exports())
    elif name in _exports():
        value = getattr(import_module(f".{_exports()[name]}", __name__), name)
    else:
        raise AttributeError(f"module 'transcript_tools' has no attribute {name!r}")
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_exports()})
