"""Files the client writes: owner-only and inside their folder, cached artifact bytes, and
the export of a conversation before it is deleted."""
