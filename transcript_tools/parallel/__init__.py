"""Per-file work on a process pool or Ray Data; knows no feature."""

RAY_LOCAL = "local"  # `--ray` given without an address: start (or join) a local Ray
