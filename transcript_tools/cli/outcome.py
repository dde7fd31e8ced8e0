"""A finished run's exit code, decided in one place (``errors.EXIT_CODE_MEANINGS``).

Each command says what its run came to: it could not run (``failed``, with the error line
when nothing printed before says why) or found differences; ``finish`` turns that into the
code, as psf/black's ``Report.return_code`` does for black (psf/black:src/black/report.py).
Errors raised as ``TsumError`` keep their own code (``main.TsumGroup``).
"""

from __future__ import annotations

import sys

from ..errors import ExitCode, error_line
from ..terminal import echo


def finish(*, failed: bool = False, differences: bool = False, error: str | None = None) -> None:
    """Print ``error`` as ``tsum: error: ...``, then end with the run's code (FAILED over
    DIFFERENCES); return when the run succeeded."""
    if error:
        echo(error_line(error), err=True)
    if failed:
        sys.exit(int(ExitCode.FAILED))
    if differences:
        sys.exit(int(ExitCode.DIFFERENCES))
