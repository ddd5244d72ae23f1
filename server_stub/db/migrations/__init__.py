"""The server's Alembic migration scripts (`env.py`, `versions/`), shipped in the package.

Run at start by `server_stub.db.schema.upgrade_schema`; no `alembic.ini` is needed.
"""
