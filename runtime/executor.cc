#include "runtime/executor.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"

namespace pto::runtime {
namespace {

CoreKind KindOf(pto::v1::CoreType type) {
  // Unspecified tasks run on vector cores, the general-purpose ones.
  return type == pto::v1::CORE_TYPE_CUBE ? CoreKind::kCube : CoreKind::kVector;
}

// The lowest address of the calling thread's stack, or 0 when unknown.
// Looked up once per thread: for the main thread glibc reads
// /proc/self/maps, far too slow for every Run.
uintptr_t StackLimit() {
  thread_local const uintptr_t limit = [] {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return uintptr_t{0};
    void* low = nullptr;
    size_t size = 0;
    const bool known = pthread_attr_getstack(&attr, &low, &size) == 0;
    pthread_attr_destroy(&attr);
    return known ? reinterpret_cast<uintptr_t>(low) : uintptr_t{0};
  }();
  return limit;
}

// Whether the calling thread has at least `bytes` of stack below here.
bool HasStackLeft(size_t bytes) {
  const uintptr_t limit = StackLimit();
  char here;
  const uintptr_t sp = reinterpret_cast<uintptr_t>(&here);
  return limit != 0 && sp > limit && sp - limit >= bytes;
}

// A spin-wait hint (the core may run its sibling hyperthread meanwhile).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int DefaultWorkers(CoreKind core) {
  const int hw = std::max(1u, std::thread::hardware_concurrency());
  return core == CoreKind::kVector ? hw : std::max(1, hw / 2);
}

// A positive worker count from the environment, or 0 (the default) when the
// variable is unset or not a positive integer below 4096.
int EnvWorkers(const char* name) {
  const char* value = std::getenv(name);
  int n = 0;
  if (value == nullptr || !absl::SimpleAtoi(value, &n) || n <= 0 || n > 4096) {
    return 0;
  }
  return n;
}

// The CPUs the calling thread may run on, in order (empty when unknown).
std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    }
  }
  return cpus;
}

// PTO_SPIN_MICROS: 0 or more (at most 10^6), or -1 (the default) when unset
// or not such a number.
int EnvSpinMicros() {
  const char* value = std::getenv("PTO_SPIN_MICROS");
  int n = -1;
  if (value == nullptr || !absl::SimpleAtoi(value, &n) || n < 0 || n > 1000000) {
    return -1;
  }
  return n;
}

}  // namespace

// ---------------------------------------------------------------- TaskPlan

absl::StatusOr<std::unique_ptr<TaskPlan>> TaskPlan::Create(
    const pto::v1::ExecuteGraph& graph,
    absl::Span<const pto_block_fn> functions,
    absl::Span<const uint32_t> buffer_sets, uint32_t buffer_stride) {
  if (functions.size() != static_cast<size_t>(graph.functions_size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "task plan: %d block pointers for %d functions", functions.size(),
        graph.functions_size()));
  }
  std::unique_ptr<TaskPlan> plan(new TaskPlan());
  const int n = graph.tasks_size();
  if (!buffer_sets.empty() && buffer_sets.size() != static_cast<size_t>(n)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "task plan: %d buffer sets for %d tasks", buffer_sets.size(), n));
  }
  plan->tasks_.resize(n);
  // Successor lists in one array (CSR): count, prefix-sum, fill.
  std::vector<uint32_t> num_successors(n, 0);
  size_t total_args = 0;
  for (int t = 0; t < n; ++t) {
    const pto::v1::Task& task = graph.tasks(t);
    if (task.function() >= functions.size() ||
        functions[task.function()] == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "task plan: task %d: function %d has no block", t, task.function()));
    }
    for (uint32_t dep : task.deps()) {
      if (dep >= static_cast<uint32_t>(t)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "task plan: task %d: dependency %d is not an earlier task", t,
            dep));
      }
      ++num_successors[dep];
    }
    total_args += task.args_size();
  }
  plan->args_.reserve(total_args);
  uint32_t offset = 0;
  for (int t = 0; t < n; ++t) {
    plan->tasks_[t].successors_begin = offset;
    plan->tasks_[t].successors_end = offset;  // advanced while filling
    offset += num_successors[t];
  }
  plan->successors_.resize(offset);
  for (int t = 0; t < n; ++t) {
    const pto::v1::Task& task = graph.tasks(t);
    TaskInfo& info = plan->tasks_[t];
    info.fn = functions[task.function()];
    info.core = KindOf(graph.functions(task.function()).core_type());
    info.num_deps = static_cast<uint32_t>(task.deps_size());
    info.args_begin = static_cast<uint32_t>(plan->args_.size());
    info.buffers_begin = buffer_sets.empty() ? 0 : buffer_sets[t] * buffer_stride;
    plan->args_.insert(plan->args_.end(), task.args().begin(),
                       task.args().end());
    for (uint32_t dep : task.deps()) {
      plan->successors_[plan->tasks_[dep].successors_end++] = t;
    }
    if (info.num_deps == 0) {
      plan->roots_[static_cast<int>(info.core)].push_back(t);
    }
  }
  return plan;
}

