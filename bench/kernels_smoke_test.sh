#!/bin/bash
# bench/kernels.py end to end on two rows, from the runfiles tree: the table,
# the ceilings and the BLAS line are printed, a row that compiles is measured
# and correct, a row whose op is missing says n/a instead of failing, and
# numpy's BLAS is OpenBLAS (the FP32 matmul target is against it). The ceilings beside each
# row (libceilings.so): loaded, printed in the row and used by its verdict,
# with a sane fraction; without the library the start-of-run figures are
# used and the output says why.
set -uo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
export PYTHONPATH="${root}/client/python:${root}/proto"
export PYPTO_CACHE_DIR="${TEST_TMPDIR}/pypto-cache"
export HOME="${TEST_TMPDIR}"
unset PYPTO_COMPILE_SERVER
fail() { echo "FAIL: $*"; exit 1; }

run() {
  /usr/bin/python3 "${root}/bench/kernels.py" --reps=2 --warmup=1 --no-overhead \
    --ceilings="${root}/bench/ceilings" --ceilings-lib="${root}/bench/libceilings.so" "$@"
}

out="$(run --only='add 1024x1024 fp32')" || fail "exit status $?"
echo "${out}"
grep -q '^| kernel | pypto | numpy |' <<<"${out}" || fail "no table header"
grep -Eq '^\| add 1024x1024 fp32 \| [0-9.]+ us \| [0-9.]+ us \| [0-9.]+x \(min [0-9.]+x\) \|' \
  <<<"${out}" || fail "add row not measured"
grep -q 'WRONG' <<<"${out}" && fail "a result is wrong"
grep -Eq '^- ceilings \(bench/ceilings, same run\): FP32 FMA [0-9.]+ GFLOP/s' <<<"${out}" ||
  fail "no ceilings"
grep -q '^- numpy .*BLAS: OpenBLAS (' <<<"${out}" || fail "numpy does not use OpenBLAS"
grep -q '^- ceilings beside each row (.*libceilings.so' <<<"${out}" || fail "library not loaded"
row="$(grep '^| add 1024x1024 fp32 |' <<<"${out}")"
[[ "${row}" =~ \|\ ([0-9]+)%\ of\ triad@12\ MiB\ beside\ it,\ ([0-9.]+)\ GB/s\ \(([0-9]+)%\ of\ the\ start-of-run\ figure\)\ \|$ ]] ||
  fail "no ceiling beside the add row: ${row}"
# Sane: a positive triad rate and a fraction. No bound on the fraction: with
# other tests running beside this one a triad pass can be starved (pypto
# then at many times its rate), and no timing may be asserted here.
python3 -c "import sys; f, gbps = int(sys.argv[1]), float(sys.argv[2]); sys.exit(not (f >= 0 and gbps > 0))" \
  "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" || fail "insane fraction beside the add row: ${row}"
grep -q 'add 1024x1024 fp32: .*% of the bandwidth beside it (a triad over the same 12 MiB' <<<"${out}" ||
  fail "no target verdict from the ceiling beside the row"

# Without the library: the start-of-run figure, and why.
out="$(run --only='add 1024x1024 fp32' --ceilings-lib=/nonexistent/libceilings.so)" || fail "no library: exit status $?"
echo "${out}"
grep -q '^- ceilings beside each row: n/a (/nonexistent/libceilings.so not built' <<<"${out}" ||
  fail "missing library not reported"
grep -Eq '^\| add 1024x1024 fp32 \| .*\| [0-9]+% of triad@12 MiB at the start of the run \|$' <<<"${out}" ||
  fail "no start-of-run fraction without the library"
grep -q 'add 1024x1024 fp32: .*of the start-of-run triad' <<<"${out}" || fail "no start-of-run verdict"

# Rows whose ops have not landed print n/a; once they land, a time.
out="$(run --only='matmul 64x128x64 fp32')" || fail "matmul row: exit status $?"
echo "${out}"
grep -Eq '^\| matmul 64x128x64 fp32 \| (n/a \(op not yet supported: .+\)|[0-9.]+ us \|.*% of FMA peak beside it, [0-9.]+ GFLOP/s \([0-9]+% of the start-of-run figure\) \|$)' \
  <<<"${out}" || fail "matmul row neither n/a nor measured beside the FMA ceiling"
echo PASS
