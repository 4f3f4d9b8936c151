// The MPMD executor: runs an Execute Graph's tasks on worker pools, one pool
// per core type, each task as soon as the tasks it depends on are done.
//
//   auto plan = TaskPlan::Create(binary.execute_graph(), blocks);
//   Executor& executor = Executor::Default();
//   absl::Status s = executor.Run(**plan, buffers);   // blocks until done
//
// Scheduling: every task instance of a run has a dependency counter
// (initialised from the plan); a finished task decrements its successors'
// counters and a successor whose counter reaches zero goes to the ready queue
// of its core type (vector or cube). There is no barrier between tasks that
// do not depend on each other. A worker that makes a successor of its own core
// type ready runs it next itself, skipping the queue. The thread that calls
// Run() also runs ready tasks while it waits.
//
// Tasks without dependencies (all of them, in an elementwise kernel) do not
// go through the queues one by one: a run queues one "root claimer" per
// worker (the caller, when it helps, takes one worker's place: no more
// threads than cores), and a thread that pops one claims roots until none
// are left, a chunk of about 1/16 of its share at a time. By default
// (Policy::kHomeSegments) the roots are cut into one segment per claimer,
// each thread starts in the same one call after call (its rows and output
// lines are then still in its core's cache from the last call) and, its own
// done, steals from the back of the others'; without it, every claimer
// takes chunks from one shared counter. A queue operation takes a mutex
// that every thread contends for; a chunk costs one atomic operation. A
// helping caller keeps one claimer for itself, so a one-task kernel neither
// touches a queue nor wakes a worker.
//
// Per-task bookkeeping is kept off the cache lines all threads write: a
// thread counts the tasks it ran (a claimer's roots and the chains they
// started) and subtracts them from the run's remaining count once; the
// successors a task makes ready go to a queue in one locked push.
//
// Several threads may Run on one Executor at once; their tasks share the
// pools.
//
// Which worker a push wakes matters on a machine whose CPUs are busy: the
// kernel places a woken thread on or near the CPU it last ran on, and a
// worker placed on its caller's CPU preempts the caller and takes turns with
// it (a two-thread call then costs more than one thread's). Each sleeping
// worker waits on its own condition variable, so a push can choose; the
// alternatives are Policy bits (Executor::Policy).
//
// Block functions keep their tiles on the stack (up to 512 KiB each): workers
// get kWorkerStackBytes of stack whatever the process's limit, and a calling
// thread helps only while it has kMinHelperStackBytes left.
#ifndef PTO_RUNTIME_EXECUTOR_H_
#define PTO_RUNTIME_EXECUTOR_H_

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "pto/v1/kernel.pb.h"
#include "runtime/kernel_abi.h"

namespace pto::runtime {

// The core types a plan can target; index into per-type arrays.
enum class CoreKind : uint8_t { kVector = 0, kCube = 1 };
constexpr int kNumCoreKinds = 2;

// An Execute Graph prepared for repeated runs: block pointers resolved,
// arguments flattened, successor lists built. Immutable; shareable between
// concurrent runs.
class TaskPlan {
 public:
  // `functions[i]` is the native block for graph.functions(i). The graph must
  // already be consistent (VerifyBinary); this re-checks indices anyway and
  // returns INVALID_ARGUMENT naming the task on a violation.
  // `buffer_sets` (per task, or empty: all 0) picks which of the Run's
  // buffer sets a task gets: set s starts at buffers + s * buffer_stride
  // (per-iteration workspace instances, runtime/workspace_instances.h).
  static absl::StatusOr<std::unique_ptr<TaskPlan>> Create(
      const pto::v1::ExecuteGraph& graph,
      absl::Span<const pto_block_fn> functions,
      absl::Span<const uint32_t> buffer_sets = {}, uint32_t buffer_stride = 0);

  int num_tasks() const { return static_cast<int>(tasks_.size()); }

