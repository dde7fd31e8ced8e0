"""The seed's values, one home each: the defaults of SummaryConfig and of a Policy alike.

``engine/config.py`` (the seed's settings) and ``engine/policy.py`` (a compaction policy
as data, whose default part is the seed's) both take their defaults from here, so the
two cannot drift, and ``config`` needs no ``policy`` at run time: ``tsum replay --help``
renders these without building the policy types (benchmarks/run.py, start-up).
Sources: docs/spec.md (F1, F2, F3, F6, "消息格式化", filter_focused).
"""

from __future__ import annotations

DEFAULT_TRIGGER_RATIO = 0.75  # F1 trigger_token_ratio
DEFAULT_MAX_CONTEXT_TOKENS = 32_000  # F1 max_context_tokens
DEFAULT_DEBOUNCE_TURNS = 3  # F1 debounce_turns
# the focused view's last whole turns; = the default debounce, so no turn since the last
# summary is dropped
DEFAULT_KEEP_RECENT_TURNS = 3
DEFAULT_SUMMARY_MARKER = "[上下文摘要]"  # the seed's filter_focused marker
DEFAULT_MAX_TRANSCRIPT_CHARS = 30_000  # seed: "整段对话若超过 30K 字符，从前面截断"
DEFAULT_MAX_TOOL_RESULT_CHARS = 500  # the seed's cut of one tool result in the transcript
SUMMARY_MAX_TOKENS = 1024  # F3: the summary call, LlmCycle with max_tokens = Some(1024)
DEFAULT_TEMPLATE = "zh"  # F1 summary_prompt: the seed's short Chinese template (prompts/)
