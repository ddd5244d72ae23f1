"""The bundle's entry point (packaging/converge.spec): the same `converge` as the console
script. PyInstaller needs a script; this is all it is."""

import sys

from app.main import main

if __name__ == "__main__":
    sys.exit(main())
