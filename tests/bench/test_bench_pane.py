"""`python -m bench pane` runs end to end on a small transcript (no timing assertions:
figures are for `docs/performance.md`, never pass/fail)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import pane as pane_bench
from bench import report


def test_pane_benchmark_runs_end_to_end_and_saves_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "RESULTS_DIR", tmp_path)
    assert pane_bench.main(["--sizes", "200"]) == 0
    saved = json.loads((tmp_path / "pane.json").read_text())
    (size,) = saved["figures"]["sizes"]
    assert size["messages"] == 200
    assert size["stream_deltas"] == 200
    assert size["stream_layouts_per_delta"] == 1.0, "a delta lays out its own row only"
    assert size["scroll_steps"] > 0
    assert set(saved["figures"]["targets"]) == set(pane_bench.TARGETS)
