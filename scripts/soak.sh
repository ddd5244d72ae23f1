#!/usr/bin/env bash
# Soak: `converge qa` with many devices and a compressed reconcile timer for several minutes
# against one subprocess server, on SQLite and/or on a throwaway PostgreSQL cluster.
# Not part of `make test` (too long). Results: docs/reliability.md, "Soak".
#
#   scripts/soak.sh [sqlite|postgres|both]     (default both)
#   SOAK_DEVICES=50 SOAK_DURATION=180 SOAK_INTERVAL=1.0 SOAK_SEED=7 scripts/soak.sh sqlite
#
# Each run prints the harness's summary and keeps it in $SOAK_OUT/soak-<backend>.txt
# (default $TMPDIR/converge-soak); the exit status is non-zero when any run reports a
# violation or fails. PostgreSQL needs the Debian 15 binaries, root and the
# `postgres` user (the same throwaway cluster the test suite uses).
set -euo pipefail

cd "$(dirname "$0")/.."
PY=.venv/bin/python
BACKENDS=${1:-both}
DEVICES=${SOAK_DEVICES:-50}
DURATION=${SOAK_DURATION:-180}
INTERVAL=${SOAK_INTERVAL:-1.0}
SEED=${SOAK_SEED:-20261130}
DEADLINE=${SOAK_DEADLINE:-120}
OUT=${SOAK_OUT:-${TMPDIR:-/tmp}/converge-soak}
mkdir -p "$OUT"

run_qa() {  # run_qa LABEL [extra qa args...]
    local label=$1
    shift
    echo "== soak ${label}: ${DEVICES} devices, ${DURATION}s, timer ${INTERVAL}s, seed ${SEED}"
    "$PY" -m sync.cli.main qa --devices "$DEVICES" --duration "$DURATION" --interval "$INTERVAL" \
        --seed "$SEED" --deadline "$DEADLINE" "$@" | tee "$OUT/soak-${label}.txt"
    "$PY" - "$OUT/soak-${label}.txt" <<'EOF'
import sys
text = open(sys.argv[1]).read()
sys.exit(0 if "violations: none" in text else 1)
EOF
}

status=0
if [[ $BACKENDS == sqlite || $BACKENDS == both ]]; then
    run_qa sqlite || status=1
fi
if [[ $BACKENDS == postgres || $BACKENDS == both ]]; then
    # A throwaway cluster (tests/conftest.py's PostgresCluster), stopped whatever happens.
    "$PY" - "$DEVICES" "$DURATION" "$INTERVAL" "$SEED" "$DEADLINE" "$OUT" <<'EOF' || status=1
import subprocess, sys
from tests.conftest import PostgresCluster, postgres_unavailable_reason

devices, duration, interval, seed, deadline, out = sys.argv[1:]
reason = postgres_unavailable_reason()
if reason:
    sys.exit(f"soak postgres: cannot run ({reason})")
cluster = PostgresCluster()
cluster.start()
try:
    url = cluster.new_database()
    print(f"== soak postgres: {devices} devices, {duration}s, timer {interval}s, seed {seed}")
    result = subprocess.run(
        [sys.executable, "-m", "sync.cli.main", "qa", "--devices", devices, "--duration", duration,
         "--interval", interval, "--seed", seed, "--deadline", deadline, "--database", url],
        capture_output=True, text=True,
    )
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    with open(f"{out}/soak-postgres.txt", "w") as fh:
        fh.write(result.stdout)
    sys.exit(0 if result.returncode == 0 and "violations: none" in result.stdout else 1)
finally:
    cluster.stop()
EOF
fi
exit $status
