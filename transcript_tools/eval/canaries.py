"""Planted canaries: typed facts planted into a copy of a conversation, and their survival
through its repeated compactions (docs/compare.md, "Planted canaries").

Extracted probes (``probes.py``) test what a log happens to hold; a canary is a fact of
a known type put where we choose, so its fate is read by type: a safety rule, a goal, a
file path, a preference, and a value later superseded (an old value, then an update
that does not repeat it). Each is one sentence appended to a message a person wrote
(no message is added, so turns and calls stay as the log has them), at positions drawn
from a fixed seed. Each canary is a ``Probe`` scored by the extracted probes' own rule
(``score.recalled``: verbatim, a path by its last two segments), through the policy
scorer that follows probes from summary to summary (``policy_probes.ActionScorer``).
"""

from __future__ import annotations

import os
import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..engine.messages import Conversation, Message, TextBlock, UserMessage, is_turn_start
from .artifacts import PATH
from .normalize import normalize
from .policy_probes import SUMMARY
from .probes import Probe
from .records import ScoreRecord
from .score import ConversationProbes

SEED = 20260
CANARY = "canary"  # the probe kind of a verbatim canary (scored as an artifact)
# (type, sentence with {v}); the first four and "superseded" are planted in the first
# half of the turns, "update" in the second half (after "superseded")
SENTENCES = (
    ("safety rule", "Safety rule for this whole session: never delete the {v} directory."),
    ("goal", "The goal of this session is to ship release {v}."),
    ("file path", "Keep every setting in {v} from now on."),
    ("preference", "I prefer the name {v} for any new option."),
    ("superseded", "The staging port is {v}."),
    ("update", "Update: the staging port is now {v}."),
)
TYPES = tuple(kind for kind, _ in SENTENCES)
WORDS = ("heron", "quartz", "saffron", "tundra", "cobalt", "lantern", "meadow", "falcon")


@dataclass(frozen=True, slots=True)
class Canary:
    type: str
    value: str
    probe: Probe


def _value(kind: str, rng: random.Random) -> str:
    word, number = rng.choice(WORDS), rng.randrange(1000, 10000)
    if kind == "file path":
        return f"config/{word}_{number}/settings.toml"
    if kind in ("superseded", "update"):
        return str(rng.randrange(20000, 60000))
    return f"{word}-{number}"


def positions(starts: Sequence[int], rng: random.Random) -> list[int]:
    """One message per canary (in ``SENTENCES`` order) among the turn starts: the first
    five in the first half, the update after the superseded value, in the second half."""
    half = max(len(starts) // 2, 1)
    early = [rng.choice(starts[:half]) for _ in SENTENCES[:-1]]
    later = [s for s in starts[half:] if s > early[-1]] or [starts[-1]]
    return [*early, rng.choice(later)]


def plant(conv: Conversation, seed: int = SEED) -> tuple[Conversation, list[Canary]] | None:
    """A copy of ``conv`` with the canaries planted, and the canaries; None where it has
    fewer than two turns a person started (nothing to supersede across)."""
    starts = [i for i, m in enumerate(conv.messages) if is_turn_start(m) and type(m) is UserMessage]
    if len(starts) < 2:
        return None
    # keyed on the file's name, not the path as typed: the same log plants the same
    # canaries however the command line spells it, and wherever the corpus lives
    where = os.path.basename(conv.path)
    rng = random.Random(seed ^ zlib.crc32(f"{where}\0{conv.session_id}".encode()))
    messages: list[Message] = list(conv.messages)
    canaries = []
    values: set[str] = set()
    for (kind, sentence), at in zip(SENTENCES, positions(starts, rng), strict=True):
        value = _value(kind, rng)
        while value in values:  # each canary told apart by its value
            value = _value(kind, rng)
        values.add(value)
        host = messages[at]
        assert type(host) is UserMessage
        messages[at] = UserMessage((*host.blocks, TextBlock(sentence.format(v=value))), host.origin)
        probe_kind = PATH if kind == "file path" else CANARY
        canaries.append(Canary(kind, value, Probe(probe_kind, at, 0, value, normalize(value))))
    return replace(conv, messages=messages), canaries


@dataclass(slots=True)
class CanaryProbes(ConversationProbes):
    """The planted conversation's probes: its canaries only (the extracted probes are
    scored by ``tsum eval`` and the comparison's recall)."""

    canaries: Sequence[Canary] = ()
    _at: dict[int, list[Probe]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ConversationProbes.__post_init__(self)
        for canary in self.canaries:
            probe = replace(canary.probe, turn=self.turn_of(canary.probe.message))
            self._at.setdefault(probe.message, []).append(probe)

    def message_probes(self, index: int) -> list[Probe]:
        return self._at.get(index, [])


Round = tuple[ScoreRecord, int]  # a summary's record, and the history's end then


@dataclass(slots=True)
class Survival:
    """Per (type, round k): canaries at risk (taken out of the verbatim view by round k)
    and those still in the view after the k-th summary; ``stale``: the superseded value
    at risk once its update was given, and those of them still in the view."""

    at_risk: dict[tuple[str, int], int] = field(default_factory=dict)
    survived: dict[tuple[str, int], int] = field(default_factory=dict)

    def count(self, kind: str, k: int, alive: bool) -> None:
        self.at_risk[kind, k] = self.at_risk.get((kind, k), 0) + 1
        self.survived[kind, k] = self.survived.get((kind, k), 0) + alive


STALE = "stale"


def survival(rounds: Sequence[Round], canaries: Sequence[Canary]) -> Survival:
    """Each canary's fate at each summary of one run. A canary is at risk from the first
    summary whose view no longer holds its message verbatim; the scorer re-checks a
    survivor at every later summary and drops one that is lost (it cannot come back)."""
    by_value = {c.probe.key: c for c in canaries}
    update = next(c for c in canaries if c.type == "update")
    out = Survival()
    risked: set[str] = set()
    summaries = [(r, end) for r, end in rounds if r["action"] == SUMMARY]
    for k, (record, end) in enumerate(summaries, start=1):
        alive = {normalize(row["text"]) for row in record["probes"] if row["view"]}
        risked |= {normalize(row["text"]) for row in record["probes"]}
        for key in sorted(risked):
            canary = by_value[key]
            out.count(canary.type, k, key in alive)
            if canary.type == "superseded" and update.probe.message < end:
                out.count(STALE, k, key in alive)
    return out
