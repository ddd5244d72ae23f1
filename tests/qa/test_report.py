"""`converge qa`'s report says what the run used beyond the public routes, and what its
fault proxy did (text and JSON alike)."""

from __future__ import annotations

from qa.faults import FaultSchedule, FaultSpec
from qa.proxy import DeviceNetwork
from qa.report import QaOptions, QaReport


def test_the_report_names_the_extras_and_the_fault_schedule_in_text_and_json() -> None:
    report = QaReport(QaOptions(devices=2, seed=5, faults="standard"))
    report.extras = {"control_plane": False, "restarts": True}
    report.public_audit = {"sessions": 3, "runs": 4, "artifacts": 1, "leftovers": 0}
    network = DeviceNetwork(FaultSchedule(FaultSpec.parse("standard"), 5, 2))
    report.faults = network.to_json()
    text = report.to_text()
    assert "extras: restarts" in text
    assert "public purge audit: 3 deleted sessions, 4 runs, 1 artifacts: 0 still served" in text
    assert f"(schedule {network.schedule.digest()})" in text and "none struck" in text
    body = report.to_json()
    assert body["extras"] == {"control_plane": False, "restarts": True}
    assert body["faults"]["digest"] == network.schedule.digest()
    assert body["faults"]["partition_plan"] == [p.text() for p in network.schedule.partitions]


def test_a_run_with_no_extras_says_it_used_the_public_routes_only() -> None:
    report = QaReport(QaOptions())
    report.extras = {"control_plane": False, "restarts": False}
    text = report.to_text()
    assert "extras: none (the sixteen public routes only)" in text
    assert "outbox pending not known (no control plane)" in text and "None" not in text
    assert report.to_json()["faults"] is None
