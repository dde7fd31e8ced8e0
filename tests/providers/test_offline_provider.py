"""The offline provider: deterministic, extractive, language-aware, within budget."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine.formatting import format_messages_as_text
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.engine.requests import SummaryResponse
from transcript_tools.engine.seed_defaults import SUMMARY_MAX_TOKENS
from transcript_tools.engine.tokens import estimate_text_tokens
from transcript_tools.providers.base import Provider
from transcript_tools.providers.offline import OfflineProvider

EN_CONVERSATION: list[Message] = [
    SystemMessage("You are a careful operations assistant."),
    UserMessage.text("The nightly export job fails since Monday. Can you find out why and fix it?"),
    AssistantMessage(
        (
            TextBlock("I'll start with the job logs."),
            ToolUseBlock("c1", "read_file", {"path": "logs/nightly.log"}),
        )
    ),
    ToolResultMessage(
        "c1",
        "02:00:01 INFO start\n\n02:00:07 ERROR cache key mismatch: expected v3, got v2",
    ),
    AssistantMessage(
        (
            TextBlock("The log shows a cache key mismatch. Checking the cache metadata."),
            ToolUseBlock("c2", "run_sql", "SELECT * FROM cache_meta"),
        )
    ),
    ToolResultMessage("c2", "permission denied for table cache_meta", is_error=True),
    AssistantMessage(
        (
            TextBlock("No access to cache_meta, so we should look at the migration instead."),
            ToolUseBlock("c3", "read_file", {"path": "migrations/0042.py"}),
        )
    ),
    ToolResultMessage("c3", "def upgrade():\n    set_cache_version('v2')\n"),
    AssistantMessage.text(
        "Found it: migration 0042 pins the cache version to v2 while the exporter expects v3. "
        "I decided to read the version from settings instead; the fix is in "
        "migrations/0042.py. Rerun the nightly job with --verbose to confirm. "
        "Should I open a pull request?"
    ),
    UserMessage.text("Yes, open the PR and keep the retry budget at three attempts."),
]

ZH_CONVERSATION: list[Message] = [
    SystemMessage("你是一个运维助手。"),
    UserMessage.text("夜间导出任务从周一开始失败了，帮我找出原因并修复。"),
    AssistantMessage(
        (
            TextBlock("我先看一下任务日志。"),
            ToolUseBlock("c1", "read_file", {"path": "nightly.log"}),
        )
    ),
    ToolResultMessage("c1", "02:00:07 ERROR cache key mismatch: expected v3, got v2"),
    AssistantMessage(
        (
            TextBlock("日志显示缓存键不匹配，需要查看缓存元数据。"),
            ToolUseBlock("c2", "run_sql", "SELECT 1"),
        )
    ),
    ToolResultMessage("c2", "权限不足：无法访问表 cache_meta", is_error=True),
    AssistantMessage(
        (TextBlock("没有权限，改为检查迁移脚本。"), ToolUseBlock("c3", "read_file", {}))
    ),
    ToolResultMessage("c3", "def upgrade():\n    set_cache_version('v2')"),
    AssistantMessage.text(
        "找到原因了：迁移脚本 0042 把缓存版本写死为 v2，而导出程序需要 v3。"
        "我决定改为从配置读取版本号。修复后需要重新运行夜间任务确认。"
    ),
    UserMessage.text("好的，重试次数保持三次，然后提交 PR。"),
]


def prompt_for(messages: list[Message], instructions: str = "Summarize the conversation.") -> str:
    """The shape of the shipped templates: instructions, then the tagged conversation."""
    return f"{instructions}\n\n<messages>\n{format_messages_as_text(messages)}\n</messages>\n"


def complete(prompt: str, model: str | None = None, max_tokens: int = SUMMARY_MAX_TOKENS) -> str:
    return run(prompt, model, max_tokens).text


def run(
    prompt: str, model: str | None = None, max_tokens: int = SUMMARY_MAX_TOKENS
) -> SummaryResponse:
    return asyncio.run(OfflineProvider().complete(prompt, model, max_tokens))


# --- the protocol ------------------------------------------------------------------------


def test_implements_the_provider_protocol() -> None:
    provider: Provider = OfflineProvider()
    assert provider.name == "offline"
    assert provider.key_env is None
    assert provider.default_model == "extractive-v1"
    assert provider.identity(None) == {
        "provider": "offline",
        "model": "extractive-v1",
        "algorithm_version": 5,
    }
    assert provider.identity("custom")["model"] == "custom"


def test_response_model_and_estimated_usage() -> None:
    prompt = prompt_for(EN_CONVERSATION)
    response = run(prompt)
    assert response.model == "extractive-v1"
    assert response.usage is not None
    assert response.usage.input_tokens == estimate_text_tokens(prompt)
    assert response.usage.output_tokens == estimate_text_tokens(response.text)
    assert run(prompt, model="my-model").model == "my-model"


# --- content -----------------------------------------------------------------------------


def test_says_it_is_extractive() -> None:
    assert complete(prompt_for(EN_CONVERSATION)).startswith(
        "(extractive summary by tsum offline provider"
    )
    assert complete(prompt_for(ZH_CONVERSATION)).startswith("（tsum 离线抽取式摘要")


def test_english_summary_has_goals_tools_errors_and_state() -> None:
    text = complete(prompt_for(EN_CONVERSATION))
    assert "Goals and requests:" in text
    assert "The nightly export job fails since Monday" in text  # earliest request
    assert "keep the retry budget at three attempts" in text  # latest request
    assert "Tools used: read_file ×2, run_sql ×1" in text
    assert "- [c2] permission denied for table cache_meta" in text
    assert "Current state (latest assistant message):" in text
    assert "I decided to read the version from settings" in text
    assert "The latest request has no reply yet." in text
    assert "SELECT * FROM cache_meta" not in text  # tool arguments never reach the prompt


def test_chinese_conversation_gets_chinese_headings() -> None:
    text = complete(prompt_for(ZH_CONVERSATION, "请总结以下对话。"))
    for heading in ("目标与请求：", "决定与结论：", "工具：", "错误：", "当前状态"):
        assert heading in text
    assert "Goals" not in text
    assert "read_file ×2、run_sql ×1" in text


def test_language_follows_the_conversation_not_the_instructions() -> None:
    assert "Goals and requests:" in complete(prompt_for(EN_CONVERSATION, "请总结以下对话。"))
    assert "目标与请求：" in complete(prompt_for(ZH_CONVERSATION, "Summarize this."))


def test_decision_sentences_are_extracted() -> None:
    messages: list[Message] = [
        UserMessage.text("Pick a database."),
        AssistantMessage.text("Postgres has the features. We decided to use Postgres 16."),
        UserMessage.text("And the cache?"),
        AssistantMessage.text(
            "Redis is fine. Should we shard it? The team agreed to skip sharding."
        ),
        UserMessage.text("Thanks, summarize please."),
        AssistantMessage.text("Done."),
    ]
    text = complete(prompt_for(messages))
    decisions = text.split("Decisions and conclusions:\n", 1)[1].split("\n\n", 1)[0]
    assert decisions.splitlines() == [
        "- We decided to use Postgres 16.",
        "- The team agreed to skip sharding.",
    ]


def test_traceback_error_shows_its_last_line() -> None:
    messages: list[Message] = [
        UserMessage.text("Run the tests."),
        AssistantMessage((ToolUseBlock("t1", "bash", {}),)),
        ToolResultMessage(
            "t1",
            "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'user_id'",
            is_error=True,
        ),
    ]
    text = complete(prompt_for(messages))
    assert "- [t1] KeyError: 'user_id'" in text
    assert "Last tool output [t1]: Traceback" in text


def test_blank_lines_inside_content_do_not_split_messages() -> None:
    messages: list[Message] = [
        UserMessage.text("First paragraph.\n\nSecond paragraph.\n\nuser: not a role prefix"),
        AssistantMessage.text("Answer.\n\n\n\nMore answer."),
        ToolResultMessage("x", "line\n\n\nline"),
    ]
    text = complete(prompt_for(messages))
    assert "Messages shown: user 1, assistant 1, tool results 1 (errors 0)." in text


def test_plain_prompt_without_tags() -> None:
    # The seed's plain template: instructions, then the {messages} text in place.
    prompt = "请根据以下对话生成简洁摘要：\n" + format_messages_as_text(ZH_CONVERSATION)
    text = complete(prompt)
    assert "目标与请求：" in text
    assert "请根据以下对话" not in text  # the instructions are not part of the conversation
    assert "夜间导出任务从周一开始失败了" in text


def test_plain_text_without_role_prefixes_gives_an_excerpt() -> None:
    text = complete("Just some notes about the release plan for version 2.")
    assert text.splitlines()[-1] == "Just some notes about the release plan for version 2."


def test_last_messages_pair_is_used() -> None:
    prompt = (
        "Put the conversation in <messages> tags. Example: <messages>User: old</messages>\n"
        + prompt_for(EN_CONVERSATION)
    )
    text = complete(prompt)
    assert "old" not in text.split("Goals and requests:")[1].split("\n")[1]
    assert "The nightly export job fails" in text


def test_transcript_cut_mid_message_still_summarizes() -> None:
    section = format_messages_as_text(EN_CONVERSATION)
    cut = section[section.index("shows a cache key") :]  # starts inside a message
    text = complete(f"<messages>\n{cut}\n</messages>")
    assert "Messages shown: user 1," in text
    # The cut message's role is unknown, so its [Tool: run_sql] is not counted.
    assert "Tools used: read_file ×1\n" in text


# --- empty, budget, determinism ------------------------------------------------------------


@pytest.mark.parametrize(
    "prompt",
    [
        "",
        "   \n\t ",
        "Summarize.\n<messages>\n</messages>",
        "Summarize.\n<messages>\n   \n\n  </messages>",
        "<messages>\nAssistant: \n\nUser: \n</messages>",
    ],
)
def test_empty_conversation_gives_empty_text(prompt: str) -> None:
    assert complete(prompt) == ""


def huge_prompt() -> str:
    turns: list[Message] = []
    for i in range(2_000):
        turns.append(UserMessage.text(f"Request {i}: please check service {i} and decide. " * 3))
        turns.append(
            AssistantMessage(
                (
                    TextBlock(f"We decided to restart service {i}. It should recover. " * 5),
                    ToolUseBlock(f"c{i}", f"tool_{i % 40}", {}),
                )
            )
        )
        turns.append(ToolResultMessage(f"c{i}", f"error: service {i} timed out " * 20, True))
    # Far beyond the 30,000-char default, as a custom template could make it.
    return prompt_for(turns) + format_messages_as_text(turns, max_chars=500_000)


def test_budget_respected_on_a_huge_prompt() -> None:
    prompt = huge_prompt()
    assert len(prompt) > 300_000
    text = complete(prompt)
    assert 0 < estimate_text_tokens(text) <= SUMMARY_MAX_TOKENS
    for max_tokens in (200, 50, 10, 1):
        small = complete(prompt, max_tokens=max_tokens)
        assert estimate_text_tokens(small) <= max_tokens
        assert small
    assert complete(prompt, max_tokens=0) == ""


def test_chinese_budget_respected() -> None:
    long_zh = ZH_CONVERSATION * 200
    text = complete(prompt_for(long_zh))
    assert estimate_text_tokens(text) <= SUMMARY_MAX_TOKENS
    assert estimate_text_tokens(complete(prompt_for(long_zh), max_tokens=120)) <= 120


def test_deterministic() -> None:
    for prompt in (prompt_for(EN_CONVERSATION), prompt_for(ZH_CONVERSATION), huge_prompt()):
        first = complete(prompt)
        assert all(complete(prompt) == first for _ in range(3))
        assert asyncio.run(OfflineProvider().complete(prompt, None, 1024)).text == first


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "tool", "error"]), st.text(max_size=300)),
        max_size=15,
    ),
    st.integers(0, 300),
)
def test_any_conversation_fits_budget_and_repeats(
    turns: list[tuple[str, str]], max_tokens: int
) -> None:
    messages: list[Message] = []
    for role, text in turns:
        if role == "user":
            messages.append(UserMessage.text(text))
        elif role == "assistant":
            messages.append(AssistantMessage((TextBlock(text), ToolUseBlock("c", "t", None))))
        else:
            messages.append(ToolResultMessage("c", text, role == "error"))
    prompt = prompt_for(messages)
    out = complete(prompt, max_tokens=max_tokens)
    assert estimate_text_tokens(out) <= max_tokens
    assert out == complete(prompt, max_tokens=max_tokens)


# --- golden summaries ------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_summary_snapshot(lang: str, text_snapshot) -> None:
    if lang == "en":
        prompt = prompt_for(EN_CONVERSATION)
    else:
        prompt = prompt_for(ZH_CONVERSATION, "请总结以下对话。")
    assert complete(prompt) == text_snapshot
