"""``tsum prompts list|show NAME``: the built-in summary prompt templates."""

from __future__ import annotations

import click

from ..terminal import echo
from .help import TsumGroupCommand, examples


@click.group(
    cls=TsumGroupCommand,
    epilog=examples("tsum prompts list", "tsum prompts show en > my_prompt.j2"),
)
def prompts_group() -> None:
    """The built-in summary prompt templates."""


@prompts_group.command("list", epilog=examples("tsum prompts list"))
def prompts_list() -> None:
    """List built-in templates."""
    from ..engine.prompt import builtin_template_names, builtin_template_source

    for name in builtin_template_names():
        first = builtin_template_source(name).strip().splitlines()[0]
        echo(f"{name}\t{first[:70]}")


@prompts_group.command(
    "show", epilog=examples("tsum prompts show zh", "tsum prompts show en > my_prompt.j2")
)
@click.argument("name")
def prompts_show(name: str) -> None:
    """Print a built-in template's source."""
    from ..engine.prompt import builtin_template_source

    echo(builtin_template_source(name), nl=False)
