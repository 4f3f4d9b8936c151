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
//   host-x86_64-v4      v3 plus AVX-512 F, BW, CD, DQ and VL (-march=x86-64-v4):
//                       16-lane zmm code where pto_tile.h has it (#if
//                       defined(__AVX512F__)), 512-bit auto-vectorized loops
//                       elsewhere. Runnable only where CPUID reports the five
//                       and the OS saves the opmask and zmm state (XCR0 bits
//                       5-7, read with xgetbv).
//   host-x86_64-v4-amx  v4 plus AMX-TILE and AMX-BF16, as v3-amx is to v3.
// The ISA level is part of the name, and so of the cache key: a binary built
// for v3 is never served to, or loaded on, a machine without AVX2, a v4 one
// never to a machine without AVX-512, and an AMX binary never to one without
// AMX. HostTargetHasAmx says whether a name is one of the AMX targets.
//
// "host" (ResolveTarget, compile.h) is NativeHostTarget(): the most capable
// target this machine runs, so host-x86_64-v4-amx on a Sapphire Rapids Xeon
// (AVX-512 and AMX-BF16), host-x86_64-v4 with AVX-512 but no AMX, and
// host-x86_64-v3-amx or host-x86_64-v3 on a CPU without AVX-512.
#ifndef PTO_RUNTIME_HOST_TARGET_H_
#define PTO_RUNTIME_HOST_TARGET_H_

#include <string>
#include <vector>

namespace pto::runtime {

// The AMX target every CPU with AMX-BF16 runs (v3's ISA level); tests and
// tools that need "an AMX target" name this one. host-x86_64-v4-amx is the
// other (HostTargetHasAmx covers both).
inline constexpr char kHostAmxTarget[] = "host-x86_64-v3-amx";
inline constexpr char kHostV4Target[] = "host-x86_64-v4";
inline constexpr char kHostV4AmxTarget[] = "host-x86_64-v4-amx";

// Host targets this build knows, most capable last.
const std::vector<std::string>& KnownHostTargets();

// The most capable host target this machine's CPU (and OS) supports.
const std::string& NativeHostTarget();

// Whether this machine can run code built for `target` (a host target name).
// For an AMX target this asks the OS for the AMX tile state the first time
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

// Whether generated code for `target` may use AMX-BF16 tiles (the -amx
// targets).
bool HostTargetHasAmx(const std::string& target);

// Whether this process may use AVX-512 F/BW/CD/DQ/VL (x86-64-v4's set):
// CPUID reports all five and XCR0 has the opmask, ZMM_Hi256 and Hi16_ZMM
// state enabled (with SSE and AVX), so the OS saves zmm registers across
// context switches. (GCC 12's __builtin_cpu_supports("avx512f") makes the
// same XCR0 test, (XCR0 & 0xe6) == 0xe6, in libgcc's cpuinfo; this check
// says so explicitly and does not depend on the compiler's runtime.)
bool HostHasAvx512();

// Tests: replaces HostHasAvx512's check by `probe` (so a test can simulate a
// CPU or OS without AVX-512); nullptr restores the real check.
void SetAvx512ProbeForTesting(bool (*probe)());

// Whether this process may use AMX-BF16: CPUID reports AMX-TILE and
// AMX-BF16 and the OS granted XFEATURE_XTILEDATA (asked once, cached).
bool HostHasAmxBf16();

// Tests: replaces HostHasAmxBf16's check by `probe` (so a test can
// simulate a CPU or OS without AMX); nullptr restores the real check.
void SetAmxProbeForTesting(bool (*probe)());

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_HOST_TARGET_H_
