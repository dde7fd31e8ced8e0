"""``tsum replay``: the driver, its orchestration, the output directory."""
