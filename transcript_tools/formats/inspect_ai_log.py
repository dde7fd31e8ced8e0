"""inspect_ai eval logs: ``.eval`` (a ZIP archive) and ``.json`` (one ``EvalLog``).

The schema is inspect_ai's own (UKGovernmentBEIS/inspect_ai at 499e6152:
``src/inspect_ai/log/_log.py`` ``EvalLog`` / ``EvalSample``, ``log/_recorders/eval.py``
for the archive, ``model/_chat_message.py``, ``model/_model_output.py`` ``ModelUsage``,
``event/_model.py`` ``ModelEvent``, ``event/_compaction.py`` ``CompactionEvent``).

- A ``.eval`` archive holds ``header.json`` (the eval) and ``samples/<id>_epoch_<n>.json``
  (one ``EvalSample`` each); a ``.json`` log holds the eval and ``samples`` together.
  Strings ``attachment://<hash>`` are resolved from the sample's ``attachments``.
- One session per sample and epoch, named ``<id>/epoch-<n>``; its messages are the
  sample's ``messages`` (system / user / assistant with ``tool_calls`` / tool). A user
  message starts a turn.
- Usage per call from the ``model`` events: the event whose output message has the id of
  an assistant message is that message's call. ``ModelUsage.input_tokens`` excludes the
  cached tokens since inspect_ai 0.3.184 (commit bf26615e; before, it included them for
  OpenAI-style providers): the prompt is input + cache read + cache write, unless
  ``total_tokens`` equals input + output (the older inclusive count), when it is input.
  Model events whose message is not among the sample's messages (scorers, a summarizer,
  messages compacted away) are counted in one warning.
- ``compaction`` events are recorded compactions (``tokens_before``), placed just before
  the next call the sample's messages hold (inspect compacts the input of that call).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import Any

import orjson

from ..engine.messages import (
    AssistantMessage,
    Block,
    Compaction,
    Conversation,
    Message,
    SystemMessage,
    ToolResultMessage,
    ToolUseBlock,
    Usage,
    UserMessage,
)
from ..errors import InputError
from .content_parts import PartNames, parts_to_blocks, text_of
from .fields import counts, int_or_none, str_or_none
from .source import Record, Source, Warn

NAME = "inspect-ai"
DESCRIPTION = (
    "inspect_ai eval logs (.eval archives and .json logs: samples, model events, compactions)"
)

HEADER = "header.json"
SAMPLES = "samples/"
ATTACHMENT = "attachment://"
COMPACTION_SOURCE = "inspect-ai:compaction"


def sniff(head: list[Record]) -> bool:
    obj = head[0].obj if head else {}
    return isinstance(obj.get("eval"), dict) and "task" in obj["eval"] and "version" in obj


def sniff_archive(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return HEADER in archive.namelist()
    except zipfile.BadZipFile:
        return False


def read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    for record in records:
        if not sniff([record]):
            source.bad_record(record, "not an inspect_ai eval log (no 'eval')")
            continue
        if not record.obj.get("samples"):
            source.dropped(record, "an inspect_ai log without samples (logged with samples off?)")
        for sample in record.obj.get("samples") or []:
            if isinstance(sample, dict):
                yield sample_conversation(sample, source, source.warner(record))


def read_database(source: Source, data: bytes) -> Iterator[Conversation]:
    """A ``.eval`` archive (the name every binary-file reader answers to: formats/__init__)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise InputError(source.display, None, f"not a readable .eval archive ({exc})") from None
    with archive:
        names = sorted(
            n for n in archive.namelist() if n.startswith(SAMPLES) and n.endswith(".json")
        )
        for name in names:
            try:
                sample = orjson.loads(archive.read(name))
            except orjson.JSONDecodeError as exc:
                source.noted(f"{name}: invalid JSON ({exc}); sample skipped")
                continue
            warn = _member_warner(source, name)
            yield sample_conversation(sample, source, warn)