int64_t TaskPlan::memory_bytes() const {
  int64_t bytes = sizeof(TaskPlan) + tasks_.capacity() * sizeof(TaskInfo) +
                  args_.capacity() * sizeof(int64_t) +
                  successors_.capacity() * sizeof(uint32_t);
  for (const auto& roots : roots_) bytes += roots.capacity() * sizeof(uint32_t);
  return bytes;
}

// ---------------------------------------------------------------- queues

void Executor::ReadyQueue::WakeFor(int64_t pushed, int avoid_cpu, int move_to) {
  // Each spinner takes at most one of the queued items (not only of these:
  // one counted here may have stopped spinning for an earlier item it has
  // not popped yet). Read under mu_: a spinner decrements spinning_ before
  // it takes mu_ to look at the queue and maybe sleep, so one counted here
  // has not looked yet. Earlier pushes woke sleepers for their own items.
  const int64_t uncovered = static_cast<int64_t>(items_.size()) -
                            spinning_.load(std::memory_order_acquire);
  const int64_t wake = std::min<int64_t>(
      {uncovered, pushed, static_cast<int64_t>(sleepers_.size())});
  for (int64_t i = 0; i < wake; ++i) {
    // The longest asleep (what one shared condition variable wakes), or
    // with avoid_cpu the longest asleep of those last on another CPU.
    auto chosen = sleepers_.begin();
    if (avoid_cpu >= 0) {
      auto off = std::find_if(sleepers_.begin(), sleepers_.end(),
                              [&](Sleeper* s) { return s->cpu != avoid_cpu; });
      if (off != sleepers_.end()) chosen = off;
    }
    Sleeper* sleeper = *chosen;
    sleepers_.erase(chosen);
    if (move_to >= 0 && sleeper->cpu == avoid_cpu && sleeper->tid > 0) {
      // Where it is pinned it could only take turns with the caller: the
      // kernel wakes it on move_to instead. A failure leaves it where it is.
      cpu_set_t mask;
      CPU_ZERO(&mask);
      CPU_SET(move_to, &mask);
      sched_setaffinity(sleeper->tid, sizeof(mask), &mask);
    }
    sleeper->woken = true;
    sleeper->cv.Signal();
  }
}

void Executor::ReadyQueue::Push(Item item, int avoid_cpu, int move_to) {
  absl::MutexLock lock(&mu_);
  items_.push_back(item);
  size_.store(static_cast<int64_t>(items_.size()), std::memory_order_release);
  WakeFor(1, avoid_cpu, move_to);
}

void Executor::ReadyQueue::PushMany(absl::Span<const Item> items,
                                    int avoid_cpu, int move_to) {
  if (items.empty()) return;
  absl::MutexLock lock(&mu_);
  items_.insert(items_.end(), items.begin(), items.end());
  size_.store(static_cast<int64_t>(items_.size()), std::memory_order_release);
  WakeFor(static_cast<int64_t>(items.size()), avoid_cpu, move_to);
}

void Executor::ReadyQueue::Spin(int64_t spin_ns) {
  // Spin-then-park: an item pushed meanwhile is taken without the pusher
  // waking this thread. Stop() is seen at most spin_ns later, on the locked
  // path.
  if (spin_ns <= 0 || size_.load(std::memory_order_acquire) != 0) return;
  spinning_.fetch_add(1, std::memory_order_acq_rel);
  const int64_t deadline = NowNs() + spin_ns;
  for (int i = 1; size_.load(std::memory_order_acquire) == 0; ++i) {
    CpuRelax();
    if (i % 64 == 0 && NowNs() > deadline) break;
  }
  spinning_.fetch_sub(1, std::memory_order_acq_rel);
}

bool Executor::ReadyQueue::Pop(Item* item, int64_t spin_ns) {
  Spin(spin_ns);
  absl::MutexLock lock(&mu_);
  while (items_.empty() && !stopped_) {
    Sleeper self;
    self.cpu = sched_getcpu();
    // gettid() is a system call; a worker asks once (only workers Pop,
    // and each started in this process).
    static thread_local const pid_t tid = gettid();
    self.tid = tid;
    sleepers_.push_back(&self);
    while (!self.woken && !stopped_) self.cv.Wait(&mu_);
    if (!self.woken) {  // stopped: Stop() wakes and unlists every sleeper
      sleepers_.erase(std::find(sleepers_.begin(), sleepers_.end(), &self));
    }
  }
  if (items_.empty()) return false;  // stopped
  *item = items_.front();
  items_.pop_front();
  size_.store(static_cast<int64_t>(items_.size()), std::memory_order_release);
  return true;
}

bool Executor::ReadyQueue::TryPop(Item* item) {
  if (size_.load(std::memory_order_acquire) == 0) return false;  // no lock
  absl::MutexLock lock(&mu_);
  if (items_.empty()) return false;
  *item = items_.front();
  items_.pop_front();
  size_.store(static_cast<int64_t>(items_.size()), std::memory_order_release);
  return true;
}

