#!/usr/bin/env bash
# Runs the whole test suite: every Bazel test target. That includes the C++
# unit tests, the integration tests (kernels end to end against a reference,
# ptod on loopback with RocksDB, the ptod binary as a subprocess) and the
# Python tests (//client/python:pypto_test runs pytest: pypto against numpy and
# torch, embedded and through a real ptod).
# Usage: tools/test.sh [extra bazel test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
bazel test //... "$@"
