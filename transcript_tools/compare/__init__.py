"""``tsum compare``: policies against a baseline, paired per conversation (docs/compare.md)."""
