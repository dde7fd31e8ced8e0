"""``tsum policies list|show``, and ``--policy FILE|NAME`` for the commands that take one."""

from __future__ import annotations

from typing import Any

import click

from ..errors import ConfigError
from ..terminal import echo
from .help import TsumGroupCommand, examples

POLICY_HELP = (
    "Compaction policy: a preset (tsum policies list) or a TOML file, which may "
    "start from a preset with extends = NAME; a pyproject.toml is read at [tool.tsum.policy]."
)


GIVEN_KEY = "tsum.given"  # ctx.meta: an option's value as written, where it is converted


def given_value(ctx: click.Context, name: str, value: Any) -> str:
    """``value`` as the user wrote it (a ``--policy`` file or name, not the ``Policy`` read)."""
    return str(ctx.meta.get(GIVEN_KEY, {}).get(name, value))


class PolicyParam(click.ParamType):
    """``--policy FILE|NAME`` → a checked ``Policy``; a bad one is a one-line usage error."""

    name = "FILE|NAME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ..engine.policy import Policy
        from ..engine.policy_toml import resolve_policy

        if isinstance(value, Policy):
            return value
        if ctx is not None and param is not None and param.name:  # as given, for a hint
            ctx.meta.setdefault(GIVEN_KEY, {})[param.name] = str(value)
        from ..engine.prompt import load_template
        from ..errors import TemplateError

        try:
            policy = resolve_policy(str(value))
        except ConfigError as exc:
            self.fail(str(exc), param, ctx)
        if policy.summarizes:  # a missing template fails here, before any work
            try:
                load_template(policy.summary.template)
            except TemplateError as exc:
                self.fail(f"{value}: summary.template: {exc}", param, ctx)
        return policy


def policy_option(func: Any) -> Any:
    """The ``--policy`` option (env ``TSUM_POLICY``); the value is a ``Policy`` or None."""
    return click.option(
        "--policy",
        "policy",
        type=PolicyParam(),
        envvar="TSUM_POLICY",
        show_envvar=True,
        default=None,
        help=POLICY_HELP,
    )(func)


@click.group(
    cls=TsumGroupCommand,
    epilog=examples(
        "tsum policies list",
        "tsum policies show claude-code",
        "tsum replay samples/ --policy claude-code",
    ),
)
def policies_group() -> None:
    """Compaction policies: the seed's and the presets of the leading agent runtimes."""


@policies_group.command("list", epilog=examples("tsum policies list", "tsum policies list --json"))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per preset.")
def policies_list(as_json: bool) -> None:
    """List the presets, then the installed plug-ins' policies: name, what it reproduces,
    when it acts."""
    import json  # here: the --help of every command with --policy imports this module

    from ..engine.policy_toml import plugin_policies, preset, preset_names, trigger_summary

    listed = [(name, preset(name)) for name in preset_names()]
    for name, policy in [*listed, *plugin_policies().items()]:
        if as_json:
            row = {
                "name": name,
                "description": policy.description,
                "trigger": trigger_summary(policy),
            }
            echo(json.dumps(row, ensure_ascii=False, sort_keys=True))
        else:
            echo(f"{name}\t{policy.description}\t{trigger_summary(policy)}")


@policies_group.command(
    "show",
    epilog=examples(
        "tsum policies show codex",
        "tsum policies show my_policy.toml             (its extends = NAME resolved)",
    ),
)
@click.argument("spec", metavar="NAME|FILE")
def policies_show(spec: str) -> None:
    """Print a policy's full TOML (a preset, or a file with its extends resolved)."""
    from ..engine.policy_toml import resolve_policy, to_toml

    echo(to_toml(resolve_policy(spec)), nl=False)
