"""`converge qa --junit-xml FILE` and `--html FILE`: the run's result for CI and for people.

Both are organised by invariant (`qa.checker.Kind`): one JUnit testcase per invariant, its
`failure` carrying that invariant's violations (the first `SHOWN`, then a count), and the
same table at the top of the HTML page, followed by the run's parameters and extras, the
convergence latency (percentiles and a histogram) and the timeline of operations, faults
and partitions per device. An invariant that needs the control plane (the outbox) is
`skipped` when the run had none, so a public-only run does not claim it; so is every
invariant a run stopped early (`QaReport.stopped`) could not judge, and its JUnit suite then
holds one more testcase, `qa.run`, whose `error` says why it stopped: CI shows the cause,
never a clean suite.
"""

from __future__ import annotations

from pathlib import Path

#: Violations quoted per invariant (the rest are counted).
from qa import htmlpage, junit
from qa.checker import Kind, Violation
from qa.report import QaReport
from qa.svgplot import latency_histogram, percentile, timeline

SHOWN = 50
_NOT_CHECKED = '<span class="verdict skip">not checked</span>'
_STOPPED = '<span class="verdict fail">STOPPED EARLY</span>'

MEANINGS = {
    Kind.NOT_CONVERGED: "every final mirror equals the server's index",
    Kind.REAPPEARED: "a deleted session never comes back on a device that saw it go",
    Kind.LIVE_PRUNED: "no device removes a session the server still has or has not deleted",
    Kind.CONFLICT_LOST_ROW: "a 409 delete keeps the device's row",
    Kind.CONFLICT_DELETED: "a 409 delete keeps the session on the server",
    Kind.FAILED_DELETE_LOST_ROW: "a failed or unconfirmed delete keeps the row",
    Kind.DELETED_STILL_SERVED: "the index never lists a session whose delete got 204",
    Kind.OUTBOX_NOT_DRAINED: "byte deletes drain after maintenance (control plane)",
    Kind.RESIDUE: "no route serves anything of a deleted session",
    Kind.STUCK: "every operation finishes within its deadline",
}


def _by_kind(report: QaReport) -> dict[Kind, list[Violation]]:
    found: dict[Kind, list[Violation]] = {kind: [] for kind in Kind}
    for v in report.violations:
        found[v.kind].append(v)
    return found


def _skipped(report: QaReport, kind: Kind) -> str | None:
    if kind not in report.checked:
        return f"not checked: the run stopped early ({report.stopped or 'no reason given'})"
    if kind is Kind.OUTBOX_NOT_DRAINED and report.outbox_pending is None:
        return "needs the stub's control plane; this run had none"
    return None


def _evidence(violations: list[Violation]) -> str:
    lines = [str(v) for v in violations[:SHOWN]]
    if len(violations) > SHOWN:
        lines.append(f"… and {len(violations) - SHOWN} more")
    return "\n".join(lines)


def write_junit(report: QaReport, path: Path) -> None:
    """One `testsuite` named `qa`, one `testcase` per invariant."""
    cases = []
    for kind, found in _by_kind(report).items():
        cases.append(
            junit.Case(
                classname="qa.invariants",
                name=kind.value,
                failure=_evidence(found) if found else None,
                message=f"{len(found)} violation(s): {found[0]}" if found else None,
                skipped=None if found else _skipped(report, kind),
            )
        )
    if report.stopped is not None:
        stopped = f"the run stopped early: {report.stopped}"
        cases.append(junit.Case(classname="qa", name="run", error=stopped))
    junit.write(path, "qa", cases, report.total_seconds)


def _invariants(report: QaReport) -> str:
    rows = []
    for kind, found in _by_kind(report).items():
        skipped = None if found else _skipped(report, kind)
        if kind not in report.checked and not found:
            result = _NOT_CHECKED
        else:
            result = htmlpage.verdict(None if skipped else not found)
        evidence = _evidence(found) if found else skipped or ""
        rows.append(
            [
                f"<td>{htmlpage.text(kind.value)}</td>",
                f"<td>{result}</td>",
                f"<td>{htmlpage.text(MEANINGS[kind])}</td>",
                f'<td class="ev">{htmlpage.text(evidence, multiline=True)}</td>',
            ]
        )
    return "<h2>Invariants</h2>" + htmlpage.table(
        ["invariant", "result", "what it means", "evidence"], rows
    )


