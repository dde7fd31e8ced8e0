"""Format and policy plug-ins through entry points (``tsum.formats``, ``tsum.policies``).

Nothing is installed: ``importlib.metadata.entry_points`` is replaced by the fake entry
points of each test, as tests/providers/test_provider_registry.py does for providers. The
entry points name objects of this module (``tests.test_plugins:...``), loaded by
``EntryPoint.load`` the way an installed package's are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from transcript_tools import formats
from transcript_tools.cli.main import cli
from transcript_tools.engine.messages import AssistantMessage, Conversation, UserMessage
from transcript_tools.engine.policy_toml import parse_policy, preset_names
from transcript_tools.formats.source import Record, Source
from transcript_tools.plugins import FORMATS_GROUP, POLICIES_GROUP


# ---- a team's own log format: JSONL records {"team_log": 1, "who": ..., "said": ...} --------
def _sniff(head: list[Record]) -> bool:
    return bool(head) and head[0].obj.get("team_log") == 1


def _read(records: Iterator[Record], source: Source) -> Iterator[Conversation]:
    messages: list[Any] = []
    for record in records:
        said = record.obj["said"]
        who = record.obj["who"]
        messages.append(UserMessage.text(said) if who == "person" else AssistantMessage.text(said))
    yield Conversation(Path(source.path).stem, source.path, "team-log", messages)


TEAM_LOG = SimpleNamespace(NAME="team-log", DESCRIPTION="a team's JSONL", sniff=_sniff, read=_read)


# ---- and a plain-text one: "> " lines are the person's, the others the assistant's ----------
def _sniff_text(head: bytes) -> bool:
    return head.startswith(b"#team-chat\n")


def _read_text(text: str, source: Source) -> Iterator[Conversation]:
    lines = [line for line in text.splitlines()[1:] if line]
    messages: list[Any] = [
        UserMessage.text(line[2:]) if line.startswith("> ") else AssistantMessage.text(line)
        for line in lines
    ]
    yield Conversation("chat", source.path, "team-chat", messages)


TEAM_CHAT = SimpleNamespace(
    NAME="team-chat", DESCRIPTION="a chat log", sniff_text=_sniff_text, read_text=_read_text
)
MISNAMED = SimpleNamespace(NAME="other", sniff=_sniff, read=_read)

TEAM_POLICY = parse_policy(
    'name = "team"\ndescription = "our agent"\nextends = "codex"\n', "team", default_name="team"
)
NOT_A_POLICY = 42


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[metadata.EntryPoint]]:
    """The entry points a test installs, by group."""
    groups: dict[str, list[metadata.EntryPoint]] = {FORMATS_GROUP: [], POLICIES_GROUP: []}

    def entry_points(*, group: str) -> list[metadata.EntryPoint]:
        return groups.get(group, [])

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    monkeypatch.setattr(formats, "_plugins", None)  # read again under this test's plug-ins
    return groups


def install(groups: dict[str, list[metadata.EntryPoint]], group: str, name: str, obj: str) -> None:
    groups[group].append(metadata.EntryPoint(name, f"{__name__}:{obj}", group))


def tsum(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def write_team_log(path: Path) -> Path:
    lines = [
        {"team_log": 1, "who": "person", "said": "fix the build"},
        {"team_log": 1, "who": "agent", "said": "done"},
        {"team_log": 1, "who": "person", "said": "thanks"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_inspect_reads_a_file_in_a_plugin_format(
    installed: dict[str, list[metadata.EntryPoint]], tmp_path: Path
) -> None:
    log = write_team_log(tmp_path / "build.jsonl")
    before = tsum("inspect", str(log))
    assert before.exit_code == 3 and "cannot tell the format" in before.stderr  # no reader
    install(installed, FORMATS_GROUP, "team-log", "TEAM_LOG")
    formats._plugins = None  # read once per process: read again (the fixture restores it)
    result = tsum("inspect", str(log), "--json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert (row["format"], row["session_id"], row["turns"]) == ("team-log", "build", 2)
    assert row["messages"]["user"] == 2 and row["messages"]["assistant"] == 1
    forced = tsum("inspect", str(log), "--format", "team-log", "--json")
    assert json.loads(forced.stdout)[0]["format"] == "team-log"


def test_a_plugin_text_format_is_detected_and_read(
    installed: dict[str, list[metadata.EntryPoint]], tmp_path: Path
) -> None:
    install(installed, FORMATS_GROUP, "team-chat", "TEAM_CHAT")
    chat = tmp_path / "chat.txt"
    chat.write_text("#team-chat\n> hello\nhi there\n> bye\n")
    [row] = json.loads(tsum("inspect", str(chat), "--json").stdout)
    assert (row["format"], row["turns"], row["messages"]["total"]) == ("team-chat", 2, 3)


def test_format_help_and_choices_include_plugins(
    installed: dict[str, list[metadata.EntryPoint]],
) -> None:
    install(installed, FORMATS_GROUP, "team-log", "TEAM_LOG")
    install(installed, FORMATS_GROUP, "native", "TEAM_LOG")  # a built-in name: never taken
    flat = " ".join(tsum("replay", "--help").stdout.split())
    assert " trajectory, team-log." in flat
    assert formats.reader_names()[-1] == "team-log"
    assert formats.reader_names().count("native") == 1
    assert formats.get_reader("native").__name__ == "transcript_tools.formats.native"
    unknown = CliRunner().invoke(cli, ["inspect", "x", "--format", "nope"])
    assert unknown.exit_code == 2 and "team-log" in unknown.stderr


def test_a_broken_or_misnamed_format_plugin_is_one_line(
    installed: dict[str, list[metadata.EntryPoint]], tmp_path: Path
) -> None:
    log = write_team_log(tmp_path / "build.jsonl")
    install(installed, FORMATS_GROUP, "other-name", "MISNAMED")
    result = CliRunner().invoke(cli, ["inspect", str(log)])
    assert result.exit_code == 2
    assert "format plug-in 'other-name' (tsum.formats): its reader is named 'other'" in (
        result.stderr
    )
    installed[FORMATS_GROUP][:] = []
    install(installed, FORMATS_GROUP, "gone", "NO_SUCH_READER")
    formats._plugins = None
    result = CliRunner().invoke(cli, ["inspect", str(log)])
    assert (
        result.exit_code == 2
        and "'gone'" in result.stderr
        and "cannot be loaded" in (result.stderr)
    )


def test_policies_list_shows_a_plugin_policy(
    installed: dict[str, list[metadata.EntryPoint]],
) -> None:
    install(installed, POLICIES_GROUP, "team", "TEAM_POLICY")
    install(installed, POLICIES_GROUP, "codex", "TEAM_POLICY")  # a preset's name: never taken
    rows = [line.split("\t") for line in tsum("policies", "list").stdout.splitlines()]
    assert [row[0] for row in rows] == [*preset_names(), "team"]
    assert rows[-1][1] == "our agent"
    codex = next(row for row in rows if row[0] == "codex")
    assert codex[1] != "our agent"
    shown = tsum("policies", "show", "team").stdout
    assert shown.startswith('name = "team"\n') and 'description = "our agent"' in shown


def test_a_plugin_policy_may_be_a_toml_path(
    installed: dict[str, list[metadata.EntryPoint]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = tmp_path / "lean.toml"
    toml.write_text('description = "lean"\nextends = "seed"\n\n[trigger]\nratio = 0.5\n')
    monkeypatch.setattr(f"{__name__}.POLICY_PATH", str(toml), raising=False)
    install(installed, POLICIES_GROUP, "lean", "POLICY_PATH")
    result = tsum("replay", "samples/long_session.jsonl", "--dry-run", "--policy", "lean")
    assert result.exit_code == 0, result.output
    rows = dict(line.split("\t")[:2] for line in tsum("policies", "list").stdout.splitlines())
    assert rows["lean"] == "lean"


def test_a_plugin_that_is_not_a_policy_is_one_line(
    installed: dict[str, list[metadata.EntryPoint]],
) -> None:
    install(installed, POLICIES_GROUP, "odd", "NOT_A_POLICY")
    result = CliRunner().invoke(cli, ["policies", "list"])
    assert result.exit_code == 2
    assert "policy plug-in 'odd' (tsum.policies): gives a int, not a Policy nor a path" in (
        result.stderr
    )


def test_logs_the_builtin_readers_take_never_read_the_entry_points(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def entry_points(*, group: str) -> list[metadata.EntryPoint]:
        if group in (FORMATS_GROUP, POLICIES_GROUP):
            raise AssertionError(f"entry points of {group} read")
        return []

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    monkeypatch.setattr(formats, "_plugins", None)
    result = tsum("replay", "samples/", "--policy", "codex")
    assert result.exit_code == 0, result.output
    assert formats._plugins is None