void Executor::ReadyQueue::Stop() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
  for (Sleeper* sleeper : sleepers_) {
    sleeper->woken = true;
    sleeper->cv.Signal();
  }
  sleepers_.clear();
}

// ---------------------------------------------------------------- runs

// Policy::kHomeSegments: a contiguous run of one kind's roots (indices into
// plan->roots_[kind]). Front (low 32 bits of `bounds`): the next root its
// owner claims; back (high 32 bits): one past the last root a stealer may
// claim; empty once front >= back. Both in one word so that a compare and
// swap moves either end knowing the other; on its own cache line, which
// only its owner writes until others start stealing.
struct alignas(64) RootSegment {
  std::atomic<uint64_t> bounds{0};
  // Set by the first claimer to take the segment as its own.
  std::atomic<bool> started{false};

  static uint64_t Pack(uint32_t front, uint32_t back) {
    return uint64_t{back} << 32 | front;
  }
  static uint32_t Front(uint64_t bounds) { return static_cast<uint32_t>(bounds); }
  static uint32_t Back(uint64_t bounds) {
    return static_cast<uint32_t>(bounds >> 32);
  }
};

// The state of one Run, owned by the calling thread's stack frame.
struct Executor::RunState {
  const TaskPlan* plan;
  void* const* buffers;
  // Per task instance: dependencies not yet done.
  std::unique_ptr<std::atomic<uint32_t>[]> pending;
  // Next unclaimed index into plan->roots_[kind]; claimed root_chunk at a
  // time.
  std::atomic<uint32_t> next_root[kNumCoreKinds] = {{0}, {0}};
  uint32_t root_chunk[kNumCoreKinds] = {1, 1};
  // Policy::kHomeSegments (else num_segments stay 0 and the counters above
  // are used): per kind, one segment per root claimer; segment 0 is the
  // helping caller's own when caller_owns_first.
  int num_segments[kNumCoreKinds] = {0, 0};
  bool caller_owns_first[kNumCoreKinds] = {false, false};
  RootSegment* segments[kNumCoreKinds] = {nullptr, nullptr};
  // Both kinds' segments: inline for the usual few claimers (no allocation
  // per call), else on the heap.
  static constexpr int kInlineSegments = 8;
  RootSegment inline_segments[kInlineSegments];
  std::unique_ptr<RootSegment[]> heap_segments;
  // Tasks not yet finished plus root claimers not yet finished (a claimer
  // still in a queue refers to this run); the decrement that brings it to
  // zero notifies `done`.
  std::atomic<int64_t> remaining{0};
  absl::Notification done;
  // One slot per task when tracing (each written by exactly one thread).
  std::unique_ptr<TaskEvent[]> events;
  // One slot per root claimer when recording shares (RunOptions::shares);
  // a claimer takes the next with num_shares.
  std::unique_ptr<ShareEvent[]> shares;
  std::atomic<int> num_shares{0};
  int64_t start_ns = 0;
  // The CPU the calling thread ran on when it started the run (-1: unknown):
  // a worker that finds itself there neither spins after the run's tasks
  // nor makes the caller spin for it (the caller could not run meanwhile).
  int caller_cpu = -1;
  // Root claimers now running on caller_cpu on other threads than the caller.
  std::atomic<int> claimers_on_caller_cpu{0};
};

Executor::Executor(const Options& options) {
  // More threads than this only cost memory (8 MiB of stack each).
  constexpr int kMaxWorkersPerPool = 1024;
  num_workers_[0] = std::min(kMaxWorkersPerPool,
                             options.vector_workers > 0
                                 ? options.vector_workers
                                 : DefaultWorkers(CoreKind::kVector));
  num_workers_[1] = std::min(kMaxWorkersPerPool,
                             options.cube_workers > 0
                                 ? options.cube_workers
                                 : DefaultWorkers(CoreKind::kCube));
  spin_ns_ = int64_t{1000} * (options.spin_micros >= 0
                                  ? std::min(options.spin_micros, 1000000)
                                  : kDefaultSpinMicros);
  cpus_.clear();
  for (int c : options.worker_cpus) {
    if (c >= 0 && c < CPU_SETSIZE) cpus_.push_back(c);  // else not a CPU
  }
  if (!cpus_.empty()) {
    policy_.store(kDefaultPolicy | kPinWorkers, std::memory_order_relaxed);
  } else {
    cpus_ = AllowedCpus();
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kWorkerStackBytes);
  int id = 0;
  for (int k = 0; k < kNumCoreKinds; ++k) {
    for (int i = 0; i < num_workers_[k]; ++i, ++id) {
      auto worker = std::make_unique<Worker>(
          Worker{this, static_cast<CoreKind>(k), id, pthread_t()});
      const int error =
          pthread_create(&worker->thread, &attr, &Executor::WorkerMain,
                         worker.get());
      if (error != 0) {
        // A process that cannot start a thread cannot run kernels; say so
        // rather than hang later.
        ABSL_RAW_LOG(FATAL, "pto executor: cannot start worker thread %d: %s",
                     id, strerror(error));
      }
      workers_[k].push_back(std::move(worker));
    }
  }
  pthread_attr_destroy(&attr);
}

