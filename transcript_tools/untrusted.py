"""What a settings file or a policy file may do: their text can come from a pull request.

``tsum check`` runs on pull requests with the provider's key in the environment
(docs/ci.md), and a pull request can change ``tsum.toml``, ``[tool.tsum]`` of
``pyproject.toml`` and any policy file. Their contents are therefore untrusted, as the
Jinja templates are (engine/prompt.py renders those in Jinja's sandbox); the command line
and the environment are the runner's own and stay trusted. A file may not:

- send the key elsewhere: its ``base_url`` is refused while the provider's key is in the
  environment (the key would go with every request); ``--base-url`` or
  ``TSUM_BASE_URL`` name another endpoint. Without a key (a local server), it is kept.
- read a file outside the project: a ``prompt`` (settings) or ``summary.template``
  (policy) that is a path must resolve, symlinks followed, inside the current directory
  (the checkout CI runs in), so ``/proc/self/environ`` or ``../../secrets`` never become
  a prompt that is printed into a diff.

Each refusal is one line naming the file and the key (``ConfigError``, exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .errors import ConfigError


def check_file_endpoint(
    where: str, base_url: object, key_env: str | None, env: Mapping[str, str]
) -> None:
    """Refuse a settings file's ``base_url`` when the key in ``key_env`` would follow it."""
    if base_url is None or key_env is None or not env.get(key_env, "").strip():
        return
    raise ConfigError(
        f"{where}: base_url: a settings file may not choose the endpoint while "
        f"{key_env} is set (the key would be sent to {base_url!s}); "
        "give it with --base-url or TSUM_BASE_URL (docs/ci.md)"
    )


def check_file_path(where: str, key: str, spec: str, root: Path | None = None) -> None:
    """Refuse a path a settings or policy file names unless it resolves inside ``root``
    (default: the current directory), symlinks followed."""
    base = (root or Path.cwd()).resolve()
    try:
        resolved = (base / spec).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL byte
        raise ConfigError(f"{where}: {key}: cannot resolve {spec!r} ({exc})") from None
    if resolved != base and base not in resolved.parents:
        raise ConfigError(
            f"{where}: {key}: {spec!r} is outside the project directory {base}; a settings "
            "or policy file may only name files inside it (--prompt FILE is not confined)"
        )
