#include "runtime/kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <list>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/executor.h"
#include "runtime/native_library.h"
#include "runtime/template_plans.h"

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

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// Fills a LaunchProfile's phases (when there is one): Lap(&field) charges
// the time since the previous lap to `field`; the total on destruction.
class Stopwatch {
 public:
  explicit Stopwatch(LaunchProfile* profile)
      : profile_(profile), start_(profile ? NowNs() : 0), last_(start_) {}
  ~Stopwatch() {
    if (profile_ != nullptr) profile_->total_ns = NowNs() - start_;
  }
  void Lap(int64_t LaunchProfile::*field) {
    if (profile_ == nullptr) return;
    const int64_t now = NowNs();
    profile_->*field += now - last_;
    last_ = now;
  }

 private:
  LaunchProfile* profile_;
  int64_t start_;
  int64_t last_;
};

namespace {

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

// One binding's plan and the workspace layout and arenas that go with it.
struct TemplatedLaunch {
  std::unique_ptr<TaskPlan> plan;
  std::vector<int64_t> workspace_offsets;  // per buffer; -1 for parameters
  // Per buffer set: the expanded buffer behind each graph buffer (empty:
  // one set, the identity).
  std::vector<std::vector<int>> buffer_sets;
  int64_t workspace_bytes = 0;
  std::unique_ptr<WorkspacePool> pool;
};

namespace {

// The plan, workspace layout and arena pool of one binding: templates
// expanded into tasks (ExpandTemplates), then prepared for the executor.
absl::StatusOr<std::shared_ptr<TemplatedLaunch>> ExpandLaunch(
    const pto::v1::KernelBinary& binary, const std::vector<void*>& blocks,
    const SymbolValues& values, Stopwatch& watch) {
  absl::StatusOr<ExpandedGraph> expanded = ExpandTemplates(binary, values);
  if (!expanded.ok()) {
    return absl::Status(expanded.status().code(),
                        absl::StrCat("kernel '", binary.kernel_name(), "': ",
                                     expanded.status().message()));
  }
  watch.Lap(&LaunchProfile::expand_ns);
  std::vector<pto_block_fn> functions;
  for (void* b : blocks) functions.push_back(reinterpret_cast<pto_block_fn>(b));
  const uint32_t slots = static_cast<uint32_t>(binary.execute_graph().buffers_size());
  absl::StatusOr<std::unique_ptr<TaskPlan>> plan = TaskPlan::Create(
      expanded->graph, functions, expanded->task_buffer_set, slots);
  if (!plan.ok()) return plan.status();
  auto made = std::make_shared<TemplatedLaunch>();
  made->plan = *std::move(plan);
  made->buffer_sets = std::move(expanded->buffer_sets);
  made->workspace_offsets.assign(expanded->buffer_bytes.size(), -1);
  for (size_t i = binary.params_size(); i < expanded->buffer_bytes.size(); ++i) {
    made->workspace_offsets[i] = made->workspace_bytes;
    made->workspace_bytes += AlignUp(std::max<int64_t>(1, expanded->buffer_bytes[i]));
  }
  made->pool = std::make_unique<WorkspacePool>(made->workspace_bytes,
                                               Kernel::kMaxIdleWorkspaces);
  return made;
}

// What a cached launch holds on to: its plan and (once run) one arena.
int64_t LaunchBytes(const TemplatedLaunch& launch) {
  return launch.plan->memory_bytes() + launch.workspace_bytes;
}

}  // namespace

// Plans of a templated kernel by symbol values, least recently used last.
class PlanCache {
 public:
  std::shared_ptr<TemplatedLaunch> Find(const std::vector<int64_t>& key) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return it->second;
      }
    }
    return nullptr;
  }

  // Keeps `launch` for `key` (or the entry another thread added meanwhile,
  // which is returned instead), dropping the least recently used beyond
  // the capacity.
  std::shared_ptr<TemplatedLaunch> Insert(const std::vector<int64_t>& key,
                                          std::shared_ptr<TemplatedLaunch> launch) {
    std::vector<std::shared_ptr<TemplatedLaunch>> dropped;  // freed unlocked
    std::lock_guard<std::mutex> lock(mu_);
    ++expanded_;
    for (auto& e : entries_) {
      if (e.first == key) return e.second;
    }
    launch->pool->set_max_idle(max_idle_);
    entries_.emplace_front(key, launch);
    bytes_ += LaunchBytes(*launch);
    // The newest entry stays even when it alone is over the byte bound.
    while (entries_.size() > static_cast<size_t>(Kernel::kMaxCachedPlans) ||
           (entries_.size() > 1 && bytes_ > max_bytes_)) {
      bytes_ -= LaunchBytes(*entries_.back().second);
      dropped.push_back(std::move(entries_.back().second));
      entries_.pop_back();
    }
    return launch;
  }

  void set_max_bytes(int64_t n) {
    std::vector<std::shared_ptr<TemplatedLaunch>> dropped;  // freed unlocked
    std::lock_guard<std::mutex> lock(mu_);
    max_bytes_ = n;
    while (entries_.size() > 1 && bytes_ > max_bytes_) {
      bytes_ -= LaunchBytes(*entries_.back().second);
      dropped.push_back(std::move(entries_.back().second));
      entries_.pop_back();
    }
  }

  int size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(entries_.size());
  }

  void set_max_idle(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    max_idle_ = n;
    for (auto& e : entries_) e.second->pool->set_max_idle(n);
  }

  int64_t allocations() const {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t n = 0;
    for (const auto& e : entries_) n += e.second->pool->allocations();
    return n;
  }

  int64_t expanded() const {
    std::lock_guard<std::mutex> lock(mu_);
    return expanded_;
  }

 private:
  mutable std::mutex mu_;
  std::list<std::pair<std::vector<int64_t>, std::shared_ptr<TemplatedLaunch>>>
      entries_;  // guarded by mu_
  int max_idle_ = Kernel::kMaxIdleWorkspaces;  // guarded by mu_
  int64_t expanded_ = 0;                       // guarded by mu_
  int64_t bytes_ = 0;  // LaunchBytes of the entries; guarded by mu_
  int64_t max_bytes_ = Kernel::kMaxCachedPlanBytes;  // guarded by mu_
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
  if (IsTemplated(binary_.execute_graph())) {
    plans_ = std::make_unique<PlanCache>();
  }
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
  if (plans_) plans_->set_max_idle(std::max(0, n));
}

