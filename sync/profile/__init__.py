"""A profile: its folder, settings, per-account mirrors and the saved token."""
