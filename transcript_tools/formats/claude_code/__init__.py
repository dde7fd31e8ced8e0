"""Claude Code session logs (``~/.claude/projects/<dir>/<session>.jsonl``).

One file is one session, read in file order (``sessionId`` alternates inside resumed
files; ``parentUuid`` forks are normal for parallel tool calls). The same entries as a
JSON array (``logs/chat.json``) read alike. What each entry becomes — turns,
observations, injections, queued prompts, warm-ups, resume copies, bookkeeping, usage,
compactions — is docs/formats.md, "Claude Code"; in short:

- ``assistant`` lines → AssistantMessage, the lines of one ``message.id`` merged into ONE
  message with the usage of the last line (each response counted once);
  ``input_tokens`` = input + cache creation + cache read. ``<synthetic>`` replies are
  no call.
- ``user`` lines: tool results (ordered by the parent chain), a real prompt (a turn), or
  text the runtime wrote (compaction summaries, task notifications: ``INJECTED``); the
  other modules of this package each own one of these rules.
- Rewinds (a prompt whose ``parentUuid`` points back before the current tip): the
  abandoned branch is dropped with a warning; its responses, and sidechain calls, stay
  billed as ``Conversation.off_chain_calls`` (``billed.py``).
- An entry type this reader does not know is skipped with a warning (one per type, at
  its first line; ``entries.KNOWN_TYPES`` lists the known ones).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ...engine.messages import (
    INJECTED,
    PERSON,
    SYNTHETIC_MODEL,
    Block,
    Compaction,
    Conversation,
    Message,
    UserMessage,
)
from ..anthropic_api import (
    blocks_from_anthropic,
    has_tool_result,
    tool_results,
    usage_from_anthropic,
    user_message,
)
from ..assembly import PendingAssistant, freeze_all
from ..fields import str_or_none
from ..source import Record, Source, session_stem
from ..switch import FormatSwitch
from .billed import BilledElsewhere
from .compactions import CompactionNotes, preserved_texts
from .copies import Copies
from .entries import KNOWN_TYPES, is_entry, nobody_there, runtime_notice
from .order import ParentOrder
from .queued import Queue
from .text import CONTINUATION_PREFIX, first_text, ide_only, is_prompt, response_id
from .warm_up import WarmUp

NAME = "claude-code"
# a slash command's record: <command-name>/clear</command-name> (Conversation.commands)
COMMAND_NAME = re.compile(r"<command-name>\s*(/[\w:.-]+)\s*</command-name>")
DESCRIPTION = (
    "Claude Code session logs (~/.claude/projects/*/*.jsonl, or the same entries as a JSON array)"
)


def sniff(head: list[Record]) -> bool:
    return any(is_entry(record.obj) for record in head)


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
        self.responses: dict[str, PendingAssistant] = {}  # message.id → its message
        self.odd_id = False  # a non-string message.id was warned about
        self.copies = Copies()
        self.switch = FormatSwitch(NAME, ("entry", "entries"))
        self.queue = Queue(source)
        self.ide: tuple[list[Block], Record] | None = None  # IDE context waiting for its prompt
        self.billed = BilledElsewhere()  # calls billed outside the replayed messages
        self.warm_up = WarmUp()
        self.order = ParentOrder()  # tool results logged before their call
        self.meta_prompts = 0  # isMeta user lines left out
        self.notes = CompactionNotes()  # version, model and trigger of each compaction

    def add(self, record: Record) -> None:
        self._entry(record)
        self.out.extend(self.order.read(record.obj.get("uuid")))  # results logged before it

    def _entry(self, record: Record) -> None:
        obj = record.obj
        kind = obj.get("type")
        if type(kind) is not str or kind not in KNOWN_TYPES:
            self.switch.skip(kind, record, self.source)
            return
        self.switch.started = True
        if self.warm_up.hold(obj, record):
            return
        self.notes.entry(obj)
        side = obj.get("isSidechain") is True
        if self.sidechain_file is None and kind in ("user", "assistant"):
            self.sidechain_file = side
            if side:
                agent = obj.get("agentId")
                self.conv.session_id = str(agent) if agent else self.conv.session_id
                self.session_set = True
            self._settle_warm_up()
        if side and not self.sidechain_file:
            self.billed.sidechain_entry(obj, self.source.warner(record))
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
            self._boundary(obj.get("compactMetadata"), record.line)
        uuid = obj.get("uuid")
        if isinstance(uuid, str):
            self.pos[uuid] = len(self.out)
            self.tip = uuid

    def _message(self, obj: dict[str, Any], record: Record) -> dict[str, Any] | None:
        msg = obj.get("message")
        if not isinstance(msg, dict):
            self.source.bad_record(record, f"{obj.get('type')} entry without a 'message' object")
            return None
        content = msg.get("content")
        if not isinstance(content, (str, list)):
            self.source.bad_record(record, "message.content must be a string or an array of blocks")
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
        model = str_or_none(msg.get("model"))
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
            results: list[Message] = list(tool_results(content))
            if not self.order.hold(obj.get("parentUuid"), results, record):
                self.out.extend(results)  # the open response may still get lines
            return
        blocks = blocks_from_anthropic(content, self.source.warner(record))
        flagged = obj.get("isCompactSummary") is True
        continued = flagged or first_text(blocks).lstrip().startswith(CONTINUATION_PREFIX)
        if continued or runtime_notice(obj, blocks):  # a summary, or the runtime's notice
            self.after_command = False
            self._drop_ide()
            if flagged:
                self._compaction("claude-code:isCompactSummary", None, line=record.line)
            self.open = None
            self.out.append(UserMessage(tuple(blocks), INJECTED))
            return
        if obj.get("isMeta") is True:
            # only the expanded prompt of a slash command (/init, custom commands) counts
            if not (self.after_command and first_text(blocks).strip()):
                self.meta_prompts += 1
                return
        elif not is_prompt(blocks):
            text = first_text(blocks).lstrip()
            self.notes.user_text(text, self.conv.compactions)
            self.after_command = "<command-name>" in text or text.startswith("<command-message>")
            if (command := COMMAND_NAME.search(text)) is not None:
                commands = self.conv.commands
                commands[command.group(1)] = commands.get(command.group(1), 0) + 1
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
        """Queued prompts delivered here (queued.py)."""
        for message in messages:
            self._drop_ide()
            self.open = None
            self.out.append(message)

    def _boundary(self, meta: Any, line: int | None) -> None:
        """A ``compact_boundary`` line (at ``line``) and its ``compactMetadata``."""
        pre = meta.get("preTokens") if isinstance(meta, dict) else None
        trigger, post = self.notes.boundary(meta)
        kept = preserved_texts(meta, self.pos, self.out)
        self._compaction(
            "claude-code:compact_boundary",
            pre if isinstance(pre, int) else None,
            Compaction(0, "", trigger=trigger, post_tokens=post, kept_texts=kept),
            line,
        )

    def _compaction(
        self,
        source: str,
        pre_tokens: int | None,
        recorded: Compaction | None = None,
        line: int | None = None,
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
            kept_texts=recorded.kept_texts if recorded else (),
            line=line,
        )
        if comps and comps[-1].message_index == index:
            # compact_boundary + its isCompactSummary are one compaction (at the first's line)
            if comps[-1].pre_tokens is None and pre_tokens is not None:
                made = replace(made, line=comps[-1].line)
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
        self.billed.dropped(self.out[keep:])
        del self.out[keep:]
        kept = {id(m) for m in self.out if isinstance(m, PendingAssistant)}
        self.responses = {k: v for k, v in self.responses.items() if id(v) in kept}
        self.conv.compactions = [c for c in self.conv.compactions if c.message_index <= keep]
        where = f"line {record.line}" if record.line else f"item {record.item}"
        self.conv.warnings.append(
            f"{where}: the user went back to an earlier message; {dropped} messages of the abandoned branch dropped"
        )

    def _settle_warm_up(self) -> None:
        """A subagent's file reads its warm-up first; a session's leaves it out."""
        held = self.warm_up.release()
        if not held:
            return
        if self.sidechain_file is not False:  # a subagent file, or nothing but the warm-up
            for record in held:
                self._entry(record)
            return
        for record in held:  # left out of the replay, but billed like any sidechain call
            self.billed.sidechain_entry(record.obj, self.source.warner(record))
        self.source.dropped(held[0], WarmUp.left_out(held))

    def finish(self) -> Conversation:
        self._settle_warm_up()
        self.out.extend(self.order.finish(self.source))
        self._delivered(self.queue.finish())
        self._drop_ide()
        self.copies.close()
        self.conv.warnings.extend(self.copies.warnings)
        self.switch.report(self.source)
        self.notes.settle(self.conv.compactions)
        self.conv.runtime_version = self.notes.version
        self.conv.messages = freeze_all(self.out)
        self.conv.off_chain_calls = self.billed.calls()
        self.conv.skipped = nobody_there(self.conv.messages, self.meta_prompts)
        if self.conv.skipped is not None:
            self.conv.messages = []
        return self.conv


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    session = _Session(source)
    for record in records:
        session.add(record)
    yield session.finish()
