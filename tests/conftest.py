"""Test configuration shared by every suite.

Qt must be told to render offscreen before anything imports it, so this is set here, in the
test configuration itself, rather than relying on the caller's environment.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