void* Executor::WorkerMain(void* arg) {
  Worker* worker = static_cast<Worker*>(arg);
  worker->executor->WorkerLoop(worker->core, worker->id);
  return nullptr;
}

Executor::~Executor() {
  for (ReadyQueue& q : queues_) q.Stop();
  for (auto& pool : workers_) {
    for (auto& worker : pool) pthread_join(worker->thread, nullptr);
  }
}

absl::StatusOr<std::vector<int>> Executor::ParseWorkerCpus(
    absl::string_view value) {
  if (value == "none") return std::vector<int>();
  const std::vector<int> allowed = AllowedCpus();
  if (value == "all") return allowed;
  std::vector<int> cpus;
  for (absl::string_view entry : absl::StrSplit(value, ',')) {
    int cpu = -1;
    if (!absl::SimpleAtoi(entry, &cpu) || cpu < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "PTO_WORKER_CPUS=\"%s\": entry \"%s\" is not a CPU number (want "
          "\"all\", \"none\" or numbers separated by commas, e.g. \"0,1\")",
          value, entry));
    }
    if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "PTO_WORKER_CPUS=\"%s\": CPU %d is not one this process may use "
          "(%s)",
          value, cpu, absl::StrJoin(allowed, ",")));
    }
    cpus.push_back(cpu);
  }
  return cpus;
}

absl::StatusOr<uint32_t> Executor::SetPolicyForBench(uint32_t bits) {
  if ((bits & ~kAllPolicyBits) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "executor policy: unknown bits 0x%x (known: 0x%x)",
        bits & ~kAllPolicyBits, kAllPolicyBits));
  }
  return policy_.exchange(bits, std::memory_order_relaxed);
}

Executor::Options Executor::OptionsFromEnvironment() {
  Options options;
  options.vector_workers = EnvWorkers("PTO_VECTOR_WORKERS");
  options.cube_workers = EnvWorkers("PTO_CUBE_WORKERS");
  options.spin_micros = EnvSpinMicros();
  const char* cpus = std::getenv("PTO_WORKER_CPUS");
  absl::StatusOr<std::vector<int>> parsed =
      ParseWorkerCpus(cpus != nullptr ? cpus : "all");
  if (parsed.ok()) {
    options.worker_cpus = *std::move(parsed);
  } else {
    ABSL_RAW_LOG(WARNING, "pto executor: %s; workers not pinned",
                 std::string(parsed.status().message()).c_str());
  }
  return options;
}

namespace {

// fork() calls in this process and its ancestors since the first default
// executor, counted in each child (pthread_atfork).
std::atomic<uint64_t> g_forks{0};

void CountFork() { g_forks.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

Executor& Executor::Default() {
  // A child of fork() inherits the executor but none of its threads (and
  // maybe a queue lock held by one): it gets an executor of its own. The
  // parent's copy is left alone (its threads do not exist here). A child
  // is told by the fork count, not by getpid(): that is a system call,
  // and every launch asks.
  static std::atomic<Executor*> executor{nullptr};
  static std::atomic<uint64_t> owner{0};  // g_forks when it was made
  static std::mutex creation;
  static std::once_flag count_forks;
  Executor* current = executor.load(std::memory_order_acquire);
  if (current != nullptr &&
      owner.load(std::memory_order_acquire) == g_forks.load(std::memory_order_relaxed)) {
    return *current;
  }
  std::call_once(count_forks, [] { pthread_atfork(nullptr, nullptr, CountFork); });
  std::lock_guard<std::mutex> lock(creation);
  const uint64_t forks = g_forks.load(std::memory_order_relaxed);
  current = executor.load(std::memory_order_acquire);
  if (current == nullptr || owner.load(std::memory_order_acquire) != forks) {
    current = new Executor(OptionsFromEnvironment());
    owner.store(forks, std::memory_order_release);
    executor.store(current, std::memory_order_release);
  }
  return *current;
}

std::string Executor::WorkerName(int index) const {
  const int vectors = num_workers(CoreKind::kVector);
  const int cubes = num_workers(CoreKind::kCube);
  if (index < vectors) return absl::StrCat("vector/", index);
  if (index < vectors + cubes) return absl::StrCat("cube/", index - vectors);
  return "caller";
}

void Executor::WorkerLoop(CoreKind core, int worker_id) {
  // Named so that debuggers and profilers show "pto-vector/0" etc.
  const std::string name = absl::StrCat("pto-", WorkerName(worker_id));
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  // kPinWorkers: this worker's CPU, and the mask it started with to go
  // back to.
  cpu_set_t own_mask;
  const bool can_pin = !cpus_.empty() &&
      pthread_getaffinity_np(pthread_self(), sizeof(own_mask), &own_mask) == 0;
  const int index = core == CoreKind::kVector
                        ? worker_id
                        : worker_id - num_workers(CoreKind::kVector);
  bool pinned = false;
  auto pin_home = [&](bool pin) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    CPU_SET(cpus_[index % cpus_.size()], &mask);
    pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t),
                           pin ? &mask : &own_mask);
    pinned = pin;
  };
  // Pinned before the first item too: a caller that moves this thread
  // while it sleeps (kPinWorkers) is then not undone when it wakes.
  if (can_pin && (policy() & kPinWorkers) != 0) pin_home(true);
  Item item;
  int64_t spin_ns = spin_ns_;
  while (queues_[static_cast<int>(core)].Pop(&item, spin_ns)) {
    const bool pin = can_pin && (policy() & kPinWorkers) != 0;
    if (pin != pinned) pin_home(pin);
    // Read before Dispatch: the item's share keeps its run alive until then.
    const int caller_cpu = item.run->caller_cpu;
    Dispatch(item, &core, worker_id);
    // On the CPU of the caller whose run this was, spinning only keeps the
    // caller (woken by the run's end, or preempted when this thread woke
    // there) from returning: sleep at once instead. A push wakes this
    // thread when the next run comes.
    spin_ns = caller_cpu >= 0 && sched_getcpu() == caller_cpu ? 0 : spin_ns_;
  }
}

