"""Aider's two plain-text logs, each a reader: ``llm`` (``.aider.llm.history``, the
requests as sent) and ``history`` (``.aider.chat.history.md``, the chat as shown);
``common`` holds what they share."""