def _parameters(report: QaReport) -> str:
    o = report.options
    faults = report.faults
    pairs: list[tuple[str, object]] = [
        ("seed", o.seed),
        ("devices", f"{o.devices}" + (" (watching)" if o.watch else " (timer only)")),
        ("timer", f"{o.interval:g} s"),
        ("operations", f"{report.operations} in {report.workload_seconds:.1f} s"),
        ("by kind", ", ".join(f"{k} {n}" for k, n in sorted(report.ops.items())) or "none"),
        ("outcomes", ", ".join(f"{k} {n}" for k, n in sorted(report.outcomes.items())) or "none"),
        ("server", f"{report.url} ({report.mode}, {o.servers} process(es))"),
        ("restarts", report.restarts),
        ("extras used", report.extras_text()),
        ("faults", "none" if faults is None else f"{faults['spec']} (schedule {faults['digest']})"),
        ("plan digest", report.plan_digest),
        (
            "requests",
            f"{report.stats.requests}; 5xx {report.stats.server_errors}; "
            f"network errors {report.stats.network_errors}",
        ),
        (
            "harness's own requests",
            f"{report.harness_requests.requests}; 5xx {report.harness_requests.server_errors}; "
            f"network errors {report.harness_requests.network_errors} (retried where safe)",
        ),
        (
            "seconds",
            f"workload {report.workload_seconds:.1f}, settle {report.settle_seconds:.1f},"
            f" quiet {report.quiet_seconds:.1f}, total {report.total_seconds:.1f}",
        ),
    ]
    return "<h2>The run</h2>" + htmlpage.definitions(pairs)


def _latency(report: QaReport) -> str:
    seconds = report.latencies.seconds
    head = "<h2>Convergence latency</h2>"
    if seconds:
        ordered = sorted(seconds)
        figures = ", ".join(
            f"p{round(q * 100)} {percentile(ordered, q) * 1000:.0f} ms" for q in (0.5, 0.95, 0.99)
        )
        pairs: list[tuple[str, object]] = [
            ("changes measured", len(seconds)),
            ("percentiles", f"{figures}, max {ordered[-1] * 1000:.0f} ms"),
        ]
        for kind, k in report.latencies.by_kind_ms().items():
            if k["p95"] is not None:
                pairs.append(
                    (
                        f"{kind}s ({k['n']:.0f})",
                        f"p50 {k['p50']:.0f} ms, p95 {k['p95']:.0f} ms, "
                        f"p99 {k['p99']:.0f} ms, max {k['max']:.0f} ms",
                    )
                )
        pairs.append(("never followed", report.latencies.missed))
        head += htmlpage.definitions(pairs)
    return head + latency_histogram(seconds)


def _timeline(report: QaReport) -> str:
    t = report.timeline
    note = f"{len(t.events)} events"
    if t.left_out:
        note += f"; {t.left_out} later ones left out (the first {t.limit} are kept)"
    return (
        "<h2>Timeline</h2>"
        f'<p class="muted">{htmlpage.text(note)}. Bars: operations (hover for the kind); '
        "red ticks: faults the proxy struck; shaded: partitions.</p>"
        + timeline(t.events, report.options.devices, report.total_seconds)
    )


def render(report: QaReport) -> str:
    badge = _STOPPED if report.stopped is not None else htmlpage.verdict(report.ok)
    summary = (
        f"<h1>converge qa {badge}</h1>"
        f'<p class="muted">{len(report.violations)} violation(s); seed {report.options.seed}</p>'
    )
    if report.stopped is not None:
        unjudged = ", ".join(kind.value for kind in report.not_checked()) or "none"
        summary += htmlpage.definitions(
            [("stopped early", report.stopped), ("not checked", unjudged)]
        )
    sections = [summary, _invariants(report), _parameters(report), _latency(report)]
    return htmlpage.page("converge qa", [*sections, _timeline(report)])


def write_html(report: QaReport, path: Path) -> None:
    htmlpage.write(path, render(report))
