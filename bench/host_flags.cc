// A target as the compiler resolves it, and the ISA flags the host backend
// passes the C++ compiler for it (runtime::HostTargetFlags, as
// compiler/targets/host/host_backend.cc uses them): for bench scripts that
// build generated code themselves (bench/codegen_probe.py, bench/block_ab.py),
// so that they build what the compiler builds.
//
//   bazel-bin/bench/host_flags                  # "host"; PTO_HOST_TARGET overrides
//   host-x86_64-v4-amx -march=x86-64-v4 -mamx-tile -mamx-bf16
//   bazel-bin/bench/host_flags host-x86_64-v3
//   host-x86_64-v3 -march=x86-64-v3
//
// One line: the concrete target, then its flags. A target the compiler
// refuses, or one that is not a host target, exits with status 2 and the
// compiler's message.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compile.h"
#include "runtime/host_target.h"

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: host_flags [TARGET] (default: host)\n");
    return 2;
  }
  const absl::StatusOr<std::string> target =
      pto::compiler::ResolveTarget(argc == 2 ? argv[1] : "host");
  if (!target.ok()) {
    std::fprintf(stderr, "host_flags: %s\n", std::string(target.status().message()).c_str());
    return 2;
  }
  const std::vector<std::string> flags = pto::runtime::HostTargetFlags(*target);
  if (flags.empty()) {
    std::fprintf(stderr, "host_flags: '%s' is not a host target (no -march setting)\n",
                 target->c_str());
    return 2;
  }
  std::string line = *target;
  for (const std::string& flag : flags) line += " " + flag;
  std::printf("%s\n", line.c_str());
  return 0;
}