int64_t Kernel::workspace_allocations() const {
  return workspaces_->allocations() + (plans_ ? plans_->allocations() : 0);
}

int64_t Kernel::plans_expanded() const {
  return plans_ ? plans_->expanded() : 0;
}

int Kernel::cached_plans() const { return plans_ ? plans_->size() : 0; }

void Kernel::set_max_cached_plan_bytes(int64_t n) const {
  if (plans_) plans_->set_max_bytes(std::max<int64_t>(0, n));
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
  // A templated graph's plans are made per binding at Run.
  absl::StatusOr<std::unique_ptr<TaskPlan>> plan =
      TaskPlan::Create(IsTemplated(graph) ? pto::v1::ExecuteGraph() : graph,
                       IsTemplated(graph) ? absl::Span<const pto_block_fn>()
                                          : absl::MakeConstSpan(functions));
  if (!plan.ok()) return plan.status();
  return std::unique_ptr<Kernel>(new Kernel(binary, *std::move(library),
                                            std::move(blocks),
                                            *std::move(plan)));
}

absl::Status Kernel::CheckArgument(int index, const TensorArg& arg,
                                   bool check_shape) const {
  const pto::v1::KernelParam& param = binary_.params(index);
  // Formatted only for an error: a launch checks every argument.
  auto where = [&] { return absl::StrFormat("argument %d '%s'", index, param.name()); };
  if (arg.dtype != param.dtype()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected dtype %s, got %s", where(),
        pto::v1::DataType_Name(param.dtype()),
        pto::v1::DataType_IsValid(arg.dtype)
            ? pto::v1::DataType_Name(arg.dtype)
            : absl::StrCat(static_cast<int>(arg.dtype))));
  }
  if (!check_shape) {
    if (arg.data == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: data pointer is null", where()));
    }
    return absl::OkStatus();
  }
  bool equal = static_cast<int>(arg.shape.size()) == param.shape().dims_size();
  for (int d = 0; equal && d < param.shape().dims_size(); ++d) {
    const pto::v1::Dim& dim = param.shape().dims(d);
    if (dim.kind_case() == pto::v1::Dim::kSymbol) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s: symbolic dim '%s' (dim %d) is not supported by this runtime "
          "yet",
          where(), dim.symbol(), d));
    }
    equal = arg.shape[d] == dim.size();
  }
  if (!equal) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected shape %s, got %s", where(),
                        ShapeString(param.shape()), ShapeString(arg.shape)));
  }
  if (arg.data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: data pointer is null", where()));
  }
  return absl::OkStatus();
}

