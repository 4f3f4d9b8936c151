#include "runtime/kernel.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/executor.h"
#include "runtime/native_library.h"

namespace pto::runtime {
namespace {

// Workspaces start on cache-line (and widest-vector) boundaries.
constexpr int64_t kWorkspaceAlignment = 64;

int64_t AlignUp(int64_t n) {
  return (n + kWorkspaceAlignment - 1) / kWorkspaceAlignment *
         kWorkspaceAlignment;
}

std::string ShapeString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string ShapeString(const pto::v1::Shape& shape) {
  std::vector<std::string> dims;
  for (const pto::v1::Dim& d : shape.dims()) {
    dims.push_back(d.kind_case() == pto::v1::Dim::kSymbol
                       ? d.symbol()
                       : absl::StrCat(d.size()));
  }
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

using Arena = std::unique_ptr<void, FreeDeleter>;

}  // namespace

// A free list of workspace arenas of one size. Run takes an idle arena (or
// allocates one) and gives it back when its tasks are done; so a Kernel run
// N times from one thread allocates once, and K concurrent runs allocate at
// most K. Workspaces hold only intermediates that the graph writes before it
// reads them, so a reused arena needs no clearing.
class WorkspacePool {
 public:
  WorkspacePool(int64_t bytes, int max_idle)
      : bytes_(bytes), max_idle_(max_idle) {}

  void set_max_idle(int max_idle) {
    std::vector<Arena> freed;  // freed after the lock is released
    std::lock_guard<std::mutex> lock(mu_);
    max_idle_ = std::max(0, max_idle);
    while (static_cast<int>(idle_.size()) > max_idle_) {
      freed.push_back(std::move(idle_.back()));
      idle_.pop_back();
    }
  }

  // An arena of bytes_ bytes, 64-byte aligned; null when allocation fails.
  Arena Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        Arena arena = std::move(idle_.back());
        idle_.pop_back();
        return arena;
      }
      ++allocations_;
    }
    // Allocate outside the lock: a large arena's page faults come later, on
    // first touch, but the call itself may still take a while.
    return Arena(std::aligned_alloc(kWorkspaceAlignment, bytes_));
  }

  // Keeps `arena` for a later run, or frees it when max_idle_ are idle.
  void Release(Arena arena) {
    if (arena == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int>(idle_.size()) < max_idle_) {
      idle_.push_back(std::move(arena));
    }
    // Otherwise `arena` (a parameter) is freed when this returns.
  }

  int64_t allocations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return allocations_;
  }

 private:
  const int64_t bytes_;
  mutable std::mutex mu_;
  int max_idle_;             // guarded by mu_
  std::vector<Arena> idle_;  // guarded by mu_
  int64_t allocations_ = 0;  // guarded by mu_
};

namespace {

// Returns a borrowed arena to its pool when the run ends, on every path.
class ArenaLease {
 public:
  ArenaLease(WorkspacePool* pool, Arena arena)
      : pool_(pool), arena_(std::move(arena)) {}
  ~ArenaLease() { pool_->Release(std::move(arena_)); }
  ArenaLease(const ArenaLease&) = delete;
  ArenaLease& operator=(const ArenaLease&) = delete;

  void* get() const { return arena_.get(); }

 private:
  WorkspacePool* pool_;
  Arena arena_;
};

}  // namespace

Kernel::Kernel(pto::v1::KernelBinary binary,
               std::unique_ptr<NativeLibrary> library, std::vector<void*> blocks,
               std::unique_ptr<TaskPlan> plan)
    : binary_(std::move(binary)),
      library_(std::move(library)),
      blocks_(std::move(blocks)),
      plan_(std::move(plan)) {
  const auto& buffers = binary_.execute_graph().buffers();
  workspace_offsets_.assign(buffers.size(), -1);
  for (int i = binary_.params_size(); i < buffers.size(); ++i) {
    workspace_offsets_[i] = workspace_bytes_;
    // Every workspace gets at least one aligned slot so pointers are
    // distinct and non-null even for empty ones.
    workspace_bytes_ += AlignUp(std::max<int64_t>(1, buffers[i].workspace_bytes()));
  }
  workspaces_ =
      std::make_unique<WorkspacePool>(workspace_bytes_, kMaxIdleWorkspaces);
}

Kernel::~Kernel() = default;

