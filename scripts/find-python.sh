#!/bin/sh
# Prints the newest Python 3.13 or 3.12 interpreter on this machine.
# PySide6 6.12 crashes on Python 3.11 (see ../shared/PITFALLS.md §1), so 3.11 is never chosen.
# pyenv shims answer "command not found" for versions that are installed but not selected,
# so each candidate is tried for real, then pyenv's version folders are searched directly.
works() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }
for v in 3.13 3.12; do
  if command -v "python$v" >/dev/null 2>&1 && works "python$v"; then command -v "python$v"; exit 0; fi
  for c in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/$v*/bin/python$v /usr/local/bin/python$v /usr/bin/python$v; do
    if [ -x "$c" ] && works "$c"; then echo "$c"; exit 0; fi
  done
done
echo "error: Converge needs Python 3.12 or newer (python3.13 or python3.12 on PATH); PySide6 6.12 crashes on 3.11." >&2
exit 1
