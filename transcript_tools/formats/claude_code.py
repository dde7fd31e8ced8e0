"""Claude Code session logs (``~/.claude/projects/<dir>/<session>.jsonl``).

One file is one session, read in file order (``sessionId`` alternates inside resumed
files; ``parentUuid`` forks are normal for parallel tool calls). The same entries as a
JSON array (``logs/chat.json``) read alike. Mapping:

- ``assistant`` lines → AssistantMessage. One API response is logged as several lines
  sharing ``message.id`` (one content block each, usage repeated, final ``output_tokens``
  on the last), sometimes with tool results logged between them: the lines of one id are
  merged into ONE message (blocks in order) with the usage of the last line, so each
  response is counted once — also when its lines come back further down (they join the
  message where it first was). A ``message.id`` that is not a string is normalized (one
  warning). ``input_tokens`` = input + cache creation + cache read.
  ``<synthetic>`` entries (API errors, interrupts) keep their text and model name
  (``messages.SYNTHETIC_MODEL``): not a model call, so no usage and no estimate.
- ``user`` lines with ``tool_result`` blocks → ToolResultMessage (never a new turn).
- A real prompt → UserMessage (or UserImageMessage for a lone image): starts a turn.
  Not prompts: ``isMeta`` lines (except the expanded prompt right after a slash command
  such as ``/init``, which is what the model answers), slash-command echoes and their
  output (``<command-name>``, ``<local-command-stdout>`` ...), interrupt markers, bare
  ``<system-reminder>`` text. IDE context alone on a line (``<ide_opened_file>`` …) joins
  the prompt just before it (if nothing came after that yet) or the next one; else it is
  dropped with a warning — never a turn of its own.
- Queued prompts (``queue-operation``, ``queued_command`` attachments): the person's
  message where they were delivered (``claude_code_queue``).
- A re-logged copy of earlier entries (resume, 2.0.29–2.0.31) is not replayed again
  (``claude_code_copies``).
- Compactions: ``system`` ``compact_boundary`` (``compactMetadata.preTokens``) and
  ``isCompactSummary`` user entries → Conversation.compactions, one per compaction. The
  summary text itself is kept as a UserMessage with ``origin=INJECTED``: Claude Code sends
  it to the model as a user message, but the runtime wrote it, so it never starts a turn
  and is never a request of the person (it rides in the turn it compacted). A
  continuation text without the flag (older versions, first line of a continued file) is
  mapped the same way but is not a recorded compaction.
- Rewinds (a prompt whose ``parentUuid`` points back before the current tip, i.e. the
  user edited an earlier message): the abandoned branch is dropped, because the model
  never saw it again; a warning on the Conversation says how many messages went.
- Skipped: sidechain entries (inline Task subagents) — except when the whole file is a
  sidechain (a subagent file ``agent-*.jsonl``), which replays as its own session, id
  ``agentId`` or the file stem; ``summary``, ``file-history-snapshot``, ``progress``,
  other ``attachment``s, ``permission-mode``, ``last-prompt``, hook / ``system`` noise.
  Any other entry type is skipped with a warning (one per type, at its first line; a
  record of another format, one warning for all: ``switch``); an entry whose ``type`` is
  not a string, with a warning of its own.
- A ``usage`` field that is not a number is a warning naming the line (a numeric string
  is read).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..engine.messages import (
    INJECTED,
    PERSON,
    SYNTHETIC_MODEL,
    Block,
    Compaction,
    Conversation,
    Message,
    UserMessage,
)
from .anthropic_api import (
    blocks_from_anthropic,
    has_tool_result,
    tool_results,
    usage_from_anthropic,
    user_message,
)
from .assembly import PendingAssistant, freeze_all
from .claude_code_compactions import CompactionNotes
from .claude_code_copies import Copies
from .claude_code_queue import Queue
from .claude_code_text import CONTINUATION_PREFIX, first_text, ide_only, is_prompt, response_id
from .source import Record, Source, session_stem
from .switch import FormatSwitch

NAME = "claude-code"
DESCRIPTION = (
    "Claude Code session logs (~/.claude/projects/*/*.jsonl, or the same entries as a JSON array)"
)

# Entry types Claude Code writes (FORMATS.md); only user/assistant/system carry messages.
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
        "permission-mode",
        "last-prompt",
    }
)


def sniff(head: list[Record]) -> bool:
    for record in head:
        obj = record.obj
        kind = obj.get("type")
        if kind in ("user", "assistant") and isinstance(obj.get("message"), dict):
            if "sessionId" in obj or "parentUuid" in obj:
                return True
        elif kind == "summary" and "leafUuid" in obj:
            return True
        elif kind == "file-history-snapshot" and "snapshot" in obj:
            return True
        elif kind in ("system", "queue-operation", "progress") and "sessionId" in obj:
            return True
    return False


class _Session:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.conv = Conversation(session_stem(source), source.display, NAME)
        self.out: list[Message | PendingAssistant] = []
        self.open: PendingAssistant | None = None
        self.sidechain_file: bool | None = None
        self.session_set = False
        self.after_command = False
        self.pos: dict[str, int] = {}  # uuid → number of messages after that entry
        self.tip: str | None = None  # uuid of the latest main-chain entry
        self.unknown: dict[str, tuple[int, Record]] = {}  # entry type -> (count, first record)
        self.responses: dict[str, PendingAssistant] = {}  # message.id → its message
        self.odd_id = False  # a non-string message.id was warned about
        self.copies = Copies()
        self.switch = FormatSwitch(NAME)
        self.queue = Queue(source)
        self.ide: tuple[list[Block], Record] | None = None  # IDE context waiting for its prompt
        self.notes = CompactionNotes()  # version, model and trigger of each compaction

    # -- entries ------------------------------------------------------------------------

    def add(self, record: Record) -> None:
        obj = record.obj
        kind = obj.get("type")
        if type(kind) is not str or kind not in KNOWN_TYPES:
            self._unknown(kind, record)
            return
        self.switch.started = True
        self.notes.entry(obj)
        side = obj.get("isSidechain") is True
        if self.sidechain_file is None and kind in ("user", "assistant"):
            self.sidechain_file = side
            if side:
                agent = obj.get("agentId")
                self.conv.session_id = str(agent) if agent else self.conv.session_id
                self.session_set = True
        if side and not self.sidechain_file:
            return
        if not self.session_set and isinstance(obj.get("sessionId"), str) and obj["sessionId"]:
            self.conv.session_id = obj["sessionId"]
            self.session_set = True
        if kind == "queue-operation":
            if not self.copies.lines:  # inside a re-logged copy: delivered the first time
                self.queue.operation(obj, record)
            return
        if kind == "attachment":
            attachment = obj.get("attachment")
            if (
                isinstance(attachment, dict)
                and attachment.get("type") == "queued_command"
                and not self.copies.lines
            ):
                self._delivered(self.queue.attachment(attachment, record))
            return
        if self.queue.removed:
            self._delivered(self.queue.settle())
        original = self.copies.original(obj, record)
        if original is not None:  # a re-logged copy: already read where it first was
            uuid = obj.get("uuid")
            if isinstance(uuid, str):
                self.pos[uuid] = self.pos.get(original, len(self.out))
                self.tip = uuid
            return
        if kind == "assistant":
            self._assistant(obj, record)
        elif kind == "user":
            self._user(obj, record)
        elif kind == "system" and obj.get("subtype") == "compact_boundary":
            meta = obj.get("compactMetadata")
            pre = meta.get("preTokens") if isinstance(meta, dict) else None
            trigger, post = self.notes.boundary(meta)
            self._compaction(
                "claude-code:compact_boundary",
                pre if isinstance(pre, int) else None,
                Compaction(0, "", trigger=trigger, post_tokens=post),
            )
        uuid = obj.get("uuid")
        if isinstance(uuid, str):
            self.pos[uuid] = len(self.out)
            self.tip = uuid

    def _message(self, obj: dict[str, Any], record: Record) -> dict[str, Any] | None:
        msg = obj.get("message")
        if not isinstance(msg, dict):
            self.source.bad(
                record.error(
                    self.source.display, f"{obj.get('type')} entry without a 'message' object"
                )
            )
            return None
        content = msg.get("content")
        if not isinstance(content, (str, list)):
            self.source.bad(
                record.error(
                    self.source.display, "message.content must be a string or an array of blocks"
                )
            )
            return None
        return msg

    def _assistant(self, obj: dict[str, Any], record: Record) -> None:
        self.after_command = False
        msg = self._message(obj, record)
        if msg is None:
            return
        self._drop_ide()
        raw_id = msg.get("id") or obj.get("requestId")
        message_id, odd = response_id(raw_id)
        if odd and not self.odd_id:
            self.odd_id = True
            field = "message.id" if msg.get("id") else "requestId"
            self.source.dropped(
                record,
                f"{field} is not a string ({str(raw_id)[:60]!r}); lines with the same"
                " id are still read as one response",
            )
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        self.notes.model_call(model)
        usage = (
            None
            if model == SYNTHETIC_MODEL
            else usage_from_anthropic(msg.get("usage"), self.source.warner(record))
        )
        blocks = blocks_from_anthropic(msg["content"], self.source.warner(record))
        current = self.open
        if current is None or not message_id or current.message_id != message_id:
            earlier = self.responses.get(message_id) if message_id else None
            if earlier is not None:
                # more lines of a response read further up: counted once, where it first was
                earlier.blocks.extend(b for b in blocks if b not in earlier.blocks)
                if usage is not None:
                    earlier.usage = usage
                return
            current = PendingAssistant(model=model, message_id=message_id)
            if message_id:
                self.responses[message_id] = current
            self.open = current
            self.out.append(current)
        current.blocks.extend(blocks)
        if usage is not None:
            current.usage = usage  # the last line of a response has the final output_tokens

    def _user(self, obj: dict[str, Any], record: Record) -> None:
        msg = self._message(obj, record)
        if msg is None:
            return
        content = msg["content"]
        if has_tool_result(content):
            self.after_command = False
            self._drop_ide()
            self.out.extend(tool_results(content))  # the open response may still get lines
            return
        blocks = blocks_from_anthropic(content, self.source.warner(record))
        flagged = obj.get("isCompactSummary") is True
        if flagged or first_text(blocks).lstrip().startswith(CONTINUATION_PREFIX):
            self.after_command = False
            self._drop_ide()
            if flagged:
                self._compaction("claude-code:isCompactSummary", None)
            self.open = None
            self.out.append(UserMessage(tuple(blocks), INJECTED))
            return
        if obj.get("isMeta") is True:
            # only the expanded prompt of a slash command (/init, custom commands) counts
            if not (self.after_command and first_text(blocks).strip()):
                return
        elif not is_prompt(blocks):
            text = first_text(blocks).lstrip()
            self.notes.user_text(text, self.conv.compactions)
            self.after_command = "<command-name>" in text or text.startswith("<command-message>")
            return
        self.after_command = False
        if ide_only(blocks):
            self._ide_context(blocks, record)
            return
        if self.ide is not None:
            blocks = self.ide[0] + blocks  # the IDE context logged just before its prompt
            self.ide = None
        self.queue.sent(blocks)
        self._rewind(obj.get("parentUuid"), record)
        self.open = None
        self.out.append(user_message(blocks))

    # -- helpers ------------------------------------------------------------------------

    def _ide_context(self, blocks: list[Block], record: Record) -> None:
        """IDE context on a line of its own rides with the prompt it came with: the one
        just before it (nothing after that yet), else the next one."""
        last = self.out[-1] if self.out else None
        if type(last) is UserMessage and last.origin == PERSON:
            self.out[-1] = UserMessage((*last.blocks, *blocks))
            return
        self._drop_ide()
        self.ide = (blocks, record)

    def _drop_ide(self) -> None:
        if self.ide is not None:
            self.source.dropped(self.ide[1], "IDE context with no prompt beside it; dropped")
            self.ide = None

    def _delivered(self, messages: list[Message]) -> None:
        """Queued prompts delivered here (claude_code_queue)."""
        for message in messages:
            self._drop_ide()
            self.open = None
            self.out.append(message)

    def _unknown(self, kind: Any, record: Record) -> None:
        if not isinstance(kind, str):  # a broken entry: say which
            self.source.dropped(record, f"entry 'type' is {kind!r}, not a string (entry skipped)")
            return
        if self.switch.claims(record, self.source):
            return  # another format's record: the file changes format (one warning)
        # a newer Claude Code's entry type: one warning per type, at its first line
        count, first = self.unknown.get(kind, (0, record))
        self.unknown[kind] = (count + 1, first)

    def _compaction(
        self, source: str, pre_tokens: int | None, recorded: Compaction | None = None
    ) -> None:
        self.open = None
        index = len(self.out)
        comps = self.conv.compactions
        made = Compaction(
            index,
            source,
            pre_tokens,
            trigger=recorded.trigger if recorded else None,
            post_tokens=recorded.post_tokens if recorded else None,
        )
        if comps and comps[-1].message_index == index:
            # compact_boundary + its isCompactSummary are one compaction
            if comps[-1].pre_tokens is None and pre_tokens is not None:
                comps[-1] = self.notes.made(made, len(comps) - 1)
            return
        comps.append(self.notes.made(made, len(comps)))

    def _rewind(self, parent: Any, record: Record) -> None:
        if not isinstance(parent, str) or parent == self.tip or parent not in self.pos:
            return
        keep = self.pos[parent]
        dropped = len(self.out) - keep
        if dropped <= 0:
            return
        self.open = None
        del self.out[keep:]
        kept = {id(m) for m in self.out if isinstance(m, PendingAssistant)}
        self.responses = {k: v for k, v in self.responses.items() if id(v) in kept}
        self.conv.compactions = [c for c in self.conv.compactions if c.message_index <= keep]
        where = f"line {record.line}" if record.line else f"item {record.item}"
        self.conv.warnings.append(
            f"{where}: the user went back to an earlier message; {dropped} messages of the abandoned branch dropped"
        )

    def finish(self) -> Conversation:
        self._delivered(self.queue.finish())
        self._drop_ide()
        self.copies.close()
        self.conv.warnings.extend(self.copies.warnings)
        self.switch.report(self.source)
        for kind, (count, first) in self.unknown.items():
            noun = "entry" if count == 1 else "entries"
            self.source.dropped(first, f"{count} {noun} of unknown type {kind!r} skipped")
        self.notes.settle(self.conv.compactions)
        self.conv.runtime_version = self.notes.version
        self.conv.messages = freeze_all(self.out)
        return self.conv


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    session = _Session(source)
    for record in records:
        session.add(record)
    yield session.finish()
