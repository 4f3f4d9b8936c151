// ResolveTargetName and MakeTarget (target.h): the one place that knows
// which target names exist.
#include <algorithm>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/targets/ascend/ascend_backend.h"
#include "compiler/targets/host/host_backend.h"
#include "compiler/targets/target.h"
#include "compiler/util/strings.h"
#include "runtime/ascend_target.h"
#include "runtime/host_target.h"

namespace pto::compiler {

namespace {

// "host" where PTO_HOST_TARGET names a concrete host target (e.g.
// host-x86_64-v3 on an AMX machine, to keep BF16 matmuls off AMX).
absl::StatusOr<std::string> ResolveHost() {
  const char* env = std::getenv("PTO_HOST_TARGET");
  if (env == nullptr || *env == '\0') return runtime::NativeHostTarget();
  const std::string chosen = env;
  const std::vector<std::string>& known = runtime::KnownHostTargets();
  if (std::find(known.begin(), known.end(), chosen) == known.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PTO_HOST_TARGET=", Quote(chosen), " is not a host target (known: ",
        absl::StrJoin(known, ", "), ")"));
  }
  if (!runtime::CanRunHostTarget(chosen)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "PTO_HOST_TARGET=", Quote(chosen), ": this machine cannot run it (it needs ",
        runtime::HostTargetNeeds(chosen), "; \"host\" here is ",
        runtime::NativeHostTarget(), ")"));
  }
  return chosen;
}

// "ascend-a2a3": the device target where CANN is installed
// (ASCEND_HOME_PATH or ASCEND_TOOLKIT_HOME set), else its CPU simulation.
bool CannInstalled() {
  for (const char* var : {"ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> ResolveTargetName(const std::string& target) {
  if (target == "host") return ResolveHost();
  for (const std::string& known : runtime::KnownHostTargets()) {
    if (target == known) return target;
  }
  if (target == runtime::kAscendA2A3CpuSimTarget) return target;
  if (target == runtime::kAscendA2A3Target) {
    return CannInstalled() ? target : std::string(runtime::kAscendA2A3CpuSimTarget);
  }
  if (absl::StartsWith(target, "cuda") || absl::StartsWith(target, "ascend")) {
    return absl::UnimplementedError(absl::StrCat(
        "target ", Quote(target), ": no code generator for this target is "
        "built in this version (host targets, ascend-a2a3 and ascend-a2a3-cpusim)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown target ", Quote(target), " (known: host, ascend-a2a3, ascend-a2a3-cpusim, ",
      absl::StrJoin(runtime::KnownHostTargets(), ", "), ")"));
}

absl::StatusOr<std::unique_ptr<Target>> MakeTarget(const std::string& resolved) {
  if (!runtime::HostTargetMarch(resolved).empty()) {
    return std::unique_ptr<Target>(new HostBackend(resolved));
  }
  if (runtime::IsAscendCpuSimTarget(resolved) || runtime::IsAscendDeviceTarget(resolved)) {
    return std::unique_ptr<Target>(new AscendBackend(resolved));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no target named ", Quote(resolved)));
}

}  // namespace pto::compiler
