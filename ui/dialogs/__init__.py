"""The window's dialogs and their rows: Settings, Keyboard Shortcuts, confirmations."""
