"""How a ``tsum`` help page is laid out: examples, and options in groups on long pages.

Click prints every option in one list; on a page of 30-40 options (replay, check, sweep,
eval) the one a reader looks for is lost. ``TsumCommand`` prints them under headings
(input, trigger, policy and prompt, provider, output, run) once a page has more than
``GROUP_OVER`` options, with click's own formatter (``Command.format_options`` is the hook
click documents for it: https://click.palletsprojects.com/en/stable/api/#click.Command.format_options),
so no option-group dependency is needed.
"""

from __future__ import annotations

import click

from ..engine.settings_table import PROVIDER_OPTION_NAMES

# More options than this, and a page prints them in groups.
GROUP_OVER = 20

# Heading -> the option (parameter) names under it, in the order the headings print.
OPTION_GROUPS: dict[str, tuple[str, ...]] = {
    "Input options": ("config_path", "fmt", "skip_bad_lines", "baseline_dir", "session", "turn"),
    "Trigger options": (
        "trigger_token_ratio",
        "ratios",
        "max_context_tokens",
        "max_tokens",
        "debounce_turns",
        "debounces",
        "measure",
        "measures",
        "checkpoint",
        "checkpoints",
        "mode",
        "modes",
        "keep_recent_turns",
        "turn_path",
    ),
    "Policy and prompt options": (
        "policy",
        "policies",
        "prompt_spec",
        "prompts",
        "models",
        "summary_marker",
        "max_tool_result_chars",
        "max_transcript_chars",
    ),
    "Provider options": (*PROVIDER_OPTION_NAMES, "cache_path", "summary_tokens", "judge"),
    "Output options": (
        "out_dir",
        "out_format",
        "dry_run",
        "as_json",
        "as_csv",
        "markdown",
        "context",
        "max_diff_lines",
        "html_path",
        "report_path",
        "chart",
        "drift",
        "canaries",
        "replicates",
        "report_sample",
        "sort",
        "cost",
        "person_fates",
        "prices_file",
        "update",
        "max_drop",
        "max_cost_increase",
        "silent",
        "warnings_mode",
    ),
    "Run options": ("workers", "ray_address", "help"),
}
OTHER = "Other options"  # an option no group names (a test fails on one)

_GROUP_OF = {name: title for title, names in OPTION_GROUPS.items() for name in names}


def group_of(name: str | None) -> str:
    return _GROUP_OF.get(name or "", OTHER)


# A hyphen click's wrapping never breaks at (textwrap breaks after "-"): a format name
# such as tau-bench stays whole on a line; help pages print it as "-" again.
_NO_BREAK_HYPHEN = "\u2011"


def unbroken(word: str) -> str:
    """``word`` as one unit for click's wrapping (``TsumCommand`` prints its hyphens again)."""
    return word.replace("-", _NO_BREAK_HYPHEN)


def examples(*lines: str) -> str:
    """An ``Examples:`` block for a command's epilog, kept as written (click's ``\\b``)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


class TsumCommand(click.Command):
    """A command whose help groups its options once it has more than ``GROUP_OVER``."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        formatter.buffer[:] = [part.replace(_NO_BREAK_HYPHEN, "-") for part in formatter.buffer]

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        help_option = self.get_help_option(ctx)
        rows = [
            ("help" if param is help_option else param.name, record)
            for param in self.get_params(ctx)
            if isinstance(param, click.Option)
            and (record := param.get_help_record(ctx)) is not None
        ]
        if len(rows) <= GROUP_OVER:
            super().format_options(ctx, formatter)
            return
        grouped: dict[str, list[tuple[str, str]]] = {title: [] for title in OPTION_GROUPS}
        for name, record in rows:
            grouped.setdefault(group_of(name), []).append(record)
        for title, records in grouped.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


class TsumGroupCommand(click.Group):
    """A sub-command group whose commands are ``TsumCommand``s."""

    command_class = TsumCommand