  // Bytes the plan holds (tasks, args, successor lists): what caching it
  // costs.
  int64_t memory_bytes() const;

 private:
  friend class Executor;
  struct TaskInfo {
    pto_block_fn fn;
    uint32_t args_begin;  // into args_
    uint32_t buffers_begin;  // into the Run's buffers
    uint32_t successors_begin;  // into successors_
    uint32_t successors_end;
    uint32_t num_deps;
    CoreKind core;
  };
  TaskPlan() = default;

  std::vector<TaskInfo> tasks_;
  std::vector<int64_t> args_;
  std::vector<uint32_t> successors_;
  // Tasks with no dependencies, per core kind.
  std::vector<uint32_t> roots_[kNumCoreKinds];
};

// One executed task, for traces.
struct TaskEvent {
  uint32_t task = 0;
  CoreKind core = CoreKind::kVector;
  // Worker that ran it: "vector/0", "cube/1", or "caller".
  int worker = 0;  // index into Executor::WorkerName()
  int64_t start_ns = 0;  // monotonic clock, relative to the run's start
  int64_t end_ns = 0;
};

// One thread's share of a run's root tasks (a root claimer), for finding
// out whether a call really ran on two cores (RunOptions::shares): which
// CPU the thread was on, when it began claiming and when it found no roots
// left, how many roots it claimed. Times are monotonic, relative to the
// start of Executor::Run (the claimers are queued a few microseconds later:
// LaunchProfile::setup_ns).
struct ShareEvent {
  int worker = 0;     // index into Executor::WorkerName(); the caller's last
  int cpu_start = -1;  // sched_getcpu() when the share began (-1: unknown)
  int cpu_end = -1;    // and when it ended (differs: the thread migrated)
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t roots = 0;  // roots it claimed and ran
  int64_t tasks = 0;  // those and the successors it ran straight after them
  // Policy::kHomeSegments: the segment of its kind's roots this claimer
  // owned (claimed from the front), -1 when none (every segment started
  // before it came, or another policy).
  int segment = -1;
};

// Where one Kernel::Run's wall time went (RunOptions::profile), for
// benchmarks and for finding the cost of a call. Phases are measured on the calling
// thread with a monotonic clock; a phase the run skipped stays 0.
struct LaunchProfile {
  int64_t check_ns = 0;      // argument count, dtypes, shapes (and binding)
  int64_t expand_ns = 0;     // templated, on a plan-cache miss: templates -> tasks
  int64_t plan_ns = 0;       // templated, on a miss: TaskPlan::Create
  int64_t workspace_ns = 0;  // taking (or allocating) a workspace arena
  int64_t setup_ns = 0;      // Executor::Run: counters, queueing root claimers
  int64_t caller_ns = 0;     // the calling thread running tasks itself
  int64_t wait_ns = 0;       // then waiting for the workers to finish the rest
  int64_t total_ns = 0;      // all of Kernel::Run
  int64_t tasks = 0;
  bool plan_cached = false;  // templated: the binding's plan was cached
};

// Options of one Run.
struct RunOptions {
  // When set, receives one event per task (in no particular order).
  std::vector<TaskEvent>* trace = nullptr;
  // When set, receives where the run's time went.
  LaunchProfile* profile = nullptr;
  // When set, receives one event per root claimer that ran (in no
  // particular order): per thread, its CPU and share of the roots. Off, it
  // costs one pointer test per claimer.
  std::vector<ShareEvent>* shares = nullptr;
};

class Executor {
 public:
  static constexpr size_t kWorkerStackBytes = size_t{8} << 20;
  static constexpr size_t kMinHelperStackBytes = size_t{1} << 20;

