#!/usr/bin/env bash
# Runs the whole test suite: every Bazel test (C++ unit and integration tests,
# ptod on loopback) and the Python tests (pypto against numpy and torch,
# embedded and through a real ptod).
# Usage: tools/test.sh [extra bazel test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh

echo "== bazel test //..."
bazel test //... "$@"

echo "== pytest (client/python/tests)"
# The Python tests need the native extension, the generated protos and ptod.
bazel build //client/python:all //proto:pto_v1_py //server:ptod
tools/pypto-python -m pytest -q client/python/tests
