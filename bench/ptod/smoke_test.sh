#!/bin/bash
# ptod_load runs end to end and prints every section of its report, against a
# separate ptod (the default) and one in its own process.
set -euo pipefail
for where in --ptod=server/ptod --ptod=; do
  out="$("$1" "$where" --seconds=0.2 --max_requests=200 --cold_kernels=2 \
             --restart_entries=100 --breakdown_iterations=20)"
  for section in "## Cold compile" "native_compile" "## Hits (one warm kernel" \
                 "| 64 |" "## gRPC alone" "## Where a hit's server time goes" \
                 "key memo hit" "while compiles run" "## Restart" "## Targets"; do
    grep -qF -- "$section" <<<"$out" || { echo "missing: $section ($where)"; echo "$out"; exit 1; }
  done
  # Every hit phase answered HITs only.
  if grep -E '^\| (1|8|64) \|' <<<"$out" | grep -vE '\| 0 \|$' ; then
    echo "a hit phase had errors ($where)"; echo "$out"; exit 1
  fi
done
grep -qF "separate ptod process" <<<"$("$1" --seconds=0.1 --max_requests=20 \
    --cold_kernels=1 --restart_entries=0 --breakdown_iterations=10)"
if "$1" --address=10.1.2.3:7070 2>/dev/null; then
  echo "a non-loopback address was accepted"; exit 1
fi
echo "ok"
