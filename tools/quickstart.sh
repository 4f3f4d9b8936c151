#!/usr/bin/env bash
# The quick start, end to end on the embedded defaults: installs what is
# missing, builds, starts ptod (default address and cache directory), runs a
# Python kernel through it twice (the second run is a cache HIT), checks the
# result against torch, and prints a few lines of ptod's /metrics.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh

echo "== building"
bazel build //server:ptod //client/python:all //proto:pto_v1_py //client/ptoc:ptoc

ADDRESS=127.0.0.1:7070
METRICS=127.0.0.1:7071
LOG=$(mktemp -t ptod.XXXXXX.log)

echo "== starting ptod on $ADDRESS (metrics on http://$METRICS/metrics, log $LOG)"
bazel-bin/server/ptod --address="$ADDRESS" --metrics_address="$METRICS" >"$LOG" 2>&1 &
PTOD_PID=$!
trap 'kill -TERM $PTOD_PID 2>/dev/null; wait $PTOD_PID 2>/dev/null || true' EXIT

for _ in $(seq 1 100); do
  if grep -q "ptod listening on" "$LOG"; then break; fi
  if ! kill -0 "$PTOD_PID" 2>/dev/null; then
    echo "ptod failed to start:" >&2; cat "$LOG" >&2; exit 1
  fi
  sleep 0.1
done
grep "ptod listening on" "$LOG" >/dev/null || { echo "ptod did not start in 10 s" >&2; cat "$LOG" >&2; exit 1; }

export PYPTO_COMPILE_SERVER="$ADDRESS"
echo "== first run (compiles through ptod unless an earlier quick start cached it)"
tools/pypto-python examples/quickstart.py
echo "== second run, a new process (a cache HIT in ptod)"
second=$(tools/pypto-python examples/quickstart.py)
echo "$second"
grep -q "ptod HIT" <<<"$second" || { echo "second run was not a ptod cache HIT" >&2; exit 1; }

echo "== ptod /metrics (excerpt)"
curl -fsS "http://$METRICS/metrics" | grep -E '^pto_(requests_total|compile_duration_seconds_count|cache_entries)' || true
echo "== quick start OK"
