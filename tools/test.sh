#!/usr/bin/env bash
# Runs the whole test suite: every Bazel test target. That includes the C++
# unit tests, the integration tests (kernels end to end against a reference,
# ptod on loopback with RocksDB, the ptod binary as a subprocess) and the
# Python tests (//client/python:pypto_test runs pytest: pypto against numpy and
# torch, embedded and through a real ptod).
#
# Bazel reports a target PASSED when its cases skipped (a _v4 target on a CPU
# without AVX-512, a pytest skip), so the run ends with tools/list_skips.py's
# list of skipped targets and cases from the reports under bazel-testlogs.
# The exit status is bazel test's.
# Usage: tools/test.sh [extra bazel test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
status=0
bazel test //... "$@" || status=$?

echo
testlogs="$(bazel info bazel-testlogs 2>/dev/null)" || testlogs=bazel-testlogs
tools/pypto-python tools/list_skips.py --workspace . "${testlogs}" ||
  echo "tools/list_skips.py could not list the skipped tests (exit $?)" >&2
exit "${status}"
