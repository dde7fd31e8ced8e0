"""The package's own templates render without the time bound (``PromptTemplate.shipped``):
the same text as the bounded render; any other text keeps the bound, whatever its name."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine import prompt as prompt_module
from transcript_tools.engine.prompt import (
    PromptTemplate,
    _compile,
    _render_bounded,
    builtin_template_names,
    load_template,
    template_from_config,
)
from transcript_tools.errors import TemplateError


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(builtin_template_names()),
    st.text(),
    st.text(max_size=20),
    st.integers(0, 10_000),
    st.text(),
)
def test_a_shipped_template_renders_as_the_bounded_render(
    name: str, messages: str, session: str, turn: int, previous: str
) -> None:
    template = load_template(name)
    assert template.shipped and template_from_config(template.source).shipped
    values = {
        "messages": messages,
        "session_id": session,
        "turn": turn,
        "previous_summary": previous,
    }
    bounded = _render_bounded(_compile(template.name, template.source), **values)
    assert template.render(messages, session_id=session, turn=turn, previous_summary=previous) == (
        bounded
    )


def test_only_a_shipped_text_skips_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A template named after a shipped one, or a shipped text under another name, is
    bounded: a loop too long for a prompt is stopped."""
    calls: list[str] = []

    def counted(template: object, **values: object) -> str:
        calls.append(str(values["messages"]))
        return _render_bounded(template, **values)

    monkeypatch.setattr(prompt_module, "_render_bounded", counted)
    zh = load_template("zh")
    zh.render("a")
    assert calls == []
    PromptTemplate("mine.j2", zh.source).render("b")
    PromptTemplate("zh", zh.source + "{# mine #}").render("c")
    assert calls == ["b", "c"]
    monkeypatch.setattr(prompt_module, "RENDER_SECONDS", 0.3)
    hang = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
    with pytest.raises(TemplateError, match=r"prompt zh: rendering took over 0.3 s"):
        PromptTemplate("zh", hang + "{{ messages }}").render("d")


GLOBALS_USED = (
    "{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}"
    "{{ ns.n }} {{ dict(a=1)['a'] }} {% set c = cycler('x', 'y') %}{{ c.next() }}{{ c.next() }}"
    "{% set j = joiner('|') %}{{ j() }}a{{ j() }}b {{ lipsum(1, html=False, min=2, max=3)|length > 0 }}"
    " {{ session_id }} {{ turn }} {{ previous_summary }}\n{{ messages }}"
)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([*builtin_template_names(), None]), st.text(), st.integers(0, 99), st.text())
def test_a_template_renders_as_with_the_environments_own_globals(
    name: str | None, messages: str, turn: int, previous: str
) -> None:
    """``_compile`` keeps the template's globals as one dict: every template (a shipped
    one, or one that reads every global Jinja has) renders as with Jinja's ChainMap."""
    source = GLOBALS_USED if name is None else load_template(name).source
    compiled = _compile(name or "globals.j2", source)
    assert type(compiled.globals) is dict
    as_jinja = prompt_module._environment().from_string(source)
    values = {"messages": messages, "session_id": "s", "turn": turn, "previous_summary": previous}
    assert compiled.render(**values) == as_jinja.render(**values)
