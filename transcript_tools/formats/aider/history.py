"""Aider's chat history (``.aider.chat.history.md``; Markdown).

- ``# aider chat started at YYYY-MM-DD HH:MM:SS`` starts a session (one per launch of
  Aider; a session with no prompt — Aider started and quit — is skipped, counted in a
  warning).
- ``#### <text>`` lines are the person's prompts (several in a row are one multi-line
  prompt): PERSON, each starts a turn. ``/ask``, ``/code``, ``/architect`` prompts are
  prompts without their command word; Aider then logs the prompt again without it (the
  echo ``#### Q`` after ``#### /ask Q``): the same prompt, read once. A bare ``/ask``,
  ``/code``, ``/architect`` (a mode switch), and any other slash command (``/add``,
  ``/run`` …) that no reply follows, is an instruction to Aider, not a message to the
  model: left out, counted in a warning.
- Not the person's prompts either, though Aider logs them with ``####``: answers to
  Aider's own questions (``Add file to the chat? (Y)es/(N)o/… [Yes]: skip``) are notes,
  left out like the ``>`` notes (the model never sees them); in architect mode the
  architect's reply handed to the editor model (a ``####`` block that repeats the reply
  just before it) is what Aider sends, so it is kept, as an INJECTED message: never a
  turn.
- Lines starting ``>`` are Aider's own notes (files added, edits applied, commits,
  warnings), not sent to the model and not messages. One of them carries the usage of
  the model call that just ended: ``> Tokens: 3.2k sent, 222 received.`` (k/M suffixes,
  rounded as Aider printed them; optional ``cache write`` / ``cache hit`` parts; ``Cost:``
  after it). It is attached to the reply before it: input = sent, output = received,
  cache read/creation = cache hit/write (subsets of sent). A ``> Model:`` / ``> Main
  model:`` note names the model.
- A note of several lines (a shell command with a multi-line ``git commit -m``) has ``>``
  on its first line only (``append_chat_history`` quotes the text once:
  Aider-AI/aider:aider/io.py@0045641db758eb75f9f0ee2441d3516dc2187948): the
  plain lines right after a note, up to a blank line, are more of it, not a reply.
- The model's reply is the plain text between a prompt and the next note or prompt.
  Text after a ``Tokens`` note in the same exchange is another call (Aider reflecting
  lint errors or failed edits back to the model; the reflected message itself is only in
  the notes).

Limits: a reply line that itself starts with ``#### `` or ``> `` (a Markdown heading or
quote) is read as a prompt or a note — the file does not tell them apart; command output
the person added to the chat (``/run``) is in the notes only, so it is not in the history.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ...engine.messages import (
    INJECTED,
    AssistantMessage,
    Conversation,
    Message,
    TextBlock,
    Usage,
    UserMessage,
)
from ...errors import InputError
from ...present.numbers import shown_places
from ..source import Source
from .common import stem, strip_ansi

NAME = "aider-chat"
DESCRIPTION = "Aider chat history (.aider.chat.history.md: sessions, #### prompts, > notes)"
SUFFIX = ".aider.chat.history.md"

SESSION = re.compile(r"# aider chat started at (.*)")
PROMPT = "####"
TOKENS = re.compile(r">\s*Tokens:\s*(.*)")
TOKEN_PART = re.compile(r"(\d[\d.,]*)\s*([kKmM]?)\s+(sent|received|cache write|cache hit)")
MODEL = re.compile(r">\s*(?:Main model|Model|Models):\s*(\S+)")
EDIT_FORMAT = re.compile(r">\s*(?:Main model|Model):.* with (\S+) edit format")
# Commands whose text is a prompt to the model.
PROMPT_COMMANDS = ("/ask", "/code", "/architect", "/context")
# Aider's confirm questions, answered: "Add file to the chat? (Y)es/(N)o/... [Yes]: all"
ANSWER = re.compile(r".*\?\s*\(Y\)es/\(N\)o.*\[[^\]]*\]:.*")
# A handoff shorter than this must repeat the whole reply (not only its last lines).
HANDOFF_TAIL_CHARS = 40
SHOWN = 8


def sniff_text(head: bytes) -> bool:
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return text.startswith(b"# aider chat started at ")


def parse_count(number: str, suffix: str) -> int:
    """``3.2`` + ``k`` → 3200; ``1,234`` → 1234 (Aider prints k/M-rounded counts)."""
    value = float(number.replace(",", ""))
    return round(value * {"": 1, "k": 1_000, "m": 1_000_000}[suffix.lower()])


def usage_from_tokens_note(rest: str) -> Usage | None:
    parts = {label: parse_count(n, s) for n, s, label in TOKEN_PART.findall(rest)}
    if "sent" not in parts and "received" not in parts:
        return None
    return Usage(
        input_tokens=parts.get("sent", 0),
        output_tokens=parts.get("received", 0),
        cache_read_tokens=parts.get("cache hit", 0),
        cache_creation_tokens=parts.get("cache write", 0),
    )


@dataclass(slots=True)
class _Reply:
    lines: list[str] = field(default_factory=list)
    usage: Usage | None = None


@dataclass(slots=True)
class _Session:
    line: int
    model: str | None = None
    items: list[UserMessage | _Reply] = field(default_factory=list)
    commands: list[int] = field(default_factory=list)  # lines of slash commands left out
    prompt_lines: list[str] = field(default_factory=list)  # the prompt being read
    prompt_at: int = 0
    reply: _Reply | None = None  # the reply text is being added to (no usage yet)
    command_at: int | None = None  # line of the latest prompt if a command nothing answered yet
    echo: str | None = None  # a /ask, /code … prompt's text, which Aider logs again next
    architect: bool = False  # in architect mode (a model note says so)
    one_shot: bool = False  # the latest prompt was /architect <text>

    def flush_prompt(self) -> None:
        if not self.prompt_lines:
            return
        self.drop_unanswered_command()
        text = "\n".join(self.prompt_lines).strip("\n")
        self.prompt_lines = []
        self.reply = None
        echo, self.echo = self.echo, None
        if echo is not None and text == echo:
            return  # Aider's echo of the /ask, /code … prompt just read
        if self.is_handoff(text):
            self.items.append(UserMessage((TextBlock(text),), INJECTED))
            return
        word = text.split(None, 1)[0] if text.startswith("/") else ""
        self.one_shot = word == "/architect"
        if word in PROMPT_COMMANDS:
            text = text[len(word) :].strip()
            if not text:  # a bare mode switch: an instruction to Aider
                self.commands.append(self.prompt_at)
                return
            self.echo = text
        elif word:
            self.command_at = self.prompt_at  # kept only if a reply shows it reached the model
        self.items.append(UserMessage((TextBlock(text),)))

    def is_handoff(self, text: str) -> bool:
        """In architect mode, the architect's reply, which Aider hands to the editor model
        and logs as a ``####`` block right after it (with notes, such as the "Edit the
        files?" answer, between)."""
        last = self.items[-1] if self.items else None
        if not (self.architect or self.one_shot) or not isinstance(last, _Reply):
            return False
        sent, reply = _plain(text), _plain("\n".join(last.lines))
        if not sent:
            return False
        return sent == reply or (
            len(sent) >= HANDOFF_TAIL_CHARS and reply.endswith("\n" + sent)
        )  # the reply may open with reasoning the handoff leaves out

    def drop_unanswered_command(self) -> None:
        if self.command_at is not None:
            self.items.pop()  # nothing followed it: the prompt is the last item
            self.commands.append(self.command_at)
            self.command_at = None

    def text(self, line: str) -> None:
        if self.reply is None:
            if not line.strip():
                return  # blank lines between blocks
            self.reply = _Reply()
            self.items.append(self.reply)
        self.reply.lines.append(line)
        self.command_at = None
        self.echo = None

    def tokens(self, usage: Usage) -> None:
        # the usage of the call whose reply was just written
        target = self.reply
        if target is None:
            target = _Reply()  # a call whose reply text the log does not hold
            self.items.append(target)
        target.usage = usage
        self.reply = None
        self.command_at = None
        self.echo = None

    def end(self) -> None:
        self.flush_prompt()
        self.drop_unanswered_command()


