"""`python -m bench {server,load,fleet,sync,ui,watch,micro,caps,all}`: benchmarks that print figures
(and `python -m bench ui_without VARIANT`, see `bench/ui_without.py`; `python -m bench
client_rss`, see `bench/client_rss.py`; `python -m bench conformance`, see
`bench/conformance.py`; `python -m bench s3_clients`, see `bench/s3_clients.py`; `python -m
bench markdown`, see `bench/markdown.py`; `python -m bench lexers`, see `bench/lexers.py`;
`python -m bench pane`, see `bench/pane.py`; `python -m bench scale`, see `bench/scale.py`;
`python -m bench slow_link`, see `bench/slow_link.py`; `python -m bench fanout`, see
`bench/fanout.py`).

Benchmarks are never timed tests: they measure, print a table, and save JSON under
`bench/results/` so that `docs/performance.md` can quote a run.
"""

from __future__ import annotations

import importlib
import sys

SUITES = ("server", "load", "fleet", "sync", "ui", "watch", "micro", "caps")
#: Run by name only (not by `all`): a variant runner, not a suite.
EXTRA = (
    "ui_without",
    "client_rss",
    "watch_dead",
    "mirror_check",
    "conformance",
    "s3_clients",
    "search",
    "markdown",
    "lexers",
    "pane",
    "scale",
    "device_cost",
    "slow_link",
    "first_sync",
    "fanout",
)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help"}:
        print(f"usage: python -m bench {{{','.join(SUITES)},all}} [options]")
        return 0 if args else 2
    names = SUITES if args[0] == "all" else (args[0],)
    status = 0
    for name in names:
        if name not in SUITES + EXTRA:
            print(f"unknown benchmark {name!r}; choose from {', '.join(SUITES)} or all")
            return 2
        module = importlib.import_module(f"bench.{name}")
        status |= int(module.main(args[1:]))
    return status


if __name__ == "__main__":
    sys.exit(main())
