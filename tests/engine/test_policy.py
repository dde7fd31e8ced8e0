"""Compaction policies as data: the presets, their cited values, TOML in and out, errors."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine import policy as P
from transcript_tools.engine import policy_lines as L
from transcript_tools.engine.config import SummaryConfig
from transcript_tools.engine.kinds import Checkpoint, Measure, Threshold, TriggerMeasure
from transcript_tools.engine.policy_toml import (
    load_policy_file,
    parse_policy,
    preset,
    preset_names,
    resolve_policy,
    to_toml,
    toml_key_line,
    trigger_summary,
)
from transcript_tools.engine.prompt import builtin_template_names, builtin_template_source
from transcript_tools.engine.seed_defaults import (
    DEFAULT_KEEP_RECENT_TURNS,
    DEFAULT_MAX_TRANSCRIPT_CHARS,
    DEFAULT_SUMMARY_MARKER,
    SUMMARY_MAX_TOKENS,
)
from transcript_tools.errors import ConfigError

# The presets tsum ships, one row each (the seed first; sources in docs/policies.md).
EXPECTED_PRESETS = {
    "seed",
    "claude-code",
    "claude-code-microcompact",
    "codex",
    "opencode",
    "opencode-prune",
    "gemini-cli",
    "cline",
    "aider",
    "langchain",
    "inspect-ai",
    "clear-tool-uses",
    "observation-masking",
    # more systems (tests/engine/test_more_presets.py pins their values)
    "roo-code",
    "kilo-code",
    "goose",
    "kimi-cli",
    "qwen-code",
    "crush",
    "pi",
    "letta",
    "openhands",
    "anthropic-compaction",
    "openai-compaction",
    "opencode-v2",
}

# Each preset's load-bearing values and the number in the source they come from
# (docs/policies.md cites the file, version and line for each).
CITED = [
    ("claude-code", "trigger.reserve_tokens", 20_000 + 13_000),  # min(max_out, 20k) + 13k buffer
    ("claude-code", "summary.max_tokens", 20_000),
    ("claude-code-microcompact", "prepass.keep_newest", 5),
    ("claude-code-microcompact", "prepass.min_results", 10),  # cachedMicrocompact TRIGGER_THRESHOLD
    (
        "claude-code-microcompact",
        "prepass.only_tools",
        ("Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"),
    ),  # COMPACTABLE_TOOLS
    ("codex", "trigger.ratio", 9 / 10),  # context_window * 9 / 10
    ("codex", "keep.tokens", 20_000),  # COMPACT_USER_MESSAGE_MAX_TOKENS
    ("codex", "keep.kind", "user-messages"),
    ("codex", "placement.position", "end"),
    ("opencode", "trigger.reserve_tokens", 20_000),  # COMPACTION_BUFFER
    ("opencode", "keep.turns", 2),  # DEFAULT_TAIL_TURNS
    ("opencode", "keep.tokens_ratio", 0.25),
    ("opencode", "keep.floor_tokens", 2_000),  # MIN_PRESERVE_RECENT_TOKENS
    ("opencode", "keep.ceiling_tokens", 8_000),  # MAX_PRESERVE_RECENT_TOKENS
    ("opencode", "summarizer_input.max_tool_result_chars", 2_000),  # TOOL_OUTPUT_MAX_CHARS
    ("opencode", "placement.role", "assistant"),
    ("opencode-prune", "prepass.protect_tokens", 40_000),  # PRUNE_PROTECT
    ("opencode-prune", "prepass.min_freed_tokens", 20_000 + 1),  # pruned > PRUNE_MINIMUM
    ("opencode-prune", "prepass.protect_turns", 2),
    ("opencode-prune", "prepass.exclude_tools", ("skill",)),  # PRUNE_PROTECTED_TOOLS
    ("gemini-cli", "trigger.ratio", 0.5),  # DEFAULT_COMPRESSION_TOKEN_THRESHOLD
    ("gemini-cli", "keep.fraction", 0.3),  # COMPRESSION_PRESERVE_THRESHOLD
    ("gemini-cli", "placement.role", "user"),
    ("gemini-cli", "trigger.window", 1_048_576),  # tokenLimit() (tokenLimits.ts:20,35)
    ("gemini-cli", "prepass.protect_tokens", 50_000),  # DEFAULT_TOOL_PROTECTION_THRESHOLD
    ("gemini-cli", "prepass.min_freed_tokens", 30_000),  # toolOutputMaskingService.ts:26
    ("gemini-cli", "prepass.keep_newest", 1),  # protectLatestTurn
    ("gemini-cli", "placement.acknowledgement", "Got it. Thanks for the additional context!"),
    ("cline", "keep.at_least", True),  # findCutIndex: until cumulative >= 20,000
    ("cline", "keep.latest_turn", True),  # cut = min(candidate, lastTurnStartIndex)
    ("inspect-ai", "trigger.window", 128_000),  # DEFAULT_CONTEXT_WINDOW
    ("cline", "trigger.ratio", 0.9 * 0.9),  # COMPACTION_TRIGGER_RATIO x CONTEXT_WINDOW_INPUT_RATIO
    ("cline", "keep.tokens", 20_000),  # DEFAULT_PRESERVE_RECENT_TOKENS
    ("cline", "summarizer_input.max_tool_result_chars", 2_000),  # TOOL_RESULT_CHAR_LIMIT
    ("cline", "summary.max_tokens", 4_096),  # DEFAULT_SUMMARY_MAX_OUTPUT_TOKENS
    ("aider", "trigger.ratio", 1 / 16),
    ("aider", "trigger.floor_tokens", 1_024),
    ("aider", "trigger.ceiling_tokens", 8_192),
    ("aider", "keep.tokens_ratio", 1 / 32),  # tail < max_tokens // 2
    ("langchain", "trigger.tokens", 4_000),
    ("langchain", "keep.messages", 20),  # keep default ("messages", 20)
    ("langchain", "summarizer_input.tail_tokens", 4_000),  # trim_tokens_to_summarize
    ("inspect-ai", "trigger.ratio", 0.9),
    ("inspect-ai", "keep.first_user", True),
    ("inspect-ai", "summarizer_input.kind", "since-last-summary"),
    ("clear-tool-uses", "prepass.trigger_tokens", 100_000),
    ("clear-tool-uses", "prepass.keep_newest", 3),
    ("clear-tool-uses", "prepass.min_freed_tokens", 0),
    ("clear-tool-uses", "prepass.clear_inputs", False),
    ("observation-masking", "prepass.keep_newest", 10),  # M = 10
]


def _get(policy: P.Policy, dotted: str) -> object:
    part, key = dotted.split(".")
    return getattr(getattr(policy, part), key)


def test_the_presets_are_the_issue_rows_and_load_as_package_resources() -> None:
    assert set(preset_names()) == EXPECTED_PRESETS
    assert preset_names()[0] == "seed"
    files = {e.name for e in resources.files("transcript_tools.engine.presets").iterdir()}
    assert {f"{n}.toml" for n in EXPECTED_PRESETS} <= files


@pytest.mark.parametrize("name", sorted(EXPECTED_PRESETS))
def test_every_preset_validates_and_round_trips(name: str) -> None:
    policy = preset(name)
    assert policy.name == name and policy.description
    text = to_toml(policy)
    assert parse_policy(text, "x") == policy
    assert to_toml(parse_policy(text, "x")) == text
    if policy.summarizes:
        assert policy.summary.template in builtin_template_names()


@pytest.mark.parametrize(("name", "key", "value"), CITED)
def test_preset_values_equal_their_sources(name: str, key: str, value: object) -> None:
    assert _get(preset(name), key) == value


def test_seed_preset_is_exactly_the_seed() -> None:
    seed, cfg = preset("seed"), SummaryConfig()
    assert replace(seed, description="") == P.Policy(name="seed")  # the defaults are the seed's
    assert (seed.trigger.measure, seed.trigger.threshold, seed.trigger.unit) == (
        "cumulative",
        "ratio",
        "turn",
    )
    assert seed.trigger.ratio == cfg.trigger_token_ratio
    assert seed.trigger.debounce == cfg.debounce_turns
    assert L.threshold_tokens(seed.trigger, cfg.max_context_tokens) == cfg.threshold
    assert (seed.keep.kind, seed.keep.turns) == ("turns", DEFAULT_KEEP_RECENT_TURNS)
    assert seed.keep.system and seed.keep.pairs_intact and not seed.keep.first_user
    assert seed.summarizer_input.kind == "history"
    assert seed.summarizer_input.max_transcript_chars == DEFAULT_MAX_TRANSCRIPT_CHARS
    assert seed.summarizer_input.max_tool_result_chars == cfg.max_tool_result_chars
    assert (seed.placement.role, seed.placement.position) == ("system", "tail")
    assert seed.placement.marker == DEFAULT_SUMMARY_MARKER == "[上下文摘要]"
    assert builtin_template_source(seed.summary.template) == cfg.summary_prompt
    assert seed.summary.max_tokens == SUMMARY_MAX_TOKENS == 1024
    assert seed.prepass.kind == "none"


@pytest.mark.parametrize(
    ("name", "window", "tokens"),
    [
        ("seed", 32_000, 24_000.0),
        ("claude-code", 200_000, 167_000.0),  # the 83.5% everyone quotes
        ("codex", 272_000, 244_800.0),  # openai/codex#40095
        ("opencode", 200_000, 180_000.0),
        ("gemini-cli", 1_000_000, 500_000.0),
        ("cline", 200_000, 162_000.0),
        ("aider", 128_000, 8_000.0),
        ("aider", 8_000, 1_024.0),  # the floor
        ("aider", 1_000_000, 8_192.0),  # the ceiling
        ("langchain", 200_000, 4_000.0),
        ("inspect-ai", 100_000, 90_000.0),
        ("claude-code", 20_000, 0.0),  # a window smaller than the reserve
    ],
)
def test_threshold_tokens_hand_computed(name: str, window: int, tokens: float) -> None:
    assert L.threshold_tokens(preset(name).trigger, window) == tokens


def test_pre_pass_only_presets_have_no_threshold() -> None:
    for name in (
        "claude-code-microcompact",
        "opencode-prune",
        "clear-tool-uses",
        "observation-masking",
    ):
        policy = preset(name)
        assert not policy.summarizes and policy.prepass.kind == "clear-tool-results"
        assert L.threshold_tokens(policy.trigger, 200_000) is None


@pytest.mark.parametrize(
    ("name", "window", "budget"),
    [
        ("opencode", 200_000, 8_000),  # 25% = 50k, clamped to 8k
        ("opencode", 20_000, 5_000),
        ("opencode", 4_000, 2_000),  # the floor
        ("aider", 128_000, 4_000),  # half of the 8k history budget
        ("cline", 1_000_000, 20_000),
        ("codex", 272_000, 20_000),
        ("seed", 32_000, None),
    ],
)
def test_keep_budget_hand_computed(name: str, window: int, budget: int | None) -> None:
    assert L.keep_budget_tokens(preset(name).keep, window) == budget


def test_extends_starts_from_a_preset_and_overrides_any_part(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(
        'extends = "codex"\ndescription = "tighter"\n[trigger]\nratio = 0.8\n[keep]\ntokens = 5000\n'
    )
    mine, codex = load_policy_file(path), preset("codex")
    assert mine.name == "mine" and mine.description == "tighter"
    assert mine.trigger == replace(codex.trigger, ratio=0.8)
    assert mine.keep == replace(codex.keep, tokens=5000)
    assert (mine.placement, mine.summary, mine.prepass) == (
        codex.placement,
        codex.summary,
        codex.prepass,
    )


def test_an_inherited_description_follows_the_values_the_file_changes(tmp_path: Path) -> None:
    """codex's description says "view >= 90%": a file that extends it with ratio = 0.8 and
    writes no description of its own does not keep it as if it still held."""
    codex = preset("codex")
    path = tmp_path / "f.toml"
    path.write_text('extends = "codex"\n[trigger]\nratio = 0.8\n')
    assert load_policy_file(path).description == (
        f"codex with trigger.ratio = 0.8 (the description of codex: {codex.description})"
    )
    same = tmp_path / "same.toml"  # nothing changed: the preset's description holds
    same.write_text('extends = "codex"\n[trigger]\nratio = 0.9\n')
    assert load_policy_file(same).description == codex.description
    assert codex.trigger.ratio == 0.9


def test_without_extends_a_file_starts_from_the_seed(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('name = "slow"\n[trigger]\ndebounce = 5\n')
    assert load_policy_file(path) == replace(
        preset("seed"),
        name="slow",
        description="",
        trigger=replace(preset("seed").trigger, debounce=5),
    )


def test_pyproject_table_reads_like_a_file(tmp_path: Path) -> None:
    standalone = tmp_path / "p.toml"
    standalone.write_text('name = "x"\nextends = "gemini-cli"\n[trigger]\nratio = 0.4\n')
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "demo"\n[tool.tsum.policy]\nname = "x"\nextends = "gemini-cli"\n'
        "[tool.tsum.policy.trigger]\nratio = 0.4\n"
    )
    assert load_policy_file(pyproject) == load_policy_file(standalone)
    assert resolve_policy(str(pyproject)) == load_policy_file(standalone)
    (tmp_path / "other").mkdir()
    empty = tmp_path / "other" / "pyproject.toml"
    empty.write_text('[project]\nname = "demo"\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml: no \[tool.tsum.policy\] table"):
        load_policy_file(empty)


def test_resolve_policy_names_files_and_nothing_else(tmp_path: Path) -> None:
    assert resolve_policy("codex") is preset("codex")
    path = tmp_path / "x.toml"
    path.write_text('extends = "aider"\n')
    assert resolve_policy(str(path)).keep == preset("aider").keep
    with pytest.raises(ConfigError, match=r"policy 'nope': not a preset \(seed, .*\) nor a file"):
        resolve_policy("nope")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[trigger]\nratio = 1.5\n", "p.toml:2: trigger.ratio: must be in (0, 1], got 1.5"),
        (
            "[prepass]\ntrigger_tokens = 5\ntrigger_ratio = 0.5\n",
            "p.toml:3: prepass.trigger_ratio: set trigger_tokens or trigger_ratio, not both",
        ),
        ("[trigger]\nratio = true\n", "p.toml:2: trigger.ratio: must be a number, got True"),
        (
            '[trigger]\nmeasure = "peak"\n',
            "p.toml:2: trigger.measure: must be one of cumulative, current, conversation, got 'peak'",
        ),
        (
            '[trigger]\nthreshold = "tokens"\n',
            "p.toml:1: trigger.tokens: must be >= 1 with threshold = tokens",
        ),
        (
            "[trigger]\nratoi = 0.5\n",
            "p.toml:2: trigger.ratoi: unknown key (known: measure, threshold, ratio",
        ),
        (
            '[keep]\nkind = "fraction"\n',
            "p.toml:1: keep.fraction: must be in (0, 1) with kind = fraction",
        ),
        ("[keep]\nturns = -1\n", "p.toml:2: keep.turns: must be an integer >= 0, got -1"),
        (
            '[prepass]\nexclude_tools = "skill"\n',
            "p.toml:2: prepass.exclude_tools: must be a list of strings",
        ),
        (
            '[placement]\nacknowledgement = "ok"\n',
            "p.toml:2: placement.acknowledgement: needs role = user",
        ),
        (
            "[summary]\nmax_tokens = 1.5\n",
            "p.toml:2: summary.max_tokens: must be an integer >= 0, got 1.5",
        ),
        ("trigger = 3\n", "p.toml:1: trigger: must be a table ([trigger])"),
        ("polcy = 1\n", "p.toml:1: polcy: unknown key (known: name, description, runtime, extends"),
        ('extends = "claude"\n', "p.toml:1: extends: must name a preset (seed, "),
        (
            "[trigger\n",
            "p.toml: invalid TOML (Expected ']' at the end of a table declaration (at line 1, column 9))",
        ),
        (
            '[trigger]\nthreshold = "never"\n',
            "p.toml:2: trigger.threshold: is never and there is no prepass",
        ),
    ],
)
def test_errors_are_one_line_naming_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    """File and line (the key's, else its table's: tomllib gives none), then the key."""
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_policy_file(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path)) and expected in message


def test_an_error_names_the_line_of_its_key_wherever_the_file_writes_it(tmp_path: Path) -> None:
    """The key's line, not the table's first: comments, other tables and a multi-line
    string before it; a pyproject's [tool.tsum.policy] names the key from the top."""
    path = tmp_path / "my.toml"
    path.write_text(
        '# mine\nextends = "codex"\ndescription = """\nreserv_tokens = 1\n"""\n\n'
        "[trigger]\nratio = 0.8\nreserv_tokens = 5\n"
    )
    with pytest.raises(ConfigError) as info:
        load_policy_file(path)
    assert str(info.value).startswith(f"{path}:9: trigger.reserv_tokens: unknown key (known: ")
    dotted = tmp_path / "dotted.toml"
    dotted.write_text('name = "d"\ntrigger.ratio = 3\n')
    with pytest.raises(ConfigError, match=r"dotted.toml:2: trigger.ratio: must be in"):
        load_policy_file(dotted)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\n\n[tool.tsum.policy]\nextends = "codex"\n\n'
        "[tool.tsum.policy.trigger]\nratio = 1.8\n"
    )
    with pytest.raises(ConfigError) as info:
        load_policy_file(pyproject)
    assert str(info.value) == (
        f"{pyproject}:8: tool.tsum.policy.trigger.ratio: must be in (0, 1], got 1.8"
    )


