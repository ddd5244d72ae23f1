"""The sidebar: the mirror's rows as a list model kept equal to the mirror by row-level diffs,
their painting, date sections, search as you type and the keyboard."""
