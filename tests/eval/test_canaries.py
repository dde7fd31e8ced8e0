"""Planted canaries (eval/canaries.py): where they go, and their survival by round, by hand."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    TextBlock,
    UserMessage,
)
from transcript_tools.eval.artifacts import PATH
from transcript_tools.eval.canaries import (
    CANARY,
    STALE,
    TYPES,
    Canary,
    CanaryProbes,
    plant,
    survival,
)
from transcript_tools.eval.normalize import normalize
from transcript_tools.eval.probes import Probe
from transcript_tools.eval.records import ScoreRecord


def _conversation(turns: int) -> Conversation:
    messages: list[Any] = []
    for t in range(turns):
        messages += [UserMessage.text(f"step {t}"), AssistantMessage((TextBlock(f"ok {t}"),))]
    return Conversation("s", "log.jsonl", "openai", messages)


def test_canaries_go_into_messages_a_person_wrote_and_the_update_comes_later() -> None:
    conv = _conversation(8)
    done = plant(conv, seed=7)
    assert done is not None
    planted, canaries = done
    assert [c.type for c in canaries] == list(TYPES)
    assert len(planted.messages) == len(conv.messages)  # no message added
    assert conv.messages[0].blocks == (TextBlock("step 0"),)  # the original is untouched
    by_type = {c.type: c for c in canaries}
    for canary in canaries:
        host = planted.messages[canary.probe.message]
        assert type(host) is UserMessage  # several canaries may share one message
        assert any(canary.value in getattr(block, "text", "") for block in host.blocks[1:])
    # the first five in the first half of the 8 turns (messages 0, 2, 4, 6), the update later
    assert all(c.probe.message < 8 for c in canaries[:-1])
    assert by_type["update"].probe.message > by_type["superseded"].probe.message
    assert by_type["update"].probe.message >= 8
    assert by_type["file path"].probe.kind == PATH and by_type["goal"].probe.kind == CANARY
    assert plant(conv, seed=7) == done  # a fixed seed: the same plant
    assert plant(_conversation(1)) is None  # one turn: nothing to supersede across


def test_the_same_log_plants_the_same_canaries_however_its_path_is_spelled() -> None:
    conv = _conversation(8)
    planted = [
        plant(replace(conv, path=path))
        for path in ("log.jsonl", "./corpus/log.jsonl", "/home/someone/corpus/log.jsonl")
    ]
    values = [[c.value for c in done[1]] for done in planted if done is not None]
    assert values[0] == values[1] == values[2]
    # another log (another name, or another session) draws its own
    other = plant(replace(conv, path="other.jsonl"))
    assert other is not None and [c.value for c in other[1]] != values[0]


def _canary(kind: str, value: str, message: int) -> Canary:
    return Canary(kind, value, Probe(CANARY, message, 0, value, normalize(value)))


def _summary(*rows: tuple[str, bool]) -> ScoreRecord:
    probes = [{"text": text, "view": view} for text, view in rows]
    return cast(ScoreRecord, {"action": "summary", "probes": probes})


def test_survival_by_round_by_hand() -> None:
    canaries = [
        _canary("safety rule", "heron-1", 0),
        _canary("goal", "quartz-2", 2),
        _canary("file path", "a/b/c.toml", 2),
        _canary("preference", "tundra-3", 4),
        _canary("superseded", "41000", 4),
        _canary("update", "52000", 10),
    ]
    rounds = [
        # round 1 (history up to message 6): the rule and the goal taken out, the rule kept
        (_summary(("heron-1", True), ("quartz-2", False)), 6),
        # a pre-pass is no round
        (cast(ScoreRecord, {"action": "prepass", "probes": []}), 7),
        # round 2 (history to 12, the update given): the carried rule lost; the old port kept
        (_summary(("heron-1", False), ("41000", True)), 12),
        # round 3: the old port still there
        (_summary(("41000", True)), 14),
    ]
    found = survival(rounds, canaries)
    assert found.at_risk == {
        ("safety rule", 1): 1, ("goal", 1): 1,
        ("safety rule", 2): 1, ("goal", 2): 1, ("superseded", 2): 1, (STALE, 2): 1,
        ("safety rule", 3): 1, ("goal", 3): 1, ("superseded", 3): 1, (STALE, 3): 1,
    }  # fmt: skip
    assert found.survived == {
        ("safety rule", 1): 1, ("goal", 1): 0,
        ("safety rule", 2): 0, ("goal", 2): 0, ("superseded", 2): 1, (STALE, 2): 1,
        ("safety rule", 3): 0, ("goal", 3): 0, ("superseded", 3): 1, (STALE, 3): 1,
    }  # fmt: skip


def test_the_probes_of_a_planted_conversation_are_its_canaries_only() -> None:
    done = plant(_conversation(6), seed=3)
    assert done is not None
    planted, canaries = done
    probes = CanaryProbes(planted.messages, 500, frozenset(), canaries=canaries)
    found = [p for i in range(len(planted.messages)) for p in probes.message_probes(i)]
    assert sorted(p.text for p in found) == sorted(c.value for c in canaries)
    # each probe knows its turn: message 2k is turn k
    assert all(p.turn == p.message // 2 for p in found)
