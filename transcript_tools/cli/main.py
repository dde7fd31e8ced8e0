"""The top-level ``tsum`` group: version, error handling, exit codes."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from .. import __version__
from ..errors import ExitCode, TsumError

EXIT_CODES_HELP = """\b
Exit codes (all commands):
  0    success; no differences (diff, check)
  1    differences found (diff, check)
  2    usage error: bad option, config or template,
       unknown provider, missing key or model
  3    could not run: bad input, cache miss with
       --cache-only, zero sessions processed, every
       summary call failed, missing or corrupt output
       directory or baseline (diff, check)
  130  interrupted (Ctrl-C)
  141  stdout closed by its reader (tsum ... | head)"""


BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE, as a shell reports a pipeline cut short


class TsumGroup(click.Group):
    """Expected errors become one line on stderr and an exit code; never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TsumError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"tsum: error: {exc}", err=True)
            ctx.exit(int(exc.exit_code))
        except KeyboardInterrupt:
            click.echo("tsum: interrupted", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        except BrokenPipeError:
            # stdout's reader went away (`tsum ... | head`): stop quietly, with the
            # shell's code for SIGPIPE rather than one of tsum's own.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(BROKEN_PIPE_EXIT)


@click.group(cls=TsumGroup, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="tsum")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """tsum — replay stored LLM conversations through the automatic-summary checkpoint.

    \b
    Typical use:
      tsum replay samples/long_session.jsonl          readable report
      tsum replay corpus/ --out out/                  JSONL records
      tsum inspect corpus/                            what is in the files
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _register() -> None:
    from .batch_cmd import batch_group
    from .cache_cmd import cache_group
    from .diff_cmd import check_command, diff_command
    from .inspect_cmd import inspect_command
    from .replay_cmd import format_command, prompt_command, prompts_group, replay_command
    from .sweep_cmd import sweep_command

    cli.add_command(replay_command, "replay")
    cli.add_command(format_command, "format")
    cli.add_command(prompt_command, "prompt")
    cli.add_command(prompts_group, "prompts")
    cli.add_command(inspect_command, "inspect")
    cli.add_command(cache_group, "cache")
    cli.add_command(diff_command, "diff")
    cli.add_command(check_command, "check")
    cli.add_command(sweep_command, "sweep")
    cli.add_command(batch_group, "batch")


_register()


def main() -> None:
    for stream in (sys.stdout, sys.stderr):
        # Transcripts are full of CJK and emoji: never crash on a terminal that can't show them.
        if hasattr(stream, "reconfigure") and (stream.encoding or "").lower().replace("-", "") != "utf8":
            stream.reconfigure(errors="backslashreplace")
    try:
        cli.main(prog_name="tsum")
    except KeyboardInterrupt:  # raised outside a command (e.g. during start-up)
        click.echo("tsum: interrupted", err=True)
        sys.exit(int(ExitCode.INTERRUPTED))
