"""``--batch`` through the real SDKs against fake batch APIs of both providers (127.0.0.1).

No patching of SDK internals: ``FakeBatchServer`` answers every request as a pure
function of the prompt, for the batch endpoints and the synchronous ones alike, so
a batch run and a synchronous run can be compared byte for byte.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.batch_runs import (
    FAKE_KEY,
    FLAVORS,
    SAMPLES,
    Flavor,
    manifest,
    network,
    replay,
    same_outputs,
    summaries,
    tsum,
)
from tests.support.fake_batch_server import FakeBatchServer, reply_text
from transcript_tools.providers.batch import batch_client
from transcript_tools.providers.batch.base import BatchItem
from transcript_tools.providers.batch.store import BatchStore

__all__ = ["network"]  # the autouse fixture: imported, it applies to this module's tests


# ---- the clients -----------------------------------------------------------------------


@FLAVORS
def test_client_submit_poll_results_with_a_request_that_errors(flavor: Flavor) -> None:
    fail: Callable[[str], str | None] = lambda p: "invalid_request_error" if "BAD" in p else None  # noqa: E731
    with FakeBatchServer(hold=True, fail=fail) as server:
        provider = flavor.provider(server)
        client = batch_client(provider)
        model = provider.default_model
        items = [
            BatchItem("a" * 64, "summarize GOOD", model, 1024),
            BatchItem("b" * 64, "summarize BAD", model, 1024),
        ]

        async def go() -> tuple[Any, Any, list[Any]]:
            try:
                batch_id = await client.submit([client.encode(i) for i in items])
                before = await client.poll(batch_id)
                server.release()
                after = await client.poll(batch_id)
                return before, after, [r async for r in client.results(batch_id)]
            finally:
                await provider.aclose()

        before, after, results = asyncio.run(go())
        [batch] = server.state.batches.values()
    assert not before.ended and after.ended
    by_id = {r.custom_id: r for r in results}
    assert by_id["a" * 64].response.text == reply_text("summarize GOOD")
    assert by_id["a" * 64].response.usage.output_tokens == 9
    assert by_id["b" * 64].response is None and "invalid_request_error" in by_id["b" * 64].error
    # the synchronous call's body, as-is: one user message, max_tokens 1024, the model
    body = batch.requests[0][1]
    assert body["messages"] == [{"role": "user", "content": "summarize GOOD"}]
    assert body["model"] == model and body["max_tokens"] == 1024 and "tools" not in body


# ---- replay --batch --------------------------------------------------------------------


@FLAVORS
def test_batch_outputs_are_byte_identical_to_the_synchronous_path(
    flavor: Flavor, tmp_path: Path
) -> None:
    with FakeBatchServer() as server:
        batched = replay(flavor, server, tmp_path / "b", "out")
        assert batched.exit_code == 0, batched.stderr
        assert server.creates and server.sync_calls == 0
        synced = replay(flavor, server, tmp_path / "s", "out", batch=False)  # its own cache
        assert synced.exit_code == 0, synced.stderr
        assert server.sync_calls > 0
    assert same_outputs(tmp_path / "b" / "out", tmp_path / "s" / "out")
    assert len(summaries(tmp_path / "b" / "out")) == 7
    # cumulative measure: estimated usage (one session) never depends on summaries either,
    # so every firing of every session is planned in the first round
    assert "batch: 1 round(s)" in batched.stderr
    assert FAKE_KEY not in batched.stderr + batched.stdout
    assert FAKE_KEY.encode() not in (tmp_path / "b" / "cache.sqlite3").read_bytes()


@FLAVORS
def test_batch_then_sync_then_batch_make_zero_calls(flavor: Flavor, tmp_path: Path) -> None:
    with FakeBatchServer() as server:
        assert replay(flavor, server, tmp_path, "one").exit_code == 0
        creates = len(server.creates)
        assert replay(flavor, server, tmp_path, "two", batch=False).exit_code == 0
        assert server.sync_calls == 0
        third = replay(flavor, server, tmp_path, "three")
        assert third.exit_code == 0 and len(server.creates) == creates and server.sync_calls == 0
    assert "0 round(s)" in third.stderr
    assert same_outputs(tmp_path / "one", tmp_path / "two") and same_outputs(
        tmp_path / "one", tmp_path / "three"
    )


@FLAVORS
def test_sync_then_batch_makes_zero_calls(flavor: Flavor, tmp_path: Path) -> None:
    with FakeBatchServer() as server:
        assert replay(flavor, server, tmp_path, "one", batch=False).exit_code == 0
        calls = server.sync_calls
        assert replay(flavor, server, tmp_path, "two").exit_code == 0
        assert server.creates == [] and server.sync_calls == calls
    assert same_outputs(tmp_path / "one", tmp_path / "two")


def test_a_text_independent_schedule_is_one_batch_plus_one_per_failure(tmp_path: Path) -> None:
    flavor = Flavor("anthropic")
    long = str(SAMPLES / "long_session.jsonl")  # recorded usage, cumulative measure
    with FakeBatchServer() as server:
        first = replay(flavor, server, tmp_path, "a", inputs=(long,))
        assert first.exit_code == 0, first.stderr
        assert len(server.creates) == 1 and "batch: 1 round(s)" in first.stderr
    assert manifest(tmp_path / "a")["batch"]["planned_ahead"] is True

    # the firing at turn 6 errors: the schedule after it is redone in a second batch
    bad = [s for s in summaries(tmp_path / "a") if s["turn"] == 6][0]["prompt_sha256"]
    prompts = {
        orjson.loads(x)["sha256"]: orjson.loads(x)["text"]
        for x in (tmp_path / "a" / "prompts.jsonl").read_bytes().splitlines()
    }
    fail: Callable[[str], str | None] = lambda p: "overloaded_error" if p == prompts[bad] else None  # noqa: E731
    with FakeBatchServer(fail=fail) as server:
        second = replay(flavor, server, tmp_path / "fresh", "b", inputs=(long,))
        assert second.exit_code == 0, second.stderr
        assert len(server.creates) == 2 and "batch: 2 round(s)" in second.stderr
    records = summaries(tmp_path / "fresh" / "b")
    failed = [s for s in records if s["status"] == "failed"]
    assert [s["turn"] for s in failed] == [6] and "overloaded_error" in failed[0]["error"]
    assert [s["turn"] for s in records] == [3, 6, 7, 10, 13, 16]  # N3: the next turn tries again


def test_a_template_reading_previous_summary_goes_one_firing_per_round(tmp_path: Path) -> None:
    template = tmp_path / "t.j2"
    template.write_text("Before: {{ previous_summary }}\n<messages>\n{{ messages }}\n</messages>\n")
    with FakeBatchServer() as server:
        result = replay(
            Flavor("anthropic"),
            server,
            tmp_path,
            "out",
            "--prompt",
            str(template),
            inputs=(str(SAMPLES / "long_session.jsonl"),),
        )
        assert result.exit_code == 0, result.stderr
        assert len(server.creates) == 5 and "batch: 5 round(s)" in result.stderr
    texts = [s["text"] for s in summaries(tmp_path / "out")]
    assert len(texts) == 5 and all(texts)


def test_batches_are_split_at_the_request_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TSUM_BATCH_MAX_REQUESTS", "2")
    with FakeBatchServer() as server:
        result = replay(
            Flavor("openai"), server, tmp_path, "out", inputs=(str(SAMPLES / "long_session.jsonl"),)
        )
        assert result.exit_code == 0, result.stderr
        sizes = [len(b.requests) for b in server.state.batches.values()]
    assert sizes == [2, 2, 1] and "1 round(s)" in result.stderr


@FLAVORS
def test_an_expired_batch_gives_failure_records_and_the_next_run_resubmits(
    flavor: Flavor, tmp_path: Path
) -> None:
    long = (str(SAMPLES / "long_session.jsonl"),)
    with FakeBatchServer(expire=True) as server:
        first = replay(flavor, server, tmp_path, "a", inputs=long)
        assert first.exit_code == 3  # every summary failed: the run must not pass silently
    records = summaries(tmp_path / "a")
    assert records and all(s["status"] == "failed" and "expired" in s["error"] for s in records)
    with BatchStore(tmp_path / "cache.sqlite3") as store:
        assert store.in_flight() == [] and all(b.failed == b.requests for b in store.batches())
    with FakeBatchServer() as server:
        second = replay(flavor, server, tmp_path, "b", inputs=long)
        assert second.exit_code == 0, second.stderr
        assert server.creates  # resubmitted
    assert all(s["status"] == "ok" for s in summaries(tmp_path / "b"))


def test_cost_line_gives_batch_and_synchronous_prices(tmp_path: Path) -> None:
    with FakeBatchServer() as server:
        result = replay(Flavor("anthropic"), server, tmp_path, "out", "--price-per-mtok", "3/15")
    assert "at batch prices (synchronous: $" in result.stderr
    cost = manifest(tmp_path / "out")["cost"]
    assert (
        cost["batch_usd"] * 2 == pytest.approx(cost["synchronous_usd"], abs=1e-5)
        and cost["batch_usd"] > 0
    )


def test_batch_needs_a_provider_with_a_batch_api(tmp_path: Path) -> None:
    result = tsum("replay", str(SAMPLES), "--batch", "--cache", str(tmp_path / "c.sqlite3"))
    assert result.exit_code == 2
    assert (
        result.stderr.strip().count("\n") == 0 and "--provider anthropic or openai" in result.stderr
    )


def test_batch_with_the_default_provider_names_the_provider_not_cache_flags() -> None:
    result = tsum("replay", str(SAMPLES / "long_session.jsonl"), "--batch")  # a first try
    assert result.exit_code == 2
    assert result.stderr == (
        "tsum: error: --batch needs --provider anthropic or openai "
        "(the offline provider has no batch API)\n"
    )  # never "drop --no-cache, --cache-only and --refresh", none of which was given


def test_batch_refuses_cache_only(tmp_path: Path) -> None:
    with FakeBatchServer() as server:
        result = tsum(
            "replay",
            str(SAMPLES),
            *Flavor("anthropic").args(server),
            "--batch",
            "--cache-only",
            "--cache",
            str(tmp_path / "c.sqlite3"),
        )
    assert result.exit_code == 2 and "--batch reads and writes the response cache" in result.stderr


def test_check_takes_batch_too(tmp_path: Path) -> None:
    flavor = Flavor("openai")
    with FakeBatchServer() as server:
        common = [
            str(SAMPLES / "long_session.jsonl"),
            *flavor.args(server),
            "--cache",
            str(tmp_path / "cache.sqlite3"),
            "--baseline",
            str(tmp_path / "base"),
            "--max-context-tokens",
            "2000",
            "--batch",
            "--batch-poll",
            "0.01",
        ]
        first = tsum("check", *common, "--update")
        assert first.exit_code == 0, first.stderr
        assert len(server.creates) == 1 and server.sync_calls == 0
        second = tsum("check", *common)
        assert second.exit_code == 0, second.stderr
        assert len(server.creates) == 1 and server.sync_calls == 0
    assert "no differences" in second.stderr


def test_eval_takes_batch_too(tmp_path: Path) -> None:
    """eval --batch: the summaries come from the batch API (no synchronous call), and a
    rerun finds them all in the cache (no new batch)."""
    flavor = Flavor("anthropic")
    with FakeBatchServer() as server:
        common = [
            str(SAMPLES / "long_session.jsonl"),
            *flavor.args(server),
            "--cache",
            str(tmp_path / "cache.sqlite3"),
            "--max-context-tokens",
            "2000",
            "--batch",
            "--batch-poll",
            "0.01",
        ]
        first = tsum("eval", *common, "--json")
        assert first.exit_code == 0, first.stderr
        assert len(server.creates) >= 1 and server.sync_calls == 0
        scored = orjson.loads(first.stdout)
        batches = len(server.creates)
        second = tsum("eval", *common, "--json")
        assert second.exit_code == 0, second.stderr
        assert server.sync_calls == 0 and len(server.creates) == batches
    assert orjson.loads(second.stdout) == scored


def test_prices() -> None:
    from transcript_tools.engine.messages import Usage
    from transcript_tools.errors import ConfigError
    from transcript_tools.providers.batch.pricing import cost_report, price_for

    override = price_for("claude-haiku-4-5", "3/15/0.3/3.75")
    assert override is not None and override[1] == "--price-per-mtok"
    for bad in ("x", "1/2/3", "-1"):
        with pytest.raises(ConfigError):
            price_for(None, bad)
    dated = price_for("claude-haiku-4-5-20251001", None)
    assert dated is not None and dated[0].input == 1.0 and "as of" in dated[1]
    assert price_for("some-local-model", None) is None and price_for(None, None) is None
    # 1M input at $3 + 100k output at $15 = $4.50; the cache rates do not apply
    words, entry = cost_report(Usage(1_000_000, 100_000), override, batch=True)
    assert entry["synchronous_usd"] == 4.5 and entry["batch_usd"] == 2.25 == entry["paid_usd"]
    assert entry["price_per_mtok"] == {"input": 3.0, "output": 15.0}
    assert words == "cost $2.2500 at batch prices (synchronous: $4.5000) [--price-per-mtok]"


@FLAVORS
def test_a_refused_submission_is_retried(flavor: Flavor, tmp_path: Path) -> None:
    long = (str(SAMPLES / "long_session.jsonl"),)
    with FakeBatchServer(refuse=1) as server:
        result = replay(flavor, server, tmp_path, "out", inputs=long)
        assert result.exit_code == 0, result.stderr
        assert len(server.creates) == 1  # the 429 created nothing; the retry did
    assert all(s["status"] == "ok" for s in summaries(tmp_path / "out"))


@pytest.mark.parametrize("extra", [["--measure", "current"], ["--prompt", "PREVIOUS"]])
def test_a_schedule_that_depends_on_summaries_gives_the_synchronous_outputs(
    extra: list[str], tmp_path: Path
) -> None:
    if extra[-1] == "PREVIOUS":
        template = tmp_path / "t.j2"
        template.write_text(
            "Before: {{ previous_summary }}\n<messages>\n{{ messages }}\n</messages>\n"
        )
        extra = ["--prompt", str(template)]
    flavor = Flavor("openai")
    with FakeBatchServer() as server:
        batched = replay(flavor, server, tmp_path / "b", "out", *extra)
        assert batched.exit_code == 0, batched.stderr
        synced = replay(flavor, server, tmp_path / "s", "out", *extra, batch=False)
        assert synced.exit_code == 0, synced.stderr
    assert manifest(tmp_path / "b" / "out")["batch"]["planned_ahead"] is False
    assert same_outputs(tmp_path / "b" / "out", tmp_path / "s" / "out")


def test_a_refused_batch_result_keeps_its_billed_usage() -> None:
    """A batch request whose answer is a refusal is a failed summary, billed all the same:
    its usage travels with the failure (``BatchReplay._collect`` adds it to the report)."""
    from tests.support.fake_llm_server import anthropic_message, openai_completion
    from transcript_tools.providers.batch import anthropic_batch, openai_batch
    from transcript_tools.providers.sdk import json_namespace

    refused = anthropic_message([], stop_reason="refusal", input_tokens=40, output_tokens=3)
    line = {"custom_id": "k1", "result": {"type": "succeeded", "message": refused}}
    result = anthropic_batch._result(json_namespace(line), "m")
    assert result.response is None and result.error and "refused" in result.error
    assert result.usage is not None and (result.usage.input_tokens, result.usage.output_tokens) == (
        40,
        3,
    )
    body = openai_completion(None, refusal="no", prompt_tokens=40, completion_tokens=3)
    line = {"custom_id": "k2", "response": {"status_code": 200, "body": body}}
    result = openai_batch._result(line, "m")
    assert result.response is None and result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (40, 3)


@FLAVORS
def test_a_refused_submission_waits_for_the_retry_after(flavor: Flavor, tmp_path: Path) -> None:
    """A 429 that says when to come back is retried then, not at the poll interval
    (0.01 s here): eight quick retries inside the server's 3 s would fail the run."""
    long = (str(SAMPLES / "long_session.jsonl"),)
    with FakeBatchServer(refuse_for=3.0) as server:
        result = replay(flavor, server, tmp_path, "out", inputs=long)
        assert result.exit_code == 0, result.stderr
        assert len(server.creates) == 1
    assert all(s["status"] == "ok" for s in summaries(tmp_path / "out"))


