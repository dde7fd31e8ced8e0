"""The offline summary's identifiers section: files, commands, error lines and other
strings copied verbatim, deduplicated, ranked, within the token budget."""

from __future__ import annotations

import asyncio

import pytest

from transcript_tools.engine.formatting import format_transcript
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.requests import SummaryRequest
from transcript_tools.engine.tokens import estimate_text_tokens
from transcript_tools.providers.offline import OfflineProvider

COMMAND = "pytest tests/test_cache.py -k 'expiry and not slow' -q"


def call(call_id: str, name: str, args: object, text: str = "") -> AssistantMessage:
    blocks = ((TextBlock(text),) if text else ()) + (ToolUseBlock(call_id, name, args),)
    return AssistantMessage(blocks)


def summary(messages: list[Message], max_tokens: int = 1024, template: str = "en") -> str:
    text, kept = format_transcript(messages)
    prompt = load_template(template).render(text)
    request = SummaryRequest(
        "s", 0, prompt, max_tokens=max_tokens, messages=tuple(messages[len(messages) - kept :])
    )
    return asyncio.run(OfflineProvider().complete_request(request, "extractive-v1")).text


def section(text: str, heading: str = "Identifiers (copied verbatim):") -> list[str]:
    lines = text.split("\n")
    start = lines.index(heading) + 1
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


def row(text: str, label: str, heading: str = "Identifiers (copied verbatim):") -> str:
    found = [line for line in section(text, heading) if line.startswith(f"- {label}")]
    assert len(found) == 1, section(text, heading)
    return found[0]


CONVERSATION: list[Message] = [
    UserMessage.text("The cache expiry test fails since v2.3.1, see issue #58."),
    call("c1", "Read", {"file_path": "src/cache/store.py"}),
    ToolResultMessage("c1", "def expire(self): ..."),
    call("c2", "Bash", {"command": COMMAND, "description": "run the test"}),
    ToolResultMessage(
        "c2", "E   KeyError: 'ttl'\nFAILED tests/test_cache.py::test_expiry", is_error=True
    ),
    call("c3", "Edit", {"file_path": "src/cache/store.py", "old_string": "a", "new_string": "b"}),
    ToolResultMessage("c3", "ok"),
    call("c4", "Bash", {"command": ["bash", "-lc", "git diff --stat\ngit status"]}),
    ToolResultMessage("c4", " src/cache/store.py | 2 +-"),
    AssistantMessage.text(
        "Fixed: `Store.expire` read `ttl` and/or `max_age`; docs at https://example.org/cache."
    ),
]


def test_paths_and_commands_are_copied_verbatim_from_the_tool_calls() -> None:
    out = summary(CONVERSATION)
    assert row(out, "Files") == "- Files: src/cache/store.py, tests/test_cache.py"
    commands = row(out, "Commands")
    assert f"`{COMMAND}`" in commands  # the argument itself, quotes and all
    assert "`git diff --stat`" in commands  # the script of ["bash", "-lc", ...], first line
    assert "git status" not in commands
    assert "KeyError: 'ttl'" in row(out, "Error lines")
    other = row(out, "Other")
    for text in ("v2.3.1", "#58", "https://example.org/cache", "Store.expire"):
        assert text in other
    assert not any("and/or" in line for line in section(out))  # not a path


def test_commands_come_only_from_the_messages_not_from_the_prompt_text() -> None:
    """Tool-call arguments are not in the formatted text: a prompt alone has no commands."""
    text, _ = format_transcript(CONVERSATION)
    prompt = load_template("en").render(text)
    from_prompt = asyncio.run(OfflineProvider().complete(prompt, None, 1024)).text
    assert COMMAND not in from_prompt
    assert "- Commands" not in from_prompt
    assert "src/cache/store.py" in row(from_prompt, "Files")  # the result mentions it


def test_identifiers_are_deduplicated_and_the_most_frequent_come_first() -> None:
    messages: list[Message] = [UserMessage.text("Look at store.py and notes.md please.")]
    for i in range(3):
        messages += [
            call(f"a{i}", "Read", {"file_path": "src/cache/store.py"}),
            ToolResultMessage(f"a{i}", "..."),
        ]
    messages += [
        call("b", "Read", {"file_path": "src/late.py"}),
        ToolResultMessage("b", "..."),
        call("c", "Bash", {"command": "make test"}),
        ToolResultMessage("c", "ok"),
        call("d", "Bash", {"command": "make test"}),
        ToolResultMessage("d", "ok"),
        call("e", "Bash", {"command": "make lint"}),
        ToolResultMessage("e", "ok"),
    ]
    out = summary(messages)
    # The bare store.py is folded into the one longer path that ends with it.
    assert row(out, "Files") == "- Files: src/cache/store.py, src/late.py, notes.md"
    assert row(out, "Commands") == "- Commands: `make test`; `make lint`"
    assert out.count("src/cache/store.py") == 1


def test_a_bare_directory_or_dot_path_argument_is_not_a_file() -> None:
    out = summary(
        [
            UserMessage.text("list things"),
            call("c1", "LS", {"path": "."}),
            ToolResultMessage("c1", "a b"),
            call("c2", "LS", {"path": "tests"}),
            ToolResultMessage("c2", "a b"),
        ]
    )
    assert "Files" not in out


def many_identifiers() -> list[Message]:
    # Long tool outputs: the conversation is far longer than any level's summary, so the
    # level is chosen by the budget alone (not by the share of what is shown).
    log = "  frame in the worker loop, nothing to see here\n" * 10
    messages: list[Message] = [UserMessage.text("Refactor the whole package.")]
    for i in range(40):
        messages += [
            call(f"c{i}", "Bash", {"command": f"python -m tool{i} --config conf/setting_{i}.toml"}),
            ToolResultMessage(
                f"c{i}", f"ValueError: bad value {i} in pkg/module_{i}/file_{i}.py\n{log}"
            ),
        ]
    return messages


@pytest.mark.parametrize("max_tokens", [40, 120, 250, 400, 1024])
def test_the_budget_is_respected_and_the_section_shrinks_with_it(max_tokens: int) -> None:
    out = summary(many_identifiers(), max_tokens=max_tokens)
    assert estimate_text_tokens(out) <= max_tokens
    full = summary(many_identifiers())
    assert len(row(full, "Files").split(", ")) == 12  # the first level's number of files
    if max_tokens < 1024 and "Identifiers" in out:
        assert len(row(out, "Files").split(", ")) < 12


def test_chinese_conversation_gets_chinese_headings() -> None:
    messages: list[Message] = [
        UserMessage.text("请把数据库迁移脚本改为幂等的，不要删除旧表。"),
        call("c1", "Bash", {"command": "alembic upgrade head"}, "我需要先运行迁移。"),
        ToolResultMessage("c1", "完成"),
        call("c2", "Edit", {"file_path": "migrations/versions/0042_add_index.py"}),
        ToolResultMessage("c2", "已修改"),
        AssistantMessage.text("已经修复了迁移脚本，见 #12。"),
    ]
    out = summary(messages, template="zh")
    heading = "标识（原文照录）："
    assert heading in out and "Identifiers" not in out
    assert row(out, "文件", heading) == "- 文件：migrations/versions/0042_add_index.py"
    assert row(out, "命令", heading) == "- 命令：`alembic upgrade head`"
    assert row(out, "其他", heading) == "- 其他：#12"
