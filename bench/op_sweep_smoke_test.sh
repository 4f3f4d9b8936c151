#!/bin/bash
# bench/op_sweep.py end to end on three rows, from the runfiles tree: the
# table is printed, each row is measured against torch, and pypto's results
# equal torch's where both are exact (a select, a broadcast add, a cast);
# --cpu adds the CPU time columns.
set -uo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
export PYTHONPATH="${root}/client/python:${root}/proto"
export PYPTO_CACHE_DIR="${TEST_TMPDIR}/pypto-cache"
export HOME="${TEST_TMPDIR}"
unset PYPTO_COMPILE_SERVER
fail() { echo "FAIL: $*"; exit 1; }

out="$(/usr/bin/python3 "${root}/bench/op_sweep.py" --reps=2 \
  --only='where(,add per-row scale,cast f32 -> f16')" || fail "exit status $?"
echo "${out}"
grep -q '^| pattern | pypto | torch (op by op) | torch/pypto | max abs diff |' <<<"${out}" ||
  fail "no table header"
for row in 'where(a > 0, a, b) f32' 'add per-row scale \[R,1\] f32' 'cast f32 -> f16'; do
  grep -Eq "^\| ${row//(/\\(} \| [0-9.]+ us \| [0-9.]+ us \| [0-9.]+x \| 0\.00e\+00 \|$" <<<"${out}" ||
    fail "row '${row}' not measured or not equal to torch's"
done
[[ "$(grep -c '^| [a-z]' <<<"${out}")" == 4 ]] || fail "rows other than the three asked for (or one missing)"

# --cpu: each side's CPU time per call in two more columns.
out="$(/usr/bin/python3 "${root}/bench/op_sweep.py" --reps=2 --cpu --only='cast f32 -> f16')" ||
  fail "--cpu: exit status $?"
echo "${out}"
grep -q '^| pattern | pypto | torch (op by op) | torch/pypto | max abs diff | pypto CPU | torch CPU |$' \
  <<<"${out}" || fail "--cpu: no table header with the CPU columns"
grep -Eq '^\| cast f32 -> f16 \| [0-9.]+ us \| [0-9.]+ us \| [0-9.]+x \| 0\.00e\+00 \| [0-9.]+ us \| [0-9.]+ us \|$' \
  <<<"${out}" || fail "--cpu: the row lacks its CPU times"
echo PASS
