// Names of host targets and which of them this machine can run.
//
// A host target name is "host-<arch>[-<isa level>][-<extension>]":
//   host-x86_64         the x86-64 baseline
//   host-x86_64-v3      AVX2, FMA, BMI2
//   host-x86_64-v3-amx  v3 plus AMX-TILE and AMX-BF16: the same code as v3
//                       except BF16 matmuls, which run on AMX tiles
//                       (pto_amx.h). Runnable only where the CPU has both
//                       and the OS grants this process the AMX tile state
//                       (Linux arch_prctl ARCH_REQ_XCOMP_PERM for
//                       XFEATURE_XTILEDATA, asked once per process).
// The ISA level is part of the name, and so of the cache key: a binary built
// for v3 is never served to, or loaded on, a machine without AVX2, and an
// AMX binary never to one without AMX.
//
// "host" (ResolveTarget, compile.h) is NativeHostTarget(): the most capable
// target this machine runs, so host-x86_64-v3-amx on a CPU with AMX-BF16.
#ifndef PTO_RUNTIME_HOST_TARGET_H_
#define PTO_RUNTIME_HOST_TARGET_H_

#include <string>
#include <vector>

namespace pto::runtime {

inline constexpr char kHostAmxTarget[] = "host-x86_64-v3-amx";

// Host targets this build knows, most capable last.
const std::vector<std::string>& KnownHostTargets();

// The most capable host target this machine's CPU (and OS) supports.
const std::string& NativeHostTarget();

// Whether this machine can run code built for `target` (a host target name).
// For the AMX target this asks the OS for the AMX tile state the first time
// (once per process), so a process that loads AMX code has the permission.
bool CanRunHostTarget(const std::string& target);

// What `target` needs of the CPU, for messages ("AVX2, FMA and BMI2 (x86-64-v3)");
// empty when `target` is not a known host target.
std::string HostTargetNeeds(const std::string& target);

// The -march flag the host C++ compiler gets for `target`; empty when
// `target` is not a known host target.
std::string HostTargetMarch(const std::string& target);

// Every ISA flag the host C++ compiler gets for `target` (-march=... and
// extensions such as -mamx-tile); empty when `target` is not known.
std::vector<std::string> HostTargetFlags(const std::string& target);

// Whether generated code for `target` may use AMX-BF16 tiles.
bool HostTargetHasAmx(const std::string& target);

// Whether this process may use AMX-BF16: CPUID reports AMX-TILE and
// AMX-BF16 and the OS granted XFEATURE_XTILEDATA (asked once, cached).
bool HostHasAmxBf16();

// Tests: replaces HostHasAmxBf16's check by `probe` (so a test can
// simulate a CPU or OS without AMX); nullptr restores the real check.
void SetAmxProbeForTesting(bool (*probe)());

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_HOST_TARGET_H_
