"""`--seed demo` placeholder (filled in later)."""

from __future__ import annotations

from server_stub.db.engine import Database
from server_stub.objectstore import ObjectStore


def seed_demo(db: Database, store: ObjectStore) -> bool:
    """Fill an empty database with demo history; False when it was not empty."""
    return False