void Executor::Dispatch(Item item, const CoreKind* core, int worker_id) {
  if (item.task >= kClaimRoots) {
    ClaimRoots(item.run, static_cast<int>(item.task - kClaimRoots), core,
               worker_id);
  } else {
    RunState* run = item.run;
    Finish(run, Execute(item, core, worker_id));
  }
}

void Executor::Finish(RunState* run, int64_t shares) {
  // After this decrement `run` may be gone.
  if (run->remaining.fetch_sub(shares, std::memory_order_acq_rel) == shares) {
    run->done.Notify();
  }
}

void Executor::ClaimRoots(RunState* run, int kind, const CoreKind* core,
                          int worker_id, bool own) {
  const std::vector<uint32_t>& roots = run->plan->roots_[kind];
  const uint32_t chunk = run->root_chunk[kind];
  const uint32_t n = static_cast<uint32_t>(roots.size());
  const int cpu = sched_getcpu();
  // A worker on the caller's CPU (woken there, maybe preempting the caller):
  // the caller must not spin waiting for it (it would only delay it).
  const bool on_caller_cpu = core != nullptr && cpu == run->caller_cpu;
  if (on_caller_cpu) {
    run->claimers_on_caller_cpu.fetch_add(1, std::memory_order_acq_rel);
  }
  ShareEvent* share = nullptr;
  if (run->shares != nullptr) {
    share = &run->shares[run->num_shares.fetch_add(1, std::memory_order_relaxed)];
    share->worker = worker_id;
    share->cpu_start = cpu;
    share->start_ns = NowNs() - run->start_ns;
  }
  int64_t claimed = 0;
  // Tasks run here (and the chains they started) whose share of
  // `remaining` is still held: one atomic subtraction at the end instead of
  // one per task on a line every thread writes. Holding them keeps `run`
  // alive meanwhile, as the claimer's own share does.
  int64_t done = 0;
  int segment = -1;
  if (run->num_segments[kind] > 0) {
    done = ClaimSegments(run, kind, core, worker_id, own, &claimed, &segment);
  } else {
    while (true) {
      const uint32_t first =
          run->next_root[kind].fetch_add(chunk, std::memory_order_relaxed);
      if (first >= n) break;
      const uint32_t last = std::min(n, first + chunk);
      for (uint32_t i = first; i < last; ++i) {
        done += Execute(Item{run, roots[i]}, core, worker_id);
      }
      claimed += last - first;
    }
  }
  if (share != nullptr) {  // before Finish: `run` may be gone after it
    share->end_ns = NowNs() - run->start_ns;
    share->cpu_end = sched_getcpu();
    share->roots = claimed;
    share->tasks = done;
    share->segment = segment;
  }
  if (on_caller_cpu) {
    run->claimers_on_caller_cpu.fetch_sub(1, std::memory_order_acq_rel);
  }
  Finish(run, done + 1);  // + this claimer's share
}

