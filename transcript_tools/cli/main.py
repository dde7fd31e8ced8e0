"""The top-level ``tsum`` group: version, error handling, exit codes."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from .._version import __version__
from ..errors import EXIT_CODE_MEANINGS, ExitCode, Terminated, TsumError, error_line
from ..terminal import echo
from ..writable import write_failure

SETTINGS_HELP = """\b
Settings (every command): command line > environment (TSUM_*)
  > settings file (--config FILE, else ./tsum.toml, else
  [tool.tsum] in ./pyproject.toml) > default."""


def exit_codes_help(width: int = 56) -> str:
    """The exit-code table of ``--help``, from the one table in errors.py."""
    import textwrap

    lines = ["\b", "Exit codes (all commands):"]
    for code, meaning in EXIT_CODE_MEANINGS.items():
        # A `code` span stays on one line (no-break spaces, which textwrap never splits at).
        spans = meaning.split("`")
        text = "".join(p.replace(" ", "\u00a0") if i % 2 else p for i, p in enumerate(spans))
        wrapped = [
            w.replace("\u00a0", " ") for w in textwrap.wrap(text, width - 7, break_on_hyphens=False)
        ]
        lines.append(f"  {int(code):<4} {wrapped[0]}")
        lines.extend(f"       {rest}" for rest in wrapped[1:])
    return "\n".join(lines)


EXIT_CODES_HELP = exit_codes_help()


def internal_error_line(exc: BaseException) -> str:
    """One line for an exception tsum did not expect: it is a bug, and where to see more."""
    kind = type(exc)
    name = (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    text = " ".join(str(exc).split())  # one line, whatever the exception's message holds
    if len(text) > 300:
        text = text[:300] + "…"
    what = f"{name}: {text}" if text else name
    return (
        f"tsum: internal error (a bug in tsum, exit {int(ExitCode.INTERNAL)}): {what}; "
        "run it again as `tsum --debug ...` (the same arguments) to see the traceback"
    )


class TsumGroup(click.Group):
    """Expected errors become one line on stderr and an exit code; never a traceback
    (``--debug`` prints it first). Anything else is a bug in tsum: one line saying so and
    its own exit code, never 1, which means "differences found" to a CI gate."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own: usage errors, --help, ctx.exit(); click.main reports them
        except TsumError as exc:
            show_traceback(ctx)
            echo(error_line(str(exc)), err=True)
            ctx.exit(int(exc.exit_code))
        except Terminated:
            echo("tsum: terminated (SIGTERM)", err=True)
            ctx.exit(int(ExitCode.TERMINATED))
        except KeyboardInterrupt:
            echo("tsum: interrupted", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        except BrokenPipeError:
            # stdout's reader went away (`tsum ... | head`): stop quietly, with the
            # shell's code for SIGPIPE rather than one of tsum's own.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(int(ExitCode.BROKEN_PIPE))
        except OSError as exc:  # a full or read-only disk is not a bug in tsum
            show_traceback(ctx)
            line = write_failure(exc)
            echo(error_line(line) if line else internal_error_line(exc), err=True)
            ctx.exit(int(ExitCode.FAILED if line else ExitCode.INTERNAL))
        except Exception as exc:
            show_traceback(ctx)
            echo(internal_error_line(exc), err=True)
            ctx.exit(int(ExitCode.INTERNAL))


def show_traceback(ctx: click.Context) -> None:
    """With ``--debug``: the traceback of the exception being handled, on stderr."""
    root = ctx.find_root()
    if root.obj and root.obj.get("debug"):
        import traceback

        traceback.print_exc(file=sys.stderr)


# Each subcommand's module is imported only when that command runs (or shows its help):
# `tsum --version` and `tsum replay --help` must not pay for diff, sweep, asyncio, ssl…
# name -> one-line help for `tsum --help` (which imports nothing); the command is
# ``<name>_cmd.<name>_command``, a group ``<name>_cmd.<name>_group``.
COMMANDS: dict[str, str] = {
    "replay": "Replay transcripts turn by turn through the checkpoint.",
    "format": "Print the formatted history the summary prompt gets at a turn.",
    "prompt": "Print the rendered summary prompt at a turn.",
    "prompts": "The built-in summary prompt templates.",
    "inspect": "Per session: format, turns, messages, tokens, compactions.",
    "policies": "The compaction policies: list, show NAME.",
    "fidelity": "Each compaction the logs record against the policy's replay.",
    "cache": "Inspect or clear the response cache.",
    "diff": "Compare two `tsum replay --out` directories, per session and turn.",
    "check": "Replay PATHS and diff against a baseline, in one step (a CI gate).",
    "sweep": "Evaluate every combination of trigger settings on a corpus.",
    "compare": "Policies against a baseline: cost, recall, tokens, with paired intervals.",
    "batch": "Batches in flight with the providers' batch APIs: list, cancel.",
    "eval": "Score what survives each summary: probes, floors, templates side by side.",
}
GROUPS = frozenset({"prompts", "policies", "cache", "batch"})


def _load(name: str) -> click.Command:
    from importlib import import_module

    kind = "group" if name in GROUPS else "command"
    command = getattr(import_module(f"{__package__}.{name}_cmd"), f"{name}_{kind}")
    assert isinstance(command, click.Command)
    return command


class LazyGroup(TsumGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return _load(cmd_name) if cmd_name in COMMANDS else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The listing from COMMANDS: no subcommand module is imported to show it.
        with formatter.section("Commands"):
            formatter.write_dl(list(COMMANDS.items()))


@click.group(
    cls=LazyGroup,
    epilog=SETTINGS_HELP + "\n\n" + EXIT_CODES_HELP,
    context_settings={"help_option_names": ["-h", "--help"]},
)
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


def tune_gc() -> None:
    """The tsum process's garbage-collector policy, around its own run (the library never
    touches the collector). A transcript is a great many small acyclic objects
    (messages, blocks, usage) built in bursts and kept for a whole session; with the
    default gen-0 threshold (700) the cyclic collector walks them again and again
    (benchmarks/PROFILE.md). Reference counting frees them as usual; the collector just
    runs less often, and never over start-up's objects (modules, click), which live on."""
    import gc

    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def _terminated(_signum: int, _frame: object) -> None:
    """SIGTERM handled as Ctrl-C is (``Terminated``), instead of dying on the spot and
    leaving the process pool's workers behind."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends tsum at once
    raise Terminated()


def main() -> None:
    tune_gc()
    for stream in (sys.stdout, sys.stderr):
        # Transcripts are full of CJK and emoji: never crash on a terminal that can't show them.
        if (
            hasattr(stream, "reconfigure")
            and (stream.encoding or "").lower().replace("-", "") != "utf8"
        ):
            stream.reconfigure(errors="backslashreplace")
    signal.signal(signal.SIGTERM, _terminated)
    try:
        cli.main(prog_name="tsum")
    except Terminated:  # outside a command (e.g. during start-up)
        echo("tsum: terminated (SIGTERM)", err=True)
        sys.exit(int(ExitCode.TERMINATED))
    except KeyboardInterrupt:  # raised outside a command (e.g. during start-up)
        echo("tsum: interrupted", err=True)
        sys.exit(int(ExitCode.INTERRUPTED))
    except SystemExit as done:  # click ends every command this way
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if done.code is not None and not isinstance(done.code, int):
            echo(str(done.code), err=True)
        exit_now(code)
        raise


def exit_now(code: int) -> None:
    """End the process without the interpreter's teardown when nothing needs it.

    Every file tsum writes is closed by the time a command returns; what is left is
    freeing a run's objects one by one, which took 0.4 s after a 1,558-call replay
    (benchmarks/PROFILE.md) — time a user and a CI job wait for nothing. Not when
    something may still need its exit handlers: another thread, a child process
    (``--workers``), Ray (``--ray``), a profiler or a coverage tracer.

    A run ended by SIGTERM or Ctrl-C exits so even with another thread alive: its files
    are closed and its pool's workers killed by then, and the process pool's manager
    thread may wait forever for a result a killed worker was writing (parallel/pool.py),
    which the interpreter's teardown would join (CPython's concurrent.futures.process
    ``_python_exit``): a signalled tsum that never ends.
    """
    import threading

    stopped = code in (ExitCode.TERMINATED, ExitCode.INTERRUPTED)
    if (threading.active_count() > 1 and not stopped) or "ray" in sys.modules:
        return
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return  # a profiler or coverage writes its data at exit
    children = sys.modules.get("multiprocessing")
    if children is not None and children.active_children():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: the normal exit would say nothing either
        return
    os._exit(code)
