"""The ``tsum`` command line: thin wrappers that parse, call the library, print."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
