#include "runtime/host_target.h"

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

}  // namespace

const std::vector<std::string>& KnownHostTargets() {
  static const auto* targets = new std::vector<std::string>{kBaseline, kV3};
  return *targets;
}

const std::string& NativeHostTarget() {
  static const auto* native = new std::string(CpuHasV3() ? kV3 : kBaseline);
  return *native;
}

bool CanRunHostTarget(const std::string& target) {
#if defined(__x86_64__)
  if (target == kBaseline) return true;
  if (target == kV3) return CpuHasV3();
#endif
  return false;
}

std::string HostTargetMarch(const std::string& target) {
  if (target == kBaseline) return "x86-64";
  if (target == kV3) return "x86-64-v3";
  return "";
}

}  // namespace pto::runtime
