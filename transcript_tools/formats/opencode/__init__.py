"""OpenCode's logs and its successor Crush's: three readers over one session model.

``storage`` reads the TypeScript OpenCode's JSON (``opencode export`` files and the storage
folder), ``database`` its SQLite database and the Go OpenCode's, ``crush`` Crush's database
(the Go schema and more); ``session`` turns their stored messages into a Conversation.
"""
