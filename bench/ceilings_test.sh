#!/bin/bash
# bench/ceilings: prints positive ceilings as one JSON line, and refuses bad
# flags with exit status 2 and a message naming the flag. libceilings.so
# (through bench/ceilings_lib.py, as bench/kernels.py loads it): loads, a
# triad pass writes every element and a read pass sums every chunk on 1..3
# threads (shares of no chunk, one chunk, many), hundreds of empty passes end (workers waking late or still
# in the last pass), passes and FMA calls return positive times, and bad
# arguments raise errors naming them. No timing is compared: this machine
# is shared.
set -uo pipefail
bin="$1"
lib="$2"
fail() { echo "FAIL: $*"; exit 1; }

out="$("${bin}" --threads=1 --sizes_kib=64,1024 --reps=2)" || fail "exit status $?"
echo "${out}"
json="$(grep '^JSON ' <<<"${out}" | cut -c6-)"
[[ -n "${json}" ]] || fail "no JSON line"
python3 - "${json}" <<'PY' || fail "bad JSON values"
import json, sys
d = json.loads(sys.argv[1])
assert d["threads"] == 1, d
assert d["fma_isa"] in ("avx512", "avx2", "scalar"), d
assert d["triad_isa"] in ("avx512", "avx2", "baseline"), d
assert d["fma_gflops"] > 0, d
assert d["bf16_dot_isa"] in ("avx512bf16", "none"), d
assert (d["bf16_dot_gflops"] > 0) == (d["bf16_dot_isa"] != "none"), d
assert sorted(d["triad_gbps"]) == ["1024", "64"], d
assert all(v > 0 for v in d["triad_gbps"].values()), d
PY

for bad in --threads=0 --threads=2x --sizes_kib=12,x --reps=0 --bogus; do
  msg="$("${bin}" "${bad}" 2>&1)"
  status=$?
  [[ ${status} -eq 2 ]] || fail "${bad}: exit status ${status}, want 2"
  grep -q -- "${bad%%=*}" <<<"${msg}" || fail "${bad}: message does not name it: ${msg}"
done

python3 - "${lib}" "$(dirname "$0")" <<'PY' || fail "libceilings.so"
import math, sys, time
sys.path.insert(0, sys.argv[2])
import ceilings_lib

lib = ceilings_lib.CeilingsLib(sys.argv[1])
assert lib.triad_isa in ("avx512", "avx2", "baseline"), lib.triad_isa
assert lib.fma_isa in ("avx512", "avx2", "scalar"), lib.fma_isa
# 16 elements (one chunk), 100000 (25 chunks), 3 MiB (65 chunks; 4096 a chunk).
for nbytes in (12 * 16, 12 * 100000, 3 << 20):
    for threads in (1, 2, 3):
        triad = lib.triad(nbytes, threads)
        n = triad.elements()
        assert n == max(16, nbytes // 12) and triad.bytes == 12 * n, (nbytes, n, triad.bytes)
        assert triad.unwritten() == n, (nbytes, threads, triad.unwritten())
        for _ in range(3):
            seconds = triad()
            assert 0 < seconds < math.inf, (nbytes, threads, seconds)
        assert triad.unwritten() == 0, (nbytes, threads, triad.unwritten())
# An empty pass (one chunk per thread, as bench/kernels.py times a pass's fixed
# cost), many times back to back and after pauses: a pass ends with its last
# chunk, so workers that wake late or are still in the last pass when the
# next starts must neither lose nor repeat a chunk's count (a pass that lost
# one would never end: the test would time out).
assert lib.chunk_bytes > 0 and lib.chunk_bytes % (12 * 64) == 0, lib.chunk_bytes
for make, per_element in ((lib.triad, 12), (lib.read, 4)):
    for threads in (2, 3):
        loop = make(lib.chunk_bytes * threads, threads)
        assert loop.elements() * per_element == lib.chunk_bytes * threads, (loop.kind, threads)
        for i in range(300):
            if i % 50 == 0:
                time.sleep(0.01)  # the workers fall asleep
            seconds = loop()
            assert 0 < seconds < math.inf, (loop.kind, threads, i, seconds)
        assert loop.unwritten() == 0, (loop.kind, threads, loop.unwritten())
# A read pass sums every chunk (of 12288 elements; 100000 is 9 chunks, the
# last one short) on 1..3 threads.
for nbytes in (4 * 16, 4 * 100000, 3 << 20):
    for threads in (1, 2, 3):
        read = lib.read(nbytes, threads)
        n = read.elements()
        assert n == max(16, nbytes // 4) and read.bytes == 4 * n and read.kind == "read", (nbytes, n)
        assert read.unwritten() == n, (nbytes, threads, read.unwritten())
        for _ in range(3):
            assert 0 < read() < math.inf, (nbytes, threads)
        assert read.unwritten() == 0, (nbytes, threads, read.unwritten())
for threads in (1, 3):
    fma = lib.fma(1e6, threads)
    seconds = fma()
    assert 0 < seconds < math.inf, (threads, seconds)
    lanes = {"avx512": 16, "avx2": 8, "scalar": 1}[lib.fma_isa]
    assert fma.iters == ceilings_lib.MIN_FMA_ITERS, fma.iters
    assert fma.flops == 2 * lanes * 16 * fma.iters * threads, (fma.flops, fma.iters)

def refused(call, name):
    try:
        call()
    except ValueError as e:
        assert name in str(e), (name, e)
        print("refused:", e)
        return
    raise AssertionError(f"no error for bad {name}")

refused(lambda: lib.triad(0, 1), "nbytes")
refused(lambda: lib.triad(1 << 20, 0), "threads")
refused(lambda: lib.read(3, 1), "nbytes")
refused(lambda: lib.read(1 << 20, 0), "threads")
refused(lambda: lib.fma(0, 1), "flops")
refused(lambda: lib.fma(1e6, 0), "threads")
try:
    ceilings_lib.CeilingsLib("/nonexistent/libceilings.so")
    raise AssertionError("loaded a missing library")
except OSError as e:
    assert "/nonexistent/libceilings.so" in str(e), e
print("libceilings.so: triad", lib.triad_isa, "fma", lib.fma_isa)
PY
echo PASS