def test_the_line_of_a_key_is_its_own_else_its_nearest_written_parents() -> None:
    text = "a = 1\n[t]\nx = '''\n[u]\ny = 2\n'''\n[u]\n  y=3 # c\n"
    assert toml_key_line(text, ["a"]) == 1
    assert toml_key_line(text, ["t", "x"]) == 3
    assert toml_key_line(text, ["u", "y"]) == 8  # not the text inside the string
    assert toml_key_line(text, ["t", "z"]) == 2  # unwritten: its table
    assert toml_key_line(text, ["nope"]) is None


def test_a_python_built_value_checks_itself() -> None:
    with pytest.raises(ConfigError, match=r"^keep.kind: must be one of turns"):
        P.Keep(kind="all")
    with pytest.raises(ConfigError, match=r"^trigger.ceiling_tokens: must be 0 or >= floor_tokens"):
        P.Trigger(floor_tokens=10, ceiling_tokens=5)


def test_the_triggers_kinds_are_enums_whose_text_is_the_tomls() -> None:
    trigger = P.Trigger(measure="conversation", threshold="every", every=2, unit="call")
    assert trigger.measure is TriggerMeasure.CONVERSATION
    assert trigger.threshold is Threshold.EVERY and trigger.unit is Checkpoint.CALL
    # conversation is timed as the current view; the others are the engine's own
    assert [m.engine for m in TriggerMeasure] == [
        Measure.CUMULATIVE,
        Measure.CURRENT,
        Measure.CURRENT,
    ]
    assert 'measure = "conversation"' in to_toml(P.Policy(trigger=trigger))
    with pytest.raises(
        ConfigError, match=r"^trigger.unit: must be one of turn, call, got 'message'$"
    ):
        P.Trigger(unit="message")
    with pytest.raises(
        ConfigError, match=r"^trigger.threshold: must be one of ratio, .*, got \[1\]$"
    ):
        P.Trigger(threshold=[1])