int64_t Executor::ClaimSegments(RunState* run, int kind, const CoreKind* core,
                                int worker_id, bool own, int64_t* claimed,
                                int* segment) {
  const std::vector<uint32_t>& roots = run->plan->roots_[kind];
  const uint32_t chunk = run->root_chunk[kind];
  const int num = run->num_segments[kind];
  RootSegment* segments = run->segments[kind];
  const int first_worker_segment = run->caller_owns_first[kind] ? 1 : 0;
  // This thread's home: the caller's own claimer segment 0 (reserved at the
  // run's start); a worker by its index among the kind's workers, the same
  // every call; a caller running a queued claimer has none.
  int home = -1;
  if (own && run->caller_owns_first[kind]) {
    home = 0;
  } else if (core != nullptr && num > first_worker_segment) {
    const int index =
        worker_id - (kind == static_cast<int>(CoreKind::kCube)
                         ? num_workers(CoreKind::kVector)
                         : 0);
    home = first_worker_segment + index % (num - first_worker_segment);
  }
  int mine = -1;
  if (home == 0 && own) {
    mine = 0;
  } else if (home >= 0 &&
             !segments[home].started.exchange(true, std::memory_order_relaxed)) {
    mine = home;
  } else {
    // Home taken (more claimers than running threads): any segment nobody
    // started, after the home in order so that such claimers spread out.
    for (int i = 0; i < num && mine < 0; ++i) {
      const int s = (std::max(home, 0) + 1 + i) % num;
      if (!segments[s].started.load(std::memory_order_relaxed) &&
          !segments[s].started.exchange(true, std::memory_order_relaxed)) {
        mine = s;
      }
    }
  }
  int64_t done = 0;
  int64_t count = 0;
  auto run_roots = [&](uint32_t first, uint32_t last) {
    for (uint32_t i = first; i < last; ++i) {
      done += Execute(Item{run, roots[i]}, core, worker_id);
    }
    count += last - first;
  };
  // Relaxed: the word only decides which thread runs which roots (every
  // read-modify-write of it is ordered); the roots' data needs no ordering
  // beyond the run's own.
  if (mine >= 0) {
    std::atomic<uint64_t>& bounds = segments[mine].bounds;
    uint64_t b = bounds.load(std::memory_order_relaxed);
    while (RootSegment::Front(b) < RootSegment::Back(b)) {
      const uint32_t first = RootSegment::Front(b);
      const uint32_t last = std::min(RootSegment::Back(b), first + chunk);
      if (bounds.compare_exchange_weak(
              b, RootSegment::Pack(last, RootSegment::Back(b)),
              std::memory_order_relaxed)) {
        run_roots(first, last);
        b = bounds.load(std::memory_order_relaxed);
      }
    }
  }
  // Steal from the back of every other segment until it is empty (a segment
  // never grows, so one pass leaves every root claimed), starting after
  // this claimer's own so that stealers spread over the victims.
  const int start = mine >= 0 ? mine : std::max(home, 0);
  for (int i = 1; i <= num; ++i) {
    const int s = (start + i) % num;
    if (s == mine) continue;
    std::atomic<uint64_t>& bounds = segments[s].bounds;
    uint64_t b = bounds.load(std::memory_order_relaxed);
    while (RootSegment::Front(b) < RootSegment::Back(b)) {
      const uint32_t last = RootSegment::Back(b);
      const uint32_t first =
          last - std::min(chunk, last - RootSegment::Front(b));
      if (bounds.compare_exchange_weak(
              b, RootSegment::Pack(RootSegment::Front(b), first),
              std::memory_order_relaxed)) {
        run_roots(first, last);
        b = bounds.load(std::memory_order_relaxed);
      }
    }
  }
  *claimed = count;
  *segment = mine;
  return done;
}

int64_t Executor::Execute(Item item, const CoreKind* core, int worker_id) {
  RunState* run = item.run;
  const TaskPlan& plan = *run->plan;
  const bool tracing = run->events != nullptr;
  int64_t executed = 0;
  // Successors made ready here that this thread does not run next, queued
  // together (one lock per task rather than per successor).
  constexpr int kBatch = 16;
  Item ready[kBatch];
  int num_ready[kNumCoreKinds] = {0, 0};
  Item ready_cube[kBatch];
  while (true) {
    const TaskPlan::TaskInfo& task = plan.tasks_[item.task];
    const int64_t start = tracing ? NowNs() : 0;
    task.fn(run->buffers + task.buffers_begin, plan.args_.data() + task.args_begin);
    if (tracing) {
      TaskEvent& e = run->events[item.task];
      e.task = item.task;
      e.core = task.core;
      e.worker = worker_id;
      e.start_ns = start - run->start_ns;
      e.end_ns = NowNs() - run->start_ns;
    }
    ++executed;
    // Release this task's successors. The first one this thread may run is
    // kept for itself: no queue round trip along a chain.
    Item next{nullptr, 0};
    for (uint32_t s = task.successors_begin; s < task.successors_end; ++s) {
      const uint32_t succ = plan.successors_[s];
      if (run->pending[succ].fetch_sub(1, std::memory_order_acq_rel) != 1) {
        continue;
      }
      const CoreKind succ_core = plan.tasks_[succ].core;
      if (next.run == nullptr && (core == nullptr || *core == succ_core)) {
        next = Item{run, succ};
        continue;
      }
      const int k = static_cast<int>(succ_core);
      Item* batch = k == 0 ? ready : ready_cube;
      batch[num_ready[k]++] = Item{run, succ};
      if (num_ready[k] == kBatch) {
        queues_[k].PushMany(absl::MakeConstSpan(batch, kBatch));
        num_ready[k] = 0;
      }
    }
    for (int k = 0; k < kNumCoreKinds; ++k) {
      if (num_ready[k] > 0) {
        queues_[k].PushMany(
            absl::MakeConstSpan(k == 0 ? ready : ready_cube, num_ready[k]));
        num_ready[k] = 0;
      }
    }
    // This task's share of `remaining` is the caller's to release (it
    // keeps `run` alive until then).
    if (next.run == nullptr) return executed;
    item = next;
  }
}

