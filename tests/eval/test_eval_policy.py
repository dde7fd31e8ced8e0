"""``tsum eval --policy``: what survives each action of a policy, pre-pass or summary,
looked for in the next view (eval/policy_probes.py, docs/eval.md "Policies")."""

from __future__ import annotations

import asyncio
from itertools import accumulate
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from tests.support.eval_fake_model import model_reply
from tests.support.fake_llm_server import FakeLLMServer
from transcript_tools.cli.main import cli
from transcript_tools.engine.config import ReplaySettings, SummaryConfig
from transcript_tools.engine.messages import (
    AssistantMessage,
    Conversation,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.policy_engine import with_policy
from transcript_tools.engine.policy_toml import resolve_policy
from transcript_tools.engine.requests import SummaryOutcome, SummaryRequest
from transcript_tools.engine.session import SessionEngine
from transcript_tools.engine.tokens import estimate_message_tokens
from transcript_tools.eval.policy_probes import ActionScorer, policy_actions
from transcript_tools.eval.score import ConversationProbes
from transcript_tools.formats.corpus import CorpusReader
from transcript_tools.providers.base import SummaryResponse
from transcript_tools.replay.sizes import log_sizes

SAMPLES = str(Path(__file__).resolve().parents[2] / "samples")
SUMMARY = "Fixing parse_month in src/app/dates.py; the person asked to keep the public API stable."


def _call(call_id: str, name: str, args: dict[str, str]) -> AssistantMessage:
    return AssistantMessage((ToolUseBlock(call_id, name, args),))


MESSAGES = [
    UserMessage(
        (
            TextBlock(
                "Please fix the date parser in src/app/dates.py and keep the public API stable"
            ),
        )
    ),
    _call("c1", "bash", {"command": "pytest tests/test_dates.py"}),
    ToolResultMessage(
        "c1", "FAILED tests/test_dates.py::test_month - ValueError: month must be in 1..12"
    ),
    _call("c2", "read", {"file_path": "src/app/dates.py"}),
    ToolResultMessage("c2", "def parse_month(text): needs python-dateutil 2.8.2"),
    AssistantMessage((TextBlock("The bug is in `parse_month`; fixing it now."),)),
    UserMessage((TextBlock("Also bump the version to 2.4.1 before you commit the change"),)),
    _call("c3", "bash", {"command": "git commit -am fix"}),
    ToolResultMessage("c3", "[main 1a2b3c4d] fix"),
    AssistantMessage((TextBlock("Done."),)),
]

# A pre-pass policy: Anthropic's clear_tool_uses acting on any view, keeping 1 result.
CLEAR = 'extends = "clear-tool-uses"\nname = "clear-small"\n[prepass]\ntrigger_tokens = 1\nkeep_newest = 1\n'
# A summarizing one: LangChain's, firing once the view holds 8 messages, keeping 2.
SUMMARIZE = (
    'extends = "langchain"\nname = "summarize-small"\n[trigger]\nthreshold = "messages"\n'
    'messages = 8\nunit = "turn"\n[keep]\nmessages = 2\n'
)


class _Stub:
    """An executor whose every summary is ``SUMMARY`` (the scores are then hand-checkable)."""

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    async def execute(self, request: SummaryRequest) -> SummaryOutcome:
        self.requests.append(request)
        return SummaryOutcome(SummaryResponse(text=SUMMARY, model="stub"))


def _actions(
    tmp_path: Path, text: str, whole_view: bool = False, detail: bool = True
) -> list[dict[str, Any]]:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    policy = resolve_policy(str(path))
    settings = with_policy(ReplaySettings(summary=SummaryConfig()), policy)
    conv = Conversation("s", "s.jsonl", "native", list(MESSAGES))
    probes = ConversationProbes(conv.messages, 500)
    scorer = ActionScorer(probes, policy.name, "s", "s.jsonl", 500, whole_view=whole_view)
    scorer.detail = detail
    records: list[dict[str, Any]] = []
    engine = SessionEngine("s", settings)
    failed = asyncio.run(policy_actions(conv, engine, _Stub(), scorer, records.append))  # type: ignore[arg-type]
    assert failed == 0
    return records


def _survival(record: dict[str, Any], variant: str = "view") -> dict[str, bool]:
    return {f"{p['kind']}:{p['text']}": p[variant] for p in record["probes"]}


def test_a_prepass_is_scored_on_the_tool_results_it_cleared(tmp_path: Path) -> None:
    first, second = _actions(tmp_path, CLEAR)
    # Call c2's result arrives: 2 tool results, the newest kept, message 2 cleared.
    assert (first["action"], first["removed"], first["removed_messages"]) == (
        "prepass",
        [[2, 3]],
        1,
    )
    assert _survival(first) == {
        # still in the view: the bash call's argument "pytest tests/test_dates.py" (msg 1)
        "path:tests/test_dates.py": True,
        # only message 2 said it; its placeholder "[tool result cleared]" does not
        "error:ValueError: month must be in 1..12": False,
    }
    assert _survival(first, "ceiling") == dict.fromkeys(_survival(first), True)
    assert _survival(first, "none") == _survival(first)  # the placeholder carries nothing
    assert first["freed_tokens"] == first["view_tokens_before"] - first["view_tokens_after"] > 0
    # Call c3's result arrives: message 4 (the newest but one) is cleared; 2.8.2 was only there.
    assert second["removed"] == [[4, 5]]
    assert _survival(second) == {"version:2.8.2": False}
    assert first["violations"] == second["violations"] == {}  # placeholders keep every pair


def test_a_summary_is_scored_on_what_it_dropped_in_the_same_next_view(tmp_path: Path) -> None:
    (summary,) = _actions(tmp_path, SUMMARIZE)
    # After turn 1 the view holds 10 messages >= 8: everything but the last message is
    # dropped (keeping 2 messages would split the c3 call from its result).
    assert (summary["action"], summary["removed"], summary["view_messages"]) == (
        "summary",
        [[0, 9]],
        2,
    )
    assert summary["summary"] == SUMMARY
    view = _survival(summary)
    assert view == {
        # the summary names the file, parse_month, and 4 of the first request's key terms
        "request:Please fix the date parser in src/app/dates.py and keep the public API stable": True,
        "path:src/app/dates.py": True,
        "symbol:parse_month": True,
        # nothing in the summary or in "Done." carries these
        "command:pytest tests/test_dates.py": False,
        "path:tests/test_dates.py": False,
        "error:ValueError: month must be in 1..12": False,
        "version:2.8.2": False,
        "request:Also bump the version to 2.4.1 before you commit the change": False,
        "version:2.4.1": False,
        "command:git commit -am fix": False,
        "commit:1a2b3c4d": False,
    }
    # the truncation floor (the first tokens of the dropped text, as long as the summary)
    # holds the first request and its path, not parse_month (message 5)
    truncation = _survival(summary, "truncation")
    assert [k for k, hit in truncation.items() if hit] == [
        "request:Please fix the date parser in src/app/dates.py and keep the public API stable",
        "path:src/app/dates.py",
    ]
    assert not any(_survival(summary, "none").values())  # "Done." alone carries nothing
    assert all(_survival(summary, "ceiling").values())  # the uncompacted view has them all
    assert summary["recall"]["view"]["artifact"] == round(2 / 9, 4)
    assert summary["uncompacted_tokens"] > summary["view_tokens_after"]


def test_a_later_summary_looks_again_for_what_an_earlier_one_carried(tmp_path: Path) -> None:
    every_turn = SUMMARIZE.replace("messages = 8", "messages = 3")
    first, second = _actions(tmp_path, every_turn)
    assert first["removed"][0][0] == 0 and second["removed"][0][0] >= first["removed"][-1][1]
    carried = {f"{p['kind']}:{p['text']}": p["view"] for p in second["probes"] if p["carried"]}
    survived = {k for k, hit in _survival(first).items() if hit}
    assert set(carried) == survived and carried and all(carried.values())


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_policy_seed_alone_is_the_seed_eval_byte_for_byte(tmp_path: Path) -> None:
    plain = run("eval", SAMPLES, "--json")
    seed = run("eval", SAMPLES, "--json", "--policy", "seed")
    assert plain.exit_code == seed.exit_code == 0
    assert seed.stdout == plain.stdout and "policies" not in orjson.loads(plain.stdout)


def test_policy_seed_with_flags_is_the_run_without_it(tmp_path: Path) -> None:
    """The seed's policy is the seed's path, its flags a plain run's (cli/settings.resolve):
    before, the flags made it a non-seed policy, run through PolicySlot."""
    templates = ("--prompt", "zh", "--prompt", "en", "--json")
    assert (
        run("eval", SAMPLES, *templates, "--policy", "seed").stdout
        == run("eval", SAMPLES, *templates).stdout
    )
    flags = ("--measure", "current", "--checkpoint", "call", "--silent")
    run("replay", SAMPLES, *flags, "--out", str(tmp_path / "a"))
    run("replay", SAMPLES, *flags, "--policy", "seed", "--out", str(tmp_path / "b"))
    for name in ("decisions.jsonl", "summaries.jsonl", "slots.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_policies_side_by_side_with_the_seed_and_a_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "clear.toml"
    path.write_text(CLEAR)
    html = tmp_path / "e.html"
    out = ["--out", str(tmp_path / "o"), "--html", str(html), "--chart"]
    result = run("eval", SAMPLES, "--policy", "seed", "--policy", str(path), *out)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    names = [line.split()[0] for line in lines if line and not line.startswith((" ", "policy"))]
    assert names[:2] == ["seed", "clear-small"]
    assert "  uncompacted (ceiling)" in result.stdout and "  truncation floor" in result.stdout
    data = orjson.loads((tmp_path / "o" / "eval.json").read_bytes())
    seed, clear = data["policies"]["seed"], data["policies"]["clear-small"]
    assert seed["actions"]["summary"] > 0 and clear["actions"]["prepass"] > 0
    # the seed's summary is a system message at the end of the view: Anthropic refuses it
    assert seed["violations"]["anthropic"]["views"] == seed["actions"]["summary"]
    assert seed["violations"]["openai"]["views"] == 0
    assert clear["recall"]["ceiling"]["artifact"] == 1.0
    # the uncompacted views at the same actions break nothing: the seed's summary does
    assert seed["uncompacted_violations"]["anthropic"] == 0
    records = [
        orjson.loads(line)
        for line in (tmp_path / "o" / "checkpoints.jsonl").read_bytes().splitlines()
    ]
    assert {r["label"] for r in records if r["kind"] == "policy-action"} == {"seed", "clear-small"}
    page = html.read_text()
    assert "uncompacted (ceiling)" in page and "clear-small" in page and "prepass #1" in page
    # the chart's points, as the table's view tok, on one size model (the caption says)
    assert "Every size in one size model, the table&#39;s view tok" in page


def _records(folder: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in (folder / "checkpoints.jsonl").read_bytes().splitlines()]


def test_every_row_of_a_policy_eval_is_sized_as_the_log_billed_it(tmp_path: Path) -> None:
    """With --policy the seed's row measures its views and the uncompacted history in the
    log's billed sizes, as a policy's row measures its own (engine/sized_view.py), its
    schedule unchanged; the legend says so. Before, the seed's row read estimates: on
    samples/long_session.jsonl its ceiling 3,263.8 tokens against 2,371.0 billed."""
    log = str(Path(SAMPLES) / "long_session.jsonl")
    both = run("eval", log, "--policy", "seed", "--policy", "codex", "--out", str(tmp_path / "p"))
    alone = run("eval", log, "--cost", "--out", str(tmp_path / "s"))  # the seed's own figures
    assert both.exit_code == alone.exit_code == 0, both.output
    assert "every row in one size model: the log's messages as billed" in both.stdout
    (conv,) = CorpusReader(None).conversations([log])
    sizes = log_sizes(conv)
    assert sizes is not None
    billed = set(accumulate((sizes.of(m) for m in conv.messages), initial=0))
    estimated = set(accumulate(map(estimate_message_tokens, conv.messages), initial=0))
    records = _records(tmp_path / "p")
    seed = [r for r in records if r["label"] == "seed"]
    assert seed and all(r["uncompacted_tokens"] in billed for r in records)
    assert not {r["uncompacted_tokens"] for r in seed} <= estimated
    # the same summaries at the same turns (the seed's schedule), sized otherwise
    own = {r["turn"]: r["next_view_tokens"] for r in _records(tmp_path / "s")}
    assert [r["turn"] for r in seed] == list(own)
    assert all(r["view_tokens_after"] < own[r["turn"]] for r in seed)
    # the view each summary was asked to replace, sized alike (a policy's record carries
    # it; the seed's was null): the first, with the whole history in view, is the ceiling
    assert all(isinstance(r["view_tokens_before"], int) for r in records)
    assert seed[0]["view_tokens_before"] == seed[0]["uncompacted_tokens"]


def test_cost_with_a_policy_says_the_actions_are_not_priced() -> None:
    """--cost scores summaries only: with --policy a note says so, where the run used to
    drop it without a word; the seed's own path keeps its figure and needs no note."""
    result = run("eval", SAMPLES, "--policy", "seed", "--policy", "codex", "--cost", "--json")
    assert result.exit_code == 0, result.output
    assert "--cost under --policy: only the compactions the logs record get it" in result.stderr
    assert "recall_per_1k_retained_tokens" not in result.stdout
    seed = run("eval", SAMPLES, "--policy", "seed", "--cost")
    assert "probes per 1k retained" in seed.stdout and "--cost under" not in seed.stderr


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")


def test_claude_code_and_codex_through_the_openai_sdk(network: None, tmp_path: Path) -> None:
    """End to end through the real openai SDK and the local fake server: both presets
    summarize (a 34,500-token window leaves Claude Code's trigger 1,500 tokens; --ratio
    sets Codex's ratio to 5%), each summary one HTTP call."""
    args = [
        "eval",
        SAMPLES,
        "--policy",
        "claude-code",
        "--policy",
        "codex",
        "--max-context-tokens",
        "34500",
        "--ratio",
        "0.05",
        "--provider",
        "openai",
        "--base-url",
        "",
        "--model",
        "fake-model",
        "--no-cache",
        "--json",
    ]
    with FakeLLMServer(default=model_reply) as server:
        args[args.index("--base-url") + 1] = server.openai_base_url
        result = run(*args)
        assert result.exit_code == 0, result.output
        calls = server.count
    data = orjson.loads(result.stdout)
    policies = data["policies"]
    assert list(policies) == ["claude-code", "codex"]
    summaries = sum(p["actions"]["summary"] for p in policies.values())
    assert calls == summaries and policies["claude-code"]["actions"]["summary"] > 0
    assert policies["codex"]["actions"]["summary"] > 0
    assert data["failed_summaries"] == {"claude-code": 0, "codex": 0}
    for p in policies.values():
        assert p["summary_cost"]["input_tokens"] > 0
        assert p["recall"]["ceiling"]["artifact"] == 1.0
        assert set(p["violations"]) == {"anthropic", "openai", "gemini", "strict"}


def test_the_ceilings_own_message_haystack_answers_as_a_fresh_one() -> None:
    """The ceiling looks for a probe in its own message first, through a haystack kept
    per history message (``ShownTexts.haystack`` of ``ActionScorer._history``): with the probes' cut, one
    for every scorer of the conversation (a grid's configurations); with another cut,
    the scorer's own. Each answer is ``recalled`` on a fresh haystack of that text."""
    from transcript_tools.eval.haystack import Haystack
    from transcript_tools.eval.normalize import normalize
    from transcript_tools.eval.policy_probes import visible_text
    from transcript_tools.eval.score import recalled, recalled_memo

    probes = ConversationProbes(MESSAGES, 500)
    grid = [ActionScorer(probes, name, "s", "p", 500) for name in ("a", "b")]
    short = ActionScorer(probes, "c", "s", "p", 12)  # tool results cut shorter than probed
    answers: dict[int, set[bool]] = {500: set(), 12: set()}
    for _ in ("cold", "warm"):
        for index, message in enumerate(MESSAGES):
            for scorer in (*grid, short):
                cut = scorer.max_tool_result_chars
                fresh = Haystack(normalize(visible_text(message, cut)))
                for probe in probes.message_probes(index):
                    expected = recalled(probe, fresh)
                    assert recalled_memo(probe, scorer._history().haystack(index)) is expected
                    assert scorer._in_history(probe, len(MESSAGES), []) is (
                        expected or recalled(probe, _history_text(cut))
                    )
                    answers[cut].add(expected)
    assert grid[0]._history().haystack(2) is grid[1]._history().haystack(2)  # shared
    assert short._history().haystack(2) is not grid[0]._history().haystack(2)
    assert answers == {500: {True}, 12: {True, False}}  # the short cut misses some


def _history_text(cut: int) -> str:
    from transcript_tools.eval.normalize import normalize
    from transcript_tools.eval.policy_probes import visible_text

    return " ".join(p for m in MESSAGES if (p := normalize(visible_text(m, cut))))


@pytest.mark.parametrize("policy", [CLEAR, SUMMARIZE])
def test_the_sweeps_scorer_keeps_the_view_counts_alone(tmp_path: Path, policy: str) -> None:
    """Without ``detail`` (the sweep's scorer), each record holds what the sweep reads:
    the view's counts, as the full record counts them, and the run's own fields."""
    full = _actions(tmp_path, policy, whole_view=True)
    lean = _actions(tmp_path, policy, whole_view=True, detail=False)
    assert [r["counts"]["view"] for r in lean] == [r["counts"]["view"] for r in full]
    assert [r["whole_view"] for r in lean] == [r["whole_view"] for r in full]
    assert any(r["counts"]["view"] for r in lean)  # something was probed
    for record in lean:
        assert set(record["counts"]) == {"view"}
        assert "probes" not in record and "violations" not in record
        assert record["view_tokens_after"] == full[lean.index(record)]["view_tokens_after"]
