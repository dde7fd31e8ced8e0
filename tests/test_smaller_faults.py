"""The smaller faults of a hostile-input probe: a ``--base-url`` with ``user:pass@``
reports the SDK's own error (not "invalid JSON"); the cache key keeps the base URL's
query (hashed); bidi and zero-width characters are escaped on a terminal; a Jinja render
is bounded in time; a SQLite table name is quoted in ``PRAGMA``."""

from __future__ import annotations

import os
import pty
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.corpus import FIXTURES, build_database
from tests.support.fake_llm_server import FakeLLMServer
from transcript_tools.cli.main import cli
from transcript_tools.engine import prompt as prompt_module
from transcript_tools.engine.prompt import PromptTemplate
from transcript_tools.errors import TemplateError
from transcript_tools.formats import read_conversations
from transcript_tools.formats.source import Source
from transcript_tools.providers.registry import get_provider
from transcript_tools.terminal import escape_invisible, for_stream

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "long_session.jsonl"
HIDDEN = "\u202e\u2066\u200b\u200d"  # right-to-left override, isolate, zero-width space, joiner


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.chdir(tmp_path)


def test_credentials_in_the_base_url_report_the_sdks_error(network: None, tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        url = server.openai_base_url.replace("http://", "http://user:s3cret@")
        args = ["replay", str(SAMPLE), "--provider", "openai", "--model", "m", "--base-url", url]
        args += ["--no-cache", "--max-attempts", "1", "--out", str(tmp_path / "out")]
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert server.count == 0  # nothing was sent
    assert result.exit_code == 3
    assert "invalid JSON" not in result.stderr and "s3cret" not in result.stderr
    assert f"openai: the request could not be sent to {server.openai_base_url} (ValueError: " in (
        result.stderr
    )


def test_endpoints_differing_by_query_do_not_share_cache_entries(network: None) -> None:
    def key_of(url: str) -> dict[str, object]:
        return dict(get_provider("openai", base_url=url, model="m").identity(None))

    plain = key_of("http://127.0.0.1:8000/v1")
    one, other = (
        key_of("http://127.0.0.1:8000/v1?tenant=a"),
        key_of("http://127.0.0.1:8000/v1?tenant=b"),
    )
    assert "base_url_query_sha256" not in plain  # no query: the key as before
    assert one["base_url_query_sha256"] != other["base_url_query_sha256"]
    assert "tenant=a" not in str(one)  # the query may be a secret: hashed

    with FakeLLMServer() as server:
        for query in ("?tenant=a", "?tenant=b", "?tenant=a"):
            args = ["replay", str(SAMPLE), "--provider", "openai", "--model", "m"]
            args += ["--base-url", server.openai_base_url + query, "--cache", "c.sqlite"]
            assert CliRunner().invoke(cli, args, catch_exceptions=False).exit_code == 0
        assert server.count == 2 * 5  # a and b each called; a's second run from the cache


class Terminal:
    def isatty(self) -> bool:
        return True


def test_invisible_characters_are_escaped_on_a_terminal_only() -> None:
    text = f"ok{HIDDEN}done"
    assert escape_invisible(text) == "ok\\u202e\\u2066\\u200b\\u200ddone"
    assert for_stream(text, Terminal()) == "ok\\u202e\\u2066\\u200b\\u200ddone"  # type: ignore[arg-type]
    assert for_stream(text, sys.stdout) == text  # a pipe or a file keeps the exact text


@pytest.mark.parametrize("command", ["replay", "inspect", "format", "prompt"])
def test_a_terminal_never_gets_bidi_or_zero_width_characters(tmp_path: Path, command: str) -> None:
    log = tmp_path / f"x{HIDDEN}y.jsonl"
    text = SAMPLE.read_text(encoding="utf-8").replace("flaky", f"fla{HIDDEN}ky")
    log.write_text(text, encoding="utf-8")
    main, replica = pty.openpty()
    code = "from transcript_tools.cli.main import main; main()"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TSUM_")}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            command,
            str(log),
            *(["--turn", "17"] if command in ("format", "prompt") else []),
        ],
        stdout=replica,
        stderr=subprocess.DEVNULL,
        env={**env, "COLUMNS": "300"},
        timeout=120,
        check=False,
    )
    os.close(replica)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert proc.returncode == 0
    out = shown.decode("utf-8", "replace")
    assert not any(char in out for char in HIDDEN)
    assert "\\u202e" in out


def test_a_render_that_runs_too_long_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prompt_module, "RENDER_SECONDS", 0.3)
    hang = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
    template = PromptTemplate("hang.j2", hang + "{{ messages }}")
    with pytest.raises(TemplateError, match=r"prompt hang.j2: rendering took over 0.3 s"):
        template.check()
    assert PromptTemplate("ok.j2", "Sum: {{ messages }}").render("x") == "Sum: x"


def test_a_table_name_with_a_quote_is_a_name_not_sql(tmp_path: Path) -> None:
    path = build_database(FIXTURES / "representative_opencode_go.sql", tmp_path / "opencode.db")
    with sqlite3.connect(path) as con:
        con.execute('CREATE TABLE "odd"")name" (id INTEGER)')
    sessions = list(read_conversations(Source(str(path))))
    assert sessions and all(conv.format == "opencode-db" for conv in sessions)
