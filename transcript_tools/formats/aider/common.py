"""What Aider's two logs share: file naming, and the messages Aider writes itself.

Aider sends the model messages of its own beside the person's prompts: the repository
map and the files' contents (each followed by a canned assistant reply such as "Ok, I
will use that as the true, current contents of the files."), "I made those changes to
the files." (+ "Ok."), command output it was asked to add ("I ran this command: ..."),
lint and edit-failure reports it reflects back to the model. Only the person's prompts
start a turn (docs/spec.md, "Turns"); the texts below say which is which.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...engine.messages import INJECTED, OBSERVATION, PERSON
from ..source import Source

# The context Aider puts in front of the conversation, rebuilt for every request.
CONTEXT_PREFIXES = (
    "I am working with you on code in a git repository.",
    "Here are summaries of some files present in my git repo",  # "repo." or "repository."
    "I have *added these files to the chat*",
    "Here are some READ ONLY files",
    "I am not sharing any files that you can edit yet.",
    "I am not sharing the full contents of any files with you yet.",
    "Don't try and edit any existing code without asking me to add the files to the chat!",
)
# Runtime messages that are not the environment's output.
INJECTED_PREFIXES = (
    "I made those changes to the files.",
    "I committed the changes with git hash",
    "I updated the files.",
    "I didn't see any properly formatted edits in your reply",
    "I edited the files myself.",
    "I added these files to the chat:",
    "I spoke to you previously about a number of things.",  # Aider's history summary
    "I switched to a new code base.",
)
# Output of commands, linters and edit application, sent back as a user message.
OBSERVATION_PREFIXES = (
    "I ran this command:",
    "# Fix any errors below",
    "The LLM did not conform to the edit format.",
)
FAILED_EDITS = re.compile(r"# \d+ SEARCH/REPLACE blocks? failed to match")

# Assistant replies Aider writes itself after its own messages: no model call made them.
CANNED_REPLIES = frozenset(
    {
        "Ok.",
        "Ok, I won't try and edit those files without asking first.",
        "Ok, I will use that as the true, current contents of the files.",
        "Ok, any changes I propose will be to those files.",
        "Ok, based on your requests I will suggest which files need to be edited and then"
        " stop and wait for your approval.",
    }
)


# Aider logs what it printed to the terminal, colours included: rich's SGR sequences
# (ESC [ 1 m, ESC [ 1 ; 33 m, ESC [ 0 m) around command output and lint messages. They are
# formatting, not text: left in, "ESC[1mtests/x.py" reads as the identifier "1mtests/x.py".
# ECMA-48 (5th ed., 5.4): a control sequence is ESC [, parameter bytes 0x30-0x3F,
# intermediate bytes 0x20-0x2F and one final byte 0x40-0x7E; an OSC string runs from
# ESC ] to BEL or ESC \; any other escape is ESC, intermediate bytes 0x20-0x2F and one
# final byte 0x30-0x7E (ESC ( B: the ASCII character set).
ANSI_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]*[0-~])")


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences (colours, cursor moves, titles)."""
    return ANSI_ESCAPE.sub("", text) if "\x1b" in text else text


def is_context(text: str) -> bool:
    return text.startswith(CONTEXT_PREFIXES)


def user_origin(text: str) -> str:
    """Who wrote a user message Aider sent: the person, Aider itself, or the environment."""
    if text.startswith(CONTEXT_PREFIXES) or text.startswith(INJECTED_PREFIXES):
        return INJECTED
    if text.startswith(OBSERVATION_PREFIXES) or FAILED_EDITS.match(text):
        return OBSERVATION
    return PERSON


def is_canned(text: str) -> bool:
    return text.strip() in CANNED_REPLIES


def stem(source: Source, suffix: str) -> str:
    """``friendly_names.aider.llm.history`` → ``friendly_names``; the default name alone
    (``.aider.llm.history``) → the folder it is in (the project), else ``aider``."""
    if source.path == "-":
        return "stdin"
    path = Path(source.display)
    name = path.name
    if name.endswith(suffix):
        return name[: -len(suffix)].rstrip(".") or path.resolve().parent.name or "aider"
    return path.stem or "aider"
