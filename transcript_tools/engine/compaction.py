"""A compaction policy's rules over a view, as pure functions (docs/policies.md).

``policy.py`` says what a policy *is*; this module says what each part *does* to the
messages the model sees: which old tool results a pre-pass clears, where the kept tail
starts, what the summarizer is given, and the messages a summary is placed as. No state,
no I/O: the policy slot (``policy_slot.py``) calls these with the view it holds.

A *region* is the part of the view a compaction may drop: every visible history message
but the leading system messages (and the task, with ``keep.first_user``), in view order,
each as ``(history index, message as the model sees it)``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .messages import (
    INJECTED,
    OBSERVATION,
    SYNTHETIC_MODEL,
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
    is_turn_start,
)
from .policy import Keep, Placement, PrePass, SummarizerInput
from .policy_lines import keep_budget_tokens

# A policy's 0 cap means "no cap"; the formatter's 0 means "nothing", so 0 maps to this.
NO_CAP = 1 << 40

Entry = tuple[int, Message]  # (history index, the message as the model sees it)
Tokens = Callable[[Message], int]


def formatter_cap(value: int) -> int:
    """A policy's character cap as the formatter takes it (0: no cap)."""
    return value if value > 0 else NO_CAP


# ---- the pre-pass: clearing old tool results ------------------------------------------


def is_tool_output(message: Message) -> bool:
    """A tool's output: a tool result, or an observation sent back as a user message
    (text-protocol agents: SWE-agent, mini-swe-agent, OpenHands)."""
    if type(message) is ToolResultMessage:
        return True
    return type(message) is UserMessage and message.origin == OBSERVATION


def tool_names(messages: Sequence[Message]) -> dict[str, str]:
    """Each tool call's id -> the tool's name (to honour ``prepass.exclude_tools``)."""
    names: dict[str, str] = {}
    for message in messages:
        if type(message) is AssistantMessage:
            for block in message.blocks:
                if type(block) is ToolUseBlock:
                    names[block.id] = block.name
    return names


def cleared(message: Message, placeholder: str) -> Message:
    """``message`` with its content replaced by ``placeholder`` (same role, same call id)."""
    if type(message) is ToolResultMessage:
        return ToolResultMessage(message.tool_call_id, placeholder, message.is_error)
    return UserMessage((TextBlock(placeholder),), OBSERVATION)


def shown_entries(
    messages: Sequence[Message],
    replaced: Mapping[int, tuple[Message, int, int]],
    indices: Iterable[int],
    upto: int,
) -> list[Entry]:
    """(index, history message ``index`` as a view over messages[:upto] shows it) for each
    of ``indices``: its replacement (``PolicySlot.replaced``: the message shown, the history
    length when it was made, its tokens) once one was made by then, else the message."""
    if not replaced:
        return [(i, messages[i]) for i in indices]
    out: list[Entry] = []
    for i in indices:
        entry = replaced.get(i)
        out.append((i, entry[0] if entry is not None and entry[1] <= upto else messages[i]))
    return out


def placeholder_tokens(prepass: PrePass, tokens: Tokens) -> int:
    """The size of a tool output the pre-pass cleared: its placeholder's, whatever the
    output was (a cleared copy is new text, never a log message a size model sized)."""
    return tokens(ToolResultMessage("", prepass.placeholder))


def prepass_should_run(prepass: PrePass, view_tokens: int, window: int, outputs: int) -> bool:
    """Does the pre-pass look at the view now? (its trigger and ``min_results``)."""
    if prepass.kind == "none":
        return False
    if prepass.trigger_tokens and view_tokens < prepass.trigger_tokens:
        return False
    if prepass.trigger_ratio and view_tokens < window * prepass.trigger_ratio:
        return False
    return outputs > prepass.min_results


def prepass_selection(
    region: Sequence[Entry],
    prepass: PrePass,
    names: dict[str, str],
    tokens: Tokens,
    already: Container[int],
    placeholder_size: int | None = None,
) -> tuple[list[int], int]:
    """The history indices of the tool outputs the pre-pass clears now, and the tokens
    that frees; ``([], 0)`` when it would free less than ``min_freed_tokens``.

    Walking newest to oldest over the region's tool outputs: the ``keep_newest`` newest
    stay; so do those within the newest ``protect_tokens`` tokens of tool output, those in
    the last ``protect_turns`` person turns, those of ``exclude_tools``, and those cleared
    already (they count toward nothing). ``placeholder_size``: ``placeholder_tokens``,
    when the caller has it."""
    turns_seen = 0
    newest_kept = 0
    output_tokens = 0
    chosen: list[int] = []
    freed = 0
    if placeholder_size is None:
        placeholder_size = placeholder_tokens(prepass, tokens)
    for index, message in reversed(region):
        if is_turn_start(message):
            turns_seen += 1
            continue
        if not is_tool_output(message) or index in already:
            continue
        size = tokens(message)
        if newest_kept < prepass.keep_newest:
            newest_kept += 1
            output_tokens += size
            continue
        within_budget = output_tokens < prepass.protect_tokens
        output_tokens += size
        if within_budget or turns_seen < prepass.protect_turns:
            continue
        call_id = message.tool_call_id if type(message) is ToolResultMessage else ""
        if not _tool_clearable(prepass, names.get(call_id)):
            continue
        if size <= placeholder_size:
            continue  # clearing it frees nothing
        chosen.append(index)
        freed += size - placeholder_size
    if not chosen or freed < prepass.min_freed_tokens:
        return [], 0
    chosen.reverse()
    return chosen, freed


