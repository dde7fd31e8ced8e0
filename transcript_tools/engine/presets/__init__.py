"""Compaction policy presets, one TOML file each (docs/policies.md cites every value)."""
