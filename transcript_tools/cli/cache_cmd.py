"""``tsum cache stats|clear|path``: inspect the response cache.

Data (path, stats) goes to stdout; the confirmation of ``clear`` to stderr.
Errors are ``TsumError``s, turned into one line and an exit code by the main CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import orjson

from ..present.numbers import binary_size
from ..present.table import text_table
from ..providers.cache import ResponseCache, default_cache_path
from ..terminal import echo
from .help import TsumGroupCommand, examples
from .setting_options import setting_option

cache_option = setting_option(
    "cache",
    "cache_path",
    help="Cache file (default: $TSUM_HOME/cache.sqlite3 or ~/.tsum/cache.sqlite3).",
)


_REMEDY = "pass another --cache PATH"  # what a cache command offers: it has no --no-cache


def _resolve(cache_path: Path | None) -> Path:
    return (cache_path or default_cache_path()).expanduser()


@click.group(
    "cache",
    cls=TsumGroupCommand,
    epilog=examples(
        "tsum cache stats", "tsum cache path", "tsum cache clear --cache ci-cache.sqlite3"
    ),
)
def cache_group() -> None:
    """Inspect or clear the response cache."""


@cache_group.command("path", epilog=examples("tsum cache path", "TSUM_HOME=/tmp/t tsum cache path"))
@cache_option
def path_command(cache_path: Path | None) -> None:
    """Print the cache file's path."""
    echo(str(_resolve(cache_path)))


@cache_group.command(
    "stats", epilog=examples("tsum cache stats", "tsum cache stats --json --cache ci-cache.sqlite3")
)
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def stats_command(cache_path: Path | None, as_json: bool) -> None:
    """Entries, size on disk, and entries per provider and model."""
    path = _resolve(cache_path)
    if not path.exists():
        # Inspecting must not create a cache file.
        data: dict[str, Any] = {"path": str(path), "entries": 0, "size_bytes": 0, "by_model": []}
    else:
        with ResponseCache(path, remedy=_REMEDY) as cache:
            data = cache.stats().to_json()
    if as_json:
        echo(orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2).decode())
        return
    echo(f"path: {data['path']}")
    echo(f"entries: {data['entries']}")
    echo(f"size: {binary_size(data['size_bytes'])} ({data['size_bytes']} bytes)")
    rows = [(r["provider"], r["model"], str(r["entries"])) for r in data["by_model"]]
    for line in text_table(rows, (0, 1, 2), strip=True) if rows else []:
        echo(line)


@cache_group.command(
    "clear", epilog=examples("tsum cache clear", "tsum cache clear --cache ci-cache.sqlite3")
)
@cache_option
def clear_command(cache_path: Path | None) -> None:
    """Delete every cached response (the next run pays for them again)."""
    path = _resolve(cache_path)
    if not path.exists():
        echo(f"{path}: no cache to clear", err=True)
        return
    with ResponseCache(path, remedy=_REMEDY) as cache:
        removed = cache.clear()
    echo(f"{path}: removed {removed} cached responses", err=True)
