#!/bin/bash
# Bazel test driver for the pypto pytest suite: runs from the runfiles tree,
# where the package sources and _native.so sit side by side.
#   run_tests.sh [PYTEST_ARGS...]   (no test paths: every test in tests/)
# Writes a JUnit report to $XML_OUTPUT_FILE (set by bazel test).
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
export PYTHONPATH="${root}/client/python:${root}/proto"
export PYPTO_CACHE_DIR="${TEST_TMPDIR}/pypto-cache"
export PYPTO_REQUIRE_NATIVE=1
export PYPTO_PTOD="${root}/server/ptod"
export HOME="${TEST_TMPDIR}"
unset PYPTO_COMPILE_SERVER
tests=()
for arg in "$@"; do
  [[ "${arg}" == -* ]] || tests+=("${arg}")
done
[[ ${#tests[@]} -gt 0 ]] || set -- "$@" "${root}/client/python/tests"
# -rs: each skip and its reason in the log; --junitxml: the report Bazel keeps
# as test.xml, whose skips tools/test.sh lists.
exec /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider \
  ${XML_OUTPUT_FILE:+"--junitxml=${XML_OUTPUT_FILE}"} "$@"
