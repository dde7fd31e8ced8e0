"""Shared fixtures."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class TextSnapshotExtension(SingleFileSnapshotExtension):
    """One human-readable UTF-8 ``.txt`` file per snapshot (STYLE: reviewable in a diff)."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshotExtension)


@pytest.fixture(autouse=True)
def clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No keys, no TSUM_* settings from the developer's shell, a private home, network providers off."""
    import os

    for name in list(os.environ):
        if name.startswith("TSUM_") or name in (
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "ANTHROPIC_BASE_URL",
        ):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TSUM_HOME", str(tmp_path_factory.mktemp("tsum-home")))
    monkeypatch.setenv("TSUM_OFFLINE", "1")
