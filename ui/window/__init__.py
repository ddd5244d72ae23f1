"""The main window's frame: composition, actions, the status line, and the words of outcomes."""
