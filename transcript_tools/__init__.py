"""tsum: replay stored LLM conversations through the automatic-summary checkpoint.

Importing this package has no side effects and never imports an LLM SDK.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .config import Measure, ReplaySettings, SlotMode, SummaryConfig, TurnPath
from .context import ContextSlot, FocusedConfig, SessionMemory
from .errors import ConfigError, ExitCode, InputError, ProviderError, TemplateError, TsumError
from .messages import (
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
from .prompt import PromptTemplate, load_template
from .session import SessionEngine

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
    "ProviderError",
    "ReplaySettings",
    "SessionEngine",
    "SessionMemory",
    "SlotMode",
    "SummaryConfig",
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
    "format_messages_as_text",
    "load_template",
]


def __getattr__(name: str) -> object:
    if name == "format_messages_as_text":
        from .transcript import format_messages_as_text

        return format_messages_as_text
    raise AttributeError(name)
