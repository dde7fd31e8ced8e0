"""The replay driver's session window: no head-of-line blocking, a bounded reorder
buffer, and outputs byte-identical whatever the concurrency and completion order.

Scheduling is steered with event-loop yields (``asyncio.sleep(0)``), never with time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from transcript_tools.cli.main import cli
from transcript_tools.engine.config import ReplaySettings
from transcript_tools.engine.messages import Conversation
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.requests import SummaryResponse
from transcript_tools.providers.executor import SummaryExecutor
from transcript_tools.replay.driver import ReplayDriver, SessionResult, window_bounds
from transcript_tools.replay.output_dir import OutputDirectory
from transcript_tools.replay.parking import SessionCounts
from transcript_tools.reporter import QUIET

# Turns per conversation: short and long mixed, a long one first (the head).
MIXED_TURNS = (40, 2, 5, 25, 1, 3, 12, 30, 4, 8, 2, 18, 6, 1, 35, 3)


def write_corpus(root: Path, turns: tuple[int, ...] = MIXED_TURNS) -> Path:
    """OpenAI Chat JSONL, one file per conversation, with recorded usage big enough that
    the checkpoint fires from turn 3 and then every 3 turns (seed defaults)."""
    root.mkdir(parents=True, exist_ok=True)
    for index, count in enumerate(turns):
        lines = [{"role": "system", "content": "You are a build assistant."}]
        for turn in range(count):
            lines.append(
                {"role": "user", "content": f"conv {index} turn {turn}: why did step {turn} fail?"}
            )
            lines.append(
                {
                    "role": "assistant",
                    "content": f"Step {turn} failed because cache key {index}-{turn} changed; we decided to rerun.",
                    "usage": {"prompt_tokens": 6000 + 10 * turn, "completion_tokens": 50},
                }
            )
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        (root / f"c{index:03d}.jsonl").write_text(text, encoding="utf-8")
    return root


class YieldingProvider:
    """Answers after a random number of event-loop yields (seeded), so calls finish in an
    order unrelated to the input order; the text depends on the prompt only."""

    name = "fake"
    key_env = None

    def __init__(self, seed: int = 0, max_yields: int = 40) -> None:
        self.rng = random.Random(seed)
        self.max_yields = max_yields
        self.finished: list[str] = []  # session of each answered call, in answer order

    @property
    def default_model(self) -> str:
        return "fake-1"

    def identity(self, model: str | None) -> dict[str, str]:
        return {"provider": self.name, "model": model or self.default_model}

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        for _ in range(self.rng.randrange(self.max_yields)):
            await asyncio.sleep(0)
        self.finished.append(_session_of(prompt))
        digest = hashlib.sha256(prompt.encode()).hexdigest()[:16]
        return SummaryResponse(text=f"summary {digest}", model=model or self.default_model)


def _session_of(prompt: str) -> str:
    marker = prompt.rfind("conv ")
    return prompt[marker + 5 : prompt.index(" ", marker + 5)]


def replay_to(
    out: Path, corpus: Path, provider: object, concurrency: int, **window: int
) -> ReplayDriver:
    executor = SummaryExecutor(provider, cache=None, concurrency=concurrency, timeout=None)  # type: ignore[arg-type]
    sink = OutputDirectory(out)
    run = ReplayDriver(
        ReplaySettings(),
        executor,
        sink,
        provider_name="fake",
        template=load_template(None),
        concurrency=concurrency,
        reporter=QUIET,
        **window,
    )

    async def main() -> None:
        await run.run([str(corpus)])

    asyncio.run(main())
    sink.close()
    return run


def files_of(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_mixed_lengths_byte_identical_whatever_the_concurrency_and_completion_order(
    tmp_path: Path,
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    outputs = {}
    for jobs in (1, 3, 8, 32):
        provider = YieldingProvider(seed=jobs)
        run = replay_to(tmp_path / f"out-j{jobs}", corpus, provider, jobs)
        assert run.stats.sessions == len(MIXED_TURNS) and run.stats.summaries_ok > 40
        if jobs > 1:
            # the test means something only if calls finished out of input order
            firsts = list(dict.fromkeys(provider.finished))
            assert firsts != sorted(firsts, key=int), jobs
        outputs[jobs] = files_of(tmp_path / f"out-j{jobs}")
    reference = outputs[1]
    assert "summaries.jsonl" in reference and len(reference) > len(MIXED_TURNS)
    for jobs, files in outputs.items():
        assert files.keys() == reference.keys(), jobs
        for name, data in files.items():
            assert data == reference[name], (jobs, name)
    sessions = [json.loads(line)["session"] for line in reference["decisions.jsonl"].splitlines()]
    assert list(dict.fromkeys(sessions)) == [f"c{i:03d}" for i in range(len(MIXED_TURNS))]


def test_cli_mixed_lengths_byte_identical_across_j(tmp_path: Path) -> None:
    """The same through ``tsum replay`` (offline provider), -j 1 / 4 / 16."""
    corpus = write_corpus(tmp_path / "corpus")
    outputs = []
    for jobs in ("1", "4", "16"):
        out = tmp_path / f"out{jobs}"
        result = CliRunner().invoke(
            cli,
            ["replay", str(corpus), "--out", str(out), "-j", jobs, "--silent"],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.stderr
        files = files_of(out)
        files.pop("manifest.json")
        outputs.append(files)
    assert outputs[0] == outputs[1] == outputs[2]


class HeadBlockingProvider:
    """The head session's (c000) calls wait until every other session has been
    answered, or give up after ``patience`` yields (what a head-of-line-blocking driver
    would need: it never starts the others while the head runs)."""

    name = "fake"
    key_env = None

    def __init__(self, others: int, patience: int = 2000) -> None:
        self.others = others
        self.patience = patience
        self.answered: set[str] = set()
        self.others_before_head: int | None = (
            None  # sessions answered before the head's first answer
        )

    @property
    def default_model(self) -> str:
        return "fake-1"

    def identity(self, model: str | None) -> dict[str, str]:
        return {"provider": self.name, "model": model or self.default_model}

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        session = _session_of(prompt)
        if session == "0":
            for _ in range(self.patience):
                if len(self.answered - {"0"}) >= self.others:
                    break
                await asyncio.sleep(0)
            if self.others_before_head is None:
                self.others_before_head = len(self.answered - {"0"})
        else:
            await asyncio.sleep(0)
        self.answered.add(session)
        return SummaryResponse(text=f"summary of {session}", model="fake-1")


class CountingRun(ReplayDriver):
    """Records how many sessions are held (read, not yet written) at most."""

    held = 0
    most_held = 0

    def conversations(self, paths: list[str]) -> Iterator[Conversation]:
        for conv in ReplayDriver.conversations(self, paths):
            self.held += 1
            self.most_held = max(self.most_held, self.held)
            yield conv

    def _count(self, counts: SessionCounts) -> None:  # every written session, parked or not
        self.held -= 1
        ReplayDriver._count(self, counts)


class ObjectSink:
    """``OutputDirectory`` without ``render``: finished sessions wait as objects, not parked."""

    spool_prompts = True

    def __init__(self, root: Path) -> None:
        self.out = OutputDirectory(root)

    def write_session(self, result: SessionResult) -> None:
        self.out.write_session(result)

    def close(self) -> None:
        self.out.close()


def _run_counting(
    tmp_path: Path, corpus: Path, provider: object, parks: bool = True, **window: int
) -> CountingRun:
    executor = SummaryExecutor(provider, cache=None, concurrency=2, timeout=None)  # type: ignore[arg-type]
    sink = OutputDirectory(tmp_path / "out") if parks else ObjectSink(tmp_path / "out")
    run = CountingRun(
        ReplaySettings(),
        executor,
        sink,
        provider_name="fake",
        template=load_template(None),
        concurrency=2,
        reporter=QUIET,
        **window,
    )

    async def main() -> None:
        await run.run([str(corpus)])

    asyncio.run(main())
    sink.close()
    return run


# a long head, then sessions that each fire (>= 4 turns) and are short
HEAD_THEN_SHORT = (30, *([4] * 12))


def test_a_free_slot_starts_the_next_session_while_the_head_still_runs(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", HEAD_THEN_SHORT)
    provider = HeadBlockingProvider(others=len(HEAD_THEN_SHORT) - 1)
    run = _run_counting(tmp_path, corpus, provider, sessions=2, reorder=64)
    # every other session ran to its end through the second slot while the head waited
    assert provider.others_before_head == len(HEAD_THEN_SHORT) - 1
    sessions = [
        json.loads(line)["session"]
        for line in (tmp_path / "out" / "decisions.jsonl").read_text().splitlines()
    ]
    assert list(dict.fromkeys(sessions)) == [f"c{i:03d}" for i in range(len(HEAD_THEN_SHORT))]
    assert run.stats.sessions == len(HEAD_THEN_SHORT)


def test_without_a_reorder_buffer_the_head_blocks_the_window(tmp_path: Path) -> None:
    """reorder=0 is the old deque window: the control that shows the test above can fail."""
    corpus = write_corpus(tmp_path / "corpus", HEAD_THEN_SHORT)
    provider = HeadBlockingProvider(others=len(HEAD_THEN_SHORT) - 1, patience=200)
    _run_counting(tmp_path, corpus, provider, sessions=2, reorder=0)
    assert provider.others_before_head is not None
    assert provider.others_before_head <= 1


@pytest.mark.parametrize("parks", [True, False])
@pytest.mark.parametrize("reorder", [0, 1, 3, 6])
def test_the_reorder_buffer_holds_at_most_its_bound(
    tmp_path: Path, reorder: int, parks: bool
) -> None:
    """Finished sessions waiting as objects or parked as bytes: one bound for both."""
    corpus = write_corpus(tmp_path / "corpus", HEAD_THEN_SHORT)
    provider = HeadBlockingProvider(others=len(HEAD_THEN_SHORT) - 1, patience=500)
    run = _run_counting(tmp_path, corpus, provider, parks, sessions=2, reorder=reorder)
    running, held = window_bounds(2, 2, reorder)
    assert (running, held) == (2, 2 + reorder)
    # the head blocks long enough for the buffer to fill up to its bound, never beyond
    assert run.most_held == held
    assert run.stats.sessions == len(HEAD_THEN_SHORT)
    # while the buffer is full no session starts: the head saw only the ones it held
    assert provider.others_before_head == held - 1


def test_default_window_follows_the_concurrency() -> None:
    for jobs in (1, 8, 32, 128):
        running, held = window_bounds(jobs)
        # every call slot has a session ready to use it, and the last sessions of a
        # corpus do not start after the others' chains are done
        assert running == 16 * jobs
        assert held == 24 * jobs  # reorder buffer: 8 finished sessions per call slot
    assert window_bounds(8, sessions=3, reorder=5) == (3, 8)


def test_the_longest_conversation_read_ahead_starts_first_after_the_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import transcript_tools.replay.driver as replay_module

    corpus = write_corpus(tmp_path / "corpus", (3, 2, 4, 40, 2, 12))
    order: list[str] = []
    original = replay_module.replay_conversation

    async def recording(conv: Conversation, *args: object, **kwargs: object) -> SessionResult:
        order.append(conv.session_id)
        return await original(conv, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(replay_module, "replay_conversation", recording)
    run = replay_to(tmp_path / "out", corpus, YieldingProvider(), 2, sessions=2, reorder=8)
    # the head first (everything after it waits for it), then the longest read ahead
    assert order[:2] == ["c000", "c003"] and sorted(order) == [f"c{i:03d}" for i in range(6)]
    sessions = [
        json.loads(x)["session"]
        for x in (tmp_path / "out" / "decisions.jsonl").read_text().splitlines()
    ]
    assert list(dict.fromkeys(sessions)) == [f"c{i:03d}" for i in range(6)]
    assert run.stats.sessions == 6


def test_busy_slots_go_to_the_lowest_priority_first() -> None:
    from transcript_tools.providers.executor import _PrioritySlots

    async def main() -> list[str]:
        slots = _PrioritySlots(1)
        got: list[str] = []
        await slots.acquire(0)  # the only slot is busy

        async def waiter(name: str, priority: int) -> None:
            await slots.acquire(priority)
            got.append(name)
            await asyncio.sleep(0)
            slots.release()

        tasks = [
            asyncio.ensure_future(waiter(n, p))
            for n, p in (("a", 5), ("b", -3), ("c", 0), ("d", -3))
        ]
        cancelled = asyncio.ensure_future(waiter("x", -9))
        await asyncio.sleep(0)
        cancelled.cancel()  # a cancelled waiter never takes the slot, nor loses it
        await asyncio.sleep(0)
        slots.release()
        await asyncio.gather(*tasks)
        await slots.acquire(0)  # every slot came back
        return got

    assert asyncio.run(main()) == ["b", "d", "c", "a"]


def test_finished_sessions_wait_as_bytes_so_a_long_head_never_stops_the_others(
    tmp_path: Path,
) -> None:
    """With a rendering sink (--out) the default window parks finished sessions
    (``reorder``): more of them wait than the in-memory bound holds, every other session
    is answered while the head waits, and the bytes are those of a sequential run."""
    turns = (12, *([4] * 39))  # the head, then more short ones than the memory bound
    corpus = write_corpus(tmp_path / "corpus", turns)
    provider = HeadBlockingProvider(others=len(turns) - 1, patience=20_000)
    run = _run_counting(tmp_path, corpus, provider, sessions=2)  # -j 2, default reorder
    running, held = window_bounds(2, 2)
    assert provider.others_before_head == len(turns) - 1
    assert run.most_held == len(turns) > held  # parked beyond the in-memory bound
    assert run.stats.sessions == len(turns) and run.stats.summaries_ok > len(turns)
    sequential = HeadBlockingProvider(others=0)
    replay_to(tmp_path / "sequential", corpus, sequential, 1)
    parked_files = files_of(tmp_path / "out")
    assert parked_files == files_of(tmp_path / "sequential")
    assert sum(name.startswith("compressed/") for name in parked_files) == len(turns)
    assert not [p for p in (tmp_path / "out").rglob("*.tmp")]  # no file left aside


def test_an_aborted_run_leaves_no_parked_file_behind(tmp_path: Path) -> None:
    turns = (12, *([4] * 10))
    corpus = write_corpus(tmp_path / "corpus", turns)

    class FailingHead(HeadBlockingProvider):
        async def complete(
            self, prompt: str, model: str | None, max_tokens: int
        ) -> SummaryResponse:
            if _session_of(prompt) == "0" and len(self.answered) >= len(turns) - 1:
                raise KeyboardInterrupt  # what Ctrl-C does in the middle of a run
            return await super().complete(prompt, model, max_tokens)

    with pytest.raises(KeyboardInterrupt):
        _run_counting(tmp_path, corpus, FailingHead(others=len(turns) - 1, patience=20_000))
    assert not [p for p in (tmp_path / "out").rglob("*.tmp")]
    assert (tmp_path / "out" / "decisions.jsonl").read_bytes() == b""  # the head never ended


def test_reading_pauses_at_the_message_bound_whatever_the_session_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import transcript_tools.replay.driver as replay_module

    monkeypatch.setattr(replay_module, "HELD_MESSAGES", 60)
    turns = (30, *([4] * 20))  # the head alone holds 61 messages (system + 2 per turn)
    corpus = write_corpus(tmp_path / "corpus", turns)
    provider = HeadBlockingProvider(others=len(turns) - 1, patience=300)
    run = _run_counting(tmp_path, corpus, provider)
    # over the bound with the head alone: nothing else was read until it was written;
    # then 9-message conversations, read while fewer than 60 messages are held
    assert provider.others_before_head == 0 and run.most_held == 7
    assert run.stats.sessions == len(turns)
    monkeypatch.setattr(replay_module, "HELD_MESSAGES", 61 + 9 * 3)
    provider = HeadBlockingProvider(others=len(turns) - 1, patience=300)
    run = _run_counting(tmp_path / "again", corpus, provider)
    # the head and three more fit; each that ends is parked (bytes on disk), which frees
    # its messages for the next: all of them are answered while the head waits
    assert provider.others_before_head == len(turns) - 1
    assert run.most_held == len(turns) and run.stats.sessions == len(turns)
