"""The checkpoint the seed specifies: messages, rules, the slot, the session engine.

Pure: no file, network or terminal I/O. Empty on purpose, so that importing one engine
module does not import the others."""
