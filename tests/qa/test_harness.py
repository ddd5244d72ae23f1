"""`converge qa` end to end: a real child server (restarted for real), real devices, the seeded
workload, and the checks; plus the external-server mode and its set-up failures."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import psutil
import pytest

from qa import cli as qa_cli
from qa.faults import FaultSchedule, FaultSpec
from qa.workload import plan, plan_digest
from tests.conftest import LiveServer, PostgresCluster, ServerFactory

SEED = 7  # its first 40 operations hold a restart, an outage and a refused delete


def run_qa(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = qa_cli.main([*args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_qa_converges_with_restart_outage_and_refused_delete(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = run_qa(
        capsys, "--devices", "3", "--operations", "40", "--seed", str(SEED), "--deadline", "20"
    )
    assert report["violations"] == []
    assert code == 0 and report["ok"] is True
    by_kind = report["operations"]["by_kind"]
    assert report["operations"]["total"] == 40
    assert by_kind["restart"] >= 1 and report["server"]["restarts"] >= 1
    assert by_kind["outage_start"] >= 1 and by_kind["outage_end"] == by_kind["outage_start"]
    assert by_kind["delete_active"] >= 1
    outcomes = report["operations"]["outcomes"]
    assert outcomes["delete_active_run"] >= 1  # the 409s happened, and kept their rows
    assert outcomes["delete_deleted"] >= 1
    assert report["outbox_pending"] == 0
    assert all(t is not None for t in report["convergence"]["per_device"].values())
    # The devices watched: each change's latency was measured (the figures are the bench's).
    assert report["watch"] is True and report["interval"] == 30.0
    assert set(report["convergence_ms"]) == {"p50", "p95", "p99", "max"}
    assert set(report["convergence_stages_ms"]) <= {
        "change_to_watch_answer",
        "watch_answer_to_mirror",
    }
    assert report["convergence_samples"] > 0 and report["convergence_ms"]["max"] is not None
    # Deletes and creates are reported apart, and together they are every change measured.
    kinds = report["convergence_by_kind_ms"]
    assert set(kinds) == {"create", "delete"}
    assert sum(k["n"] for k in kinds.values()) == report["convergence_samples"]
    assert set(report["convergence_stages_by_kind_ms"]) <= {"create", "delete"}
    assert report["requests"]["requests"] > 0
    assert report["sessions"]["final"] > 0
    # The seed alone decided the operations: the digest is the plan's own.
    expected = plan_digest(itertools.islice(plan(SEED, 3, restarts=True), 40))
    assert report["plan_digest"] == expected


@pytest.mark.postgres
def test_qa_spreads_devices_over_two_processes_on_postgres_and_kills_one(
    postgres_cluster: PostgresCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = run_qa(
        capsys,
        "--servers",
        "2",
        "--database",
        postgres_cluster.new_database(),
        "--devices",
        "4",
        "--operations",
        "40",
        "--seed",
        str(SEED),
        "--deadline",
        "30",
    )
    assert report["violations"] == []
    assert code == 0 and report["ok"] is True
    assert report["server"]["processes"] == 2
    assert report["server"]["restarts"] >= 1  # the first restart is a SIGKILL
    assert report["outbox_pending"] == 0
    assert report["server_log_errors"] == 0


def test_qa_refuses_several_servers_on_sqlite(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        qa_cli.main(["--servers", "2", "--operations", "1"])
    assert exit_info.value.code == 2
    assert "needs --database postgresql" in capsys.readouterr().err


PUBLIC_RUN = ["--devices", "2", "--operations", "25", "--seed", "3", "--interval", "0.1"]


def assert_public_invariants_held(report: dict[str, Any]) -> None:
    """What a run proves through the public routes alone, with or without a control plane."""
    assert report["violations"] == []
    assert report["operations"]["outcomes"]["delete_deleted"] >= 1
    audit = report["public_audit"]
    assert audit["sessions"] == report["sessions"]["deleted"] >= 1
    assert audit["runs"] >= 1 and audit["leftovers"] == 0
    assert report["tombstones_checked"] >= 1
    assert all(t is not None for t in report["convergence"]["per_device"].values())


def test_qa_against_an_external_server_with_a_control_plane(
    live_server: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = run_qa(capsys, "--server", live_server.url, *PUBLIC_RUN)
    assert code == 0
    assert_public_invariants_held(report)
    assert report["server"]["mode"] == "external"
    assert "restart" not in report["operations"]["by_kind"]
    assert report["extras"] == {
        "control_plane": True,
        "control_seeding": True,
        "object_store_faults": True,
        "stub_purge_audit": True,
        "restarts": False,
    }
    assert report["outbox_pending"] == 0 and report["residue_checked"] >= 1


def test_qa_proves_convergence_through_public_routes_on_a_server_without_control_plane(
    server_factory: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    server = server_factory(control=False)
    code, report = run_qa(capsys, "--server", server.url, *PUBLIC_RUN)
    assert code == 0
    assert_public_invariants_held(report)
    assert not any(report["extras"].values())
    by_kind = report["operations"]["by_kind"]
    assert "outage_start" not in by_kind and "restart" not in by_kind
    assert report["outbox_pending"] is None and report["residue_checked"] == 0
    # The same seed drew the same operations; the outages became triggers.
    expected = plan_digest(itertools.islice(plan(3, 2, restarts=False, outages=False), 25))
    assert report["plan_digest"] == expected


def test_qa_public_only_starts_its_own_server_without_control_plane_and_restarts_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = run_qa(
        capsys, "--public-only", "--devices", "2", "--operations", "30", "--seed", str(SEED)
    )
    assert code == 0
    assert_public_invariants_held(report)
    assert report["extras"]["control_plane"] is False and report["extras"]["restarts"] is True
    assert report["server"]["restarts"] >= 1


def test_qa_says_which_extras_it_used_in_its_text_report(
    server_factory: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    server = server_factory(control=False)
    code = qa_cli.main(["--server", server.url, "--devices", "1", "--operations", "3"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "extras: none (the sixteen public routes only)" in out
    assert "public purge audit:" in out


def test_qa_with_a_token_the_server_refuses_is_a_setup_error_with_a_junit_report(
    live_server: LiveServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("not-a-known-token\n"))
    junit = tmp_path / "qa.xml"
    argv = ["--server", live_server.url, "--token-stdin", "--operations", "1"]
    code = qa_cli.main([*argv, "--junit-xml", str(junit)])
    assert code == 2
    assert "refused the token" in capsys.readouterr().err
    suite = ET.parse(junit).getroot()  # CI finds why nothing ran, not a missing file
    (error,) = suite.iter("error")
    assert suite.get("errors") == "1" and "refused the token" in (error.get("message") or "")


def test_qa_text_report_and_kept_folders(
    live_server: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = qa_cli.main(
        ["--server", live_server.url, "--devices", "1", "--operations", "5", "--keep"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "violations: none" in out and "converged: all 1 device within" in out
    kept = Path(out.rsplit("kept: ", 1)[1].strip())
    try:
        assert list((kept / "devices" / "d000" / "accounts").glob("*/mirror.sqlite3"))
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def test_sigterm_to_the_harness_stops_its_server_child(tmp_path: Path) -> None:
    """Whatever way the harness ends, its server child does not outlive it."""
    converge = Path(sys.executable).with_name("converge")
    proc = subprocess.Popen(
        [str(converge), "qa", "--devices", "1", "--duration", "60", "--seed", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    children: list[psutil.Process] = []
    try:
        parent = psutil.Process(proc.pid)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not children:
            children = parent.children(recursive=True)
            time.sleep(0.05)  # polling for the child to appear, with a deadline
        assert children, "the harness never started its server"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) != 0
        _gone, alive = psutil.wait_procs(children, timeout=10)
        assert not alive
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for child in children:  # never leave a server behind, even when the test fails
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()


def test_qa_catches_an_engine_that_prunes_without_confirmation(
    live_server: LiveServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sabotage the devices' engines (in this process): each pass sees only every other item
    of the walk, and every point read "answers 404". The harness must report live sessions
    pruned and mirrors that never converge, and exit 1."""
    import sync.reconcile.reconciler
    import sync.reconcile.walk
    from sync.reconcile.plan import PointRead, PointReadOutcome, dedupe_walk

    calls = itertools.count()

    def half_walk(views):
        return dict(list(dedupe_walk(views).items())[next(calls) % 2 :: 2])

    async def always_absent(self, session_id):
        return PointRead(session_id, PointReadOutcome.ABSENT)

    monkeypatch.setattr(sync.reconcile.walk, "dedupe_walk", half_walk)
    monkeypatch.setattr(sync.reconcile.reconciler.Reconciler, "_point_read", always_absent)
    code, report = run_qa(
        capsys,
        "--workers",
        "0",  # the sabotage is in this process: so must the devices be
        "--server",
        live_server.url,
        "--devices",
        "2",
        "--operations",
        "4",
        "--seed",
        "0",
        "--initial",
        "6",
        "--interval",
        "0.05",
        "--deadline",
        "2",
    )
    assert code == 1 and report["ok"] is False
    kinds = {v["kind"] for v in report["violations"]}
    assert "live_pruned" in kinds
    assert "not_converged" in kinds