def _sessions(text: str) -> Iterator[_Session]:
    session: _Session | None = None
    lines = text.split("\n")
    in_note = False  # the line before was a ``>`` note (or more of one)
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if in_note and line.strip() and not line.startswith((">", PROMPT, "# aider chat")):
            continue  # more of a multi-line note: Aider prefixes only its first line
        in_note = line.startswith("> ")  # not an edit block's ">>>>>>> REPLACE"
        header = SESSION.match(line)
        if header:
            if session is not None:
                session.end()
                yield session
            session = _Session(lineno)
            continue
        if session is None:
            if not line.strip():
                continue
            session = _Session(lineno)  # a file cut at the front: no header
        if line == PROMPT or line.startswith(PROMPT + " "):  # not a "#####" heading
            if ANSWER.fullmatch(line[len(PROMPT) :].strip()):
                session.flush_prompt()  # an answer to Aider's question: a note
                continue
            if not session.prompt_lines:
                session.prompt_at = lineno
            session.prompt_lines.append(line[len(PROMPT) :].removeprefix(" ").rstrip())
            continue
        session.flush_prompt()
        if line.startswith(">"):
            tokens = TOKENS.match(line)
            usage = usage_from_tokens_note(tokens.group(1)) if tokens else None
            if usage is not None:
                session.tokens(usage)
            else:
                model = MODEL.match(line)
                if model and session.model is None:
                    session.model = model.group(1)
                mode = EDIT_FORMAT.match(line)
                if mode:
                    session.architect = mode.group(1) == "architect"
                # Other notes leave the reply open: without a Tokens note, text after them
                # cannot be told apart from more of the same reply.
            continue
        session.text(line)
    if session is not None:
        session.end()
        yield session


