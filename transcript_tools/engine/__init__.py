"""The checkpoint the seed specifies and the compaction policies around it: messages, rules,
the slot, the session engine, policies and their presets, checks on the views they build.

Pure: no file, network or terminal I/O. Empty on purpose, so that importing one engine
module does not import the others."""
