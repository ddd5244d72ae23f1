"""Alembic's environment: always on a connection the caller opened (`server_stub.db.schema`).

The caller holds the transaction (and, on PostgreSQL, the fleet's advisory lock inside it),
so this never connects, begins or commits on its own. `render_as_batch` makes autogenerate
write SQLite-safe batch operations for the changes SQLite's ALTER TABLE cannot make.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from server_stub.db.models import Base

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("server_stub.db.schema passes the connection; run it from there")
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=True,
)
with context.begin_transaction():
    context.run_migrations()
