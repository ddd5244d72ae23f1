"""The client's modules stay small (issue 9, "the house"): none of `sync`, `ui` or `app` is
over about 450 lines, so that each keeps one job and reads in one sitting."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 450


def test_no_client_module_is_over_450_lines() -> None:
    over = {}
    for package in ("sync", "ui", "app"):
        for path in sorted((ROOT / package).glob("*.py")):
            name = f"{package}/{path.name}"
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > LIMIT:
                over[name] = lines
    assert over == {}, f"split these along their jobs: {over}"
