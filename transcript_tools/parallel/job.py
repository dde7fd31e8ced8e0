"""What a unit of parallel work is (``parallel``'s local pool and ``ray_backend`` alike)."""

from __future__ import annotations

from typing import Any, Protocol

from ..formats.inputs import InputFile

RAY_INSTALL_HINT = "pip install 'transcript-tools[ray]'"

# The kinds of event a job records for its driver to replay, in order.
WARN, ERROR, SESSION = "warn", "error", "session"


class FileJob(Protocol):
    """Per-file work, picklable: it travels to pool workers and Ray tasks."""

    names_sessions: bool  # sessions get corpus-wide unique ids (see the module docstring)

    def run(self, items: list[InputFile], taken: set[str]) -> Any: ...
