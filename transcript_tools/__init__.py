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
# and IDEs read it as written, each name imported ``as`` itself (PEP 484's explicit
# re-export: a user's mypy --strict or pyright sees no other import as exported); at run
# time ``_exports`` reads the same block from this file's source on the first use of a
# name (PEP 562), so importing the package imports nothing more.
if TYPE_CHECKING:
    from .api import check as check
    from .api import diff_outputs as diff_outputs
    from .api import eval_corpus as eval_corpus
    from .api import fidelity_corpus as fidelity_corpus
    from .api import inspect_corpus as inspect_corpus
    from .api import read_corpus as read_corpus
    from .api import replay_corpus as replay_corpus
    from .api import sweep_corpus as sweep_corpus
    from .cost.records import CostRecord as CostRecord
    from .diff.changes import RunDiff as RunDiff
    from .diff.check import CheckResult as CheckResult
    from .engine.config import Checkpoint as Checkpoint
    from .engine.config import Measure as Measure
    from .engine.config import ReplaySettings as ReplaySettings
    from .engine.config import RunSettings as RunSettings
    from .engine.config import SlotMode as SlotMode
    from .engine.config import SummaryConfig as SummaryConfig
    from .engine.config import TurnPath as TurnPath
    from .engine.formatting import format_messages_as_text as format_messages_as_text
    from .engine.messages import AssistantMessage as AssistantMessage
    from .engine.messages import Conversation as Conversation
    from .engine.messages import Message as Message
    from .engine.messages import OtherBlock as OtherBlock
    from .engine.messages import SystemMessage as SystemMessage
    from .engine.messages import TextBlock as TextBlock
    from .engine.messages import ToolResultMessage as ToolResultMessage
    from .engine.messages import ToolUseBlock as ToolUseBlock
    from .engine.messages import Usage as Usage
    from .engine.messages import UserImageMessage as UserImageMessage
    from .engine.messages import UserMessage as UserMessage
    from .engine.prompt import PromptTemplate as PromptTemplate
    from .engine.prompt import load_template as load_template
    from .engine.records import DecisionRecord as DecisionRecord
    from .engine.records import SnapshotRecord as SnapshotRecord
    from .engine.records import SummaryRecord as SummaryRecord
    from .engine.records import SummaryStatus as SummaryStatus
    from .engine.requests import SummaryOutcome as SummaryOutcome
    from .engine.requests import SummaryRequest as SummaryRequest
    from .engine.requests import SummaryResponse as SummaryResponse
    from .engine.rules import Decision as Decision
    from .engine.session import SessionEngine as SessionEngine
    from .engine.slot import ContextSlot as ContextSlot
    from .engine.slot import FocusedConfig as FocusedConfig
    from .engine.slot import SessionMemory as SessionMemory
    from .errors import ConfigError as ConfigError
    from .errors import ExitCode as ExitCode
    from .errors import InputError as InputError
    from .errors import ProviderConfigError as ProviderConfigError
    from .errors import ProviderError as ProviderError
    from .errors import TemplateError as TemplateError
    from .errors import TsumError as TsumError
    from .errors import UnknownFormatError as UnknownFormatError
    from .eval.records import ScoreRecord as ScoreRecord
    from .eval.workflow import EvalRun as EvalRun
    from .fidelity import FidelityResult as FidelityResult
    from .inspection import InspectResult as InspectResult
    from .inspection import SessionInfo as SessionInfo
    from .providers.base import Provider as Provider
    from .providers.factory import ProviderOptions as ProviderOptions
    from .replay.conversation import SessionResult as SessionResult
    from .replay.driver import ReplayStats as ReplayStats
    from .replay.run import ReplayResult as ReplayResult
    from .replay.run import RunStatus as RunStatus
    from .settings import load_settings as load_settings
    from .sweep.driver import SweepResult as SweepResult


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