void Kernel::set_max_idle_workspaces(int n) const {
  workspaces_->set_max_idle(n);
}

int64_t Kernel::workspace_allocations() const {
  return workspaces_->allocations();
}

absl::StatusOr<std::unique_ptr<Kernel>> Kernel::Load(
    const pto::v1::KernelBinary& binary) {
  absl::Status verified = VerifyBinary(binary);
  if (!verified.ok()) return verified;
  absl::StatusOr<std::unique_ptr<NativeLibrary>> library =
      NativeLibrary::Load(binary.native_payload());
  if (!library.ok()) {
    return absl::Status(library.status().code(),
                        absl::StrCat("kernel '", binary.kernel_name(),
                                     "': ", library.status().message()));
  }
  const pto::v1::ExecuteGraph& graph = binary.execute_graph();
  std::vector<void*> blocks;
  std::vector<pto_block_fn> functions;
  for (int f = 0; f < graph.functions_size(); ++f) {
    const pto::v1::BlockFunction& fn = graph.functions(f);
    pto_block_fn block = (*library)->block(static_cast<int>(fn.index()));
    if (block == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel binary refused: execute graph function %d '%s' names block "
          "%d but the payload has %d blocks",
          f, fn.name(), fn.index(), (*library)->num_blocks()));
    }
    functions.push_back(block);
    blocks.push_back(reinterpret_cast<void*>(block));
  }
  absl::StatusOr<std::unique_ptr<TaskPlan>> plan =
      TaskPlan::Create(graph, functions);
  if (!plan.ok()) return plan.status();
  return std::unique_ptr<Kernel>(new Kernel(binary, *std::move(library),
                                            std::move(blocks),
                                            *std::move(plan)));
}

absl::Status Kernel::CheckArgument(int index, const TensorArg& arg) const {
  const pto::v1::KernelParam& param = binary_.params(index);
  const std::string where =
      absl::StrFormat("argument %d '%s'", index, param.name());
  if (arg.dtype != param.dtype()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected dtype %s, got %s", where,
        pto::v1::DataType_Name(param.dtype()),
        pto::v1::DataType_IsValid(arg.dtype)
            ? pto::v1::DataType_Name(arg.dtype)
            : absl::StrCat(static_cast<int>(arg.dtype))));
  }
  bool equal = static_cast<int>(arg.shape.size()) == param.shape().dims_size();
  for (int d = 0; equal && d < param.shape().dims_size(); ++d) {
    const pto::v1::Dim& dim = param.shape().dims(d);
    if (dim.kind_case() == pto::v1::Dim::kSymbol) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s: symbolic dim '%s' (dim %d) is not supported by this runtime "
          "yet",
          where, dim.symbol(), d));
    }
    equal = arg.shape[d] == dim.size();
  }
  if (!equal) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected shape %s, got %s", where,
                        ShapeString(param.shape()), ShapeString(arg.shape)));
  }
  if (arg.data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: data pointer is null", where));
  }
  return absl::OkStatus();
}

absl::Status Kernel::Run(absl::Span<const TensorArg> args,
                         Executor* executor) const {
  return Run(args, executor, RunOptions());
}

absl::Status Kernel::Run(absl::Span<const TensorArg> args, Executor* executor,
                         const RunOptions& options) const {
  if (args.size() != static_cast<size_t>(binary_.params_size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kernel '%s' takes %d arguments, got %d", binary_.kernel_name(),
        binary_.params_size(), args.size()));
  }
  for (int i = 0; i < binary_.params_size(); ++i) {
    absl::Status ok = CheckArgument(i, args[i]);
    if (!ok.ok()) return ok;
  }
  ArenaLease arena(workspaces_.get(),
                   workspace_bytes_ > 0 ? workspaces_->Acquire() : Arena());
  if (workspace_bytes_ > 0) {
    if (arena.get() == nullptr) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "kernel '%s': cannot allocate %d bytes of workspace",
          binary_.kernel_name(), workspace_bytes_));
    }
  }
  std::vector<void*> buffers(workspace_offsets_.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i] = i < args.size()
                     ? args[i].data
                     : static_cast<char*>(arena.get()) + workspace_offsets_[i];
  }
  Executor& target = executor != nullptr ? *executor : Executor::Default();
  return target.Run(*plan_, buffers.data(), options);
}

}  // namespace pto::runtime