def oldest_clearable(
    region: Sequence[Entry],
    prepass: PrePass,
    names: dict[str, str],
    tokens: Tokens,
    already: Container[int],
    placeholder_size: int | None = None,
) -> int | None:
    """The history index of the first tool output of ``region`` that ``prepass_selection``
    may clear now or later, None if there is none: not cleared already, longer than the
    placeholder, and of a tool not excluded (a call whose tool is not named yet may be).
    Every output before it stays as it is whatever comes next, so long as no tool call
    is renamed; and as the walk's protections are counted from the newest output back, it
    changes no choice among the outputs after it. ``placeholder_size`` as
    ``prepass_selection`` takes it."""
    if placeholder_size is None:
        placeholder_size = placeholder_tokens(prepass, tokens)
    for index, message in region:
        if not is_tool_output(message) or index in already:
            continue
        if tokens(message) <= placeholder_size:
            continue
        call_id = message.tool_call_id if type(message) is ToolResultMessage else ""
        if call_id not in names or _tool_clearable(prepass, names[call_id]):
            return index
    return None


def _tool_clearable(prepass: PrePass, name: str | None) -> bool:
    """May the pre-pass clear an output of tool ``name`` (``exclude_tools``, ``only_tools``)?"""
    return name not in prepass.exclude_tools and (
        not prepass.only_tools or name in prepass.only_tools
    )


def without_inputs(message: AssistantMessage, call_ids: set[str]) -> AssistantMessage:
    """``message`` with the arguments of the calls in ``call_ids`` cleared (``clear_inputs``)."""
    blocks = tuple(
        ToolUseBlock(b.id, b.name, None) if type(b) is ToolUseBlock and b.id in call_ids else b
        for b in message.blocks
    )
    return AssistantMessage(blocks, message.usage, message.model)


# ---- what is kept verbatim -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeepPlan:
    """What a compaction keeps of the region: the entries, in view order (a message
    may be a cut copy: ``user-messages`` cuts the oldest one it keeps), and the positions
    in the region of those it drops."""

    kept: tuple[Entry, ...]
    dropped: tuple[int, ...]  # positions in the region


def _suffix(region: Sequence[Entry], start: int) -> KeepPlan:
    start = max(0, min(start, len(region)))
    return KeepPlan(tuple(region[start:]), tuple(range(start)))


def _token_tail_start(
    region: Sequence[Entry], budget: int, tokens: Tokens, floor: int, at_least: bool = False
) -> int:
    """The first position of the newest messages (from ``floor`` on) within ``budget``;
    ``at_least``: up to and including the message that reaches it (Cline walks back
    "until cumulative >= preserveRecentTokens")."""
    total = 0
    start = len(region)
    while start > floor:
        size = tokens(region[start - 1][1])
        if at_least:
            if total >= budget:
                break
        elif total + size > budget:
            break
        total += size
        start -= 1
    return start


def _orphan_free(region: Sequence[Entry], start: int) -> int:
    """Move a cut forward past tool outputs whose call it would separate from them."""
    while start < len(region) and type(region[start][1]) is ToolResultMessage:
        start += 1
    return start


def _turn_start(region: Sequence[Entry], turns: int) -> int:
    """The position of the first message of the region's last ``turns`` person turns."""
    seen = 0
    for position in range(len(region) - 1, -1, -1):
        if is_turn_start(region[position][1]):
            seen += 1
            if seen == turns:
                return position
    return 0


