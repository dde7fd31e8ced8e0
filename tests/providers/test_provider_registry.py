"""Providers register themselves; third-party ones come from a ``tsum.providers`` entry point."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from importlib import metadata
from typing import Any

import pytest

from transcript_tools.engine.requests import SummaryRequest, SummaryResponse
from transcript_tools.errors import ProviderConfigError
from transcript_tools.providers import registry
from transcript_tools.providers.executor import SummaryExecutor


class EchoProvider:
    """A third-party provider: the last line of the prompt, upper-cased."""

    name = "echo"
    key_env = None
    DEFAULT_MODEL = "echo-1"

    def __init__(self, model: str | None = None) -> None:
        self.model = model or self.DEFAULT_MODEL

    @classmethod
    def create(cls, *, model: str | None, **_: Any) -> EchoProvider:
        return cls(model)

    @property
    def default_model(self) -> str:
        return self.model

    def identity(self, model: str | None) -> dict[str, Any]:
        return {"provider": self.name, "model": model or self.model}

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        return SummaryResponse(prompt.splitlines()[-1].upper(), model or self.model)


class Misnamed(EchoProvider):
    name = "not-the-entry-point-name"


def entry_point(name: str, value: str) -> metadata.EntryPoint:
    return metadata.EntryPoint(name=name, value=value, group=registry.ENTRY_POINT_GROUP)


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[metadata.EntryPoint]]:
    """The installed ``tsum.providers`` entry points, as this test sets them."""
    installed: list[metadata.EntryPoint] = []

    def entry_points(*, group: str) -> list[metadata.EntryPoint]:
        return installed if group == registry.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    saved = dict(registry._registry)
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    yield installed
    registry._registry.clear()
    registry._registry.update(saved)


def test_builtin_providers_declare_themselves() -> None:
    assert registry.builtin_names() == ("offline", "anthropic", "openai")
    assert registry.DEFAULT_MODELS == {
        "offline": "extractive-v1",
        "anthropic": "claude-haiku-4-5",
        "openai": "gpt-4o-mini",
    }
    assert registry.KEY_ENVS["anthropic"] == "ANTHROPIC_API_KEY"
    assert registry.KEY_ENVS["offline"] is None
    for name in registry.builtin_names():
        cls = registry.provider_class(name)
        assert cls.name == name and callable(cls.create)


def test_a_third_party_provider_from_an_entry_point(plugins: list[metadata.EntryPoint]) -> None:
    plugins.append(entry_point("echo", f"{__name__}:EchoProvider"))
    assert "echo" in registry.provider_names()
    provider = registry.get_provider("echo", model="echo-2")
    assert isinstance(provider, EchoProvider) and provider.default_model == "echo-2"
    executor = SummaryExecutor(provider, cache=None, concurrency=1, timeout=None)
    outcome = asyncio.run(executor.execute(SummaryRequest("s", 3, "instructions\nhello")))
    assert outcome.ok and outcome.response is not None
    assert outcome.response.text == "HELLO"


def test_entry_points_are_read_only_for_unknown_names(plugins: list[metadata.EntryPoint]) -> None:
    plugins.append(entry_point("broken", "no_such_module_for_tsum:Provider"))
    assert registry.get_provider("offline").name == "offline"  # never touches the plug-ins
    with pytest.raises(ProviderConfigError, match="'broken'.*cannot be loaded"):
        registry.get_provider("broken")


def test_a_plugin_cannot_take_a_builtin_name(plugins: list[metadata.EntryPoint]) -> None:
    plugins.append(entry_point("offline", f"{__name__}:EchoProvider"))
    assert registry.provider_names().count("offline") == 1
    assert type(registry.get_provider("offline")).__name__ == "OfflineProvider"


def test_a_plugin_must_carry_its_entry_point_name(plugins: list[metadata.EntryPoint]) -> None:
    plugins.append(entry_point("echo", f"{__name__}:Misnamed"))
    with pytest.raises(ProviderConfigError, match="gives a provider named"):
        registry.get_provider("echo")


def test_unknown_provider_names_the_known_ones(plugins: list[metadata.EntryPoint]) -> None:
    with pytest.raises(
        ProviderConfigError, match="unknown provider 'gemini'.*offline, anthropic, openai"
    ):
        registry.get_provider("gemini")


def test_listing_providers_imports_no_sdk() -> None:
    code = (
        "import sys\n"
        "from transcript_tools.providers import registry\n"
        "registry.provider_names(); registry.DEFAULT_MODELS\n"
        "print(sorted(m for m in ('anthropic', 'openai', 'httpx2') if m in sys.modules))\n"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_provider_option_takes_a_plugin(
    plugins: list[metadata.EntryPoint], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--provider and TSUM_PROVIDER accept a provider registered through the entry point."""
    from pathlib import Path

    from click.testing import CliRunner

    from transcript_tools.cli.main import cli

    plugins.append(entry_point("echo", f"{__name__}:EchoProvider"))
    monkeypatch.delenv("TSUM_OFFLINE", raising=False)  # echo makes no network call
    sample = str(Path(__file__).resolve().parents[2] / "samples" / "long_session.jsonl")
    args = ["replay", sample, "--max-context-tokens", "20000", "--no-cache", "--silent"]
    result = CliRunner().invoke(cli, [*args, "--provider", "echo", "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    summaries = (tmp_path / "a" / "summaries.jsonl").read_text(encoding="utf-8")
    assert '"provider":"echo"' in summaries and '"model":"echo-1"' in summaries
    monkeypatch.setenv("TSUM_PROVIDER", "echo")
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    bad = CliRunner().invoke(cli, [*args, "--provider", "no-such-provider"])
    assert bad.exit_code == 2 and "'offline', 'anthropic', 'openai', 'echo'" in bad.output


def test_a_provider_config_error_is_a_config_error() -> None:
    import transcript_tools as tt

    assert issubclass(tt.ProviderConfigError, tt.ConfigError)
    with pytest.raises(tt.ConfigError, match="unknown provider"):
        registry.get_provider("no-such-provider")
