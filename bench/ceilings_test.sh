#!/bin/bash
# bench/ceilings: prints positive ceilings as one JSON line, and refuses bad
# flags with exit status 2 and a message naming the flag.
set -uo pipefail
bin="$1"
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
assert d["fma_gflops"] > 0, d
assert sorted(d["triad_gbps"]) == ["1024", "64"], d
assert all(v > 0 for v in d["triad_gbps"].values()), d
PY

for bad in --threads=0 --threads=2x --sizes_kib=12,x --reps=0 --bogus; do
  msg="$("${bin}" "${bad}" 2>&1)"
  status=$?
  [[ ${status} -eq 2 ]] || fail "${bad}: exit status ${status}, want 2"
  grep -q -- "${bad%%=*}" <<<"${msg}" || fail "${bad}: message does not name it: ${msg}"
done
echo PASS
