"""``--workers N`` and ``--ray [ADDRESS]``: where per-file work runs (sweep, replay --dry-run, inspect).

The backend they describe is built by the library (``parallel.pool.backend_for``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..parallel import RAY_LOCAL
from .setting_options import setting_option


def scale_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The two options, for commands that read many files."""
    func = click.option(
        "--ray",
        "ray_address",
        is_flag=False,
        flag_value=RAY_LOCAL,
        default=None,
        metavar="[ADDRESS]",
        help="Run the per-file work as Ray Data tasks: alone, a local Ray (or the one RAY_ADDRESS "
        "names); `auto` or ray://HOST:PORT for a cluster. Paths may be URLs Ray reads (s3://...). "
        "Put it after the paths (its value is optional). Needs pip install 'transcript-tools[ray]'.",
    )(func)
    return setting_option("workers")(func)