def _plain(text: str) -> str:
    """Text without trailing spaces (Markdown line breaks) or blank lines, for comparing."""
    return "\n".join(line.rstrip() for line in text.split("\n") if line.strip())


def _messages(session: _Session) -> list[Message]:
    out: list[Message] = []
    for item in session.items:
        if isinstance(item, _Reply):
            body = "\n".join(item.lines).strip("\n")
            out.append(
                AssistantMessage((TextBlock(body),) if body else (), item.usage, session.model)
            )
        else:
            out.append(item)
    return out


def read_text(text: str, source: Source) -> Iterator[Conversation]:
    text = strip_ansi(text)
    if not re.search(r"^(# aider chat started at |####( |$))", text, re.MULTILINE):
        # forced with --format on another kind of file: say so rather than read nonsense
        raise InputError(
            source.display,
            1,
            "not an Aider chat history (no '# aider chat started at' or '####' line)",
        )
    base = stem(source, SUFFIX)
    sessions = list(_sessions(text))
    empty: list[int] = []
    number = 0
    for session in sessions:
        number += 1
        name = f"{base}#{number}" if len(sessions) > 1 else base
        messages = _messages(session)
        if not messages:
            empty.append(session.line)  # its unanswered commands, if any, go with it
            continue
        conv = Conversation(name, source.display, NAME, line=session.line, messages=messages)
        if session.commands:
            conv.warnings.append(
                f"{len(session.commands)} Aider command(s) with no reply left out: instructions to"
                f" Aider, not messages to the model ({_lines(session.commands)})"
            )
        yield conv
    if empty:
        source.noted(
            f"{len(empty)} session(s) with no message to the model"
            f" skipped (Aider started and quit; {_lines(empty)})"
        )


def _lines(lines: list[int]) -> str:
    return ("line " if len(lines) == 1 else "lines ") + shown_places(lines, SHOWN)