  struct Options {
    // Workers per pool (at most 1024); <= 0 picks the default: vector =
    // hardware_concurrency, cube = max(1, hardware_concurrency / 2).
    int vector_workers = 0;
    int cube_workers = 0;
    // How long an idle worker, and a caller whose run's last tasks are on
    // other threads, spin before sleeping (microseconds; 0: sleep at once).
    // Back-to-back runs then find the workers awake, and the caller sees
    // its run finish without a futex wake-up: each costs tens of
    // microseconds on a VM, the order of a small kernel's whole run. The
    // price is up to this much CPU per idle period per thread. Neither spins
    // on the run's caller's CPU: a worker that finds itself there after a
    // run's tasks (woken onto it, on a busy machine, preempting the caller)
    // sleeps at once, and the caller stops spinning while a worker of its
    // run shares its CPU (either spin would only keep the other thread from
    // running). Negative:
    // kDefaultSpinMicros.
    int spin_micros = -1;
    // When not empty, worker i of a pool runs only on CPU worker_cpus[i %
    // size] (Policy::kPinWorkers; CPU numbers as sched_setaffinity takes
    // them, each one the process may use). Empty: no pinning.
    std::vector<int> worker_cpus;
  };
  static constexpr int kDefaultSpinMicros = 50;

  Executor() : Executor(Options()) {}
  explicit Executor(const Options& options);
  // Stops and joins the workers. No Run may be in progress.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Scheduling policy bits. A run reads them once at its start, so they may
  // change between calls, during calls too. SetPolicyForBench is for benches
  // and tests only (kernels never set it): it lets one process compare
  // policies interleaved in rounds, which separate processes cannot resolve
  // on a shared machine. Bits 2 and 8 are not policies (refused).
  enum Policy : uint32_t {
    // Wake, for the root claimers a caller queues, a sleeping worker that
    // last ran on another CPU than the caller's, instead of the one asleep
    // longest: the kernel places a woken thread on or near its last CPU, and
    // a worker placed on the caller's CPU preempts the caller and takes
    // turns with it. In the default: on a loaded machine, short calls run
    // faster and more of them split over two CPUs.
    kWakeOffCallerCpu = 1,
    // The baseline two-thread policies are measured against: a helping
    // caller runs every vector root itself and queues no vector claimer
    // (one thread's time, in the same process; successors still go to the
    // workers). Bench only.
    kCallerRunsVectorRoots = 4,
    // Worker i of a pool runs only on CPU i (mod their number) of
    // Options::worker_cpus, or of the CPUs the process could use when the
    // executor started; each worker applies it when it starts and when it
    // next takes an item after a change.
    // With kWakeOffCallerCpu the caller then wakes a worker that cannot run
    // on its CPU: one that waits for another CPU, where it preempts whatever
    // runs there (a thread that slept has little CPU time to its name),
    // instead of preempting the caller. On for the default executor
    // (OptionsFromEnvironment: every CPU the process may use, unless
    // PTO_WORKER_CPUS=none): unpinned, a guest kernel can leave the woken
    // worker queued behind the caller on the caller's CPU while the other
    // idles, for whole calls; pinned, short calls split over both CPUs far
    // more often. A pool with fewer workers than CPUs (the cube pool: half
    // of them by default) has none on some CPUs, and its only sleeper may
    // be pinned to the caller's CPU (one cube worker on two CPUs, the
    // caller on the first): with kWakeOffCallerCpu the caller moves the
    // sleeper it wakes there to a CPU no worker of the pool is pinned to
    // before waking it, where it stays until a caller moves it again.
    kPinWorkers = 16,
    // Home segments: a kind's roots are cut into one contiguous segment per
    // root claimer, and each claimer starts in a segment that is the same
    // for the same thread every call: the helping caller's own claimer takes
    // segment 0, a worker segment 1 + (its index among the kind's workers)
    // mod (segments - 1) (without a helping caller: index mod segments). A
    // claimer whose home segment another has started (more claimers than
    // running threads, or the caller popping a queued claimer) takes any
    // segment nobody started, or none. It claims its segment from the front
    // in chunks (the same size as the shared counter's), then steals chunks
    // from the back of the others' segments, so the owner of a segment
    // keeps its leading roots however late it starts. Why: a short call's
    // data fits in the cores' L2 caches (softmax (32,32,1,256), add fp16
    // 1024x1024), and with the shared counter which thread runs which root
    // changes from call to call, so a thread's rows and output lines are
    // often in the other core's L2; with home segments each thread finds its
    // own rows in its own L2 call after call. Each segment's front and back
    // are one 64-bit word changed by compare and swap, on its own cache
    // line. In the default: calls split over two CPUs run faster, and
    // streamed rows that miss L2 anyway are no slower.
    kHomeSegments = 32,
    // One claimer for the cube roots (Options' cube workers notwithstanding,
    // and the minimum of two): one thread runs them all, the helping
    // caller's own claimer where the plan has no vector roots (a matmul),
    // else whichever thread pops the queued claimer first. One thread's
    // time for a cube kernel, to compare with a one-thread library by CPU
    // time. Bench only.
    kCallerRunsCubeRoots = 64,
  };
  static constexpr uint32_t kAllPolicyBits = kWakeOffCallerCpu | kCallerRunsVectorRoots |
                                             kPinWorkers | kHomeSegments |
                                             kCallerRunsCubeRoots;
  // What a fresh executor runs with (plus kPinWorkers with worker_cpus).
  static constexpr uint32_t kDefaultPolicy = kWakeOffCallerCpu | kHomeSegments;
  // Returns the previous bits. INVALID_ARGUMENT for unknown bits.
  absl::StatusOr<uint32_t> SetPolicyForBench(uint32_t bits);
  uint32_t policy() const { return policy_.load(std::memory_order_relaxed); }

