"""The replay engine: compaction policies, their presets, and checks on the views they build."""
