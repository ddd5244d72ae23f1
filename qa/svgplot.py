"""The HTML report's two pictures, as inline SVG written here (no plotting dependency: two
plain charts do not justify one, and the report must open with no network).

`latency_histogram` draws the convergence latencies (`qa.latency`) as a histogram with the
p50/p95/p99 marked; `timeline` draws one lane per device (and one for the server: restarts,
outages) with operations as bars, faults as ticks and partitions as shaded spans. Labels
are escaped (`qa.htmlpage.text`), though every label here is the harness's own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from qa.htmlpage import text
from qa.timeline import Event

#: Lanes drawn at most (a 75-device soak keeps its first lanes readable).
MAX_LANES = 50
COLOURS = {
    "create": "#3b7dd8",
    "turn": "#6aa0e8",
    "artifact": "#8e6fd8",
    "delete": "#d9822b",
    "delete_again": "#e6a862",
    "delete_active": "#c4572a",
    "trigger": "#9aa3ad",
    "reopen": "#5a9e6f",
    "restart": "#222a33",
    "outage_start": "#b8860b",
    "outage_end": "#b8860b",
}


def percentile(ordered: Sequence[float], q: float) -> float:
    """Nearest rank, as `qa.latency` reports it."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def latency_histogram(seconds: Sequence[float], width: int = 760, height: int = 260) -> str:
    """Histogram of latencies in milliseconds, p50/p95/p99 as labelled lines."""
    if not seconds:
        return '<p class="muted">No change was followed by another device: no latency.</p>'
    ms = sorted(s * 1000 for s in seconds)
    top = max(ms[-1], 1.0)
    bins = min(40, max(5, int(math.sqrt(len(ms))) * 2))
    step = top / bins
    counts = [0] * bins
    for value in ms:
        counts[min(bins - 1, int(value / step))] += 1
    left, right, upper, lower = 48, 16, 24, 36
    plot_w, plot_h = width - left - right, height - upper - lower
    most = max(counts)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" font-size="11" font-family="sans-serif">',
        "<title>convergence latency histogram</title>",
        f'<line x1="{left}" y1="{upper + plot_h}" x2="{left + plot_w}" y2="{upper + plot_h}" '
        'stroke="#59626e"/>',
    ]
    bar_w = plot_w / bins
    for i, n in enumerate(counts):
        if n:
            h = plot_h * n / most
            parts.append(
                f'<rect class="bar" x="{left + i * bar_w + 1:.1f}" y="{upper + plot_h - h:.1f}" '
                f'width="{max(1.0, bar_w - 2):.1f}" height="{h:.1f}" fill="#6aa0e8">'
                f"<title>{i * step:.0f}–{(i + 1) * step:.0f} ms: {n}</title></rect>"
            )
    for k in range(5):
        x = left + plot_w * k / 4
        parts.append(
            f'<text x="{x:.1f}" y="{upper + plot_h + 16}" text-anchor="middle">'
            f"{top * k / 4:.0f}</text>"
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle" '
        'fill="#59626e">milliseconds until every other device followed</text>'
    )
    parts.append(f'<text x="{left - 6}" y="{upper + 4}" text-anchor="end">{most}</text>')
    parts.append(f'<text x="{left - 6}" y="{upper + plot_h}" text-anchor="end">0</text>')
    for q, colour in ((0.50, "#17602f"), (0.95, "#b8860b"), (0.99, "#9b1c14")):
        value = percentile(ms, q)
        x = left + plot_w * value / top
        flip = x > left + plot_w * 0.75  # the label goes left of a line near the right edge
        parts.append(
            f'<line class="pct" x1="{x:.1f}" y1="{upper}" x2="{x:.1f}" y2="{upper + plot_h}" '
            f'stroke="{colour}" stroke-width="2" stroke-dasharray="4 3"/>'
            f'<text x="{x + (-4 if flip else 4):.1f}" '
            f'y="{upper + 10 + 12 * (q > 0.9) + 12 * (q > 0.98)}" '
            f'text-anchor="{"end" if flip else "start"}" '
            f'fill="{colour}">p{round(q * 100)} {value:.0f} ms</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def timeline(
    events: Sequence[Event], devices: int, total: float, width: int = 1100, lane: int = 16
) -> str:
    """Lanes: the server's (restarts, outages), then device 0, 1, … up to `MAX_LANES`."""
    lanes = min(devices, MAX_LANES)
    left, right, upper = 64, 12, 8
    plot_w = width - left - right
    height = upper + (lanes + 1) * lane + 44
    span = max(total, max((e.at + e.seconds for e in events), default=0.0), 1e-3)

    def x(t: float) -> float:
        return left + plot_w * max(0.0, t) / span

    def y(device: int | None) -> float:
        return upper + (0 if device is None else device + 1) * lane

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" font-size="10" font-family="sans-serif">',
        "<title>operations and faults per device</title>",
    ]
    for index in range(-1, lanes):
        device = None if index < 0 else index
        top = y(device)
        fill = "#f1f3f5" if index % 2 else "#ffffff"
        parts.append(
            f'<rect x="{left}" y="{top}" width="{plot_w}" height="{lane}" fill="{fill}"/>'
            f'<text x="{left - 6}" y="{top + lane - 4}" text-anchor="end">'
            f"{'server' if device is None else f'd{device}'}</text>"
        )
    for e in events:
        if e.device is not None and e.device >= lanes:
            continue
        top = y(e.device)
        label = text(f"{e.label} at {e.at:.2f}s" + (f" for {e.seconds:.2f}s" if e.seconds else ""))
        if e.kind == "partition":
            parts.append(
                f'<rect class="partition" x="{x(e.at):.1f}" y="{top}" '
                f'width="{max(1.0, x(e.at + e.seconds) - x(e.at)):.1f}" height="{lane}" '
                f'fill="#f0a030" fill-opacity="0.35"><title>{label}</title></rect>'
            )
        elif e.kind == "phase":  # the quiet phase's start, across every lane
            flip = x(e.at) > left + plot_w * 0.85  # its label left of a line near the edge
            parts.append(
                f'<line class="phase" x1="{x(e.at):.1f}" y1="{upper}" x2="{x(e.at):.1f}" '
                f'y2="{upper + (lanes + 1) * lane}" stroke="#17602f" stroke-width="1.5" '
                f'stroke-dasharray="5 3"><title>{label}</title></line>'
                f'<text x="{x(e.at) + (-3 if flip else 3):.1f}" y="{upper + lane - 4}" '
                f'text-anchor="{"end" if flip else "start"}" fill="#17602f">'
                f"{text(e.label, 40)}</text>"
            )
        elif e.kind == "fault":
            parts.append(
                f'<line class="fault" x1="{x(e.at):.1f}" y1="{top + 1}" x2="{x(e.at):.1f}" '
                f'y2="{top + lane - 1}" stroke="#c0241a" stroke-width="1.5">'
                f"<title>{label}</title></line>"
            )
        else:
            colour = COLOURS.get(e.label, "#6b7380")
            parts.append(
                f'<rect class="op" x="{x(e.at):.1f}" y="{top + 3}" '
                f'width="{max(1.5, x(e.at + e.seconds) - x(e.at)):.1f}" height="{lane - 6}" '
                f'fill="{colour}"><title>{label}</title></rect>'
            )
    axis = upper + (lanes + 1) * lane
    for k in range(6):
        t = span * k / 5
        parts.append(f'<text x="{x(t):.1f}" y="{axis + 14}" text-anchor="middle">{t:.1f}s</text>')
    parts.append(_legend(sorted({e.label for e in events if e.kind == "op"}), left, axis + 32))
    parts.append("</svg>")
    return "".join(parts)


def _legend(kinds: Sequence[str], left: float, baseline: float) -> str:
    """Swatches for the operation kinds drawn, then the fault and partition marks."""
    items = [(COLOURS.get(kind, "#6b7380"), kind) for kind in kinds]
    items += [("#c0241a", "fault"), ("#f0a030", "partition")]
    parts, x = [], left
    for colour, label in items:
        parts.append(
            f'<rect x="{x:.0f}" y="{baseline - 9}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14:.0f}" y="{baseline}">{text(label, 40)}</text>'
        )
        x += 22 + 6.5 * len(label)
    return "".join(parts)
