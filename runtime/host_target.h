// Names of host targets and which of them this machine can run.
//
// A host target name is "host-<arch>[-<isa level>]", e.g. "host-x86_64" (the
// x86-64 baseline) or "host-x86_64-v3" (AVX2, FMA, BMI2). The ISA level is part
// of the name, and so of the cache key: a binary built for v3 is never served
// to, or loaded on, a machine without AVX2.
#ifndef PTO_RUNTIME_HOST_TARGET_H_
#define PTO_RUNTIME_HOST_TARGET_H_

#include <string>
#include <vector>

namespace pto::runtime {

// Host targets this build knows, most capable last.
const std::vector<std::string>& KnownHostTargets();

// The most capable host target this machine's CPU supports.
const std::string& NativeHostTarget();

// Whether this machine can run code built for `target` (a host target name).
bool CanRunHostTarget(const std::string& target);

// The -march flag the host C++ compiler gets for `target`; empty when
// `target` is not a known host target.
std::string HostTargetMarch(const std::string& target);

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_HOST_TARGET_H_
