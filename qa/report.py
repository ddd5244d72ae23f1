"""What `converge qa` was asked to do (`QaOptions`) and what it found (`QaReport`: text, or
one JSON object with `--json`)."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qa.checker import Kind, Violation
from qa.device import RequestStats
from qa.latency import Latencies
from qa.server import START_TIMEOUT
from qa.timeline import Timeline
from sync.cli.terminal import for_terminal


@dataclass(frozen=True)
class QaOptions:
    devices: int = 5
    seed: int = 0
    operations: int | None = None
    duration: float | None = None
    interval: float = 0.2
    watch: bool = True  # devices keep an index watch open (CONTRACT §9.1)
    server: str | None = None
    database: str | None = None  # the own server's database URL (default: SQLite in workdir)
    token: str = "dev-alice"
    deadline: float = 60.0
    initial: int = 30
    page_limit: int = 20
    keep: bool = False
    workdir: Path | None = None
    servers: int = 1  # own server processes on one database (a fleet needs PostgreSQL)
    public_only: bool = False  # never use the control plane, even when the server has one
    faults: str | None = None  # the fault proxy's spec (`qa.faults`); None: no proxy
    # The own servers' object store: None (a folder in workdir), a folder, or s3://BUCKET/PREFIX
    # with the S3 server's endpoint (credentials from the AWS_* variables).
    artifacts: str | None = None
    s3_endpoint: str | None = None
    # Worker processes for the devices (`qa.workers`, decision 0214): None picks from the
    # device count and the cores, 0 keeps them on the harness's own loop.
    workers: int | None = None
    #: How long the own server may take to announce itself, at each start (`qa.server`).
    server_start_timeout: float = START_TIMEOUT


@dataclass
class QaReport:
    """What `converge qa` prints; `to_json` is the `--json` object."""

    options: QaOptions
    url: str = ""
    mode: str = "subprocess"
    operations: int = 0
    plan_digest: str = ""
    ops: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    workload_seconds: float = 0.0
    quiet_seconds: float = 0.0
    settle_seconds: float = 0.0  # from the end of the workload until no run was active
    total_seconds: float = 0.0
    restarts: int = 0
    stats: RequestStats = field(default_factory=RequestStats)  # the devices' requests
    #: The harness's own requests (the truth, seeding, audits, the control plane).
    harness_requests: RequestStats = field(default_factory=RequestStats)
    converge_after: dict[int, float | None] = field(default_factory=dict)
    sessions_final: int = 0
    deleted: int = 0
    outbox_pending: int | None = None
    residue_checked: int = 0
    tombstones_checked: int = 0  # sessions removed by some device, checked for a tombstone
    engine: dict[str, int] = field(default_factory=dict)  # what the devices' passes did
    server_log_errors: int | None = None  # ERROR lines and tracebacks in the child's log
    op_seconds: dict[str, list[float]] = field(default_factory=dict)  # latency by kind
    loop_lag: list[float] = field(default_factory=list)  # how late 50 ms sleeps woke up
    device_loop_lag: list[float] = field(default_factory=list)  # ... on the devices' loops
    workers: int = 0  # worker processes the devices ran in (0: the harness's own loop)
    clock: dict[str, Any] = field(default_factory=dict)  # the workers' clock (`qa.workers`)
    latencies: Latencies = field(default_factory=lambda: Latencies([], 0))
    #: The slowest device's time per change, split at its watch's answer (`qa.latency.stages`).
    stages: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The same split over the changes of each kind ("create", "delete").
    stages_by_kind: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    workdir: str | None = None
    #: What the run added to the public routes (`Harness._extras`): control plane, restarts.
    extras: dict[str, bool] = field(default_factory=dict)
    #: The public purge audit: sessions, runs and artifacts checked, leftovers found.
    public_audit: dict[str, int] = field(default_factory=dict)
    #: The fault proxy: spec, schedule digest, partitions, what it did (`DeviceNetwork`).
    faults: dict[str, Any] | None = None
    #: Per-device operations, faults and partitions, bounded (the HTML report's timeline).
    timeline: Timeline = field(default_factory=Timeline)
    #: Why the run stopped before its end (one sentence); None for a run that finished.
    stopped: str | None = None
    #: The invariants whose evidence the run gathered in full; a run stopped early claims no
    #: pass for the others (they are "not checked"), only the violations it saw.
    checked: set[Kind] = field(default_factory=lambda: set(Kind))

    def extras_text(self) -> str:
        used = [name.replace("_", " ") for name, on in self.extras.items() if on]
        return ", ".join(used) if used else "none (the sixteen public routes only)"

    @property
    def ok(self) -> bool:
        return not self.violations and self.stopped is None

    def not_checked(self) -> list[Kind]:
        """The invariants the run stopped before judging (none for a finished run)."""
        return [kind for kind in Kind if kind not in self.checked]

    def converge_summary(self) -> dict[str, float | None]:
        times = [t for t in self.converge_after.values() if t is not None]
        if not times or len(times) < len(self.converge_after):
            return {"max": None, "median": statistics.median(times) if times else None}
        return {"max": max(times), "median": statistics.median(times)}

    def to_json(self) -> dict[str, Any]:
        o = self.options
        elapsed = self.total_seconds or 1e-9
        return {
            "ok": self.ok,
            "complete": self.stopped is None,
            "stopped": self.stopped,
            "not_checked": [kind.value for kind in self.not_checked()],
            "seed": o.seed,
            "devices": o.devices,
            "interval": o.interval,
            "watch": o.watch,
            "initial": o.initial,
            "page_limit": o.page_limit,
            "server": {
                "url": self.url,
                "mode": self.mode,
                "processes": self.options.servers,
                "restarts": self.restarts,
            },
            "extras": dict(self.extras),
            "public_audit": dict(self.public_audit),
            "faults": self.faults,
            "plan_digest": self.plan_digest,
            "operations": {
                "total": self.operations,
                "by_kind": dict(sorted(self.ops.items())),
                "outcomes": dict(sorted(self.outcomes.items())),
            },
            "seconds": {
                "workload": round(self.workload_seconds, 3),
                "quiet": round(self.quiet_seconds, 3),
                "settle": round(self.settle_seconds, 3),
                "total": round(self.total_seconds, 3),
            },
            "requests": {
                **self.stats.to_json(),
                "per_second": round(self.stats.requests / elapsed, 1),
            },
            "harness_requests": self.harness_requests.to_json(),
            "convergence": {
                "deadline": o.deadline,
                "per_device": {
                    str(d): (None if t is None else round(t, 3))
                    for d, t in sorted(self.converge_after.items())
                },
                **{
                    k: (None if v is None else round(v, 3))
                    for k, v in self.converge_summary().items()
                },
            },
            # From a delete's 204 (a create's request) on one device until every other
            # device's mirror followed (qa/latency.py).
            "convergence_ms": self.latencies.summary_ms(),
            "convergence_samples": len(self.latencies.seconds),
            "convergence_missed": self.latencies.missed,
            "convergence_stages_ms": self.stages,
            # The same, per kind of change: a delete and a create take different paths.
            "convergence_by_kind_ms": self.latencies.by_kind_ms(),
            "convergence_stages_by_kind_ms": self.stages_by_kind,
            "sessions": {"final": self.sessions_final, "deleted": self.deleted},
            "outbox_pending": self.outbox_pending,
            "residue_checked": self.residue_checked,
            "tombstones_checked": self.tombstones_checked,
            "engine": dict(self.engine),
            "op_seconds": {
                kind: {"mean": round(statistics.fmean(v), 3), "max": round(max(v), 3)}
                for kind, v in sorted(self.op_seconds.items())
            },
            "loop_lag": self.lag_summary(),
            "device_loop_lag": _lag(self.device_loop_lag),
            "workers": {"processes": self.workers, **self.clock},
            "server_log_errors": self.server_log_errors,
            "violations": [v.to_json() for v in self.violations],
            "workdir": self.workdir,
        }

    def lag_summary(self) -> dict[str, float | None]:
        """How late the harness's own event loop was (a saturated harness inflates every
        other figure)."""
        return _lag(self.loop_lag)

    def to_text(self) -> str:
        o = self.options
        elapsed = self.total_seconds or 1e-9
        lines = [
            f"converge qa: seed {o.seed}, {o.devices} devices"
            + (" that watch" if o.watch else "")
            + f", timer {o.interval:g}s, "
            f"pages of {o.page_limit}, {o.initial} initial sessions, "
            f"server {self.url} ({self.mode}, {self.restarts} restarts), plan {self.plan_digest}",
            f"operations: {self.operations} in {self.workload_seconds:.1f}s: "
            + ", ".join(f"{k} {n}" for k, n in sorted(self.ops.items())),
            "outcomes: " + ", ".join(f"{k} {n}" for k, n in sorted(self.outcomes.items())),
            f"requests: {self.stats.requests} ({self.stats.requests / elapsed:.1f}/s over "
            f"{self.total_seconds:.1f}s); by status "
            + ", ".join(f"{k} {v}" for k, v in sorted(self.stats.statuses.items()))
            + f"; 5xx {self.stats.server_errors}, network errors {self.stats.network_errors}",
            f"harness's own requests: {self.harness_requests.requests}; "
            f"5xx {self.harness_requests.server_errors}, "
            f"network errors {self.harness_requests.network_errors} (retried where safe)",
        ]
        summary = self.converge_summary()
        times = self.converge_after
        if not times and Kind.NOT_CONVERGED not in self.checked:
            lines.append("converged: not checked (the run stopped before its quiet phase ended)")
        elif summary["max"] is not None:
            lines.append(
                f"converged: all {len(times)} device{'s' if len(times) != 1 else ''} within "
                f"{summary['max']:.2f}s (median {summary['median']:.2f}s) once the server "
                f"settled ({self.settle_seconds:.2f}s after the last operation)"
            )
        else:
            missing = [str(d) for d, t in sorted(times.items()) if t is None]
            lines.append(
                f"converged: NOT all devices within {o.deadline:g}s (devices {', '.join(missing)})"
            )
        if times and len(times) <= 10:
            lines.append(
                "  per device: "
                + ", ".join(
                    f"d{d} {'-' if t is None else f'{t:.2f}s'}" for d, t in sorted(times.items())
                )
            )
        ms = self.latencies.summary_ms()
        if ms["p95"] is not None:
            lines.append(
                f"convergence latency over {len(self.latencies.seconds)} changes: "
                f"p50 {ms['p50']:.0f} ms, p95 {ms['p95']:.0f} ms, p99 {ms['p99']:.0f} ms, "
                f"max {ms['max']:.0f} ms"
                + (f" ({self.latencies.missed} never followed)" if self.latencies.missed else "")
            )
            for kind, k in self.latencies.by_kind_ms().items():
                if k["p95"] is not None:
                    lines.append(
                        f"  {kind}s ({k['n']:.0f}): p50 {k['p50']:.0f} ms, "
                        f"p95 {k['p95']:.0f} ms, p99 {k['p99']:.0f} ms, max {k['max']:.0f} ms"
                    )
        lines.append(f"extras: {self.extras_text()}")
        if self.faults is not None:
            f = self.faults
            struck = ", ".join(f"{k} {n}" for k, n in f["faults"].items()) or "none struck"
            lines.append(
                f"faults: {f['spec']} (schedule {f['digest']}): {f['connections']} connections, "
                f"{struck}, {f['partitions']} partitions started "
                f"({', '.join(f['partition_plan']) or 'none planned'}), "
                f"at most {f['max_buffered']} bytes buffered"
            )
        audit = self.public_audit
        if audit:
            lines.append(
                f"public purge audit: {audit.get('sessions', 0)} deleted sessions, "
                f"{audit.get('runs', 0)} runs, {audit.get('artifacts', 0)} artifacts: "
                f"{audit.get('leftovers', 0)} still served"
            )
        lines.append(
            f"sessions: {self.sessions_final} on the server at the end, {self.deleted} deleted; "
            f"outbox pending {_known(self.outbox_pending)}; "
            f"residue audited for {self.residue_checked}; "
            f"tombstones checked for {self.tombstones_checked} removed"
        )
        if self.engine:
            lines.append("engine: " + ", ".join(f"{k} {v}" for k, v in self.engine.items()))
        if self.op_seconds:
            lines.append(
                "operation latency (mean/max s): "
                + ", ".join(
                    f"{k} {statistics.fmean(v):.3f}/{max(v):.3f}"
                    for k, v in sorted(self.op_seconds.items())
                )
            )
        lag = self.lag_summary()
        if lag["p95"] is not None:
            lines.append(f"harness loop lag: p50 {lag['p50']:.4f}s, p95 {lag['p95']:.4f}s")
        lag = _lag(self.device_loop_lag)
        if self.workers and lag["p95"] is not None:
            lines.append(
                f"devices' loop lag ({self.workers} worker processes): "
                f"p50 {lag['p50']:.4f}s, p95 {lag['p95']:.4f}s"
            )
        if self.server_log_errors is not None:
            lines.append(f"server log: {self.server_log_errors} ERROR lines or tracebacks")
        if self.violations:
            lines.append(f"VIOLATIONS: {len(self.violations)}")
            # A violation quotes ids and details from the server: one inert line each.
            lines.extend(f"  {for_terminal(str(v))}" for v in self.violations[:50])
            if len(self.violations) > 50:
                lines.append(f"  … and {len(self.violations) - 50} more")
        elif self.stopped is None:
            lines.append("violations: none")
        else:
            lines.append("violations: none seen before the run stopped")
        if self.stopped is not None:
            unjudged = ", ".join(kind.value for kind in self.not_checked()) or "none"
            lines.append(f"STOPPED EARLY: {for_terminal(self.stopped)}")
            lines.append(f"  not checked: {unjudged}")
        if self.workdir:
            lines.append(f"kept: {self.workdir}")
        return "\n".join(lines)


def _lag(samples: list[float]) -> dict[str, float | None]:
    """p50/p95/max in seconds of an event loop's lateness samples."""
    if not samples:
        return {"p50": None, "p95": None, "max": None}
    ordered = sorted(samples)
    return {
        "p50": round(ordered[len(ordered) // 2], 4),
        "p95": round(ordered[int(len(ordered) * 0.95)], 4),
        "max": round(ordered[-1], 4),
    }


def _known(value: int | None) -> str:
    """A count the run could only learn from a control plane: "not known" without one."""
    return "not known (no control plane)" if value is None else str(value)
