"""``--cost`` and ``--prices``: the options that price a run (docs/cost.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from ..cost.prices import Pricer

F = TypeVar("F", bound=Callable[..., Any])


def prices_option(func: F) -> F:
    """``--prices FILE``: prices used before the bundled list (every priced command)."""
    return click.option(
        "--prices",
        "prices_file",
        type=click.Path(dir_okay=False, exists=True),
        help="A JSON prices file (model -> input/output/cache_read/cache_write USD per "
        "million tokens) used before the bundled genai-prices list.",
    )(func)


def cost_options(func: F) -> F:
    func = prices_option(func)
    return click.option(
        "--cost",
        is_flag=True,
        help="Price each conversation as replayed: prompt tokens split into cache reads, "
        "cache writes and fresh input by the provider's cache rules, summarizer calls "
        "included, against the original run (docs/cost.md).",
    )(func)


def pricer_for(cost: bool, prices_file: str | None, spec: Any = None) -> Pricer | None:
    """The run's pricer with --cost (``spec``: --price-per-mtok), else None."""
    from ..cost.prices import pricer_for as build

    return build(cost, prices_file, spec)
