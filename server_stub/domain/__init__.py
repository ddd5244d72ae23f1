"""The conversation graph of ADR-0050 §5 and its rules: runs and their agent, titles, the
purge of a deleted session, leases, the index's versions and watches, cursors, the clock."""
