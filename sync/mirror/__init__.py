"""The local SQLite mirror of the server's index, transcripts and cached files.

The mirror only follows the server (ADR-0050 §1): rows arrive from the index walk and the
point reads, and leave on a 404 or a confirmed delete, never on a guess."""
