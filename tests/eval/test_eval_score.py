"""Scoring a checkpoint: the replaced part, the floors, compression, recorded compactions."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson

from tests.support.fakes import FakeProvider, turn
from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.formatting import format_message
from transcript_tools.engine.messages import (
    Compaction,
    Conversation,
    SystemMessage,
    Usage,
    UserMessage,
)
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.tokens import estimate_text_tokens
from transcript_tools.eval.checkpoints import SummaryReplacement, recorded_checkpoints
from transcript_tools.eval.policy_probes import ActionScorer, policy_actions
from transcript_tools.eval.score import ConversationProbes, score_checkpoint
from transcript_tools.formats import read_input
from transcript_tools.formats.source import Source
from transcript_tools.providers.executor import SummaryExecutor

BIG = Usage(5000, 100)


def conversation(n: int = 8) -> Conversation:
    messages = [SystemMessage("You are a coding agent.")]
    for i in range(n):
        messages += turn(
            f"Please fix billing/module_{i}.py for ticket #{100 + i}",
            f"Edited `handler_{i}()` in billing/module_{i}.py",
            BIG,
        )
    return Conversation("s1", "mem.jsonl", "native", messages)


def run_checkpoints(conv: Conversation, reply: str = "summary: billing/module_0.py"):  # noqa: ANN201
    settings = ReplaySettings(summary=SummaryConfig(max_context_tokens=8000), keep_recent_turns=2)
    engine = SessionEngine(conv.session_id, settings, provider_name="fake")
    executor = SummaryExecutor(FakeProvider(default=reply), timeout=None)
    return replacements(conv, engine, executor), engine


def replacements(
    conv: Conversation, engine: SessionEngine, executor: SummaryExecutor
) -> tuple[list[SummaryReplacement], int]:
    """The seed's report: each summary as the history it replaced (``ActionHooks``'s
    ``on_replacement``), and the number of failed summaries."""
    scorer = ActionScorer(ConversationProbes(conv.messages), "zh", conv.session_id, conv.path, 500)
    out: list[SummaryReplacement] = []
    failed = asyncio.run(
        policy_actions(conv, engine, executor, scorer, lambda _r: None, out.append)
    )
    return out, failed


def test_replaced_part_is_what_the_next_view_no_longer_shows() -> None:
    conv = conversation(7)  # the last turn (6) is a checkpoint: the engine's final view is its view
    (checkpoints, failed), engine = run_checkpoints(conv)
    assert failed == 0 and [c.turn for c in checkpoints] == [3, 6]
    last = checkpoints[-1]
    view = engine.slot.load_messages()[:-1]  # the summary message is last
    in_view = {id(m) for m in view}
    replaced = [i for i in range(len(conv.messages)) if id(conv.messages[i]) not in in_view]
    non_system = [
        i for i in range(*last.replaced) if not isinstance(conv.messages[i], SystemMessage)
    ]
    assert non_system == replaced
    assert [c.position for c in checkpoints] == [1, 2]


def test_floors_compression_and_the_not_shorter_flag() -> None:
    conv = conversation()
    probes = ConversationProbes(conv.messages)
    short = score_checkpoint(
        probes, replaced=(0, 9), kept=(9, 17), summary="billing/module_0.py was fixed"
    )
    assert short["recall"]["summary"]["path"] == 0.25  # module_0 of module_0..3
    assert short["recall"]["none"]["artifact"] == 0.0
    assert short["compression"] < 1 and not short["not_shorter"]
    by_text = {p["text"]: p for p in short["probes"]}
    assert by_text["billing/module_0.py"]["summary"] is True
    assert by_text["billing/module_3.py"]["summary"] is False
    # the truncation floor: a prefix of the replaced text, within the summary's token length
    budget = short["summary_tokens"]
    text = probes.truncation(0, 9, budget)
    assert estimate_text_tokens(text) <= budget < estimate_text_tokens(probes.block(1))
    assert text and probes.block(1).startswith(text)
    assert probes.truncation(0, 9, 10_000) == "\n\n".join(probes.block(i) for i in range(1, 9))
    # a "summary" as long as what it replaces scores perfectly and is flagged
    everything = "\n\n".join(probes.block(i) for i in range(1, 9)) + " (end of the history)"
    long = score_checkpoint(probes, replaced=(0, 9), kept=(9, 17), summary=everything)
    assert long["recall"]["summary"]["artifact"] == 1.0
    assert long["not_shorter"] and long["compression"] >= 0.95


def test_probes_still_in_the_kept_turns_are_marked() -> None:
    conv = conversation()
    conv.messages.append(UserMessage.text("again billing/module_0.py please"))
    probes = ConversationProbes(conv.messages)
    record = score_checkpoint(probes, replaced=(0, 9), kept=(9, len(conv.messages)), summary="x")
    by_text = {p["text"]: p for p in record["probes"]}
    assert (
        by_text["billing/module_0.py"]["in_kept"] and not by_text["billing/module_1.py"]["in_kept"]
    )


def test_language_probe_flags_a_switch_to_english() -> None:
    messages = turn("把日志从 MySQL 迁到 ClickHouse，每天 2 亿条", "好的") + turn(
        "时间表呢？", "六周"
    )
    probes = ConversationProbes(messages)
    record = score_checkpoint(
        probes, replaced=(0, 2), kept=(2, 4), summary="The user migrates logs."
    )
    assert record["language"] == {"conversation": "cjk", "summary": "latin", "match": False}


def test_recorded_claude_code_compaction() -> None:
    before = turn("Fix src/app.py please", "Fixed src/app.py", BIG) * 2
    summary = UserMessage.text(
        "This session is being continued from a previous conversation that ran out of context. "
        "The conversation is summarized below: the user asked to fix src/app.py"
    )
    after = turn("now the docs", "ok", BIG)
    conv = Conversation("cc", "cc.jsonl", "claude-code", [*before, summary, *after])
    conv.compactions.append(Compaction(4, "claude-code:isCompactSummary"))
    probes = ConversationProbes(conv.messages, skip=frozenset({4}))
    (checkpoint,), notes = recorded_checkpoints(conv, probes.turn_of)
    assert notes == []
    assert (checkpoint.label, checkpoint.replaced, checkpoint.position) == (
        "recorded:claude-code",
        (0, 4),
        1,
    )
    assert checkpoint.shown == checkpoint.replaced  # a runtime's compactor saw all it replaced
    record = score_checkpoint(
        probes, replaced=checkpoint.replaced, kept=checkpoint.kept, summary=checkpoint.summary
    )
    assert record["recall"]["summary"]["path"] == 1.0
    assert all(
        p["message"] != 4 for p in record["probes"]
    )  # the runtime's summary is never a probe


def test_recorded_codex_compaction_text_is_read_from_the_rollout(tmp_path: Path) -> None:
    lines = [
        {"type": "session_meta", "payload": {"id": "cx"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Rename utils/io.py to utils/files.py"}],
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Renamed utils/io.py"}],
            },
        },
        {
            "type": "compacted",
            "payload": {
                "message": "Renamed utils/io.py to utils/files.py",
                "replacement_history": [],
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "thanks, now the tests"}],
            },
        },
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    (conv,) = list(read_input(Source(str(path)), None))
    probes = ConversationProbes(conv.messages)
    (checkpoint,), _ = recorded_checkpoints(conv, probes.turn_of)
    assert checkpoint.label == "recorded:codex" and checkpoint.summary.startswith(
        "Renamed utils/io.py"
    )


def test_probes_older_than_the_prompts_character_limit_are_marked_never_shown() -> None:
    from transcript_tools.eval.aggregate import Aggregate
    from transcript_tools.eval.checkpoints import score_record
    from transcript_tools.eval.evaluation import EvalResult
    from transcript_tools.eval.render import render_html, render_text

    conv = conversation(7)
    settings = ReplaySettings(
        summary=SummaryConfig(max_context_tokens=8000, max_transcript_chars=300),
        keep_recent_turns=2,
    )
    engine = SessionEngine(conv.session_id, settings, provider_name="fake")
    executor = SummaryExecutor(FakeProvider(default="billing/module_0.py"), timeout=None)
    checkpoints, _ = replacements(conv, engine, executor)
    cp = checkpoints[-1]
    history = conv.messages[: cp.kept[1]]
    # F3: the prompt holds the newest messages of the whole history within the limit
    total = 0
    first = len(history)
    while first > 0 and total + len(format_message(history[first - 1], 500)) + 2 <= 300:
        first -= 1
        total += len(format_message(history[first], 500)) + 2
    assert cp.shown == (first, len(history))
    assert 0 < first < cp.replaced[1]  # some replaced messages were never in the prompt

    record = score_record(cp, ConversationProbes(conv.messages, 500, frozenset()))
    flags = {(p["message"], p["shown"]) for p in record["probes"]}
    assert flags and all(shown == (message >= first) for message, shown in flags)
    unseen = [p for p in record["probes"] if not p["shown"]]
    assert unseen and not any(p["summary"] for p in unseen if "module_0" not in p["text"])

    aggregate = Aggregate()
    aggregate.add(record)
    data = aggregate.as_json()
    assert sum(data["probes_not_shown"].values()) == len(unseen)
    shown_total = sum(n for _, n in aggregate.shown["summary"].values())
    assert shown_total == len(record["probes"]) - len(unseen)
    text = render_text(EvalResult(["zh"], {"zh": aggregate}))
    assert "artifact, shown only" in text
    assert f"zh: {len(unseen)} of {len(record['probes'])} probes" in text
    page = render_html(
        EvalResult(["zh"], {"zh": aggregate}, kept=[{**record, "replaced_text": []}]), []
    )
    assert page.count("(never shown to the summarizer)") == len(
        [p for p in unseen if not p["summary"]]
    )
    assert f"the summary prompt showed messages {first}–{len(history) - 1}" in page


def test_conversation_language_is_its_peoples_else_everyones() -> None:
    """``ConversationProbes.language`` (running sums, the all-message ones only when no
    person wrote a letter yet) gives what ``language_of`` gives on the texts joined."""
    from transcript_tools.engine.messages import INJECTED, AssistantMessage, TextBlock
    from transcript_tools.engine.tokens import ascii_letter_count, cjk_count
    from transcript_tools.eval.score import language_of

    tool_output = UserMessage((TextBlock("日志迁移到新集群完成了吗"),), origin=INJECTED)
    messages = [
        SystemMessage("系统提示：请用中文回答"),
        tool_output,  # no person yet: everything counts
        AssistantMessage((TextBlock("Moving the logs to the new cluster now."),)),
        UserMessage.text("12 34 !!"),
        UserMessage.text("把日志迁到 ClickHouse"),
        AssistantMessage((TextBlock("Done: all logs are in ClickHouse and verified."),)),
        UserMessage.text("Thanks, now check the dashboards and the alerts please"),
    ]
    probes = ConversationProbes(messages)
    for end in [6, 0, 1, 2, 3, 4, 5, 7, 3]:  # out of order: the sums are extended on need
        person = [
            probes.block(i)
            for i in range(end)
            if isinstance(messages[i], UserMessage) and messages[i].origin == "person"
        ]
        joined = " ".join(person)
        if not cjk_count(joined) + ascii_letter_count(joined):
            joined = " ".join(probes.block(i) for i in range(end))
        assert probes.language(end) == language_of(joined), end
    assert [probes.language(end) for end in (2, 3, 4)] == ["cjk", "cjk", "latin"]


def test_a_recorded_compaction_without_its_text_is_noted_at_its_line(tmp_path: Path) -> None:
    """A redacted summary is not scored; the note names the log's line that records the
    compaction (codex: the ``compacted`` line), not an index into tsum's messages."""
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "ok"}],
    }
    lines = [
        {"type": "session_meta", "payload": {"id": "cx"}},
        {"type": "response_item", "payload": user},
        {"type": "response_item", "payload": said},
        {"type": "compacted", "payload": {"message": "[REDACTED len=0]"}},
        {"type": "response_item", "payload": user},
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    (conv,) = list(read_input(Source(str(path)), None))
    checkpoints, notes = recorded_checkpoints(conv, ConversationProbes(conv.messages).turn_of)
    assert checkpoints == []
    assert notes == [
        f"{path}:4: session cx: codex:compacted has no readable summary text "
        "(redacted or not recorded): not scored"
    ]


def test_a_claude_code_compaction_knows_its_line(tmp_path: Path) -> None:
    from tests.support.compaction_logs import claude_code_log

    meta = {"trigger": "auto", "preTokens": 155_800}
    log = claude_code_log(tmp_path / "a.jsonl", [150_000, 153_000, 9_000], after=2, boundary=meta)
    (conv,) = list(read_input(Source(str(log)), None))
    (comp,) = conv.compactions
    assert comp.line is not None
    assert "compact_boundary" in log.read_text().splitlines()[comp.line - 1]


def test_each_column_of_the_recall_table_counts_its_own_probes() -> None:
    """A recorded compaction stands on other checkpoints than tsum's summaries: a row whose
    columns stand on different numbers of probes gives each cell its own count, never the
    largest one for all (the recorded column once read "request (31)" on its 9 requests)."""
    from transcript_tools.eval.aggregate import Aggregate
    from transcript_tools.eval.checkpoints import RECORDED, TSUM, score_record
    from transcript_tools.eval.evaluation import EvalResult
    from transcript_tools.eval.render import recall_table, render_text

    conv = conversation()  # a system message, then 8 turns of 2 messages
    probes = ConversationProbes(conv.messages)
    spans = {"zh": (TSUM, 9), "recorded:claude-code": (RECORDED, 5)}  # 4 turns, 2 turns
    aggregates = {}
    for label, (kind, cut) in spans.items():
        cp = SummaryReplacement(kind, label, "s1", "mem.jsonl", 3, 1, "x", (0, cut), (cut, 17))
        aggregates[label] = Aggregate()
        aggregates[label].add(score_record(cp, probes))
    result = EvalResult(list(spans), aggregates)
    table = recall_table(result)
    assert table is not None
    rows = dict(table.recall)
    assert "request" in rows and "  path" in rows  # no single count in the row's name
    # zh, its truncation floor, recorded, its floor, no summary (zh's)
    assert rows["request"] == ["0.0% (4)", "0.0% (4)", "0.0% (2)", "0.0% (2)", "0.0% (4)"]
    assert [cell.split(" ")[1] for cell in rows["  path"]] == ["(4)", "(4)", "(2)", "(2)", "(4)"]
    line = next(x for x in render_text(result).splitlines() if x.startswith("request "))
    assert line.split() == ["request", *" ".join(rows["request"]).split()]
    # one variant: every column stands on the same probes, the count stays in the name
    alone = recall_table(EvalResult(["zh"], {"zh": aggregates["zh"]}))
    assert alone is not None and dict(alone.recall)["request (4)"] == ["0.0%", "0.0%", "0.0%"]
