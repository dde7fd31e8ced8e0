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

from typing import Any

from .errors import ConfigError

FORMATS_GROUP = "tsum.formats"
POLICIES_GROUP = "tsum.policies"


def entry_point_names(group: str, builtins: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The installed entry points' names in ``group``, sorted, without the built-in ones."""
    from importlib import metadata

    names = {entry.name for entry in metadata.entry_points(group=group)}
    return sorted(names.difference(builtins))


def load_entry_points(
    group: str, what: str, builtins: tuple[str, ...] | list[str] = ()
) -> dict[str, Any]:
    """Name → loaded object of each entry point in ``group`` that no built-in ``what``
    (a format, a policy) is named like; a plug-in that cannot load is a ``ConfigError``
    naming it (a broken installation, told before any work)."""
    from importlib import metadata

    loaded: dict[str, Any] = {}
    for entry in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
        if entry.name in builtins or entry.name in loaded:
            continue  # a built-in (or an earlier plug-in) name wins
        try:
            loaded[entry.name] = entry.load()
        except Exception as exc:  # a plug-in's own bug, whatever it raises
            raise ConfigError(
                f"{what} plug-in {entry.name!r} (entry point {entry.value} in {group}) "
                f"cannot be loaded: {type(exc).__name__}: {exc}"
            ) from None
    return loaded
