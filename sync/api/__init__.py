"""Talking to the server: the sixteen routes over one bounded, retried HTTP client.

Everything the server says is hostile until parsed: `bounds` caps bytes, items and time,
`body` reads within them, `failures` turns a refusal into a typed `sync.errors` class."""