def test_trigger_summary_says_when_each_preset_acts() -> None:
    assert (
        trigger_summary(preset("seed"))
        == "summarize (cumulative >= window x 0.75, debounce 3), per turn"
    )
    assert trigger_summary(preset("claude-code")) == "summarize (view >= window - 33,000), per call"
    assert (
        trigger_summary(preset("clear-tool-uses"))
        == "clear tool results (view >= 100,000 tokens), per call"
    )
    assert "in [1,024, 8,192]" in trigger_summary(preset("aider"))


# ---- round trip of arbitrary valid policies ------------------------------------------

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)
_count = st.integers(min_value=1, max_value=10**7)
_ratio = st.floats(min_value=0.0, max_value=1.0, exclude_min=True)


@st.composite
def policies(draw: st.DrawFn) -> P.Policy:
    floor = draw(st.integers(0, 5000))
    trigger = P.Trigger(
        measure=draw(st.sampled_from(list(TriggerMeasure))),
        threshold=draw(st.sampled_from([t for t in Threshold if t is not Threshold.NEVER])),
        ratio=draw(_ratio),
        tokens=draw(_count),
        reserve_tokens=draw(_count),
        floor_tokens=floor,
        ceiling_tokens=draw(st.sampled_from([0, floor + draw(st.integers(0, 10**6))])),
        every=draw(_count),
        messages=draw(_count),
        debounce=draw(st.integers(0, 50)),
        unit=draw(st.sampled_from(list(Checkpoint))),
    )
    trigger_tokens = draw(st.sampled_from([0, draw(_count)]))
    prepass = P.PrePass(
        kind=draw(st.sampled_from(P.PREPASS_KINDS)),
        trigger_tokens=trigger_tokens,
        trigger_ratio=0.0 if trigger_tokens else draw(st.sampled_from([0.0, draw(_ratio)])),
        keep_newest=draw(st.integers(0, 50)),
        protect_tokens=draw(_count),
        placeholder=draw(_text.filter(bool)),
        exclude_tools=tuple(draw(st.lists(_text, max_size=3))),
        clear_inputs=draw(st.booleans()),
    )
    keep = P.Keep(
        kind=draw(st.sampled_from(P.KEEP_KINDS)),
        turns=draw(_count),
        messages=draw(_count),
        tokens=draw(_count),
        tokens_ratio=draw(st.sampled_from([0.0, draw(_ratio)])),
        fraction=draw(st.floats(0.01, 0.99)),
        pairs_intact=draw(st.booleans()),
        first_user=draw(st.booleans()),
    )
    role = draw(st.sampled_from(P.ROLES))
    placement = P.Placement(
        role=role,
        position=draw(st.sampled_from(P.POSITIONS)),
        marker=draw(_text),
        lead_in=draw(_text) if role == "assistant" else "",
        acknowledgement=draw(_text) if role == "user" else "",
    )
    return P.Policy(
        name=draw(_text.filter(str.strip)),
        description=draw(_text),
        runtime=draw(st.sampled_from(("", *P.RUNTIMES))),
        trigger=trigger,
        prepass=prepass,
        keep=keep,
        summarizer_input=P.SummarizerInput(
            kind=draw(st.sampled_from(P.INPUT_KINDS)), tail_tokens=draw(_count)
        ),
        placement=placement,
        summary=P.SummarySpec(template=draw(_text.filter(str.strip)), max_tokens=draw(_count)),
    )


@settings(max_examples=60, deadline=None)
@given(policies())
def test_to_toml_round_trips_any_policy(policy: P.Policy) -> None:
    text = to_toml(policy)
    tomllib.loads(text)  # valid TOML on its own
    assert parse_policy(text, "generated") == policy
