"""``--workers N`` and ``--ray [ADDRESS]``: where per-file work runs (sweep, replay --dry-run, inspect)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # the pool machinery is imported when a command runs, not for --help
    from ..parallel.pool import Backend

from ..errors import ConfigError

RAY_LOCAL = "local"  # `--ray` given without an address

BATCH_HINT = (
    "summary calls at scale go through the providers' batch APIs (--batch), not through many "
    "Ray workers hitting one rate limit; --ray runs only work that makes no summary calls"
)


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
    func = click.option(
        "--workers",
        type=click.IntRange(min=1),
        envvar="TSUM_WORKERS",
        help="Processes reading and evaluating files in parallel (output identical to 1). "
        "[default: config `workers`, else every core]",
    )(func)
    return func


def resolve_backend(workers: Any, ray_address: str | None) -> Backend:
    """``workers`` as the settings rule resolved it (command line > TSUM_WORKERS > file),
    else the machine's cores."""
    from ..parallel.pool import Backend, default_workers

    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise ConfigError(f"workers must be an integer >= 1, got {workers!r}")
    if ray_address is not None:
        from ..parallel.ray_data import import_ray

        import_ray()  # a usage error now, before any work, when Ray is not installed
        if not ray_address.strip():
            raise ConfigError(
                "--ray: empty address (give none for a local Ray, `auto`, or ray://HOST:PORT)"
            )
        if ray_address != RAY_LOCAL and os.path.exists(ray_address):
            # `--ray corpus/`: click gave the path to --ray, its optional value
            raise ConfigError(
                f"--ray took {ray_address!r} as a Ray address: put --ray after the paths, or write --ray local"
            )
    return Backend(workers=workers or default_workers(), ray=ray_address)


def refuse_summaries_on_ray(ray_address: str | None, what: str) -> None:
    """Summary-making runs stay off Ray until a shared rate limit exists (docs/scale.md)."""
    if ray_address is not None:
        raise ConfigError(f"--ray does not run {what}: {BATCH_HINT}")