def _cut_user_message(message: UserMessage, budget: int, size: int) -> UserMessage:
    """The message's text cut to about ``budget`` of its ``size`` tokens in the middle:
    its beginning and its end stay, joined by a note of what was cut, as Codex's
    ``truncate_text`` does ("Truncate the middle … preserving the beginning and the
    end": openai/codex codex-rs/core/src/truncate.rs, ``truncate_with_token_budget``)."""
    text = "".join(b.text for b in message.blocks if type(b) is TextBlock)
    chars = max(2, len(text) * budget // max(size, 1))
    if chars >= len(text):
        return UserMessage((TextBlock(text),), message.origin)
    head, tail = chars // 2, chars - chars // 2
    cut = max(size - budget, 0)
    middle = f"…{cut} tokens truncated…"
    return UserMessage((TextBlock(text[:head] + middle + text[-tail:]),), message.origin)


def keep_plan(region: Sequence[Entry], keep: Keep, window: int, tokens: Tokens) -> KeepPlan:
    """What ``keep`` keeps verbatim of ``region`` (docs/policies.md, "keep")."""
    budget = keep_budget_tokens(keep, window)
    kind = keep.kind
    if kind == "none":
        return _suffix(region, len(region))
    if kind == "user-messages":
        assert budget is not None  # Keep checks it is set
        kept: list[tuple[int, Entry]] = []
        left = budget
        for position in range(len(region) - 1, -1, -1):
            index, message = region[position]
            if type(message) is not UserMessage or not is_turn_start(message) or left <= 0:
                continue
            size = tokens(message)
            if size > left:
                message = _cut_user_message(message, left, size)
                size = left
            kept.append((position, (index, message)))
            left -= size
        kept.reverse()
        positions = {p for p, _ in kept}
        return KeepPlan(
            tuple(e for _, e in kept), tuple(p for p in range(len(region)) if p not in positions)
        )
    if kind == "turns":
        start = _turn_start(region, keep.turns)
    elif kind == "messages":
        start = len(region) - keep.messages
    elif kind == "fraction":
        start = _fraction_start(region, keep.fraction, tokens)
    else:  # tokens
        start = 0
    start = max(start, 0)
    if budget is not None:  # a token budget caps the tail (or is the whole rule)
        start = _token_tail_start(region, budget, tokens, start, keep.at_least)
    if keep.latest_turn:  # the latest person turn stays whole (Cline: min(cut, lastTurnStart))
        start = min(start, _turn_start(region, 1) if _has_turn(region) else start)
    if keep.pairs_intact:
        start = _orphan_free(region, start)
    return _suffix(region, start)


def _has_turn(region: Sequence[Entry]) -> bool:
    return any(is_turn_start(message) for _, message in region)


def _fraction_start(region: Sequence[Entry], fraction: float, tokens: Tokens) -> int:
    """The first person turn from which the newest ``fraction`` of the region lies (by
    estimated tokens: tsum's stand-in for Gemini CLI's characters); none: keep nothing."""
    sizes = [tokens(m) for _, m in region]
    total = sum(sizes)
    before = 0
    for position, (_, message) in enumerate(region):
        if position and is_turn_start(message) and before >= total * (1 - fraction):
            return position
        before += sizes[position]
    return len(region)


# ---- what the summarizer is given ------------------------------------------------------


def summarizer_messages(
    given: SummarizerInput,
    history: Sequence[Message],
    view: Callable[[], Sequence[Message]],
    dropped: Sequence[Message],
    tokens: Tokens,
) -> list[Message]:
    """The messages formatted into the summary prompt (docs/policies.md, "summarizer input").

    ``history``: the whole log so far (the seed's F3); ``view``: makes what the model sees
    now (the previous summary included), made only for the kind that is given it;
    ``dropped``: what the new view will not show (the previous summary first, where there
    was one)."""
    if given.kind == "history":
        return list(history)
    if given.kind == "since-last-summary":
        return list(view())
    if given.kind == "dropped":
        return list(dropped)
    total, start = 0, len(dropped)  # dropped-tail: the newest tail_tokens of it
    while start > 0 and total + tokens(dropped[start - 1]) <= given.tail_tokens:
        start -= 1
        total += tokens(dropped[start])
    return list(dropped[start:])


# ---- where the summary goes ------------------------------------------------------------


def placed_summary(placement: Placement, text: str) -> tuple[Message, ...]:
    """The messages a summary is placed as: the summary in its role, with the lead-in
    before it and the acknowledgement after it where the policy has them."""
    body = f"{placement.marker} {text}" if placement.marker else text
    if placement.role == "system":
        return (SystemMessage(body),)
    if placement.role == "user":
        summary: tuple[Message, ...] = (UserMessage((TextBlock(body),), INJECTED),)
        if placement.acknowledgement:
            summary += (_runtime_assistant(placement.acknowledgement),)
        return summary
    summary = (_runtime_assistant(body),)
    if placement.lead_in:
        summary = (UserMessage((TextBlock(placement.lead_in),), INJECTED), *summary)
    return summary


def _runtime_assistant(text: str) -> AssistantMessage:
    # Written by the runtime, not a model call: no usage is counted or estimated for it.
    return AssistantMessage((TextBlock(text),), None, SYNTHETIC_MODEL)


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """What the summary being made will replace, decided when it is requested."""

    kept: tuple[Entry, ...]
    dropped: tuple[Entry, ...]  # history messages the new view no longer shows
    summarizer_input: tuple[Message, ...]
    history_end: int  # the history length at the checkpoint
    view_tokens_before: int
