#!/bin/bash
# ptod_load runs end to end and prints every section of its report.
set -euo pipefail
out="$("$1" --seconds=0.2 --max_requests=200 --cold_kernels=2 --restart_entries=100)"
for section in "## Cold compile" "native_compile" "## Hits (one warm kernel)" \
               "| 64 |" "while compiles run" "## Restart" "## Targets"; do
  grep -qF -- "$section" <<<"$out" || { echo "missing: $section"; echo "$out"; exit 1; }
done
if "$1" --address=10.1.2.3:7070 2>/dev/null; then
  echo "a non-loopback address was accepted"; exit 1
fi
echo "ok"