@FLAVORS
def test_requests_another_run_sent_while_this_one_planned_are_not_sent_again(
    flavor: Flavor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs sharing a cache: the other one submits this round's requests after this
    run read the batches in flight and before it submits. They are not paid twice: this
    run waits for the other run's batch, as after a resume."""
    from transcript_tools.replay.batch import BatchReplay

    plan = BatchReplay._plan
    others: list[str] = []

    async def plan_then_race(self: BatchReplay, paths: list[str]) -> None:
        await plan(self, paths)
        if not others and self._batch:  # the other run, between this plan and its submit
            others.append(await self.client.submit(list(self._batch)))
            pending = zip(self._keys, self._identities, strict=True)
            self.store.record_batch(others[0], self.provider.name, self.base_url, pending)

    monkeypatch.setattr(BatchReplay, "_plan", plan_then_race)
    long = (str(SAMPLES / "long_session.jsonl"),)
    with FakeBatchServer() as server:
        result = replay(flavor, server, tmp_path, "out", inputs=long)
        assert result.exit_code == 0, result.stderr
        assert server.creates == others  # only the other run's batch: nothing sent twice
    records = summaries(tmp_path / "out")
    assert records and all(s["status"] == "ok" for s in records)


@FLAVORS
def test_a_results_stream_cut_off_and_read_again_counts_its_tokens_once(
    flavor: Flavor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection drops after the first result: the batch is polled and read again,
    and the tokens of the results read twice are counted once (they were paid once)."""
    from transcript_tools.providers.batch import anthropic_batch, openai_batch
    from transcript_tools.providers.retry import ProviderCallError

    cls: Any = anthropic_batch.AnthropicBatchClient
    if flavor.name == "openai":
        cls = openai_batch.OpenAIBatchClient
    results = cls.results
    cut: list[str] = []

    async def cut_once(self: Any, batch_id: str) -> Any:
        async for result in results(self, batch_id):
            yield result
            if not cut:
                cut.append(batch_id)
                raise ProviderCallError("connection error (ReadError)", retryable=True)

    monkeypatch.setattr(cls, "results", cut_once)
    long = (str(SAMPLES / "long_session.jsonl"),)
    with FakeBatchServer() as server:
        result = replay(flavor, server, tmp_path, "out", inputs=long)
        assert result.exit_code == 0, result.stderr
    assert cut
    records = summaries(tmp_path / "out")
    assert records and all(s["status"] == "ok" for s in records)
    paid = sum(s["usage"]["input_tokens"] for s in records)
    batch = manifest(tmp_path / "out")["batch"]
    assert batch["results_ok"] == len(records)
    assert batch["input_tokens"] == paid


def test_a_batch_the_cache_cannot_record_is_named_not_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API accepted the batch, the cache database refused its record (locked past
    the busy timeout, disk full): the error names the batch, which no run would collect."""
    import sqlite3

    def locked(*args: Any, **kwargs: Any) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(BatchStore, "record_batch", locked)
    long = (str(SAMPLES / "long_session.jsonl"),)
    with FakeBatchServer() as server:
        result = replay(Flavor("anthropic"), server, tmp_path, "out", inputs=long)
        [batch_id] = server.creates
    assert result.exit_code == 3, result.stderr  # a failed run, not tsum's bug (4)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert f"batch {batch_id} (" in result.stderr and "database is locked" in result.stderr
