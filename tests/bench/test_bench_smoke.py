"""The server benchmark runs end to end on a small index (no timing assertions: figures are
for `docs/performance.md`, never pass/fail)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import floor as floor_bench
from bench import report
from bench import server as server_bench


def test_server_benchmark_runs_end_to_end_and_saves_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "RESULTS_DIR", tmp_path)
    status = server_bench.main(
        [
            "--sessions", "300",
            "--samples", "3",
            "--walks", "1",
            "--deletes", "3",
            "--big-deletes", "1",
            "--big-events", "200",
            "--big-artifacts", "3",
            "--floor-samples", "5",
            "--floor-rounds", "1",
            "--floor-seconds", "0.2",
            "--floor-deletes", "3",
        ]
    )  # fmt: skip
    assert status == 0
    saved = json.loads((tmp_path / "server.json").read_text())
    figures = saved["figures"]
    floor = figures["floor"]
    assert set(floor["latency_ms"]) == {
        "real page",
        "floor page",
        "real 304",
        "floor 304",
        "real deepest page",
        "floor deepest page",
        "real page after a change",
        "floor page beside it",
        "real DELETE, typical",
        "floor 304 beside it",
    }
    assert {(r["server"], r["clients"]) for r in floor["throughput"]} == {
        (s, c) for s in ("real", "floor") for c in (1, 32)
    }
    assert all(r["requests_per_s"] > 0 for r in floor["throughput"])
    assert set(floor["targets"]) == set(floor_bench.TARGETS)
    assert [p["depth"] for p in figures["list"]] == [0, 30, 150, 297, 0]
    assert figures["walk"]["sessions"] == 300
    assert figures["delete"]["typical"]["n"] == 3
    assert figures["delete"]["big"]["n"] == 1
    assert set(figures["targets"]) == set(server_bench.TARGETS)


def test_load_benchmark_runs_end_to_end_and_saves_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import load as load_bench

    monkeypatch.setattr(report, "RESULTS_DIR", tmp_path)
    status = load_bench.main(
        [
            "--streams", "0,20",
            "--samples", "5",
            "--memories", "1",
            "--memory-kib", "16",
            "--message-kib", "4",
            "--recall-seconds", "1",
            "--settle", "0.1",
        ]
    )  # fmt: skip
    assert status == 0
    figures = json.loads((tmp_path / "load.json").read_text())["figures"]
    assert [row["streams"] for row in figures["streams"]] == [0, 20]
    assert figures["streams"][1]["held"] == ["ready 20 200x20"]
    assert figures["recall"]["recall_runs"]["n"] >= 1
    assert set(figures["targets"]) == set(load_bench.TARGETS)


def test_fleet_benchmark_without_postgresql_says_so_and_does_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench import fleet as fleet_bench

    assert fleet_bench.main([]) == 0
    assert "needs --database postgresql" in capsys.readouterr().out


def test_watch_benchmark_runs_end_to_end_and_saves_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import watch as watch_bench

    monkeypatch.setattr(report, "RESULTS_DIR", tmp_path)
    status = watch_bench.main(
        ["--watches", "5", "--samples", "3", "--sessions", "3", "--wakes", "2",
         "--wake-watches", "2"]
    )  # fmt: skip
    assert status == 0
    figures = json.loads((tmp_path / "watch.json").read_text())["figures"]
    assert figures["watches"] == 5 and figures["wake"]["n"] == 2
    assert figures["others_still_held"] == 5  # the measured user's changes woke none of them
    assert figures["released_by_shutdown"] == 5


def test_micro_benchmark_runs_and_saves_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import micro

    monkeypatch.setattr(report, "RESULTS_DIR", tmp_path)
    assert micro.main(["--repeats", "1", "--rows", "1000"]) == 0
    figures = json.loads((tmp_path / "micro.json").read_text())["figures"]
    assert figures["demo_seed_start"]["n"] == 1
    assert figures["diff_plan"]["rows"] == 1000
    assert figures["full_collection_frozen"]["n"] == figures["full_collection_not_frozen"]["n"] == 1


def test_markdown_benchmark_runs_and_saves_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qapp: object
) -> None:
    from bench import markdown

    monkeypatch.setattr(report, "RESULTS_DIR", tmp_path)
    assert markdown.main(["--repeat", "1", "--repeat-pathological", "1"]) == 0
    figures = json.loads((tmp_path / "markdown.json").read_text())["figures"]
    assert set(figures["messages"]) == set(markdown.inputs())
    assert all(f["render"]["n"] == 1 for f in figures["messages"].values())


def test_first_sync_benchmark_times_the_pass_and_the_title_entries_written_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import first_sync

    monkeypatch.setattr(report, "RESULTS_DIR", tmp_path)
    assert first_sync.main(["--sessions", "500", "--rounds", "1", "--save", "smoke"]) == 0
    figures = json.loads((tmp_path / "first-sync-smoke.json").read_text())["figures"]
    assert figures["runners"] == ["raw_walk", "httpx_walk", "first_sync", "title_index"]
    assert all(len(figures[f"{name}_cpu_s"]) == 1 for name in figures["runners"])
