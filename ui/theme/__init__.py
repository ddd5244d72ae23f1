"""How the window looks: theme and font size, colours held to contrast, stylesheet, icons."""
