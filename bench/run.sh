#!/bin/bash
# Builds what bench/kernels.py needs (the ceilings helper and library, the pypto extension
# and the generated protos) and runs it; arguments go to kernels.py.
#   bench/run.sh                                  # the full table
#   bench/run.sh --output=/tmp/kernels.md         # see docs/performance.md
#   PTO_VECTOR_WORKERS=1 bench/run.sh --only=add  # one thread, some rows
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo}"
bazel build //bench:ceilings //bench:libceilings.so //client/python:pypto/_native.so //proto:pto_v1_py
exec tools/pypto-python bench/kernels.py "$@"
