"""What a unit of parallel work is (``parallel``'s local pool and ``ray_backend`` alike)."""

from __future__ import annotations

from typing import Any, Protocol

from ..formats.inputs import InputFile

RAY_INSTALL_HINT = "pip install 'transcript-tools[ray]'"

# A kind of event a job records for its driver to replay, in order, beside the
# warnings and errors of ``reporter.Recorder``.
SESSION = "session"


# Batches a local pool keeps in flight per worker: its finished parts wait there for
# their turn (input order), so the window bounds memory; a job whose parts are small
# aggregates says how many of them it may hold (``parts_per_worker``), so that one slow
# batch at the head does not leave the other workers idle once the window is full.
PARTS_PER_WORKER = 2


class FileJob(Protocol):
    """Per-file work, picklable: it travels to pool workers and Ray tasks. It may also
    set ``parts_per_worker`` (default ``PARTS_PER_WORKER``)."""

    names_sessions: bool  # sessions get corpus-wide unique ids (see the module docstring)

    def run(self, items: list[InputFile], taken: set[str]) -> Any: ...
