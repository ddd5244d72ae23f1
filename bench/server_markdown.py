"""`python -m bench.server_markdown [FILE]`: the server benchmark's saved figures as Markdown.

`docs/performance.md` quotes a run; generating its tables from `bench/results/server.json`
rather than copying numbers by hand keeps the document and the JSON in agreement.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.report import RESULTS_DIR


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render(payload: dict[str, Any]) -> str:
    """Markdown for one saved run: context line, list table, walk/delete table, targets."""
    fig = payload["figures"]
    seed = fig["seed"]
    load = fig.get("load_average_1min", {})
    out = [
        f"Run of {payload['at']} on {fig['machine']['cores']} cores "
        f"({payload['platform']}, Python {payload['python']}, backend {fig['backend']}); "
        f"load average (1 min) {load.get('start', float('nan')):.1f} at start, "
        f"{load.get('end', float('nan')):.1f} at end. {seed['sessions']:,} sessions of the "
        f"measured principal beside {seed['other_sessions']:,} of others "
        f"(seeded in {seed['seconds']} s).",
        "",
    ]
    rows = []
    for p in fig["list"]:
        http = p["http"]
        row = [p["page"], http["median_ms"], http["p95_ms"], http.get("min_ms", "")]
        if "keyset_query" in p:
            row += [p["keyset_query"]["median_ms"], p["offset_query"]["median_ms"]]
            row += [p["offset_query"]["p95_ms"]]
        else:
            row += ["", "", ""]
        rows.append(row)
    out.append(
        _table(
            [
                "`GET /v1/sessions?limit=50`",
                "HTTP median ms",
                "HTTP p95 ms",
                "HTTP min ms",
                "keyset query alone, median ms",
                "OFFSET query alone, median ms",
                "OFFSET query alone, p95 ms",
            ],
            rows,
        )
    )
    n = fig["list"][0]["http"]["n"]
    out += [
        "",
        f"HTTP: the whole round trip over loopback ({n} samples per page, one keep-alive "
        "httpx client, a real uvicorn server). *Query alone*: only the SQL, in process, through "
        "the same engine, for the keyset page the route runs and for the same page fetched with "
        "`OFFSET`; the HTTP column never used `OFFSET`.",
        "",
    ]
    walk, delete = fig["walk"], fig["delete"]
    typical, big = delete["typical"], delete["big"]
    out.append(
        _table(
            ["measure (over HTTP)", "median", "p95", "min", "n"],
            [
                [
                    f"full walk of {walk['sessions']:,} sessions, limit {walk['limit']} "
                    f"({walk['pages']} pages; {walk['per_page_ms']} ms a page)",
                    f"{walk['median_s']} s",
                    "",
                    f"{min(walk['seconds'])} s",
                    len(walk["seconds"]),
                ],
                [
                    f"DELETE, typical session ({typical['events_per_session']} events, 1 run)",
                    f"{typical['median_ms']} ms",
                    f"{typical['p95_ms']} ms",
                    f"{typical.get('min_ms', '')} ms",
                    typical["n"],
                ],
                [
                    f"DELETE, {big['events']:,} events + {big['artifacts']} artifacts "
                    "(with their files)",
                    f"{big['median_ms']} ms",
                    f"{big['p95_ms']} ms",
                    f"{big.get('min_ms', '')} ms",
                    big["n"],
                ],
            ],
        )
    )
    explain = "`EXPLAIN QUERY PLAN`" if fig["backend"] == "sqlite" else "`EXPLAIN`"
    out += ["", f"Query plans ({explain}, deepest page):", ""]
    out += [f"- {name}: `{plan}`" for name, plan in fig["plans"].items()]
    out += [""]
    out.append(
        _table(
            ["measure", "value", "target", "met"],
            [
                [k, v["value"], v["target"], "yes" if v["met"] else "**no**"]
                for k, v in fig["targets"].items()
            ],
        )
    )
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else RESULTS_DIR / "server.json"
    print(render(json.loads(path.read_text())), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
