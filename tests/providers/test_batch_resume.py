"""``--batch`` interrupted and resumed: kill -9 / Ctrl-C while polling, batches the API
no longer knows, ``tsum batch list|cancel`` — against the fake batch APIs (127.0.0.1)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.batch_runs import SAMPLES, Flavor, manifest, network, replay, summaries, tsum
from tests.support.fake_batch_server import FakeBatchServer
from transcript_tools.providers.batch import batch_client
from transcript_tools.providers.batch.base import BatchItem
from transcript_tools.providers.batch.store import BatchStore
from transcript_tools.providers.cache import cache_key

__all__ = ["network"]  # the autouse fixture: kill switch off, fake keys


def test_batch_list_and_cancel(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite3"
    with FakeBatchServer(hold=True) as server:
        provider = Flavor("anthropic").provider(server)
        key = cache_key(provider.identity(None), "p", 1024)

        async def submit() -> str:
            try:
                client = batch_client(provider)
                return await client.submit(
                    [client.encode(BatchItem(key, "p", provider.default_model, 1024))]
                )
            finally:
                await provider.aclose()

        batch_id = asyncio.run(submit())
        with BatchStore(cache) as store:
            store.record_batch(batch_id, "anthropic", server.url, [(key, provider.identity(None))])
        listed = tsum("batch", "list", "--cache", str(cache))
        assert listed.exit_code == 0 and listed.stdout.startswith(
            f"{batch_id}\tanthropic\tsubmitted"
        )
        cancelled = tsum("batch", "cancel", "--cache", str(cache))
        assert cancelled.exit_code == 0, cancelled.stderr
        assert cancelled.stdout.strip() == f"{batch_id}\tended"
        assert server.state.batches[batch_id].cancelled
    with BatchStore(cache) as store:
        assert store.in_flight()[0].state == "cancelling"  # the next run still reads what finished
    unknown = tsum("batch", "cancel", "nope", "--cache", str(cache))
    assert unknown.exit_code == 2 and "no batch nope" in unknown.stderr


@pytest.mark.parametrize(
    ("flavor", "signal_name"),
    [
        (Flavor("anthropic"), "SIGKILL"),
        (Flavor("openai"), "SIGKILL"),
        (Flavor("anthropic"), "SIGINT"),
    ],
    ids=["anthropic-kill-9", "openai-kill-9", "anthropic-ctrl-c"],
)
def test_killed_while_polling_the_same_command_resumes_the_same_batches(
    flavor: Flavor, signal_name: str, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    long = str(SAMPLES / "long_session.jsonl")
    root = Path(__file__).resolve().parents[2]
    with FakeBatchServer(hold=True) as server:
        args = [
            "replay",
            long,
            *flavor.args(server),
            "--cache",
            str(tmp_path / "cache.sqlite3"),
            "--out",
            str(tmp_path / "out"),
            "--max-context-tokens",
            "2000",
            "--batch",
            "--batch-poll",
            "0.05",
        ]
        env = {k: v for k, v in os.environ.items() if k != "TSUM_OFFLINE"}
        # Ctrl-C as a terminal delivers it, whatever SIGINT disposition pytest inherited: a
        # background job of a non-interactive shell starts with SIGINT ignored, and Python
        # then installs no KeyboardInterrupt handler, so the child restores it first.
        code = (
            "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from transcript_tools.cli.main import main; main()"
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while server.polls < 3 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            assert server.polls >= 3, proc.stderr.read() if proc.poll() is not None else "no polls"
            proc.send_signal(getattr(signal, signal_name))
            _, stderr = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        before = server.creates
        assert len(before) == 1
        if signal_name == "SIGINT":
            assert proc.returncode == 130 and f"({before[0]})" in stderr and "resumes" in stderr
        else:
            assert proc.returncode == -signal.SIGKILL
        with BatchStore(tmp_path / "cache.sqlite3") as store:
            assert [b.batch_id for b in store.in_flight()] == before  # recorded before waiting

        server.release()
        rerun = tsum(*args)
        assert rerun.exit_code == 0, rerun.stderr
        assert server.creates == before  # zero new submissions
    assert f"resuming 1 batch(es) in flight: {before[0]}" in rerun.stderr
    records = summaries(tmp_path / "out")
    assert len(records) == 5 and all(s["status"] == "ok" for s in records)
    assert manifest(tmp_path / "out")["batch"]["batches_resumed"] == before


def test_a_batch_the_api_no_longer_knows_is_ended_and_its_requests_go_out_again(
    tmp_path: Path,
) -> None:
    with FakeBatchServer() as server:
        with BatchStore(tmp_path / "cache.sqlite3") as store:
            store.record_batch("msgbatch_gone", "anthropic", server.url, [("c" * 64, {"x": 1})])
        result = replay(Flavor("anthropic"), server, tmp_path, "out")
        assert result.exit_code == 0, result.stderr
    assert "resuming 1 batch(es) in flight: msgbatch_gone" in result.stderr
    assert "msgbatch_gone not found: 0 ok, 1 failed" in result.stderr
    with BatchStore(tmp_path / "cache.sqlite3") as store:
        assert store.in_flight() == []