  // The process-wide executor (never destroyed), made with
  // OptionsFromEnvironment() as the environment is at its first use. A
  // process made by fork() gets its own on first use.
  static Executor& Default();

  // Default()'s options: pool sizes are the defaults unless
  // PTO_VECTOR_WORKERS or PTO_CUBE_WORKERS (positive integers) say
  // otherwise, PTO_SPIN_MICROS (0 or more) sets Options::spin_micros, and
  // the workers are pinned (Options::worker_cpus) to every CPU the process
  // may use unless PTO_WORKER_CPUS (ParseWorkerCpus) names others or is
  // "none". A bad PTO_WORKER_CPUS is reported on stderr and pins nothing.
  static Options OptionsFromEnvironment();

  // PTO_WORKER_CPUS: "all" (every CPU the process may use, in order),
  // "none" (no pinning: empty), or CPU numbers separated by commas ("0,1"),
  // each one the process may use. INVALID_ARGUMENT naming the entry
  // otherwise.
  static absl::StatusOr<std::vector<int>> ParseWorkerCpus(
      absl::string_view value);

  // Runs every task of `plan` with `buffers` (one pointer per Execute Graph
  // buffer, for each buffer set the plan's tasks name) and returns when all
  // are done.
  absl::Status Run(const TaskPlan& plan, void* const* buffers,
                   const RunOptions& options = {});

  int num_workers(CoreKind core) const {
    return num_workers_[static_cast<int>(core)];
  }

  // Name of worker `index` as recorded in TaskEvent::worker.
  std::string WorkerName(int index) const;

  // Chrome trace-event JSON ("traceEvents", one complete event per task, one
  // row per worker) for the events of one run; opens in Perfetto.
  std::string ChromeTraceJson(absl::Span<const TaskEvent> events) const;

 private:
  struct RunState;
  // A task of `run`, or (task >= kClaimRoots) a root claimer for core kind
  // task - kClaimRoots.
  struct Item {
    RunState* run;
    uint32_t task;
  };
  static constexpr uint32_t kClaimRoots = 0xFFFFFFF0u;

