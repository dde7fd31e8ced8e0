"""The SQLite response cache: keys, modes' storage side, concurrency, interruption."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fake_llm_server import isolate_env
from transcript_tools.engine.messages import Usage
from transcript_tools.engine.requests import SummaryResponse
from transcript_tools.errors import ProviderConfigError
from transcript_tools.providers.cache import (
    CacheMode,
    ResponseCache,
    cache_key,
    default_cache_path,
)

IDENTITY = {
    "provider": "openai",
    "api": "chat.completions",
    "base_url": "http://x/v1",
    "model": "m",
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_env(monkeypatch, tmp_path / "home")


USAGE = Usage(10, 5)


def response(text: str = "a summary", usage: Usage | None = USAGE) -> SummaryResponse:
    return SummaryResponse(text=text, model="m-2025", usage=usage)


def test_put_get_round_trip(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite3") as cache:
        key = cache_key(IDENTITY, "prompt", 1024)
        assert cache.get(key) is None
        cache.put(key, IDENTITY, response())
        assert cache.get(key) == response()
        other = cache_key(IDENTITY, "prompt 2", 1024)
        cache.put(other, IDENTITY, response("no usage", usage=None))
        assert cache.get(other) == response("no usage", usage=None)
        assert len(cache) == 2


def test_put_overwrites_for_refresh(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite3") as cache:
        key = cache_key(IDENTITY, "prompt", 1024)
        cache.put(key, IDENTITY, response("old"))
        cache.put(key, IDENTITY, response("new"))
        assert cache.get(key).text == "new" and len(cache) == 1


def test_entries_persist_across_connections(tmp_path: Path) -> None:
    key = cache_key(IDENTITY, "prompt", 1024)
    with ResponseCache(tmp_path / "c.sqlite3") as cache:
        cache.put(key, IDENTITY, response())
    with ResponseCache(tmp_path / "c.sqlite3") as cache:
        assert cache.get(key) == response()


def test_key_covers_identity_prompt_and_max_tokens() -> None:
    base = cache_key(IDENTITY, "prompt", 1024)
    assert cache_key(dict(reversed(list(IDENTITY.items()))), "prompt", 1024) == base  # canonical
    assert cache_key({**IDENTITY, "model": "other"}, "prompt", 1024) != base
    assert cache_key({**IDENTITY, "base_url": "http://y/v1"}, "prompt", 1024) != base
    assert cache_key({**IDENTITY, "temperature": 0.0}, "prompt", 1024) != base
    assert cache_key(IDENTITY, "prompt ", 1024) != base  # the exact prompt
    assert cache_key(IDENTITY, "prompt", 512) != base
    assert len(base) == 64 and int(base, 16) >= 0


@settings(max_examples=50, deadline=None)
@given(text=st.text(min_size=1), prompt=st.text())
def test_any_text_round_trips(
    tmp_path_factory: pytest.TempPathFactory, text: str, prompt: str
) -> None:
    path = tmp_path_factory.mktemp("h") / "c.sqlite3"
    with ResponseCache(path) as cache:
        key = cache_key(IDENTITY, prompt, 1024)
        cache.put(key, IDENTITY, response(text))
        assert cache.get(key).text == text


def test_stats_and_clear(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite3") as cache:
        for i in range(3):
            cache.put(cache_key(IDENTITY, str(i), 1024), IDENTITY, response())
        anthropic = {"provider": "anthropic", "model": "claude-haiku-4-5"}
        cache.put(cache_key(anthropic, "x", 1024), anthropic, response())
        stats = cache.stats()
        assert stats.entries == 4 and stats.size_bytes > 0
        assert [(m.provider, m.model, m.entries) for m in stats.by_model] == [
            ("anthropic", "claude-haiku-4-5", 1),
            ("openai", "m", 3),
        ]
        assert stats.to_json()["by_model"][1] == {"provider": "openai", "model": "m", "entries": 3}
        assert cache.clear() == 4
        assert cache.stats().entries == 0 and cache.get(cache_key(IDENTITY, "0", 1024)) is None


def test_default_path_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert default_cache_path() == tmp_path / "home" / "cache.sqlite3"  # $TSUM_HOME
    monkeypatch.setenv("TSUM_CACHE", str(tmp_path / "explicit.db"))
    assert default_cache_path() == tmp_path / "explicit.db"
    monkeypatch.delenv("TSUM_CACHE")
    monkeypatch.delenv("TSUM_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert default_cache_path() == tmp_path / "user" / ".tsum" / "cache.sqlite3"


def test_creates_parent_dirs_wal_mode_and_owner_only_file(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "c.sqlite3"
    with ResponseCache(path):
        pass
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_file_that_is_not_a_cache_fails_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ProviderConfigError, match="cannot open the response cache.*--no-cache"):
        ResponseCache(path)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(ProviderConfigError, match="newer tsum"):
        ResponseCache(path)


def test_modes_are_a_string_enum() -> None:
    assert CacheMode("cache_only") is CacheMode.CACHE_ONLY
    assert [m.value for m in CacheMode] == ["read_write", "cache_only", "refresh", "off"]


def _writer(path: str, worker: int, count: int) -> None:
    cache = ResponseCache(path)
    for i in range(count):
        # Shared keys (every worker writes them) and private ones.
        shared = cache_key(IDENTITY, f"shared {i}", 1024)
        cache.put(shared, IDENTITY, response(f"shared {i}"))
        mine = cache_key(IDENTITY, f"worker {worker} item {i}", 1024)
        cache.put(mine, IDENTITY, response(f"worker {worker} item {i}"))
    cache.close()


def test_concurrent_writers_from_several_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "c.sqlite3")
    workers, count = 4, 40
    ctx = multiprocessing.get_context("spawn")  # fresh processes: no inherited connections
    processes = [ctx.Process(target=_writer, args=(path, w, count)) for w in range(workers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    with ResponseCache(path) as cache:
        assert len(cache) == count + workers * count
        for i in range(count):
            assert cache.get(cache_key(IDENTITY, f"shared {i}", 1024)).text == f"shared {i}"
            for w in range(workers):
                key = cache_key(IDENTITY, f"worker {w} item {i}", 1024)
                assert cache.get(key).text == f"worker {w} item {i}"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


_KILLED_WRITER = """
import sys
from transcript_tools.providers.base import SummaryResponse
from transcript_tools.providers.cache import ResponseCache, cache_key
cache = ResponseCache(sys.argv[1])
identity = {"provider": "openai", "model": "m"}
i = 0
while True:
    cache.put(cache_key(identity, str(i), 1024), identity, SummaryResponse("x" * 2000 + str(i), "m"))
    if i == 20:
        print("ready", flush=True)
    i += 1
"""


def test_kill_9_mid_write_leaves_a_valid_database(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    writer = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(path)],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(0.05)  # let it write some more, then kill it mid-transaction
        os.kill(writer.pid, signal.SIGKILL)
    finally:
        writer.wait(timeout=10)
        if writer.stdout is not None:
            writer.stdout.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with ResponseCache(path) as cache:
        entries = len(cache)
        assert entries > 20  # every committed put survived
        identity = {"provider": "openai", "model": "m"}
        for i in range(entries):
            hit = cache.get(cache_key(identity, str(i), 1024))
            assert hit is not None and hit.text.endswith(str(i))
