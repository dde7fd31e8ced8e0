"""``tsum batch list|cancel``: the batches ``--batch`` sent (its driver: ``replay.batch``)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigError, ProviderError, TsumError
from ..providers.cache import default_cache_path
from .help import TsumGroupCommand, examples
from .setting_options import setting_option

# ---- tsum batch -------------------------------------------------------------------------


def _store(cache: Path | None) -> Any:
    from ..providers.batch.store import BatchStore

    path = cache or default_cache_path()
    if not Path(path).exists():
        raise ConfigError(f"{path}: no response cache here (pass --cache PATH)")
    return BatchStore(path)


def _nothing_sent(cache: Path | None) -> bool:
    """True (and says so) where the default response cache was never made: a fresh
    machine, where no run has sent a batch, so there is nothing to list or cancel."""
    if cache is None and not default_cache_path().exists():
        click.echo(
            f"tsum: no batch sent yet (no response cache at {default_cache_path()})", err=True
        )
        return True
    return False


_cache_option = setting_option(
    "cache", help="Response cache file whose batches are shown (default: $TSUM_HOME/cache.sqlite3)."
)


@click.group(
    cls=TsumGroupCommand,
    epilog=examples("tsum batch list", "tsum batch list --all --json", "tsum batch cancel"),
)
def batch_group() -> None:
    """Batches sent by --batch: what is in flight, and stopping it."""


@batch_group.command("list", epilog=examples("tsum batch list", "tsum batch list --all --json"))
@_cache_option
@click.option("--all", "show_all", is_flag=True, help="Also the batches whose results were read.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def batch_list(cache: Path | None, show_all: bool, as_json: bool) -> None:
    """List the batches in flight (with --all: every batch this cache has recorded)."""
    import orjson

    if _nothing_sent(cache):
        return
    with _store(cache) as store:
        records = store.batches() if show_all else store.in_flight()
    if not records:
        click.echo("tsum: no batch recorded" if show_all else "tsum: no batch in flight", err=True)
    for record in records:
        if as_json:
            click.echo(orjson.dumps(record.to_json(), option=orjson.OPT_SORT_KEYS).decode())
            continue
        created = datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
        click.echo(
            f"{record.batch_id}\t{record.provider}\t{record.state}\t{record.api_status or '-'}\t"
            f"{record.requests} requests\t{record.succeeded} ok\t{record.failed} failed\t{created}"
        )


@batch_group.command(
    "cancel", epilog=examples("tsum batch cancel", "tsum batch cancel msgbatch_01ABC...")
)
@click.argument("batch_id", required=False)
@_cache_option
def batch_cancel(batch_id: str | None, cache: Path | None) -> None:
    """Cancel BATCH_ID (default: every batch in flight). The next run collects what finished."""
    from ..providers.batch import batch_client
    from ..providers.batch.store import CANCELLING, IN_FLIGHT
    from ..providers.registry import get_provider

    if batch_id is None and _nothing_sent(cache):
        return
    with _store(cache) as store:
        if batch_id is None:
            targets = store.in_flight()
        else:
            record = store.get(batch_id)
            if record is None:
                raise ConfigError(
                    f"no batch {batch_id} in {store.path} (see tsum batch list --all)"
                )
            if record.state not in IN_FLIGHT:
                click.echo(f"tsum: {batch_id} has ended already ({record.api_status})", err=True)
                return
            targets = [record]
        if not targets:
            click.echo("tsum: no batch in flight", err=True)
            return

        async def cancel_all() -> list[str]:
            lines = []
            providers: dict[tuple[str, str], Any] = {}
            try:
                for record in targets:
                    key = (record.provider, record.base_url)
                    if key not in providers:
                        # the model is not used by a cancel; a local base URL insists on one
                        providers[key] = get_provider(
                            record.provider, base_url=record.base_url, model="-"
                        )
                    status = await batch_client(providers[key]).cancel(record.batch_id)
                    store.set_status(record.batch_id, status.state, CANCELLING)
                    lines.append(f"{record.batch_id}\t{status.state}")
            finally:
                for provider in providers.values():
                    await provider.aclose()
            return lines

        try:
            for line in asyncio.run(cancel_all()):
                click.echo(line)
        except ProviderError as exc:
            raise TsumError(f"cancel failed: {exc}") from None
