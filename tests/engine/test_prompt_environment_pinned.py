"""How a Jinja prompt template renders (engine/prompt.py ``_environment``), pinned against
one-point edits found by a mutation run (docs/testing.md): the conversation goes into the
prompt as written (no HTML escaping), and a template's last newline stays.
"""

from __future__ import annotations

from transcript_tools.engine.prompt import PromptTemplate


def test_a_jinja_prompt_holds_the_conversation_unescaped_and_keeps_its_last_newline() -> None:
    """``autoescape=False``: code in a transcript (``<``, ``&``, quotes) reaches the model
    as written, not as ``&lt;``; ``keep_trailing_newline=True``: the file's final newline
    ends the prompt too (Jinja drops it by default)."""
    template = PromptTemplate("t", "Summarize:\n{{ messages }}\n")
    text = "User: if a < b && c > 'd': print(\"e\")"
    assert template.render(text) == f"Summarize:\n{text}\n"