def _member_warner(source: Source, member: str) -> Warn:
    return lambda what: source.noted(f"{member}: {what}")


def _resolve(value: Any, attachments: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith(ATTACHMENT):
        return attachments.get(value[len(ATTACHMENT) :], value)
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def usage_from_inspect(usage: Any, warn: Warn) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    keys = ("input_tokens", "output_tokens", "input_tokens_cache_read", "input_tokens_cache_write")
    given, output, read, written = counts(usage, "usage.", keys, warn)
    total = usage.get("total_tokens")
    inclusive = (read or written) and total == given + output  # before inspect_ai 0.3.184
    return Usage(given if inclusive else given + read + written, output, read, written)


INSPECT_PARTS = PartNames(thinking=("reasoning", "reasoning"))


def _content(content: Any) -> list[Block]:
    return parts_to_blocks(content, INSPECT_PARTS)


def _text(content: Any) -> str:
    return text_of(_content(content))


def _message(raw: dict[str, Any], usage: Usage | None, warn: Warn) -> Message | None:
    role = raw.get("role")
    if role == "system":
        return SystemMessage(_text(raw.get("content")))
    if role == "user":
        return UserMessage(tuple(_content(raw.get("content"))))
    if role == "assistant":
        blocks = _content(raw.get("content"))
        for call in raw.get("tool_calls") or []:
            if isinstance(call, dict):
                name = str(call.get("function") or "unknown")
                blocks.append(ToolUseBlock(str(call.get("id") or ""), name, call.get("arguments")))
        model = str_or_none(raw.get("model"))
        return AssistantMessage(tuple(blocks), usage, model)
    if role == "tool":
        error = raw.get("error")
        text = _text(raw.get("content"))
        if isinstance(error, dict) and not text:
            text = str(error.get("message") or "")
        return ToolResultMessage(str(raw.get("tool_call_id") or ""), text, isinstance(error, dict))
    warn(f"message of role {role!r} left out")
    return None


def _events(sample: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for event in sample.get("events") or []:
        if isinstance(event, dict):
            yield event


def _output_id(event: dict[str, Any]) -> str | None:
    choices = (event.get("output") or {}).get("choices") or []
    message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    return message.get("id") if isinstance(message, dict) else None


def sample_conversation(sample: dict[str, Any], source: Source, warn: Warn) -> Conversation:
    sample = _resolve(sample, sample.get("attachments") or {})
    name = f"{sample.get('id')}/epoch-{sample.get('epoch', 1)}"
    conv = Conversation(name, source.display, NAME)
    raws = [m for m in sample.get("messages") or [] if isinstance(m, dict)]
    position = {
        m["id"]: i for i, m in enumerate(raws) if m.get("role") == "assistant" and m.get("id")
    }
    usage: dict[int, Usage | None] = {}
    compactions: list[tuple[int, Any]] = []  # (events matched before it, tokens_before)
    matched: list[int] = []
    unmatched = 0
    for event in _events(sample):
        if event.get("event") == "model":
            index = position.get(_output_id(event) or "")
            if index is None:
                unmatched += 1
                continue
            usage[index] = usage_from_inspect((event.get("output") or {}).get("usage"), warn)
            matched.append(index)
        elif event.get("event") == "compaction":
            compactions.append((len(matched), event.get("tokens_before")))
    where: dict[int, int] = {}  # raw message index -> conversation index
    for i, raw in enumerate(raws):
        message = _message(raw, usage.get(i), warn)
        if message is not None:
            where[i] = len(conv.messages)
            conv.messages.append(message)
    for before, tokens in compactions:
        index = (
            where.get(matched[before], len(conv.messages))
            if before < len(matched)
            else len(conv.messages)
        )
        conv.compactions.append(Compaction(index, COMPACTION_SOURCE, int_or_none(tokens)))
    if unmatched:
        conv.warnings.append(
            f"{unmatched} model call(s) whose message is not in the sample's messages (scorers,"
            " summarizers, messages compacted away): their usage is not read"
        )
    return conv
