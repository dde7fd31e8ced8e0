"""format_messages_as_text: one golden text snapshot per rule / edge case, plus properties.

The snapshots under ``__snapshots__/test_transcript/`` are the exact text that goes
into ``{messages}``; review their diffs like code. Some end in a trailing space on
purpose (``Assistant: ``, ``Tool Result [id]: ``); those cases also assert it in code,
so an editor stripping whitespace from a snapshot makes the test fail loudly.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fakes import CallCounter
from transcript_tools.engine import formatting as transcript
from transcript_tools.engine.formatting import (
    format_message,
    format_messages_as_text,
)
from transcript_tools.engine.messages import (
    AssistantMessage,
    Message,
    OtherBlock,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserImageMessage,
    UserMessage,
)
from transcript_tools.engine.seed_defaults import DEFAULT_MAX_TRANSCRIPT_CHARS

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 👨‍👩‍👧‍👦, 7 code points
FLAG_JP = "\U0001f1ef\U0001f1f5"  # 🇯🇵, 2 regional indicators
THUMBS_MEDIUM = "\U0001f44d\U0001f3fd"  # 👍🏽, thumbs up + skin tone modifier
E_ACUTE = "e\u0301"  # é as e + COMBINING ACUTE ACCENT


def user(text: str) -> UserMessage:
    return UserMessage.text(text)


def assistant(*blocks: TextBlock | ToolUseBlock | OtherBlock) -> AssistantMessage:
    return AssistantMessage(tuple(blocks))


# --- one snapshot per rule and edge case -----------------------------------------

CASES: dict[str, tuple[list[Message], dict[str, int]]] = {
    "roles": (
        [
            SystemMessage("You are a careful assistant."),
            user("What is 2 + 2?"),
            AssistantMessage.text("4."),
        ],
        {},
    ),
    "text_blocks_joined_by_one_space": (
        [
            UserMessage((TextBlock("First part."), TextBlock("Second part."))),
            assistant(TextBlock("Line one\nline two."), TextBlock("Another block.")),
        ],
        {},
    ),
    "empty_text_block_skipped": (
        [assistant(TextBlock(""), ToolUseBlock("c1", "read_file", {"path": "a.py"}))],
        {},
    ),
    "tool_call_name_only": (
        [
            user("Open the config."),
            assistant(
                TextBlock("Reading it."),
                ToolUseBlock("c1", "read_file", {"path": "/etc/secret.toml", "token": "xyz"}),
            ),
        ],
        {},
    ),
    "tool_call_without_text": (
        [assistant(ToolUseBlock("c1", "list_dir", {"path": "."}))],
        {},
    ),
    "several_tool_calls_in_one_message": (
        [
            assistant(
                TextBlock("Checking three things."),
                ToolUseBlock("c1", "read_file", {"path": "a.py"}),
                ToolUseBlock("c2", "run_sql", "SELECT 1"),
                ToolUseBlock("c3", "http_get", None),
            )
        ],
        {},
    ),
    "tool_result": (
        [
            assistant(ToolUseBlock("call_1", "read_file", {"path": "a.py"})),
            ToolResultMessage("call_1", "print('hello')\n"),
        ],
        {},
    ),
    "tool_error": (
        [
            assistant(ToolUseBlock("call_2", "run_sql", "DROP TABLE x")),
            ToolResultMessage("call_2", "permission denied for table x", is_error=True),
        ],
        {},
    ),
    "user_image_message": (
        [UserImageMessage("image/png", "iVBORw0KGgo="), AssistantMessage.text("A cat.")],
        {},
    ),
    "non_text_blocks": (
        [
            UserMessage(
                (
                    TextBlock("Compare these:"),
                    OtherBlock("image", {"url": "a.png"}),
                    OtherBlock("file", {"name": "report.pdf"}),
                    OtherBlock("audio", b"RIFF"),
                )
            ),
            assistant(OtherBlock("thinking", "long private reasoning"), TextBlock("They match.")),
        ],
        {},
    ),
    "empty_assistant_message": (
        [user("Hello?"), AssistantMessage(())],
        {},
    ),
    "empty_system_message": (
        [SystemMessage(""), user("Hi")],
        {},
    ),
    "cjk_seed_example": (
        [
            SystemMessage("你是一个翻译助手"),
            user("把这段英文翻译成中文"),
            assistant(TextBlock("请提供英文文本"), ToolUseBlock("t1", "translate", {"q": "hi"})),
            ToolResultMessage("t1", "这是中文翻译"),
            user("谢谢"),
            AssistantMessage.text("不客气"),
        ],
        {},
    ),
    "emoji_zwj_flag_skin_tone_combining": (
        [
            user(f"Family {FAMILY}, flag {FLAG_JP}, thumbs {THUMBS_MEDIUM}, caf{E_ACUTE}."),
            AssistantMessage.text(f"{THUMBS_MEDIUM} 日本 {FLAG_JP}"),
        ],
        {},
    ),
    # The cut counts code points, like Rust chars().take(n): grapheme clusters split.
    "tool_result_cut_inside_zwj_sequence": (
        [ToolResultMessage("t1", FAMILY + " family")],
        {"max_tool_result_chars": 3},  # man, ZWJ, woman
    ),
    "tool_result_cut_inside_flag": (
        [ToolResultMessage("t1", FLAG_JP + " Japan")],
        {"max_tool_result_chars": 1},  # regional indicator J alone
    ),
    "tool_result_cut_before_skin_tone": (
        [ToolResultMessage("t1", THUMBS_MEDIUM + " ok")],
        {"max_tool_result_chars": 1},  # thumbs up without its modifier
    ),
    "tool_result_cut_before_combining_mark": (
        [ToolResultMessage("t1", E_ACUTE + "tude")],
        {"max_tool_result_chars": 1},  # bare e, accent dropped
    ),
    "tool_result_cjk_cut": (
        [ToolResultMessage("t1", "数据库连接失败：超时")],
        {"max_tool_result_chars": 6},
    ),
    "tool_result_exactly_at_limit": (
        [ToolResultMessage("t1", "0123456789")],
        {"max_tool_result_chars": 10},
    ),
    "tool_result_one_over_limit": (
        [ToolResultMessage("t1", "0123456789X")],
        {"max_tool_result_chars": 10},
    ),
    "tool_error_one_over_limit": (
        [ToolResultMessage("t1", "0123456789X", is_error=True)],
        {"max_tool_result_chars": 10},
    ),
    "max_tool_result_chars_zero": (
        [
            ToolResultMessage("t1", "never shown"),
            ToolResultMessage("t2", "never shown", is_error=True),
        ],
        {"max_tool_result_chars": 0},
    ),
    "empty_list": ([], {}),
    # Small max_chars keeps these readable; the 30,000 default is tested below.
    # Blocks: "User: aaaa" (10), "Assistant: bbbb" (15), "User: cc" (8):
    # 10 + 2 + 15 + 2 + 8 = 37.
    "total_exactly_at_max_chars": (
        [user("aaaa"), AssistantMessage.text("bbbb"), user("cc")],
        {"max_chars": 37},
    ),
    "total_one_over_max_chars_drops_oldest": (
        [user("aaaa"), AssistantMessage.text("bbbb"), user("cc")],
        {"max_chars": 36},
    ),
    "older_short_message_not_kept_after_a_gap": (
        [user("a"), AssistantMessage.text("b" * 30), user("cc")],
        {"max_chars": 20},
    ),
    "newest_alone_over_max_chars_keeps_its_tail": (
        [user("old"), AssistantMessage.text("0123456789 the end")],
        {"max_chars": 12},
    ),
    "newest_alone_over_max_chars_cuts_code_points": (
        [AssistantMessage.text(f"start {FAMILY}{FLAG_JP}")],
        {"max_chars": 5},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_format_snapshot(case: str, text_snapshot) -> None:
    messages, kwargs = CASES[case]
    assert format_messages_as_text(messages, **kwargs) == text_snapshot


def test_trailing_spaces_are_kept() -> None:
    assert format_message(AssistantMessage(())) == "Assistant: "
    assert format_message(SystemMessage("")) == "System: "
    assert format_message(ToolResultMessage("t1", "abc"), 0) == "Tool Result [t1]: "
    assert format_message(ToolResultMessage("t1", "abc", True), 0) == "Tool Error [t1]: "
    assert format_message(ToolResultMessage("t1", ""), 500) == "Tool Result [t1]: "


def test_empty_list_is_empty_text() -> None:
    assert format_messages_as_text([]) == ""
    assert format_messages_as_text([user("x")], max_chars=0) == ""


def test_tool_call_arguments_never_appear() -> None:
    msg = assistant(ToolUseBlock("c1", "read_file", {"path": "/etc/secret.toml"}))
    assert format_message(msg) == "Assistant: [Tool: read_file]"


def test_negative_limits_are_rejected() -> None:
    with pytest.raises(ValueError):
        format_messages_as_text([user("x")], max_chars=-1)
    with pytest.raises(ValueError):
        format_messages_as_text([user("x")], max_tool_result_chars=-1)


def test_unknown_message_type_is_an_error() -> None:
    with pytest.raises(TypeError):
        format_message("User: hi")  # type: ignore[arg-type]


# --- the default 30,000 boundary (lengths, not a 30k snapshot) -----------------------


def _three_messages_totalling(total: int) -> list[Message]:
    # "System: " (8) + s, "User: " (6) + u, "Assistant: " (11) + a, two separators (4).
    old = SystemMessage("s" * 1_000)
    mid = user("u" * 2_000)
    fixed = 8 + 1_000 + 6 + 2_000 + 11 + 4
    new = AssistantMessage.text("a" * (total - fixed))
    return [old, mid, new]


def test_default_limit_is_30000() -> None:
    assert DEFAULT_MAX_TRANSCRIPT_CHARS == 30_000


def test_default_boundary_exactly_30000_keeps_everything() -> None:
    messages = _three_messages_totalling(30_000)
    out = format_messages_as_text(messages)
    assert len(out) == 30_000
    assert out.startswith("System: sss")
    assert out.endswith("a" * 100)


def test_default_boundary_one_over_drops_oldest_message() -> None:
    messages = _three_messages_totalling(30_001)
    out = format_messages_as_text(messages)
    assert len(out) == 30_001 - (8 + 1_000) - 2
    assert out.startswith("User: uuu")
    assert "System:" not in out


def test_default_boundary_newest_alone_over_keeps_last_30000() -> None:
    newest = "head" + "x" * 29_996 + "tail!"  # 30,005 chars + "Assistant: "
    out = format_messages_as_text([user("older"), AssistantMessage.text(newest)])
    assert len(out) == 30_000
    assert out == newest[-30_000:]
    assert out.endswith("tail!")


def test_newest_exactly_30000_is_kept_whole() -> None:
    body = "b" * (30_000 - len("Assistant: "))
    out = format_messages_as_text([user("older"), AssistantMessage.text(body)])
    assert out == "Assistant: " + body


# --- surrogate pairs (only in strings built with "surrogatepass") --------------------

PAIR = "\ud83d\ude00"  # the UTF-16 halves of 😀 as two str code points


def test_tool_result_cut_never_splits_a_surrogate_pair() -> None:
    out = format_message(ToolResultMessage("t1", "a" + PAIR + "b"), 2)
    assert out == "Tool Result [t1]: a"
    out = format_message(ToolResultMessage("t1", "a" + PAIR + "b"), 3)
    assert out == "Tool Result [t1]: a" + PAIR


def test_tail_cut_never_starts_inside_a_surrogate_pair() -> None:
    out = format_messages_as_text([AssistantMessage.text("a" + PAIR + "bc")], max_chars=3)
    assert out == "bc"
    out = format_messages_as_text([AssistantMessage.text("a" + PAIR + "bc")], max_chars=4)
    assert out == PAIR + "bc"


# --- O(returned text): formatting stops at the first message that does not fit -------


def test_only_messages_that_fit_are_formatted(monkeypatch: pytest.MonkeyPatch) -> None:
    formatted = CallCounter(monkeypatch, transcript, "format_message")
    # 5,000 turns; every block is "User: " + 94 chars = 100 chars, 102 with its separator.
    messages: list[Message] = [user(f"{i:04d}" + "x" * 90) for i in range(5_000)]
    out = transcript.format_messages_as_text(messages, max_chars=1_000)
    fitting = (1_000 + 2) // 102  # n blocks need 102 * n - 2 chars
    assert out.count("User: ") == fitting
    assert out.endswith("4999" + "x" * 90)
    assert formatted.calls == fitting + 1  # the kept ones and the first one that did not fit


def test_everything_fits_formats_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    formatted = CallCounter(monkeypatch, transcript, "format_message")
    messages: list[Message] = [user(str(i)) for i in range(50)]
    transcript.format_messages_as_text(messages)
    assert formatted.calls == 50


# --- properties ------------------------------------------------------------------------

texts = st.text(max_size=40)
blocks = st.one_of(
    texts.map(TextBlock),
    st.builds(ToolUseBlock, id=st.just("c"), name=st.text(min_size=1, max_size=8)),
    st.sampled_from(["image", "audio", "file", "thinking"]).map(OtherBlock),
)
messages_strategy = st.lists(
    st.one_of(
        texts.map(SystemMessage),
        st.lists(blocks, max_size=4).map(lambda b: UserMessage(tuple(b))),
        st.just(UserImageMessage()),
        st.lists(blocks, max_size=4).map(lambda b: AssistantMessage(tuple(b))),
        st.builds(
            ToolResultMessage,
            tool_call_id=st.text(alphabet="abc_123", max_size=6),
            content=st.text(max_size=60),
            is_error=st.booleans(),
        ),
    ),
    max_size=12,
)


def reference(messages: list[Message], max_tool: int, max_chars: int) -> str:
    """The rule stated naively: format everything, keep the longest suffix that fits."""
    formatted = [format_message(m, max_tool) for m in messages]
    if not formatted or max_chars == 0:
        return ""
    if len(formatted[-1]) > max_chars:
        return formatted[-1][len(formatted[-1]) - max_chars :]
    start = len(formatted) - 1
    while start > 0 and len("\n\n".join(formatted[start - 1 :])) <= max_chars:
        start -= 1
    return "\n\n".join(formatted[start:])


@settings(max_examples=200, deadline=None)
@given(messages_strategy, st.integers(0, 60), st.integers(0, 300))
def test_matches_naive_reference(messages: list[Message], max_tool: int, max_chars: int) -> None:
    # Output = "\n\n".join of a suffix of whole formatted blocks, or a code-point tail
    # of the newest one: nothing else is ever produced, so no code point is split.
    assert format_messages_as_text(messages, max_tool, max_chars) == reference(
        messages, max_tool, max_chars
    )


@settings(max_examples=200, deadline=None)
@given(messages_strategy, st.integers(0, 60), st.integers(0, 300))
def test_never_longer_than_max_chars(
    messages: list[Message], max_tool: int, max_chars: int
) -> None:
    out = format_messages_as_text(messages, max_tool, max_chars)
    assert len(out) <= max_chars
    out.encode("utf-8")  # no lone surrogate was created


@settings(max_examples=200, deadline=None)
@given(messages_strategy.filter(bool), st.integers(0, 60), st.integers(1, 300))
def test_newest_message_tail_always_at_the_end(
    messages: list[Message], max_tool: int, max_chars: int
) -> None:
    out = format_messages_as_text(messages, max_tool, max_chars)
    newest = format_message(messages[-1], max_tool)
    assert out.endswith(newest[len(newest) - min(len(newest), max_chars) :])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.integers(0, 100), st.booleans())
def test_cut_tool_result_is_a_prefix_of_the_content(
    content: str, max_tool: int, is_error: bool
) -> None:
    out = format_messages_as_text([ToolResultMessage("id", content, is_error)], max_tool)
    label = "Tool Error [id]: " if is_error else "Tool Result [id]: "
    assert out.startswith(label)
    kept = out[len(label) :]
    assert content.startswith(kept)
    assert len(kept) == min(len(content), max_tool)
