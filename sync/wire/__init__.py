"""The contract's values (CONTRACT §2): sessions, events and their payloads, parsed once."""
