// VerifyBinary: every check the runtime makes before it loads native code.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/ascend_target.h"
#include "runtime/host_target.h"
#include "runtime/kernel.h"
#include "runtime/kernel_abi.h"
#include "runtime/sha256.h"
#include "runtime/signature.h"
#include "runtime/template_plans.h"

namespace pto::runtime {
namespace {

// Bounds on what a binary may ask of the runtime; a binary beyond them is
// refused instead of exhausting memory.
constexpr int64_t kMaxWorkspaceBytes = int64_t{1} << 40;
constexpr int kMaxTasks = 1 << 24;
constexpr int kMaxTaskArgs = 64;

absl::Status Refuse(absl::StatusCode code, absl::string_view what) {
  return absl::Status(code, absl::StrCat("kernel binary refused: ", what));
}

std::string RunnableTargets() {
  std::vector<std::string> runnable;
  for (const std::string& t : KnownHostTargets()) {
    if (CanRunHostTarget(t)) runnable.push_back(t);
  }
  return absl::StrJoin(runnable, ", ");
}

absl::Status VerifyExecuteGraph(const pto::v1::KernelBinary& binary) {
  const pto::v1::ExecuteGraph& graph = binary.execute_graph();
  const auto bad = [](absl::string_view what) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  absl::StrCat("execute graph: ", what));
  };
  if (graph.buffers_size() < binary.params_size()) {
    return bad(absl::StrFormat("%d buffers but %d parameters (parameters are "
                               "the first buffers)",
                               graph.buffers_size(), binary.params_size()));
  }
  for (int i = 0; i < graph.buffers_size(); ++i) {
    const int64_t bytes = graph.buffers(i).workspace_bytes();
    if (i < binary.params_size() && bytes != 0) {
      return bad(absl::StrFormat(
          "buffer %d is parameter '%s' but has workspace_bytes %d", i,
          binary.params(i).name(), bytes));
    }
    if (bytes < 0 || bytes > kMaxWorkspaceBytes) {
      return bad(absl::StrFormat(
          "buffer %d: workspace_bytes %d is out of range [0, %d]", i, bytes,
          kMaxWorkspaceBytes));
    }
  }
  for (int f = 0; f < graph.functions_size(); ++f) {
    const pto::v1::BlockFunction& fn = graph.functions(f);
    if (fn.num_args() > kMaxTaskArgs) {
      return bad(absl::StrFormat("function %d '%s': num_args %d exceeds %d", f,
                                 fn.name(), fn.num_args(), kMaxTaskArgs));
    }
  }
  if (IsTemplated(graph)) return VerifyTemplates(binary);
  if (graph.tasks_size() > kMaxTasks) {
    return bad(absl::StrFormat("%d tasks exceed the limit of %d",
                               graph.tasks_size(), kMaxTasks));
  }
  for (int t = 0; t < graph.tasks_size(); ++t) {
    const pto::v1::Task& task = graph.tasks(t);
    if (task.function() >= static_cast<uint32_t>(graph.functions_size())) {
      return bad(absl::StrFormat(
          "task %d: function index %d out of range (%d functions)", t,
          task.function(), graph.functions_size()));
    }
    const pto::v1::BlockFunction& fn = graph.functions(task.function());
    if (static_cast<uint32_t>(task.args_size()) != fn.num_args()) {
      return bad(absl::StrFormat(
          "task %d: %d args but function %d '%s' takes %d", t,
          task.args_size(), task.function(), fn.name(), fn.num_args()));
    }
    for (uint32_t dep : task.deps()) {
      if (dep >= static_cast<uint32_t>(t)) {
        return bad(absl::StrFormat(
            "task %d: dependency %d is not an earlier task (tasks must be in "
            "topological order)",
            t, dep));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyBinary(const pto::v1::KernelBinary& binary) {
  if (binary.magic() != PTO_KERNEL_MAGIC) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  absl::StrFormat("bad magic 0x%08X (expected 0x%08X, \"PTO1\"):"
                                  " not a kernel binary",
                                  binary.magic(), PTO_KERNEL_MAGIC));
  }
  if (binary.format_version() != PTO_KERNEL_FORMAT_VERSION) {
    return Refuse(absl::StatusCode::kFailedPrecondition,
                  absl::StrFormat("format version %d is not supported (this "
                                  "runtime reads version %d)",
                                  binary.format_version(),
                                  PTO_KERNEL_FORMAT_VERSION));
  }
  if (IsAscendDeviceTarget(binary.target())) {
    return Refuse(absl::StatusCode::kFailedPrecondition,
                  AscendDeviceRefusal(binary.target()));
  }
  if (!IsAscendCpuSimTarget(binary.target()) && !CanRunHostTarget(binary.target())) {
    const std::string needs = HostTargetNeeds(binary.target());
    return Refuse(absl::StatusCode::kFailedPrecondition,
                  absl::StrFormat("target '%s' cannot run on this machine "
                                  "(this machine runs: %s%s)",
                                  binary.target(), RunnableTargets(),
                                  needs.empty() ? "" : "; the target needs " + needs));
  }
  const std::string actual = Sha256(binary.native_payload());
  if (actual != binary.payload_sha256()) {
    return Refuse(absl::StatusCode::kInvalidArgument,
                  absl::StrFormat("payload checksum mismatch (expected %s, got "
                                  "%s)",
                                  binary.payload_sha256().empty()
                                      ? std::string("<none>")
                                      : ToHex(binary.payload_sha256()),
                                  ToHex(actual)));
  }
  // Before anything else trusts the binary's structure, when a key is set.
  if (absl::Status signed_ok = CheckConfiguredSignature(binary);
      !signed_ok.ok()) {
    return signed_ok;
  }
  return VerifyExecuteGraph(binary);
}

}  // namespace pto::runtime
