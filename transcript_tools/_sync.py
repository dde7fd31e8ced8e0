"""Synchronous entry points over the async engine, usable inside a running event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from synchronous code, also inside a running event
    loop (Jupyter, an async web app): there it runs on its own loop in a worker thread,
    because ``asyncio.run`` refuses to nest and blocking the caller's loop is the price
    of a synchronous API."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tsum") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()
