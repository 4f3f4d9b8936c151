#!/bin/bash
# bench/host_flags: "host" resolves as the compiler resolves it (PTO_HOST_TARGET
# too), each known target prints its -march, and bad targets exit 2 with the
# compiler's message. bench/host_build.py's target_flags reads it, and says
# what is wrong (a bad target, the binary not built).
set -uo pipefail
bin="$1"
fail() { echo "FAIL: $*"; exit 1; }

unset PTO_HOST_TARGET
out="$("${bin}")" || fail "host: exit status $?"
echo "${out}"
[[ "${out}" =~ ^host-x86_64[-a-z0-9]*\ -march=x86-64 ]] || fail "host: ${out}"
out="$("${bin}" host-x86_64)" || fail "host-x86_64: exit status $?"
[[ "${out}" == "host-x86_64 -march=x86-64" ]] || fail "host-x86_64: ${out}"
out="$("${bin}" host-x86_64-v3-amx)" || fail "host-x86_64-v3-amx: exit status $?"
[[ "${out}" == "host-x86_64-v3-amx -march=x86-64-v3 -mamx-tile -mamx-bf16" ]] ||
  fail "host-x86_64-v3-amx: ${out}"
out="$(PTO_HOST_TARGET=host-x86_64 "${bin}")" || fail "PTO_HOST_TARGET: exit status $?"
[[ "${out}" == "host-x86_64 -march=x86-64" ]] || fail "PTO_HOST_TARGET=host-x86_64: ${out}"

for bad in "bogus" "PTO_HOST_TARGET=bogus"; do
  if [[ "${bad}" == PTO_HOST_TARGET=* ]]; then
    msg="$(env "${bad}" "${bin}" 2>&1)"
  else
    msg="$("${bin}" "${bad}" 2>&1)"
  fi
  status=$?
  [[ ${status} -eq 2 ]] || fail "${bad}: exit status ${status}, want 2"
  grep -q "bogus" <<<"${msg}" || fail "${bad}: message does not name it: ${msg}"
  echo "refused ${bad}: ${msg}"
done
python3 - "${bin}" "$(dirname "$0")" <<'PY' || fail "host_build.target_flags"
import sys
sys.path.insert(0, sys.argv[2])
import host_build
assert host_build.target_flags("host-x86_64-v4", sys.argv[1]) == ("host-x86_64-v4", ["-march=x86-64-v4"])
for target, path, want in (("bogus", sys.argv[1], "bogus"),
                           ("host", "/nonexistent/host_flags", "bazel build //bench:host_flags")):
    try:
        host_build.target_flags(target, path)
        raise AssertionError(f"no error for {target} {path}")
    except RuntimeError as e:
        assert want in str(e), (want, e)
        print("refused:", e)
PY
echo PASS
