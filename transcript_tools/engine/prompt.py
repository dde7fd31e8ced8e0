"""Summary prompt templates: loading and rendering.

Two forms, told apart by their text:

* **Jinja** — the text contains a Jinja tag (``{{``, ``{%`` or ``{#``). It is
  rendered in Jinja's sandbox with undefined variables as errors; it receives
  ``messages`` (the formatted conversation), ``session_id``, ``turn`` and
  ``previous_summary`` (empty string before the first summary).
* **plain** — anything else: the seed's form, where every ``{messages}`` is
  replaced by the formatted conversation and nothing else is interpreted.

Conversation text is data, never template source: it is passed as a value, so
``{{ 7*7 }}`` inside a transcript comes out literally in both forms.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import TemplateError
from .seed_defaults import DEFAULT_TEMPLATE

TEMPLATE_VARIABLES = ("messages", "session_id", "turn", "previous_summary")
BUILTIN_PACKAGE = "transcript_tools.prompts"
JINJA_MARKERS = ("{{", "{%", "{#")


def builtin_template_names() -> list[str]:
    """Names of the templates shipped in the package (``summary.zh.j2`` → ``zh``)."""
    return list(_shipped_template_names())


@cache
def _shipped_template_names() -> tuple[str, ...]:
    # Listed once per process: every engine a sweep builds loads its template by name
    # (policy_engine.with_policy), and listing the package's files costs more than a turn
    names = []
    for entry in resources.files(BUILTIN_PACKAGE).iterdir():
        if entry.name.startswith("summary.") and entry.name.endswith(".j2"):
            names.append(entry.name[len("summary.") : -len(".j2")])
    return tuple(sorted(names))


@cache
def builtin_template_source(name: str) -> str:
    try:
        return (
            resources.files(BUILTIN_PACKAGE)
            .joinpath(f"summary.{name}.j2")
            .read_text(encoding="utf-8")
        )
    except FileNotFoundError:
        raise TemplateError(
            f"no built-in prompt {name!r} (built-in: {', '.join(builtin_template_names())})"
        ) from None


def is_jinja(source: str) -> bool:
    return any(marker in source for marker in JINJA_MARKERS)


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template; ``render`` is cheap, compilation happens once."""

    name: str
    source: str

    @cached_property
    def kind(self) -> str:
        return "jinja" if is_jinja(self.source) else "plain"

    @property
    def variables(self) -> frozenset[str]:
        """The variables the template reads (a plain template: ``messages`` only)."""
        if self.kind == "plain":
            return frozenset({"messages"})
        return _template_variables(self.source)

    @cached_property  # read for every summary record
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()

    @cached_property
    def shipped(self) -> bool:
        """Is this one of the package's own templates, text for text? (Rendered without
        the time bound a user's template gets: it has no loop to bound.)"""
        return (
            self.name in _shipped_template_names()
            and builtin_template_source(self.name) == self.source
        )

    def render(
        self, messages: str, *, session_id: str = "", turn: int = 0, previous_summary: str = ""
    ) -> str:
        if self.kind == "plain":
            return self.source.replace("{messages}", messages)
        template = _compile(self.name, self.source)
        values = {
            "messages": messages,
            "session_id": session_id,
            "turn": turn,
            "previous_summary": previous_summary,
        }
        try:
            if self.shipped:  # a timer per render costs four system calls
                return str(template.render(**values))
            return _render_bounded(template, **values)
        except RenderTimeout:
            raise TemplateError(
                f"prompt {self.name}: rendering took over {RENDER_SECONDS:g} s "
                "(a loop too large for a prompt); tsum stops it"
            ) from None
        except Exception as exc:  # jinja raises many types: sandbox, undefined, type errors
            raise TemplateError(
                f"prompt {self.name}: cannot render ({type(exc).__name__}: {exc})"
            ) from None

    def check(self) -> list[str]:
        """Problems worth a warning (a template that never uses the messages)."""
        if self.kind == "plain":
            return (
                []
                if "{messages}" in self.source
                else [f"prompt {self.name}: no {{messages}} placeholder"]
            )
        _compile(self.name, self.source)
        # Render once with stand-in values: a sandbox violation or a failing filter
        # stops the run here, before any work, not at the first summary.
        self.render("User: (example)", session_id="session", turn=0, previous_summary="")
        used = _variables(self.source)
        if "messages" not in used:
            return [
                f"prompt {self.name}: the template never uses `messages`, so summaries see no conversation"
            ]
        return []


# The sandbox bounds what a template may reach, not how long it runs: two nested
# range(99999) loops would hang the run at start-up (``check`` renders once). A render
# gets this long, on the main thread, where a timer signal can stop it.
RENDER_SECONDS = 10.0


class RenderTimeout(Exception):
    """The render ran past ``RENDER_SECONDS``."""


def _render_bounded(template: Any, **values: Any) -> str:
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return str(template.render(**values))  # no timer signal off the main thread

    def expired(_signum: int, _frame: object) -> None:
        raise RenderTimeout()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, RENDER_SECONDS)
    try:
        return str(template.render(**values))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _environment() -> Any:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    # Templates arrive through pull requests that CI runs with keys present: sandbox them.
    return SandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True
    )


@lru_cache(maxsize=64)
def _compile(name: str, source: str) -> Any:
    from jinja2 import TemplateSyntaxError

    env = _environment()
    try:
        template = env.from_string(source)
    except TemplateSyntaxError as exc:
        raise TemplateError(f"prompt {name}: line {exc.lineno}: {exc.message}") from None
    # The same globals (the environment is this template's alone and never changes) as
    # one dict, not a ChainMap over the environment's: every render copies them into
    # its context, a dict at C speed, a ChainMap key by key in Python
    template.globals = dict(template.globals)
    unknown = sorted(_variables(source) - set(TEMPLATE_VARIABLES))
    if unknown:
        raise TemplateError(
            f"prompt {name}: undefined variable(s) {', '.join(unknown)} "
            f"(available: {', '.join(TEMPLATE_VARIABLES)})"
        )
    return template


@lru_cache(maxsize=64)
def _template_variables(source: str) -> frozenset[str]:
    return frozenset(_variables(source))


def _variables(source: str) -> set[str]:
    from jinja2 import meta

    return set(meta.find_undeclared_variables(_environment().parse(source)))


def load_template(spec: str | None) -> PromptTemplate:
    """``spec``: a built-in name (``zh``, ``en``), a path to a file, or None for the default."""
    if spec is None or spec in builtin_template_names():
        name = spec or DEFAULT_TEMPLATE
        return PromptTemplate(name, builtin_template_source(name))
    path = Path(spec)
    if not path.is_file():
        raise TemplateError(
            f"prompt {spec!r}: not a built-in name ({', '.join(builtin_template_names())}) nor a file"
        )
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError(f"{spec}: cannot read prompt ({exc})") from None
    if not source.strip():
        raise TemplateError(f"{spec}: empty prompt")
    return PromptTemplate(path.name, source)


def template_from_config(source: str, name: str | None = None) -> PromptTemplate:
    """A template for ``SummaryConfig.summary_prompt`` text, named after a built-in when it is one."""
    if name is None:
        name = next(
            (n for n in builtin_template_names() if builtin_template_source(n) == source), "custom"
        )
    return PromptTemplate(name, source)