  // A ready queue of one core kind.
  class ReadyQueue {
   public:
    // `avoid_cpu` >= 0: wake, of the sleepers, first those that last ran on
    // another CPU (Policy::kWakeOffCallerCpu); -1: the longest asleep.
    // `move_to` >= 0: a sleeper woken although it last ran on avoid_cpu (no
    // other was asleep) is first confined to CPU move_to.
    void Push(Item item, int avoid_cpu = -1, int move_to = -1);
    void PushMany(absl::Span<const Item> items, int avoid_cpu = -1, int move_to = -1);
    // Blocks until an item is available or Stop(); false when stopped.
    // Spins up to `spin_ns` for an item before sleeping.
    bool Pop(Item* item, int64_t spin_ns);
    bool TryPop(Item* item);
    void Stop();

   private:
    // Wakes sleepers for `pushed` new items, as many as the spinning threads
    // (which find items without a wake-up) do not cover.
    void WakeFor(int64_t pushed, int avoid_cpu, int move_to)
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
    // Spins (counted in spinning_) until an item may be available or
    // spin_ns has passed.
    void Spin(int64_t spin_ns);

    // A thread asleep in Pop, on its own stack: woken by name, so that a
    // push can choose which.
    struct Sleeper {
      absl::CondVar cv;
      int cpu = -1;         // sched_getcpu() when it went to sleep
      pid_t tid = 0;        // its thread, for sched_setaffinity
      bool woken = false;   // under mu_; set by the waker, which unlists it
    };

    absl::Mutex mu_;
    std::deque<Item> items_ ABSL_GUARDED_BY(mu_);
    // In the order they went to sleep.
    std::vector<Sleeper*> sleepers_ ABSL_GUARDED_BY(mu_);
    bool stopped_ ABSL_GUARDED_BY(mu_) = false;
    // items_.size(), written under mu_, read without it by spinning threads.
    std::atomic<int64_t> size_{0};
    // Threads spinning in Pop: each looks at the queue (under mu_) before it
    // sleeps, so a push that they cover wakes nobody. Waking a sleeper that
    // then finds nothing costs the pusher a futex call and, on a machine
    // whose cores are all busy, puts the sleeper on a core that runs tasks.
    std::atomic<int> spinning_{0};
  };

  // A worker thread (pthread, for its stack size).
  struct Worker {
    Executor* executor;
    CoreKind core;
    int id;
    pthread_t thread;
  };
  static void* WorkerMain(void* worker);
  void WorkerLoop(CoreKind core, int worker_id);
  // Runs a queued item: a task, or a root claimer.
  void Dispatch(Item item, const CoreKind* core, int worker_id);
  // Runs `item`, then any successor it made ready on `core` (null: any);
  // returns how many tasks it ran, whose shares of the run's `remaining`
  // the caller must release (Finish).
  int64_t Execute(Item item, const CoreKind* core, int worker_id);
  // Releases `shares` of the run's remaining count; the last one notifies
  // its caller. `run` may be gone afterwards.
  static void Finish(RunState* run, int64_t shares);
  // A root claimer: runs unclaimed roots of `kind` until there are none.
  // `own`: the helping caller's own claimer (its home segment is reserved).
  void ClaimRoots(RunState* run, int kind, const CoreKind* core,
                  int worker_id, bool own = false);
  // ClaimRoots under Policy::kHomeSegments: claims this claimer's segment
  // from the front, then steals from the back of the others'. Returns the
  // tasks run (as Execute); sets *claimed and *segment (-1: none owned).
  int64_t ClaimSegments(RunState* run, int kind, const CoreKind* core,
                        int worker_id, bool own, int64_t* claimed,
                        int* segment);

  // Fixed before any worker starts (workers read them).
  int num_workers_[kNumCoreKinds] = {0, 0};
  int64_t spin_ns_ = 0;
  // kPinWorkers' CPUs: Options::worker_cpus, else those the process could
  // use when the executor started.
  std::vector<int> cpus_;
  std::atomic<uint32_t> policy_{kDefaultPolicy};
  ReadyQueue queues_[kNumCoreKinds];
  std::vector<std::unique_ptr<Worker>> workers_[kNumCoreKinds];
};

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_EXECUTOR_H_
