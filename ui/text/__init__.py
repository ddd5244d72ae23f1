"""Content made display: server text kept inert and plain, Markdown and code as Qt rich text."""