absl::Status Kernel::Run(absl::Span<const TensorArg> args,
                         Executor* executor) const {
  return Run(args, executor, RunOptions());
}

absl::Status Kernel::Run(absl::Span<const TensorArg> args, Executor* executor,
                         const RunOptions& options) const {
  if (options.profile != nullptr) *options.profile = LaunchProfile();
  Stopwatch watch(options.profile);
  if (args.size() != static_cast<size_t>(binary_.params_size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kernel '%s' takes %d arguments, got %d", binary_.kernel_name(),
        binary_.params_size(), args.size()));
  }
  for (int i = 0; i < binary_.params_size(); ++i) {
    absl::Status ok = CheckArgument(i, args[i], plans_ == nullptr);
    if (!ok.ok()) return ok;
  }
  Executor& run_on = executor != nullptr ? *executor : Executor::Default();
  if (plans_ != nullptr) return RunTemplated(args, run_on, options, watch);
  watch.Lap(&LaunchProfile::check_ns);
  ArenaLease arena(workspaces_.get(),
                   workspace_bytes_ > 0 ? workspaces_->Acquire() : Arena());
  watch.Lap(&LaunchProfile::workspace_ns);
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
  return run_on.Run(*plan_, buffers.data(), options);
}

absl::Status Kernel::RunTemplated(absl::Span<const TensorArg> args,
                                  Executor& executor, const RunOptions& options,
                                  Stopwatch& watch) const {
  absl::StatusOr<SymbolValues> values = BindArguments(binary_, args);
  if (!values.ok()) {
    return absl::Status(values.status().code(),
                        absl::StrCat("kernel '", binary_.kernel_name(), "': ",
                                     values.status().message()));
  }
  std::vector<int64_t> key;
  for (const pto::v1::SymbolBinding& s : binary_.execute_graph().symbols()) {
    key.push_back(values->at(s.name()));
  }
  std::shared_ptr<TemplatedLaunch> launch = plans_->Find(key);
  watch.Lap(&LaunchProfile::check_ns);
  if (options.profile != nullptr) options.profile->plan_cached = launch != nullptr;
  if (launch == nullptr) {
    absl::StatusOr<std::shared_ptr<TemplatedLaunch>> made =
        ExpandLaunch(binary_, blocks_, *values, watch);
    // (The expansion is freed by now: its time counts as the plan's.)
    watch.Lap(&LaunchProfile::plan_ns);
    if (!made.ok()) return made.status();
    launch = plans_->Insert(key, *std::move(made));
  }
  ArenaLease arena(launch->pool.get(), launch->workspace_bytes > 0
                                           ? launch->pool->Acquire()
                                           : Arena());
  watch.Lap(&LaunchProfile::workspace_ns);
  if (launch->workspace_bytes > 0 && arena.get() == nullptr) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "kernel '%s': cannot allocate %d bytes of workspace",
        binary_.kernel_name(), launch->workspace_bytes));
  }
  std::vector<void*> buffers(launch->workspace_offsets.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i] = i < args.size() ? args[i].data
                                 : static_cast<char*>(arena.get()) +
                                       launch->workspace_offsets[i];
  }
  if (launch->buffer_sets.empty()) {
    return executor.Run(*launch->plan, buffers.data(), options);
  }
  // One pointer per graph buffer for each buffer set (workspace instances).
  std::vector<void*> sets;
  sets.reserve(launch->buffer_sets.size() * launch->buffer_sets[0].size());
  for (const std::vector<int>& set : launch->buffer_sets) {
    for (int b : set) sets.push_back(buffers[b]);
  }
  return executor.Run(*launch->plan, sets.data(), options);
}

}  // namespace pto::runtime
