"""Server-first delete (CONTRACT §7, ADR-0050 §3–§4): the server's word first, then the
mirror; what a delete came to, in words."""
