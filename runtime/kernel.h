// Loading and running kernel binaries.
//
//   auto kernel = pto::runtime::Kernel::Load(binary);   // verify, dlopen
//   if (!kernel.ok()) ...            // says which check failed
//   std::vector<pto::runtime::TensorArg> args = {{x.data(), DT_FP32, {64, 128}},
//                                                {y.data(), DT_FP32, {64, 128}}};
//   absl::Status s = (*kernel)->Run(args);   // MPMD on the default executor
//
// A Kernel is immutable after Load and may be Run concurrently from several
// threads with different argument buffers. Each Run borrows a workspace arena
// (all of the binary's workspace buffers, laid out once at Load) from the
// Kernel's pool and returns it when done, so repeat runs skip the allocation
// and, for arenas above malloc's mmap threshold, the page faults of fresh
// memory; concurrent Runs each get their own arena. The pool keeps at most
// kMaxIdleWorkspaces idle arenas (set_max_idle_workspaces); they are freed
// with the Kernel.
//
// Kernels with symbolic shapes bind their symbols from the
// arguments at each Run (template_plans.h) and expand the binary's task
// templates into a plan for that binding; the last kMaxCachedPlans bindings'
// plans (with their own workspace pools) are kept, so a repeated size costs
// a lookup.
#ifndef PTO_RUNTIME_KERNEL_H_
#define PTO_RUNTIME_KERNEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "pto/v1/kernel.pb.h"

namespace pto::runtime {

class Executor;
class NativeLibrary;
class WorkspacePool;
class TaskPlan;
class PlanCache;
class Stopwatch;
struct RunOptions;

// One argument buffer as the caller supplies it: dense, row-major.
struct TensorArg {
  void* data = nullptr;
  pto::v1::DataType dtype = pto::v1::DT_UNSPECIFIED;
  std::vector<int64_t> shape;
};

// Checks a binary without loading code: magic, format version, target (one
// this machine can run), payload checksum, and the Execute Graph's internal
// consistency (function and buffer indices, deps in topological order). The
// error names the check that failed, e.g. "payload checksum mismatch".
absl::Status VerifyBinary(const pto::v1::KernelBinary& binary);

class Kernel {
 public:
  // Verifies the binary (VerifyBinary), loads its native payload (memfd +
  // dlopen) and resolves its block table.
  static absl::StatusOr<std::unique_ptr<Kernel>> Load(
      const pto::v1::KernelBinary& binary);

  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // Checks `args` against the parameters (count, dtype, shape: an error names
  // the parameter), allocates workspaces, and runs every task of the Execute
  // Graph on `executor` (the process-wide default when null). Returns when all
  // tasks are done.
  absl::Status Run(absl::Span<const TensorArg> args,
                   Executor* executor = nullptr) const;

  // As above, with options of the run (executor.h), e.g. a trace of every
  // task for Executor::ChromeTraceJson.
  absl::Status Run(absl::Span<const TensorArg> args, Executor* executor,
                   const RunOptions& options) const;

  const pto::v1::KernelBinary& binary() const { return binary_; }

  // How many idle workspace arenas the pool keeps for later runs by default;
  // a run that finds none idle allocates one, and one returned to a full pool
  // is freed.
  static constexpr int kMaxIdleWorkspaces = 4;

  // Changes that bound (n >= 0), freeing idle arenas above it. 0 frees every
  // run's arena when the run ends (no memory held between runs; every run
  // allocates). Safe to call while other threads Run.
  void set_max_idle_workspaces(int n) const;

  // Workspace arenas allocated so far by this Kernel's runs (0 when the
  // binary has no workspace buffers). For tests and benchmarks: a second
  // sequential Run must not raise it.
  int64_t workspace_allocations() const;

  // Kernels with symbolic shapes: plans kept for at most this many distinct
  // symbol bindings, and while their plans and one workspace arena each
  // take at most kMaxCachedPlanBytes (a plan of 600k tasks is ~60 MiB);
  // the least recently used are dropped first, the newest is always kept.
  static constexpr int kMaxCachedPlans = 16;
  static constexpr int64_t kMaxCachedPlanBytes = int64_t{1} << 30;

  // Kernels with symbolic shapes: how many plans Runs have expanded so far
  // (a Run whose binding is cached expands none). 0 for static kernels.
  int64_t plans_expanded() const;

  // Kernels with symbolic shapes: the plans cached now; and a new byte bound
  // for them (n >= 0; tests). Safe to call while other threads Run.
  int cached_plans() const;
  void set_max_cached_plan_bytes(int64_t n) const;

 private:
  Kernel(pto::v1::KernelBinary binary, std::unique_ptr<NativeLibrary> library,
         std::vector<void*> blocks, std::unique_ptr<TaskPlan> plan);

  // Checks one argument against its parameter (dtype, shape; shape only
  // when `check_shape`: templated kernels bind shapes instead).
  absl::Status CheckArgument(int index, const TensorArg& arg,
                             bool check_shape = true) const;
  absl::Status RunTemplated(absl::Span<const TensorArg> args, Executor& executor,
                            const RunOptions& options, Stopwatch& watch) const;

  pto::v1::KernelBinary binary_;
  std::unique_ptr<NativeLibrary> library_;
  // Block functions indexed like ExecuteGraph.functions.
  std::vector<void*> blocks_;
  // The Execute Graph prepared for the executor (successor lists, args).
  std::unique_ptr<TaskPlan> plan_;
  // Byte offset of each workspace buffer in one launch's arena (64-byte
  // aligned), indexed like ExecuteGraph.buffers; and the arena's size.
  std::vector<int64_t> workspace_offsets_;
  int64_t workspace_bytes_ = 0;
  // Arenas of workspace_bytes_ reused between runs (thread-safe).
  std::unique_ptr<WorkspacePool> workspaces_;
  // Templated kernels: plans by symbol binding (null for static kernels).
  std::unique_ptr<PlanCache> plans_;
};

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_KERNEL_H_
