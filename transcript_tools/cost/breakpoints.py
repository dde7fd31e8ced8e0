"""Where a runtime marks Anthropic's cache breakpoints, and what a call reads under them.

Anthropic (platform.claude.com/docs/en/build-with-claude/prompt-caching): a request
marks at most 4 ``cache_control`` breakpoints; the prefix up to each (tools, system,
messages, in that order) is written there, and only there. A later request reads an
entry only where its own prefix equals one written at an earlier breakpoint, found by
checking back from each of its own breakpoints about 20 content blocks. So a policy that
rewrites a message deep in the prompt reads only what an entry ending before that
message covers, and the runtime's placement decides which entries exist.

Placements (``PLACEMENTS``): the one of the runtime the policy declares (its
``runtime`` key, ``engine/policy.py``), else of the runtime that wrote the log:

- Claude Code: the system prompt (its blocks carry the breakpoints; the tools before them
  ride in that prefix) and the last message — a capture of Claude Code 2.1.150's request
  (speakerdeck.com/sumedhbala/act1-costs: two system breakpoints, one on the message
  tail, none on the tools) and github.com/anthropics/claude-code/issues/96101 (the last breakpoint on the
  request's trailing message).
- OpenCode: the first two system messages and the last two others
  (sst/opencode packages/opencode/src/provider/transform.ts, ``applyCaching``).
- Any other runtime on Anthropic: the system prompt and the last message, what the API's
  automatic caching does (the breakpoint on the last cacheable block, same page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.messages import Message, SystemMessage

MAX_BREAKPOINTS = 4  # per request (the page above)
LOOKBACK_BLOCKS = 20  # how far back from a breakpoint an earlier entry is looked for


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """A runtime's placement: after its system prompt, and at the end of its last
    ``last_messages`` messages (of those not system messages)."""

    runtime: str
    system: bool
    last_messages: int
    source: str
    lookback_blocks: int | None = LOOKBACK_BLOCKS  # None: an entry is found at any distance


CLAUDE_CODE = Breakpoints(
    "claude-code",
    True,
    1,
    "speakerdeck.com/sumedhbala/act1-costs (Claude Code 2.1.150); "
    "github.com/anthropics/claude-code/issues/96101",
)
OPENCODE = Breakpoints(
    "opencode", True, 2, "sst/opencode packages/opencode/src/provider/transform.ts applyCaching"
)
AUTOMATIC = Breakpoints(
    "automatic", True, 1, "platform.claude.com/docs/en/build-with-claude/prompt-caching"
)
PLACEMENTS = {b.runtime: b for b in (CLAUDE_CODE, OPENCODE, AUTOMATIC)}  # policy.RUNTIMES
# DeepSeek persists each request's prefix at the end of its input (a unit a later request
# must match whole), and a prefix common to requests (the system prompt): no lookback
DEEPSEEK = Breakpoints("deepseek", True, 1, "api-docs.deepseek.com/guides/kv_cache", None)


def breakpoints_for(runtime: str | None, log_format: str | None) -> Breakpoints:
    """The placement of the runtime the policy declares (``runtime = "claude-code"``),
    else of the runtime that wrote the log, else the API's automatic one."""
    if runtime:
        return PLACEMENTS[runtime]
    for name, placement in PLACEMENTS.items():
        if log_format is not None and (log_format == name or log_format.startswith(name + "-")):
            return placement
    return AUTOMATIC


def placement_for(provider: str, runtime: str | None, log_format: str | None) -> Breakpoints | None:
    """The placement a call of ``provider`` is priced under: Anthropic caches only at
    the runtime's breakpoints, DeepSeek at each request's end; None for the others
    (OpenAI and Gemini cache any prefix a recent request sent: cache_rules.py)."""
    if provider == "anthropic":
        return breakpoints_for(runtime, log_format)
    return DEEPSEEK if provider == "deepseek" else None


def positions(placement: Breakpoints, view: Sequence[Message]) -> list[int]:
    """The request's breakpoints as message counts (a breakpoint at p covers view[:p];
    0: the hidden prefix, tools and the agent's system prompt), at most 4."""
    system = 0
    while system < len(view) and type(view[system]) is SystemMessage:
        system += 1
    others = [i + 1 for i in range(system, len(view))][-placement.last_messages :]
    marks = ([system] if placement.system else []) + others
    return sorted(set(marks))[-MAX_BREAKPOINTS:]


def blocks(message: Message) -> int:
    """Content blocks a message sends (the unit of the lookback)."""
    return max(1, len(getattr(message, "blocks", ())))


def served_prefix(
    placement: Breakpoints, previous: Sequence[Message], view: Sequence[Message], shared: int
) -> int | None:
    """How many leading messages of ``view`` the cache serves: the longest entry the
    previous call wrote at one of its breakpoints that ``view`` still starts with
    (``shared``: the messages the two share), found within the lookback of one of this
    call's breakpoints. None: no entry is found (not even the system prompt's)."""
    written = [p for p in positions(placement, previous) if p <= shared]
    here = positions(placement, view)
    best = None
    for entry in written:
        for mark in here:
            if entry <= mark and _within(placement, view[entry:mark]):
                best = entry if best is None else max(best, entry)
    return best


def _within(placement: Breakpoints, between: Sequence[Message]) -> bool:
    limit = placement.lookback_blocks
    return limit is None or sum(blocks(m) for m in between) <= limit
