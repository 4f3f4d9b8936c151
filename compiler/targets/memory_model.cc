#include "compiler/targets/memory_model.h"

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"
#include "runtime/ascend_target.h"
#include "runtime/host_target.h"

namespace pto::compiler {

namespace {

struct Entry {
  const char* target;
  MemoryModel model;
};

// One entry per target (runtime::KnownHostTargets; memory_model_test checks
// that each has one). Bump the compiler fingerprint when an entry changes.
constexpr Entry kModels[] = {
    {"host-x86_64", kAiCoreMemoryModel},
    {"host-x86_64-v3", kAiCoreMemoryModel},
    {runtime::kHostAmxTarget, kAiCoreMemoryModel},
    {runtime::kHostV4Target, kAiCoreMemoryModel},
    {runtime::kHostV4AmxTarget, kAiCoreMemoryModel},
    {runtime::kAscendA2A3Target, kAiCoreMemoryModel},
    {runtime::kAscendA2A3CpuSimTarget, kAiCoreMemoryModel},
};

}  // namespace

absl::StatusOr<MemoryModel> TargetMemoryModel(const std::string& resolved) {
  for (const Entry& e : kModels) {
    if (resolved == e.target) return e.model;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "target ", Quote(resolved), " has no memory model (memory_model.cc)"));
}

}  // namespace pto::compiler
