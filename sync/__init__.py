"""The sync engine: API client, SQLite mirror, reconciler, server-first delete, CLI.

No Qt here. The window and the command line use `sync.engine.SyncEngine`.
"""
