// ResolveTarget (compile.h) and MakeTarget (target.h): the one place that
// knows which target names exist.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/compile.h"
#include "compiler/targets/host/host_backend.h"
#include "compiler/targets/target.h"
#include "compiler/util/strings.h"
#include "runtime/host_target.h"

namespace pto::compiler {

absl::StatusOr<std::string> ResolveTarget(const std::string& target) {
  if (target == "host") return runtime::NativeHostTarget();
  for (const std::string& known : runtime::KnownHostTargets()) {
    if (target == known) return target;
  }
  if (absl::StartsWith(target, "cuda") || absl::StartsWith(target, "ascend")) {
    return absl::UnimplementedError(absl::StrCat(
        "target ", Quote(target), ": no code generator for this target is "
        "built in this version (only host targets)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown target ", Quote(target), " (known: host, ",
      absl::StrJoin(runtime::KnownHostTargets(), ", "), ")"));
}

absl::StatusOr<std::unique_ptr<Target>> MakeTarget(const std::string& resolved) {
  if (!runtime::HostTargetMarch(resolved).empty()) {
    return std::unique_ptr<Target>(new HostBackend(resolved));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no target named ", Quote(resolved)));
}

}  // namespace pto::compiler