absl::Status Executor::Run(const TaskPlan& plan, void* const* buffers,
                           const RunOptions& options) {
  constexpr int kMaxClaimers = 64;  // queued per PushMany
  const int64_t setup_start = options.profile != nullptr ? NowNs() : 0;
  const int n = plan.num_tasks();
  if (n == 0) {
    if (options.trace != nullptr) options.trace->clear();
    if (options.shares != nullptr) options.shares->clear();
    return absl::OkStatus();
  }
  RunState run;
  run.plan = &plan;
  run.buffers = buffers;
  const uint32_t policy = policy_.load(std::memory_order_relaxed);
  // Dependency counters; a plan without dependencies (elementwise) has none
  // to count down and needs none.
  if (plan.roots_[0].size() + plan.roots_[1].size() < static_cast<size_t>(n)) {
    run.pending.reset(new std::atomic<uint32_t>[n]);
    for (int t = 0; t < n; ++t) {
      run.pending[t].store(plan.tasks_[t].num_deps, std::memory_order_relaxed);
    }
  }
  // Root claimers: one per worker of the kind, where a helping caller takes
  // one worker's place (a pool has a worker per core; one thread more only
  // takes turns on the cores, and a tile whose thread waits for its turn
  // delays the whole kernel); at least two, so that independent tasks never
  // wait for each other; no more than there are roots.
  // Workers always exist (the pools are never empty), so a caller on a small
  // stack can leave all the work to them.
  const bool help = HasStackLeft(kMinHelperStackBytes);
  // Bench baselines (kCallerRunsVectorRoots, kCallerRunsCubeRoots): one
  // claimer of the kind, the caller's own where it has no other.
  const bool one_thread[kNumCoreKinds] = {
      help && (policy & kCallerRunsVectorRoots) != 0,
      help && (policy & kCallerRunsCubeRoots) != 0};
  int claimers[kNumCoreKinds];
  int64_t total_claimers = 0;
  for (int k = 0; k < kNumCoreKinds; ++k) {
    claimers[k] = static_cast<int>(std::min<size_t>(
        plan.roots_[k].size(), one_thread[k] ? 1 : std::max(2, num_workers_[k])));
    total_claimers += claimers[k];
  }
  // Roots are claimed in chunks: about 16 per claimer, so that the last
  // chunks still balance, and the claim counter (a cache line every
  // claimer writes) is touched a few dozen times instead of once per task.
  for (int k = 0; k < kNumCoreKinds; ++k) {
    run.root_chunk[k] = static_cast<uint32_t>(std::clamp<size_t>(
        plan.roots_[k].size() / (std::max(1, claimers[k]) * size_t{16}), 1, 64));
  }
  run.remaining.store(n + total_claimers, std::memory_order_relaxed);
  // A helping caller keeps one claimer for itself (vector roots first): a
  // one-task kernel then costs no queue operation and wakes no worker.
  int own_kind = -1;
  if (help) {
    for (int k = 0; k < kNumCoreKinds && own_kind < 0; ++k) {
      if (claimers[k] > 0) own_kind = k;
    }
  }
  if ((policy & kHomeSegments) != 0) {
    // One segment per claimer, as even as the count allows; the caller's,
    // segment 0, reserved before any worker can look.
    RootSegment* segments = run.inline_segments;
    if (total_claimers > RunState::kInlineSegments) {
      run.heap_segments.reset(new RootSegment[total_claimers]);
      segments = run.heap_segments.get();
    }
    for (int k = 0; k < kNumCoreKinds; ++k) {
      const int num = claimers[k];
      const uint64_t roots = plan.roots_[k].size();
      run.num_segments[k] = num;
      run.segments[k] = segments;
      run.caller_owns_first[k] = k == own_kind;
      for (int s = 0; s < num; ++s) {
        segments[s].bounds.store(
            RootSegment::Pack(static_cast<uint32_t>(roots * s / num),
                              static_cast<uint32_t>(roots * (s + 1) / num)),
            std::memory_order_relaxed);
        segments[s].started.store(s == 0 && k == own_kind,
                                  std::memory_order_relaxed);
      }
      segments += num;
    }
  }
  if (options.trace != nullptr || options.shares != nullptr) {
    run.start_ns = setup_start != 0 ? setup_start : NowNs();
  }
  if (options.trace != nullptr) run.events.reset(new TaskEvent[n]);
  if (options.shares != nullptr) {
    run.shares.reset(new ShareEvent[total_claimers]);
  }
  run.caller_cpu = sched_getcpu();
  // Which worker the claimers wake (Policy::kWakeOffCallerCpu), and where
  // a pinned pool with fewer workers than CPUs moves one that sleeps on the
  // caller's CPU (Policy::kPinWorkers): a CPU no worker of the pool is
  // pinned to (worker i's is the i-th listed), or where the caller is on
  // such a CPU, the next one listed.
  const int avoid_cpu =
      (policy & kWakeOffCallerCpu) != 0 ? run.caller_cpu : -1;
  int move_to[kNumCoreKinds] = {-1, -1};
  const auto caller_at = std::find(cpus_.begin(), cpus_.end(), avoid_cpu);
  if ((policy & kPinWorkers) != 0 && avoid_cpu >= 0 && caller_at != cpus_.end()) {
    const size_t n = cpus_.size(), at = caller_at - cpus_.begin();
    for (int k = 0; k < kNumCoreKinds; ++k) {
      const size_t homes = static_cast<size_t>(num_workers_[k]);
      if (homes >= n) continue;
      move_to[k] = cpus_[homes + at % (n - homes)];
      if (move_to[k] == avoid_cpu) move_to[k] = cpus_[(at + 1) % n];
    }
  }
  for (int k = 0; k < kNumCoreKinds; ++k) {
    const int queued = claimers[k] - (k == own_kind ? 1 : 0);
    Item items[kMaxClaimers];
    for (int c = 0; c < std::min(queued, kMaxClaimers); ++c) {
      items[c] = Item{&run, kClaimRoots + static_cast<uint32_t>(k)};
    }
    // In batches: pools larger than kMaxClaimers are rare.
    for (int c = 0; c < queued; c += kMaxClaimers) {
      queues_[k].PushMany(
          absl::MakeConstSpan(items, std::min(kMaxClaimers, queued - c)),
          avoid_cpu, move_to[k]);
    }
  }
  const int caller_id =
      num_workers(CoreKind::kVector) + num_workers(CoreKind::kCube);
  LaunchProfile* profile = options.profile;
  int64_t mark = profile != nullptr ? NowNs() : 0;
  if (profile != nullptr) {
    profile->tasks = n;
    profile->setup_ns = mark - setup_start;
  }
  if (own_kind >= 0) {
    ClaimRoots(&run, own_kind, nullptr, caller_id, /*own=*/true);
  }
  // Help while waiting: run whatever is ready (of any run) until ours is done
  // or nothing is ready, then sleep until the last task notifies.
  Item item;
  while (help && !run.done.HasBeenNotified()) {
    bool found = false;
    for (int k = 0; k < kNumCoreKinds && !found; ++k) {
      found = queues_[k].TryPop(&item);
    }
    if (!found) break;
    Dispatch(item, nullptr, caller_id);
  }
  if (profile != nullptr) {
    const int64_t now = NowNs();
    profile->caller_ns = now - mark;
    mark = now;
  }
  // The last tasks run on other threads: spin a little before sleeping, so
  // that a short wait costs no futex wake-up; not while a worker of this run
  // shares this CPU (it would wait for the spin to end).
  if (spin_ns_ > 0 && !run.done.HasBeenNotified()) {
    const int64_t deadline = NowNs() + spin_ns_;
    for (int i = 1; !run.done.HasBeenNotified(); ++i) {
      CpuRelax();
      if (i % 64 == 0 && (NowNs() > deadline ||
                          run.claimers_on_caller_cpu.load(
                              std::memory_order_acquire) > 0)) {
        break;
      }
    }
  }
  run.done.WaitForNotification();
  if (profile != nullptr) profile->wait_ns = NowNs() - mark;
  if (options.trace != nullptr) {
    options.trace->assign(run.events.get(), run.events.get() + n);
  }
  if (options.shares != nullptr) {
    options.shares->assign(run.shares.get(),
                           run.shares.get() + run.num_shares.load());
  }
  return absl::OkStatus();
}

std::string Executor::ChromeTraceJson(
    absl::Span<const TaskEvent> events) const {
  std::string json = "{\"traceEvents\":[";
  bool first = true;
  for (const TaskEvent& e : events) {
    if (!first) json += ",";
    first = false;
    // Complete events ("X"), microseconds; one thread row per worker.
    absl::StrAppendFormat(
        &json,
        "\n{\"name\":\"task %d\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,"
        "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f}",
        e.task, e.core == CoreKind::kCube ? "cube" : "vector", e.worker,
        e.start_ns / 1e3, (e.end_ns - e.start_ns) / 1e3);
  }
  const int total =
      num_workers(CoreKind::kVector) + num_workers(CoreKind::kCube) + 1;
  for (int w = 0; w < total; ++w) {
    absl::StrAppendFormat(&json,
                          "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,"
                          "\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                          first ? "" : ",", w, WorkerName(w));
    first = false;
  }
  json += "\n]}\n";
  return json;
}

}  // namespace pto::runtime
