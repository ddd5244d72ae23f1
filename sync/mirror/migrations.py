"""The mirror's forward migrations: plain DDL steps and the schema version they lead to.

Apart from `sync.mirror.schema` (the typed models, which must describe the same schema, and
how a step is run) so that a reader that only checks the version (`sync.mirror.reader`, before
the window's first paint) needs no SQLAlchemy.
"""

from __future__ import annotations

#: Forward migrations, in order; step N brings user_version from N to N+1. Never edit a
#: released step: append a new one. DDL is spelled out so a step never depends on the models.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE sessions (
            id TEXT NOT NULL PRIMARY KEY,
            title TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            active_run_id TEXT,
            last_run_id TEXT,
            synced_at FLOAT NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX ix_sessions_order ON sessions (updated_at DESC, id DESC)",
        """CREATE TABLE artifacts (
            artifact_id TEXT NOT NULL PRIMARY KEY,
            session_id TEXT NOT NULL,
            name TEXT NOT NULL,
            media_type TEXT NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            file_name TEXT NOT NULL,
            cached_at FLOAT NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX ix_artifacts_session_id ON artifacts (session_id)",
        "CREATE TABLE sync_state (key TEXT NOT NULL PRIMARY KEY, value TEXT)",
    ),
    (
        """CREATE TABLE unconfirmed_deletes (
            session_id TEXT NOT NULL PRIMARY KEY,
            since FLOAT NOT NULL
        )""",
        """CREATE TABLE removed_sessions (
            session_id TEXT NOT NULL PRIMARY KEY,
            removed_at FLOAT NOT NULL
        )""",
    ),
    (
        # Transcripts (CONTRACT §11, `sync.mirror.transcripts`): how far each conversation is
        # mirrored, its events, and a contentless trigram index over their folded text,
        # one entry per stored batch of a conversation's events (`search_rows` maps an
        # entry to its conversation and sequences; decision 0121: `detail=none`, matches
        # confirmed against the events' text).
        """CREATE TABLE transcripts (
            session_id TEXT NOT NULL PRIMARY KEY,
            up_to INTEGER NOT NULL DEFAULT 0,
            fetched_updated_at TEXT,
            size INTEGER NOT NULL DEFAULT 0,
            active_at TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX ix_transcripts_active_at ON transcripts (active_at)",
        """CREATE TABLE events (
            id INTEGER NOT NULL PRIMARY KEY,
            session_id TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            run_id TEXT,
            type TEXT NOT NULL,
            created_at TEXT NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE UNIQUE INDEX ix_events_session_sequence ON events (session_id, sequence)",
        """CREATE TABLE search_rows (
            id INTEGER NOT NULL PRIMARY KEY,
            session_id TEXT NOT NULL,
            first_sequence INTEGER NOT NULL,
            last_sequence INTEGER NOT NULL
        )""",
        "CREATE INDEX ix_search_rows_session_id ON search_rows (session_id)",
        """CREATE VIRTUAL TABLE search USING fts5(
            text, content='', tokenize='trigram case_sensitive 1', detail=none, columnsize=0
        )""",
    ),
    (
        # The change sequence (decision 0209, `sync.mirror.apply`): every write that
        # changes rows takes the next number and stamps it on each row it wrote and each
        # removal it remembered, so a reader asks "what changed since N"
        # (`sync.mirror.reader.query_changes`). The rows and removals already here are
        # numbered 1, and the counter goes on from there.
        "ALTER TABLE sessions ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0",
        "UPDATE sessions SET change_seq = 1",
        "CREATE INDEX ix_sessions_change_seq ON sessions (change_seq)",
        "ALTER TABLE removed_sessions ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0",
        "UPDATE removed_sessions SET change_seq = 1",
        "CREATE INDEX ix_removed_sessions_change_seq ON removed_sessions (change_seq)",
        """INSERT OR REPLACE INTO sync_state (key, value) SELECT 'change_seq', '1'
            WHERE EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM removed_sessions)""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
