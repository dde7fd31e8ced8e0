"""Per-file work on a process pool or Ray Data; knows no feature."""
