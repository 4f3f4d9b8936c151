#!/bin/bash
# ptod_cluster_load runs end to end: every section printed, and the kernels
# compiled once each cluster-wide. Skipped (exit 0, saying why) without
# redis-server.
set -euo pipefail
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  echo "skipped: needs redis-server and redis-tools"; exit 0
fi
out="$("$1" --clients=3 --kernels=3 --requests=6 --hit_requests=20 --tier_rounds=1)"
for section in "## Mix" "1.00 per distinct kernel" "## Hits" "## Hit latency per tier" \
               "| memory | 3 |" "| rocksdb | 3 |" "| redis | 3 |"; do
  grep -qF -- "$section" <<<"$out" || { echo "missing: $section"; echo "$out"; exit 1; }
done
echo "ok"
