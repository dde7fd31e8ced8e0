"""What the ``--batch`` tests share (tests/providers/test_batch.py, test_batch_resume.py):
the two providers' flavours against ``FakeBatchServer``, a replay through the CLI, and its
records. ``network`` is an autouse fixture: a test module that imports it runs on 127.0.0.1
with fake keys and the kill switch lifted."""

from __future__ import annotations

import filecmp
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from tests.support.fake_batch_server import FakeBatchServer
from transcript_tools.cli.main import cli
from transcript_tools.providers.registry import get_provider

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
FAKE_KEY = "sk-test-SECRET123"


@pytest.fixture(autouse=True)
def network(monkeypatch: pytest.MonkeyPatch) -> None:
    """127.0.0.1 only: lift the kill switch, fake keys."""
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)


@dataclass(frozen=True)
class Flavor:
    name: str

    def args(self, server: FakeBatchServer) -> list[str]:
        if self.name == "anthropic":
            return ["--provider", "anthropic", "--base-url", server.url]
        return ["--provider", "openai", "--base-url", f"{server.url}/v1", "--model", "gpt-test"]

    def provider(self, server: FakeBatchServer) -> Any:
        if self.name == "anthropic":
            return get_provider("anthropic", base_url=server.url)
        return get_provider("openai", base_url=f"{server.url}/v1", model="gpt-test")


FLAVORS = pytest.mark.parametrize(
    "flavor", [Flavor("anthropic"), Flavor("openai")], ids=lambda f: f.name
)


def tsum(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def replay(
    flavor: Flavor,
    server: FakeBatchServer,
    tmp: Path,
    out: str,
    *extra: str,
    inputs: tuple[str, ...] = (str(SAMPLES),),
    batch: bool = True,
) -> Result:
    args = [
        "replay",
        *inputs,
        *flavor.args(server),
        "--cache",
        str(tmp / "cache.sqlite3"),
        "--out",
        str(tmp / out),
        "--max-context-tokens",
        "2000",
        *extra,
    ]
    if batch:
        args += ["--batch", "--batch-poll", "0.01"]
    return tsum(*args)


def summaries(out: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in (out / "summaries.jsonl").read_bytes().splitlines()]


def manifest(out: Path) -> dict[str, Any]:
    return orjson.loads((out / "manifest.json").read_bytes())


def same_outputs(a: Path, b: Path) -> bool:
    """Every diffable file byte-identical (manifest.json holds timings)."""
    names = sorted(
        p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.name != "manifest.json"
    )
    assert names == sorted(
        p.relative_to(b) for p in b.rglob("*") if p.is_file() and p.name != "manifest.json"
    )
    return all(filecmp.cmp(a / n, b / n, shallow=False) for n in names)
