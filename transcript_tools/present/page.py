"""The HTML pages' Jinja templates, package resources (``transcript_tools/templates``)."""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2


def page_template(name: str, *, strict: bool = True) -> jinja2.Template:
    """``strict`` (the sweep's and compare's pages): a name the page does not get is an
    error, and a block tag leaves no blank line; else Jinja's defaults (eval's page)."""
    import jinja2  # only the commands that write a page pay for it

    source = resources.files("transcript_tools.templates").joinpath(name).read_text("utf-8")
    if not strict:
        return jinja2.Environment(autoescape=True).from_string(source)
    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    return env.from_string(source)
