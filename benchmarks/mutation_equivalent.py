"""The equivalent mutants of benchmarks/mutation.py: mutants that change nothing a caller
can see, so no test can kill them; each with the reason. They are left out of the score
(docs/testing.md lists them too).
"""

from __future__ import annotations

# (module, the line as written, the change, its replacement text, or where a line has
# two alike "change @column", "change @line:column" where two lines are alike) -> why
# the mutant changes nothing a caller can see.
EQUIVALENT: dict[tuple[str, str, str], str] = {
    (
        "transcript_tools/engine/prompt.py",
        'self.render("User: (example)", session_id="session", turn=0, previous_summary="")',
        "0 -> 1",
    ): "a trial render with stand-in values, its text discarded: only whether it raises counts",
    (
        "transcript_tools/engine/prompt.py",
        'if entry.name.startswith("summary.") and entry.name.endswith(".j2"):',
        "and -> or",
    ): "the prompts package ships summary.*.j2 files and __init__.py only: either test"
    " alone picks the same files",
    ("transcript_tools/cost/meter.py", "meter.appended(0, 0, len(conv.messages))", "0 -> 1 @19"): (
        "the unit's number is not read by CostMeter.appended (the drive loop's hook signature)"
    ),
    (
        "transcript_tools/engine/compaction.py",
        "for position in range(len(region) - 1, -1, -1):",
        "1 -> 2 @193:44",
    ): (
        "in _turn_start (indented 4): a stop of -2 visits the last message again, and a start"
        " of -1 found there is clamped to 0 by keep_plan, the same as none found"
    ),
    (
        "transcript_tools/engine/drive.py",
        "return list(zip(starts, ends, strict=True))",
        "True -> False",
    ): ("ends is made from starts: the two always have the same length"),
    **{
        ("transcript_tools/engine/records.py", f"class {line}, total=False):", "False -> True"): (
            "a TypedDict's totality is read by type checkers only"
        )
        for line in (
            "UnitFields(TypedDict",
            "WindowFields(TypedDict",
            "PolicyFields(TypedDict",
            "DecisionRecord(UnitFields, WindowFields, PolicyFields",
            "SummaryRecord(UnitFields, PolicyFields",
            "SnapshotRecord(UnitFields",
        )
    },
    (
        "transcript_tools/engine/policy_slot.py",
        "self._settled = chosen[-1] + 1",
        "(chosen[-1] - 1)",
    ): (
        "walking on from two messages earlier adds only the output just cleared (skipped:"
        " already replaced) and one older message, below every output the walk can clear"
    ),
    ("transcript_tools/cost/sizes.py", "if grown > 0 and prompt > hidden:", "0 -> 1"): (
        "grown is 0 (a call right at the restart) or a sum of estimates of 8 or more"
    ),
    **{
        ("transcript_tools/cost/sizes.py", "if same_prompt and pb >= pa and grown > 0:", c): (
            "grown sums the estimates from the call at a on, and a message's estimate is at"
            " least 8: grown > 0, >= 0 and > 1 are all true"
        )
        for c in ("(grown >= 0)", "0 -> 1")
    },
    (
        "transcript_tools/cost/sizes.py",
        "by_id = {id(m): ratio * e for m, e in zip(messages, estimates, strict=True)}",
        "True -> False",
    ): "the estimates are made from the messages: the two always have the same length",
    (
        "transcript_tools/cost/sizes.py",
        "{id(m): float(e) for m, e in zip(messages, estimates, strict=True)}, 0, 1.0, False",
        "True -> False",
    ): "the estimates are made from the messages: the two always have the same length",
    (
        "transcript_tools/engine/policy_slot.py",
        "_tokens_prefix: list[int] = field(default_factory=lambda: [0])",
        "0 -> 1",
    ): "only differences of the prefix sums are read: a constant start cancels",
    (
        "transcript_tools/cost/model.py",
        "broken = min(max(0, prompt - view_read - new_tokens), prompt - read)",
        "(prompt + read)",
    ): "the cap never binds: read <= view_read (survived only lowers the prefix) and new_tokens"
    " >= 0, so prompt - view_read - new_tokens <= prompt - read",
    (
        "transcript_tools/engine/compaction.py",
        "chars = max(2, len(text) * budget // max(size, 1))",
        "1 -> 2 @51",
    ): "keep_plan cuts a message only when size > left >= 1: size >= 2, so max(size, 2) is size",
    (
        "transcript_tools/engine/accounting.py",
        "if anchor_usage is not None and anchor_message is not None:",
        "and -> or",
    ): "anchor_usage and anchor_message are set together (one assignment): both None or neither",
    ("transcript_tools/engine/compaction.py", "cut = max(size - budget, 0)", "0 -> 1"): (
        "keep_plan cuts a message only when its size is over the budget: size - budget >= 1"
    ),
    (
        "transcript_tools/engine/compaction.py",
        "region: Sequence[Entry], budget: int, tokens: Tokens, floor: int, at_least: bool = False",
        "False -> True",
    ): "_token_tail_start's one caller (keep_plan) passes keep.at_least: the default is never taken",
    (
        "transcript_tools/engine/policy_slot.py",
        "return round(self.sizes.of(original) * estimate_message_tokens(copy) / max(estimate, 1))",
        "1 -> 2",
    ): "a message's estimate is never below 8 (the message overhead): max(estimate, 2) is estimate",
    ("transcript_tools/engine/config.py", "skip_bad_lines: bool = False", "False -> True"): (
        "RunSettings' one maker (settings.load_settings) passes skip_bad_lines: never the default"
    ),
    (
        "transcript_tools/cost/records.py",
        "class CostRecord(TypedDict, total=False):",
        "False -> True",
    ): "a TypedDict's totality is read by type checkers only",
    ("transcript_tools/engine/policy_lines.py", "if ceiling and tokens > ceiling:", "> -> >="): (
        "at tokens == ceiling, clamping to the ceiling leaves the same value"
    ),
    (
        "transcript_tools/engine/policy_lines.py",
        "return float(floor) if tokens < floor else float(tokens)",
        "< -> <=",
    ): "at tokens == floor both branches return the same float",
    (
        "transcript_tools/engine/validity.py",
        'first = i == start or all(roles[j] == "system" for j in range(start, i))',
        "or -> and",
    ): "view[start] is never a system message, so all(...) is false for i > start, true for i == start",
    **{
        (
            "transcript_tools/cost/cache_rules.py",
            'NO_CACHE = CacheRules("none", 0, 1, None, False)',
            c,
        ): ("split returns (0, 0, prompt) for provider none before reading any other field")
        for c in ("0 -> 1", "1 -> 2", "False -> True")
    },
    (
        "transcript_tools/cost/cache_rules.py",
        "shared = 0 if expired else min(shared, prompt)",
        "0 -> 1",
    ): "a 1-token prefix is below every caching provider's minimum (1,024): read 0 either way",
    **{
        ("transcript_tools/cost/model.py", line, change): (
            "PricedCall's defaults: RunCost.add, its one maker, passes every field"
        )
        for line, change in (
            (
                "break_usd: float = 0.0  # what the call paid beyond a warm cache (a compaction's price)",
                "0.0 -> 1.0",
            ),
            ("summarizer: bool = False", "False -> True"),
            (
                "at: int = -1  # the call's message index in the history (-1: a summarizer call)",
                "-x -> x",
            ),
            (
                "at: int = -1  # the call's message index in the history (-1: a summarizer call)",
                "1 -> 2",
            ),
            (
                "modeled: bool = False  # priced by the model, not from recorded usage",
                "False -> True",
            ),
        )
    },
    **{
        ("transcript_tools/cost/model.py", "at: int = -1,", change): (
            "only summarizer calls take the default, and their index is read nowhere"
            " (same_model_delta takes them by their flag)"
        )
        for change in ("-x -> x", "1 -> 2")
    },
    (
        "transcript_tools/cost/model.py",
        "break_usd = quote.usd - (warm_quote.usd if warm_quote is not None else 0.0)",
        "0.0 -> 1.0",
    ): "the same pricer and model just priced the call: the warm quote is never None",
    ("transcript_tools/cost/model.py", "shared = 0", "0 -> 1"): (
        "a 1-token prefix is below every caching provider's minimum (1,024): read 0 either way"
    ),
    (
        "transcript_tools/engine/windows.py",
        'name = name.rsplit("/", 1)[-1]  # provider/model ids (openrouter, bedrock paths)',
        "1 -> 2",
    ): "the last piece of rsplit is the text after the last '/' whatever the split count",
    **{
        ("transcript_tools/engine/runtime_policy.py", line, "0 -> 1"): (
            "the last row's since-version: a release below it takes the last row's value anyway"
        )
        for line in ("((0,), 45_000),  # 1.0.x and 2.0.x", "((0,), 0.7),")
    },
    **{
        ("transcript_tools/engine/runtime_policy.py", "return table[-1][1]", change): (
            "never reached: each table's last row is since (0,), which every parsed release"
            " (a tuple of ints >= 0) reaches"
        )
        for change in ("-x -> x", "1 -> 2")
    },
    (
        "transcript_tools/cost/breakpoints.py",
        "MAX_BREAKPOINTS = 4  # per request (the page above)",
        "4 -> 5",
    ): "no placement marks more than 3 (the system prompt and at most 2 messages): the cap"
    " never binds",
    **{
        ("transcript_tools/engine/accounting.py", "anchor_end = -1", change): (
            "read only when anchor_usage is set, and the two are set together"
        )
        for change in ("-x -> x", "1 -> 2")
    },
    (
        "transcript_tools/engine/slot.py",
        "_summary_cache: tuple[str | None, int] = field(default=(None, 0), compare=False, repr=False)",
        "0 -> 1",
    ): "the size is read only when the cached text equals the summary's, never None",
    ("transcript_tools/engine/slot.py", "if summary.text != self._summary_cache[0]:", "0 -> 1"): (
        "a text never equals the cached int: the size is computed afresh each time, the same"
    ),
    (
        "transcript_tools/engine/session.py",
        "self._pending = _Pending(self.turn_index, None, record, advance_after=False)",
        "False -> True",
    ): "finalize_turn reads only this pending unit's record and passes its own advance_after",
    (
        "transcript_tools/engine/session.py",
        'count = slot.view_size()[0] if slot.policy.trigger.threshold == "messages" else 0',
        "0 -> 1",
    ): "policy_skip reads the view's message count only under a messages threshold",
    ("transcript_tools/engine/formatting.py", "if n <= 0:", "<= -> <"): (
        "_tail's one caller passes max_chars > 0 (formatted_blocks returns early at <= 0)"
    ),
    **{
        ("transcript_tools/engine/formatting.py", line, change): (
            "a fast path by exact type: the general code below gives the same text"
            " (at a cap of 0 a result cut to nothing; one text block joined alone)"
        )
        for line in (
            "if cls is ToolResultMessage and max_tool_result_chars >= 0:",
            "if len(blocks) == 1 and type(blocks[0]) is TextBlock and max_tool_result_chars >= 0:",
        )
        for change in (">= -> >", "0 -> 1")
    },
    (
        "transcript_tools/engine/formatting.py",
        "if len(content) > max_tool_result_chars:",
        "> -> >=",
    ): ("a content exactly the cap long is cut to all of itself: the same text"),
    ("transcript_tools/engine/formatting.py", "if not messages or max_chars == 0:", "or -> and"): (
        'formatted_blocks gives ([], False) for no messages and for a cap of 0: the same ("", 0)'
    ),
    ("transcript_tools/engine/formatting.py", "self._end = 0", "0 -> 1"): (
        "a first call resets either way (1 > 0 for no messages, else messages[0] is not None)"
    ),
    (
        "transcript_tools/engine/formatting.py",
        "if self._end > end or (self._end and messages[self._end - 1] is not self._last):",
        "> -> >=",
    ): "the same history again is formatted afresh instead of reused: the same blocks",
    (
        "transcript_tools/engine/formatting.py",
        "if self._end > end or (self._end and messages[self._end - 1] is not self._last):",
        "1 -> 2",
    ): "comparing an earlier message with the last one only resets more often: the same blocks",
    ("transcript_tools/engine/formatting.py", "if max_chars <= 0:", "<= -> <"): (
        "at a cap of 0 suffix_cut keeps no block: ([], False) either way"
    ),
    ("transcript_tools/engine/formatting.py", "if kept <= len(fresh):", "<= -> <"): (
        "at kept == len(fresh) the other branch takes no remembered block: the same list"
    ),
    (
        "transcript_tools/engine/formatting.py",
        "self._last = messages[end - 1] if end else None",
        "1 -> 2",
    ): "remembering an earlier message only makes the next call reset: the same blocks",
    ("transcript_tools/engine/tokens.py", "+ digits * DIGIT_TOKENS", "* -> /"): (
        "DIGIT_TOKENS is 1.0: multiplying and dividing by it give the same"
    ),
    **{
        ("transcript_tools/engine/tokens.py", line, change): (
            "the class of a byte >= 0x80 is never looked up: those bytes are deleted first"
        )
        for line, change in (("if byte >= 0x80:", ">= -> >"), ("if byte >= 0x80:", "128 -> 129"))
    },
    (
        "transcript_tools/engine/tokens.py",
        "return tokens_from_counts(*_utf8_counts(raw)) if raw else 0",
        "0 -> 1",
    ): 'never given empty bytes: estimate_text_tokens returns 0 for "" first, and orjson\'s'
    " output is never empty",
    (
        "transcript_tools/engine/tokens.py",
        "if cls is AssistantMessage or cls is UserMessage:",
        "or -> and",
    ): ("a fast path by exact type: the isinstance chain below sums the same block estimates"),
    ("transcript_tools/engine/tokens.py", "if a <= last and b >= first", "<= -> <"): (
        "no range of CJK_RANGES starts at a block's last code point (xxFF)"
    ),
    ("transcript_tools/engine/tokens.py", "if a <= last and b >= first", ">= -> >"): (
        "no range of CJK_RANGES ends at a block's first code point (xx00)"
    ),
    (
        "transcript_tools/engine/tokens.py",
        "if sum(end - start + 1 for start, end in spans) == 256:",
        "- -> +",
    ): "the spans of CJK_RANGES start at 0x00 (the same sum) or 0x40 (320, 192: neither 256)",
    ("transcript_tools/engine/tokens.py", "bit = 1", "1 -> 2"): (
        "CJK_RANGES cut 3 blocks: bits 2, 4, 8 are as distinct as 1, 2, 4, all below 0x80"
    ),
    ("transcript_tools/engine/tokens.py", "for block in range(256):", "256 -> 257"): (
        "block 256 starts past the BMP: no range reaches it, so it is skipped"
    ),
    ("transcript_tools/engine/tokens.py", "bit <<= 1", "1 -> 2"): (
        "CJK_RANGES cut 3 blocks: bits 1, 4, 16 are as distinct as 1, 2, 4, all below 0x80"
    ),
    ("transcript_tools/engine/formatting.py", "if len(text) <= n:", "<= -> <"): (
        "_tail's one caller passes a block longer than n: the early return is never taken"
    ),
    (
        "transcript_tools/engine/rules.py",
        "call_open: bool = False  # the current unit already holds a model call",
        "False -> True",
    ): "read only once pending is None, which is after the first call set it to True anyway",
    (
        "transcript_tools/cost/cache_rules.py",
        'DEEPSEEK = CacheRules("deepseek", 0, 1, None, False)',
        "0 -> 1",
    ): ("a minimum of 1 refuses only a read of 0 tokens, which reads nothing anyway"),
    (
        "transcript_tools/cost/cache_rules.py",
        "major, minor = int(version.group(1)), int(version.group(2) or 0)",
        "0 -> 1",
    ): "a bare major version compared with (2, 5): x.0 and x.1 fall on the same side",
    (
        "transcript_tools/cost/meter.py",
        "_previous_end: int = 0",
        "0 -> 1",
    ): "read only once _previous is set, and both are set together after the first call",
    (
        "transcript_tools/cost/sizes.py",
        "read = 0 if usage is None else usage.cache_read_tokens",
        "0 -> 1",
    ): "the call at end is one of calibrate's calls, each with recorded usage: never None",
    **{
        (
            "transcript_tools/cost/prices.py",
            "return window if isinstance(window, int) and window > 0 else None",
            c,
        ): (
            "genai-prices 0.2.3 lists no context window of 0 or 1 (its smallest is 512):"
            " > 0, >= 0 and > 1 keep the same windows"
        )
        for c in ("> -> >=", "0 -> 1")
    },
    (
        "transcript_tools/cost/model.py",
        "over_window: bool = False",
        "False -> True",
    ): "PricedCall's defaults: RunCost.add, its one maker, passes every field",
    (
        "transcript_tools/cost/model.py",
        "shared = 0 if n is None else round(sizes.hidden + sum(sizes.of(m) for m in view[:n]))",
        "0 -> 1",
    ): (
        "n is None only past a lookback (Anthropic's 20 blocks; DeepSeek has none), and"
        " Anthropic's least cached prefix is 1,024 tokens: a 1-token prefix reads 0 either way"
    ),
    ("transcript_tools/engine/settings_table.py", "sweeps: bool = False", "False -> True"): (
        "read only by sweep_list_option's assert, which every grid setting (sweeps=True in"
        " its row) passes either way: a True default only lets a wrong call through"
    ),
    **{
        ("transcript_tools/engine/validity.py", line, change): (
            "the bound of check_all's memo of recent views: a view found there and one checked"
            " afresh give the same violations (messages are frozen, and held while memoized)"
        )
        for line, change in (
            ("RECENT_MESSAGES = 1 << 16", "1 -> 2"),
            ("RECENT_MESSAGES = 1 << 16", "16 -> 17"),
            ("_held = [0]  # messages held by _RECENT's views", "0 -> 1"),
        )
    },
    **{
        ("transcript_tools/engine/validity.py", "MESSAGE_FACTS = 1 << 14", change): (
            "the bound of the per-message facts memo: facts read from it and found afresh are"
            " the same (messages are frozen, and held while memoized)"
        )
        for change in ("1 -> 2", "14 -> 15")
    },
    (
        "transcript_tools/engine/drive.py",
        "def recorded_window(conv: Conversation, configured: int, policy_window: int = 0)"
        " -> tuple[int, str]:",
        "0 -> 1",
    ): "every caller (session_window, the sweep's config, tsum fidelity) passes policy_window",
    **{
        ("transcript_tools/engine/drive.py", line, "0 -> 1"): (
            "model_room is read only by replay's window tip, given at FAR_LARGER (2) times a"
            " window of at least 1 token: a room of 1 instead of 0 gives no tip either way"
        )
        for line in ("default=0,", "return max(conv.context_window or 0, largest)")
    },
    (
        "transcript_tools/engine/drive.py",
        "stream = engine.settings.path is TurnPath.STREAM",
        "is -> is not",
    ): (
        "the sync and stream turn paths are one protocol with the same records (the seed's"
        " parity, checked by tests/sweep/test_path_and_window_parity.py): either path the same"
    ),
    (
        "transcript_tools/engine/requests.py",
        "formatted_cut: bool = field(default=False, compare=False, repr=False)",
        "False -> True @40",
    ): (
        "read (by the offline provider) only with formatted, and the one maker that sets"
        " formatted (engine/session.py) sets formatted_cut too"
    ),
}
