#include "runtime/host_target.h"

#include <atomic>

#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace pto::runtime {
namespace {

constexpr char kBaseline[] = "host-x86_64";
constexpr char kV3[] = "host-x86_64-v3";

bool CpuHasV3() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("bmi2");
#else
  return false;
#endif
}

// x86-64-v4's AVX-512 set, usable: CPUID leaf 7 subleaf 0 EBX bits 16 (F),
// 17 (DQ), 28 (CD), 30 (BW), 31 (VL); leaf 1 ECX bit 27 (OSXSAVE, so xgetbv
// may run); and XCR0 bits 1-2 (SSE, AVX) and 5-7 (opmask, upper halves of
// zmm0-15, zmm16-31) set: a CPU with AVX-512 under an OS (or hypervisor)
// that does not save the zmm state faults on the first zmm instruction.
bool CpuHasAvx512() {
#if defined(__x86_64__)
  unsigned max_leaf, eax, ebx, ecx, edx;
  __asm__("cpuid" : "=a"(max_leaf), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0), "c"(0));
  if (max_leaf < 7) return false;
  __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(1), "c"(0));
  if (!(ecx >> 27 & 1)) return false;
  __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(0));
  constexpr unsigned kV4Ebx = 1u << 16 | 1u << 17 | 1u << 28 | 1u << 30 | 1u << 31;
  if ((ebx & kV4Ebx) != kV4Ebx) return false;
  unsigned xcr0_lo, xcr0_hi;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  constexpr unsigned kZmmState = 0xe6;  // bits 1, 2, 5, 6, 7
  return (xcr0_lo & kZmmState) == kZmmState;
#else
  return false;
#endif
}

// CPUID leaf 7, subleaf 0, EDX: bit 22 AMX-BF16, bit 24 AMX-TILE (GCC 12's
// __builtin_cpu_supports does not know the AMX features).
bool CpuHasAmxBf16() {
#if defined(__x86_64__)
  unsigned max_leaf, ebx, ecx, edx;
  __asm__("cpuid" : "=a"(max_leaf), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0), "c"(0));
  if (max_leaf < 7) return false;
  unsigned eax;
  __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(0));
  return (edx >> 22 & 1) && (edx >> 24 & 1);
#else
  return false;
#endif
}

// Linux keeps the AMX tile data state off until a process asks for it;
// without the permission the first tile instruction faults (SIGILL).
bool OsGrantsAmx() {
#if defined(__x86_64__) && defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023;  // asm/prctl.h
  constexpr long kXfeatureXtiledata = 18;     // asm/fpu/xstate.h
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

bool RealAmxProbe() {
  static const bool usable = CpuHasAmxBf16() && OsGrantsAmx();
  return usable;
}

std::atomic<bool (*)()> amx_probe{nullptr};
std::atomic<bool (*)()> avx512_probe{nullptr};

}  // namespace

bool HostHasAvx512() {
  bool (*probe)() = avx512_probe.load();
  if (probe != nullptr) return probe();
  static const bool usable = CpuHasAvx512();
  return usable;
}

void SetAvx512ProbeForTesting(bool (*probe)()) { avx512_probe.store(probe); }

bool HostHasAmxBf16() {
  bool (*probe)() = amx_probe.load();
  return probe != nullptr ? probe() : RealAmxProbe();
}

void SetAmxProbeForTesting(bool (*probe)()) { amx_probe.store(probe); }

const std::vector<std::string>& KnownHostTargets() {
  static const auto* targets =
      new std::vector<std::string>{kBaseline, kV3, kHostAmxTarget,
                                   kHostV4Target, kHostV4AmxTarget};
  return *targets;
}

const std::string& NativeHostTarget() {
  const std::vector<std::string>& known = KnownHostTargets();
  for (auto it = known.rbegin(); it != known.rend(); ++it) {
    if (CanRunHostTarget(*it)) return *it;
  }
  return known.front();
}

bool CanRunHostTarget(const std::string& target) {
#if defined(__x86_64__)
  if (target == kBaseline) return true;
  if (target == kV3) return CpuHasV3();
  if (target == kHostAmxTarget) return CpuHasV3() && HostHasAmxBf16();
  if (target == kHostV4Target) return CpuHasV3() && HostHasAvx512();
  if (target == kHostV4AmxTarget) {
    return CpuHasV3() && HostHasAvx512() && HostHasAmxBf16();
  }
#endif
  return false;
}

std::string HostTargetNeeds(const std::string& target) {
  if (target == kBaseline) return "x86-64";
  if (target == kV3) return "AVX2, FMA and BMI2 (x86-64-v3)";
  if (target == kHostAmxTarget) {
    return "x86-64-v3, AMX-TILE and AMX-BF16, and the OS's permission for the "
           "AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM, Linux 5.16 or later)";
  }
  if (target == kHostV4Target) {
    return "AVX-512 F, BW, CD, DQ and VL, and the OS's saving of the zmm and "
           "opmask state (x86-64-v4)";
  }
  if (target == kHostV4AmxTarget) {
    return "x86-64-v4 (AVX-512 F, BW, CD, DQ, VL), AMX-TILE and AMX-BF16, and "
           "the OS's permission for the AMX tile state (arch_prctl "
           "ARCH_REQ_XCOMP_PERM, Linux 5.16 or later)";
  }
  return "";
}

// No -mprefer-vector-width for v4: GCC 12's -march=x86-64-v4 tunes for
// "generic", whose preferred vector width is unset ("none"; only the Intel
// AVX-512 core tunings prefer 256 bits), so its auto-vectorizer already uses
// zmm registers: generated elementwise kernels compile to the same code
// with and without -mprefer-vector-width=512.
std::string HostTargetMarch(const std::string& target) {
  if (target == kBaseline) return "x86-64";
  if (target == kV3 || target == kHostAmxTarget) return "x86-64-v3";
  if (target == kHostV4Target || target == kHostV4AmxTarget) return "x86-64-v4";
  return "";
}

std::vector<std::string> HostTargetFlags(const std::string& target) {
  const std::string march = HostTargetMarch(target);
  if (march.empty()) return {};
  std::vector<std::string> flags = {"-march=" + march};
  if (HostTargetHasAmx(target)) {
    flags.push_back("-mamx-tile");
    flags.push_back("-mamx-bf16");
  }
  return flags;
}

bool HostTargetHasAmx(const std::string& target) {
  return target == kHostAmxTarget || target == kHostV4AmxTarget;
}

}  // namespace pto::runtime
