"""Plug-ins: what other installed packages add to tsum through entry points.

Three groups, each an entry point name and the object it loads (simonw/llm finds its
plug-ins the same way, by an entry point group: simonw/llm:llm/plugins.py):

- ``tsum.providers``: a provider class (``providers/registry.py``);
- ``tsum.formats``: a reader, any object with the attributes of a built-in reader module
  (``formats/__init__.py``; ``docs/formats.md``, "Writing a plug-in");
- ``tsum.policies``: a ``Policy``, or the path of a policy TOML file
  (``docs/policies.md``, "Writing a plug-in").

A built-in name always wins over a plug-in's. The entry points are read only when a name
is not a built-in one (``importlib.metadata`` costs about 20 ms), so a run that uses no
plug-in never reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import ConfigError

FORMATS_GROUP = "tsum.formats"
POLICIES_GROUP = "tsum.policies"


def entry_point_names(group: str, builtins: Iterable[str] = ()) -> list[str]:
    """The installed entry points' names in ``group``, sorted, without the built-in ones."""
    from importlib import metadata

    names = {entry.name for entry in metadata.entry_points(group=group)}
    return sorted(names.difference(builtins))


def load_entry_points(
    group: str,
    what: str,
    builtins: Iterable[str] = (),
    error: type[ConfigError] = ConfigError,
) -> dict[str, Any]:
    """Name → loaded object of each entry point in ``group`` that no built-in is named
    like; a plug-in that cannot load is an ``error`` naming it, ``what`` first (``format
    plug-in``): a broken installation, told before any work."""
    from importlib import metadata

    taken = set(builtins)
    loaded: dict[str, Any] = {}
    # by name: the order of installed distributions is not one a user chose
    for entry in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
        if entry.name in taken or entry.name in loaded:
            continue  # a built-in (or an earlier plug-in) name wins
        try:
            loaded[entry.name] = entry.load()
        except Exception as exc:  # a plug-in's own bug, whatever it raises
            raise error(
                f"{what} {entry.name!r} (entry point {entry.value}) cannot be loaded: "
                f"{type(exc).__name__}: {exc}"
            ) from None
    return loaded
