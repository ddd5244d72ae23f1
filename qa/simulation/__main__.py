"""`python -m qa.simulation`: replay one schedule, or sweep many (the long mode).

    python -m qa.simulation --seed 16 --steps 8        # replay; --trace lists each request
    python -m qa.simulation --seed 16 --only 2,5       # a shrunk schedule's steps
    python -m qa.simulation --schedules 100000 --workers 2

A sweep prints schedules per second and what its schedules met (faults, server changes,
steps); it exits 1 with the shrunk failure and its replay command when one fails.
"""

from __future__ import annotations

import argparse
import logging
import sys

from qa.simulation.explore import shrink, sweep
from qa.simulation.schedule import Failure, run_schedule


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qa.simulation", description=__doc__)
    parser.add_argument("--seed", type=int, help="replay this seed")
    parser.add_argument("--steps", type=int, default=8, help="steps per schedule (default 8)")
    parser.add_argument("--only", help="replay only these steps of the seed (comma-separated)")
    parser.add_argument("--trace", action="store_true", help="print every request")
    parser.add_argument("--shrink", action="store_true", help="shrink a failing replay")
    parser.add_argument("--schedules", type=int, default=1000, help="sweep this many seeds")
    parser.add_argument("--start", type=int, default=0, help="the sweep's first seed")
    parser.add_argument("--workers", type=int, default=2, help="sweep processes (default 2)")
    args = parser.parse_args(argv)
    if args.seed is not None:
        steps = [int(n) for n in args.only.split(",")] if args.only else list(range(args.steps))
        if not args.trace:
            logging.disable(logging.WARNING)
        try:
            outcome = run_schedule(args.seed, steps, trace=print if args.trace else None)
        except Failure as failure:
            print((shrink(args.seed, steps) if args.shrink else None) or failure, file=sys.stderr)
            return 1
        print(f"seed {args.seed}: held ({outcome.requests} requests)")
        return 0
    seeds = range(args.start, args.start + args.schedules)
    result = sweep(seeds, args.steps, workers=args.workers)
    print(
        f"{result.schedules:,} schedules of {args.steps} steps in {result.seconds:.1f} s: "
        f"{result.per_second:.1f} schedules/s, {result.requests:,} requests"
    )
    for what, count in sorted(result.counts.items()):
        print(f"  {what:<20} {count:>10,}")
    if result.failure is not None:
        print(result.failure, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