FAULTS = "latency=10,jitter=20,drop=0.15,cut=0.15,stall=0.15,stall-seconds=1,partition=1@5:3"


def test_qa_under_network_faults_converges_and_its_fault_schedule_follows_the_seed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--devices", "3", "--operations", "40", "--seed", str(SEED), "--deadline", "40"]
    code, report = run_qa(capsys, *args, "--faults", f"{FAULTS},partitions=1")
    assert report["violations"] == []
    assert code == 0
    faults = report["faults"]
    schedule = FaultSchedule(FaultSpec.parse(f"{FAULTS},partitions=1"), SEED, 3, 40)
    assert faults["digest"] == schedule.digest()
    assert faults["partition_plan"] == [p.text() for p in schedule.partitions]
    assert faults["partitions"] == len(schedule.partitions) == 2
    assert sum(faults["faults"].values()) >= 1  # device 2's first connection is cut
    assert faults["max_buffered"] <= 64 * (6 * 16 * 1024)  # connections x (queue + 2) chunks
    assert all(t is not None for t in report["convergence"]["per_device"].values())


def test_qa_under_faults_converges_on_a_server_without_control_plane(
    server_factory: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    server = server_factory(control=False)
    spec = "drop=0.3,cut=0.3,stall=0.2,stall-seconds=1,partition=0@4:2"
    code, report = run_qa(capsys, "--server", server.url, *PUBLIC_RUN, "--faults", spec)
    assert code == 0
    assert_public_invariants_held(report)
    assert report["faults"]["partitions"] == 1 and report["faults"]["connections"] >= 2


def test_qa_refuses_a_fault_spec_out_of_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        qa_cli.main(["--faults", "drop=2", "--operations", "1"])
    assert exit_info.value.code == 2
    assert "drop must be within" in capsys.readouterr().err


def test_qa_refuses_an_s3_endpoint_without_a_bucket(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        qa_cli.main(["--s3-endpoint", "http://127.0.0.1:1", "--operations", "1"])
    assert exit_info.value.code == 2
    assert "needs --artifacts s3://" in capsys.readouterr().err
