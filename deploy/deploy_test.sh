#!/bin/bash
# The deployment files stay true to ptod: every --flag they pass is one ptod
# documents in --helpfull, the YAML and JSON parse, and every pto_* metric
# the alerts and the dashboard query is one ptod exports (server/metrics.h).
set -euo pipefail
ptod="$1"; shift
help="$("$ptod" --helpfull 2>&1 || true)"
status=0
for f in "$@"; do
  case "$f" in
    *.service|*.yaml)
      for flag in $(grep -vE '^\s*#' "$f" | grep -oE -- '--[a-z_]+=' | sort -u | tr -d '='); do
        if ! grep -qE -- "^ +${flag} \(" <<<"$help"; then
          echo "$f: ptod has no flag $flag"; status=1
        fi
      done ;;
  esac
  case "$f" in
    *.yaml|*.yml) python3 -c 'import sys,yaml; list(yaml.safe_load_all(open(sys.argv[1])))' "$f" ||
                    { echo "$f: bad YAML"; status=1; } ;;
    *.json) python3 -c 'import sys,json; json.load(open(sys.argv[1]))' "$f" ||
              { echo "$f: bad JSON"; status=1; } ;;
  esac
done
metrics_h=""
for f in "$@"; do [[ "$f" == *metrics.h ]] && metrics_h="$f"; done
for f in "$@"; do
  case "$f" in
    *.yml|*.json)
      for m in $(grep -oE 'pto_[a-z_]+' "$f" | sed -E 's/_(bucket|count|sum)$//' | sort -u); do
        base="${m#pto_}"
        if ! grep -qE "(^|[^a-z_])${base}([^a-z_]|$)" "$metrics_h"; then
          echo "$f: ptod exports no metric $m"; status=1
        fi
      done ;;
  esac
done
[[ $status == 0 ]] && echo "deploy files OK"
exit $status
