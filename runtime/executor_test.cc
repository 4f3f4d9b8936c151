#include "runtime/executor.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::runtime {
namespace {

using ::testing::HasSubstr;

// Runs during static initialisation, before any test uses Default().
const bool kSetWorkerEnvironment = [] {
  setenv("PTO_VECTOR_WORKERS", "3", 1);
  setenv("PTO_CUBE_WORKERS", "2", 1);
  return true;
}();

// What test blocks write to: buffers[0] points at a Recorder, args[0] is the
// task's id. Each task takes a ticket from a shared clock when it runs.
struct Recorder {
  explicit Recorder(int n) : ticket(n), runs(n) {
    for (auto& r : runs) r.store(0);
  }
  std::atomic<int> clock{0};
  std::vector<int> ticket;
  std::vector<std::atomic<int>> runs;
};

void RecordBlock(void* const* buffers, const int64_t* args) {
  auto* r = static_cast<Recorder*>(buffers[0]);
  r->ticket[args[0]] = r->clock.fetch_add(1);
  r->runs[args[0]].fetch_add(1);
}

// Builds an Execute Graph with one function per core type (0: vector,
// 1: cube); task i gets args {i}.
class GraphBuilder {
 public:
  GraphBuilder() {
    graph_.add_buffers()->set_name("recorder");
    for (auto type : {pto::v1::CORE_TYPE_VECTOR, pto::v1::CORE_TYPE_CUBE}) {
      pto::v1::BlockFunction* f = graph_.add_functions();
      f->set_index(graph_.functions_size() - 1);
      f->set_core_type(type);
      f->set_num_args(1);
    }
  }
  int Add(std::vector<uint32_t> deps, bool cube = false) {
    pto::v1::Task* t = graph_.add_tasks();
    t->set_function(cube ? 1 : 0);
    t->add_args(graph_.tasks_size() - 1);
    for (uint32_t d : deps) t->add_deps(d);
    return graph_.tasks_size() - 1;
  }
  const pto::v1::ExecuteGraph& graph() const { return graph_; }
  std::unique_ptr<TaskPlan> Plan(pto_block_fn fn = RecordBlock) const {
    std::vector<pto_block_fn> fns = {fn, fn};
    auto plan = TaskPlan::Create(graph_, fns);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *std::move(plan) : nullptr;
  }

 private:
  pto::v1::ExecuteGraph graph_;
};

// Every task ran exactly once, after each of its dependencies.
void ExpectRespectsDeps(const pto::v1::ExecuteGraph& graph, const Recorder& r) {
  for (int t = 0; t < graph.tasks_size(); ++t) {
    ASSERT_EQ(r.runs[t].load(), 1) << "task " << t;
    for (uint32_t d : graph.tasks(t).deps()) {
      EXPECT_LT(r.ticket[d], r.ticket[t]) << "task " << t << " dep " << d;
    }
  }
}

absl::Status RunWithRecorder(Executor& ex, const TaskPlan& plan, Recorder* r,
                             const RunOptions& options = {}) {
  void* buffers[] = {r};
  return ex.Run(plan, buffers, options);
}

TEST(ExecutorTest, DefaultPoolSizes) {
  Executor ex;
  const int hw = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(ex.num_workers(CoreKind::kVector), hw);
  EXPECT_EQ(ex.num_workers(CoreKind::kCube), std::max(1, hw / 2));
}

TEST(ExecutorTest, DefaultExecutorHonoursEnvironment) {
  // Default() is created on first use, after kSetWorkerEnvironment ran.
  EXPECT_EQ(Executor::Default().num_workers(CoreKind::kVector), 3);
  EXPECT_EQ(Executor::Default().num_workers(CoreKind::kCube), 2);
}

TEST(ExecutorTest, ChainRunsInOrder) {
  GraphBuilder b;
  int prev = b.Add({});
  for (int i = 1; i < 200; ++i) prev = b.Add({static_cast<uint32_t>(prev)}, i % 3 == 0);
  auto plan = b.Plan();
  Executor ex(Executor::Options{3, 2});
  Recorder r(200);
  ASSERT_TRUE(RunWithRecorder(ex, *plan, &r).ok());
  for (int t = 0; t < 200; ++t) EXPECT_EQ(r.ticket[t], t);
  ExpectRespectsDeps(b.graph(), r);
}

TEST(ExecutorTest, DiamondRespectsDependencies) {
  GraphBuilder b;
  int a = b.Add({});
  int left = b.Add({static_cast<uint32_t>(a)});
  int right = b.Add({static_cast<uint32_t>(a)}, /*cube=*/true);
  int join = b.Add({static_cast<uint32_t>(left), static_cast<uint32_t>(right)});
  auto plan = b.Plan();
  Executor ex(Executor::Options{2, 1});
  for (int iter = 0; iter < 100; ++iter) {
    Recorder r(4);
    ASSERT_TRUE(RunWithRecorder(ex, *plan, &r).ok());
    EXPECT_EQ(r.ticket[a], 0);
    EXPECT_EQ(r.ticket[join], 3);
    ExpectRespectsDeps(b.graph(), r);
  }
}

TEST(ExecutorTest, RandomDagRespectsDependencies) {
  std::mt19937 rng(42);
  GraphBuilder b;
  for (int t = 0; t < 3000; ++t) {
    std::vector<uint32_t> deps;
    const int k = t == 0 ? 0 : static_cast<int>(rng() % 4);
    for (int i = 0; i < k; ++i) deps.push_back(rng() % t);
    b.Add(deps, rng() % 2 == 0);
  }
  auto plan = b.Plan();
  Executor ex(Executor::Options{3, 2});
  Recorder r(3000);
  ASSERT_TRUE(RunWithRecorder(ex, *plan, &r).ok());
  ExpectRespectsDeps(b.graph(), r);
}

TEST(ExecutorTest, WideGraphOfTenThousandTasksCompletes) {
  GraphBuilder b;
  for (int t = 0; t < 10000; ++t) b.Add({}, t % 5 == 0);
  auto plan = b.Plan();
  Recorder r(10000);
  ASSERT_TRUE(RunWithRecorder(Executor::Default(), *plan, &r).ok());
  EXPECT_EQ(r.clock.load(), 10000);
  ExpectRespectsDeps(b.graph(), r);
}

// Roots are claimed through one queued claimer per thread; a pool larger than
// one batch of claimers (64) queues them in several batches, and every root
// still runs exactly once, also with fewer roots than threads.
TEST(ExecutorTest, RootsRunOnceWithMoreClaimersThanOneBatch) {
  Executor ex(Executor::Options{100, 3});
  for (int roots : {1, 5, 150, 1000}) {
    GraphBuilder b;
    for (int t = 0; t < roots; ++t) b.Add({}, t % 7 == 0);
    for (int t = 0; t < roots; ++t) b.Add({static_cast<uint32_t>(t)});
    auto plan = b.Plan();
    Recorder r(2 * roots);
    ASSERT_TRUE(RunWithRecorder(ex, *plan, &r).ok());
    EXPECT_EQ(r.clock.load(), 2 * roots) << roots << " roots";
    ExpectRespectsDeps(b.graph(), r);
  }
}

// Roots are claimed in chunks (about 16 per claimer, at most 64): counts
// around the chunk boundaries, with and without dependent tasks (a plan
// without dependencies keeps no counters), each task exactly once, run
// after run on one executor.
TEST(ExecutorTest, RootsClaimedInChunksRunExactlyOnce) {
  Executor ex(Executor::Options{3, 2});
  for (int roots : {1, 2, 3, 47, 48, 49, 96, 1000, 4097, 20000}) {
    for (bool with_deps : {false, true}) {
      GraphBuilder b;
      for (int t = 0; t < roots; ++t) b.Add({}, t % 11 == 0);
      if (with_deps) b.Add({0, static_cast<uint32_t>(roots - 1)});
      auto plan = b.Plan();
      for (int run = 0; run < 3; ++run) {
        Recorder r(b.graph().tasks_size());
        ASSERT_TRUE(RunWithRecorder(ex, *plan, &r).ok());
        EXPECT_EQ(r.clock.load(), b.graph().tasks_size()) << roots << " roots";
        ExpectRespectsDeps(b.graph(), r);
      }
    }
  }
}

// A task that makes more successors ready than one queued batch (16), of
// both core kinds, then joins them: every successor runs once, after the
// fork, and the join after all of them.
TEST(ExecutorTest, FanOutWiderThanOnePushBatch) {
  GraphBuilder b;
  const int fork = b.Add({});
  std::vector<uint32_t> middle;
  for (int i = 0; i < 70; ++i) {
    middle.push_back(b.Add({static_cast<uint32_t>(fork)}, i % 3 == 0));
  }
  b.Add(middle);
  auto plan = b.Plan();
  Executor ex(Executor::Options{3, 2});
  for (int run = 0; run < 50; ++run) {
    Recorder r(b.graph().tasks_size());
    ASSERT_TRUE(RunWithRecorder(ex, *plan, &r).ok());
    EXPECT_EQ(r.ticket[fork], 0);
    EXPECT_EQ(r.ticket[b.graph().tasks_size() - 1], b.graph().tasks_size() - 1);
    ExpectRespectsDeps(b.graph(), r);
  }
}

// Workers that sleep at once (spin 0) and ones that spin long between runs
// both run every task, run after run, with a pause between runs longer
// than the spin.
TEST(ExecutorTest, SpinSettingsAllComplete) {
  for (int spin : {0, 1, 50, 20000}) {
    Executor ex(Executor::Options{2, 1, spin});
    GraphBuilder b;
    for (int t = 0; t < 300; ++t) b.Add({}, t % 4 == 0);
    b.Add({0, 299});
    auto plan = b.Plan();
    for (int run = 0; run < 5; ++run) {
      Recorder r(301);
      ASSERT_TRUE(RunWithRecorder(ex, *plan, &r).ok());
      ExpectRespectsDeps(b.graph(), r);
      if (run == 2) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
}

// A push wakes as many sleepers as the spinning workers do not cover:
// three successors released together must run at the same time (each waits,
// up to 30 s, for the other two to start), whatever mix of spinning and
// sleeping workers finds them (spin 0, short and long; pauses between runs
// shorter and longer than the spin). Only liveness is asserted: a missed
// wake-up leaves one task waiting out the deadline (10 s) and fails.
std::atomic<int> meet_started{0};
std::atomic<int> meet_all{0};
void ThreeMeet(void* const*, const int64_t* args) {
  if (args[0] == 0) return;  // the root
  meet_started.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (meet_started.load() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  if (meet_started.load() >= 3) meet_all.fetch_add(1);
}

TEST(ExecutorTest, ReleasedTasksWakeEnoughSleepers) {
  for (int spin : {0, 200, 20000}) {
    Executor ex(Executor::Options{3, 1, spin});
    GraphBuilder b;
    b.Add({});
    for (int i = 0; i < 3; ++i) b.Add({0});
    auto plan = b.Plan(ThreeMeet);
    for (int pause_us : {0, 0, 1000, 0, 50000, 0, 300, 0}) {
      meet_started = 0;
      meet_all = 0;
      void* buffers[] = {nullptr};
      ASSERT_TRUE(ex.Run(*plan, buffers).ok());
      ASSERT_EQ(meet_all.load(), 3) << "spin " << spin << " us, pause " << pause_us << " us";
      std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
    }
  }
}

// RunOptions::profile: the task count and phases of a run (no timing
// assertions: only that the phases are filled in and add up).
TEST(ExecutorTest, ProfileCountsTasksAndPhases) {
  GraphBuilder b;
  for (int t = 0; t < 100; ++t) b.Add({});
  auto plan = b.Plan();
  Executor ex(Executor::Options{2, 1});
  Recorder r(100);
  LaunchProfile profile;
  RunOptions options;
  options.profile = &profile;
  ASSERT_TRUE(RunWithRecorder(ex, *plan, &r, options).ok());
  EXPECT_EQ(profile.tasks, 100);
  EXPECT_GE(profile.setup_ns, 0);
  EXPECT_GE(profile.caller_ns, 0);
  EXPECT_GE(profile.wait_ns, 0);
  ExpectRespectsDeps(b.graph(), r);
}

// RunOptions::shares: one event per root claimer that ran; together they
// claimed every root exactly once, each on a known CPU, and ran those roots
// and the successors they started (no timing assertions). Vector and cube
// roots, with and without dependent tasks, and an empty plan.
TEST(ExecutorTest, SharesAccountForEveryRoot) {
  Executor ex(Executor::Options{3, 2});
  for (int roots : {1, 2, 37, 1000}) {
    for (bool with_deps : {false, true}) {
      GraphBuilder b;
      for (int t = 0; t < roots; ++t) b.Add({}, t % 5 == 1);
      if (with_deps) {
        for (int t = 0; t < roots; ++t) b.Add({static_cast<uint32_t>(t)});
      }
      auto plan = b.Plan();
      for (int run = 0; run < 3; ++run) {
        Recorder r(b.graph().tasks_size());
        std::vector<ShareEvent> shares(7);  // replaced, not appended to
        RunOptions options;
        options.shares = &shares;
        ASSERT_TRUE(RunWithRecorder(ex, *plan, &r, options).ok());
        ExpectRespectsDeps(b.graph(), r);
        // Claimers: at most one per worker of each kind (3 + 2).
        EXPECT_GE(shares.size(), 1u);
        EXPECT_LE(shares.size(), 5u);
        int64_t claimed = 0, tasks = 0;
        for (const ShareEvent& e : shares) {
          EXPECT_GE(e.worker, 0);
          EXPECT_LE(e.worker, 5);  // 3 vector, 2 cube workers, the caller
          EXPECT_GE(e.cpu_start, 0);
          EXPECT_GE(e.cpu_end, 0);
          EXPECT_LE(e.start_ns, e.end_ns);
          EXPECT_GE(e.tasks, e.roots);
          claimed += e.roots;
          tasks += e.tasks;
        }
        EXPECT_EQ(claimed, roots) << roots << " roots";
        EXPECT_LE(tasks, b.graph().tasks_size());
      }
    }
  }
  GraphBuilder empty;
  auto plan = empty.Plan();
  std::vector<ShareEvent> shares(2);
  RunOptions options;
  options.shares = &shares;
  Recorder r(0);
  ASSERT_TRUE(RunWithRecorder(ex, *plan, &r, options).ok());
  EXPECT_TRUE(shares.empty());
}

TEST(ExecutorTest, EmptyPlanReturnsAtOnce) {
  GraphBuilder b;
  auto plan = b.Plan();
  Recorder r(0);
  EXPECT_TRUE(RunWithRecorder(Executor::Default(), *plan, &r).ok());
}

TEST(ExecutorTest, ConcurrentRunsFromManyThreads) {
  GraphBuilder b;
  // Layers of 20 tasks, each depending on two tasks of the layer before.
  for (int layer = 0; layer < 10; ++layer) {
    for (int i = 0; i < 20; ++i) {
      if (layer == 0) {
        b.Add({});
      } else {
        const uint32_t base = (layer - 1) * 20;
        b.Add({base + i, base + (i + 7) % 20}, i % 4 == 0);
      }
    }
  }
  auto plan = b.Plan();
  Executor ex(Executor::Options{2, 1});
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int th = 0; th < 8; ++th) {
    threads.emplace_back([&] {
      for (int iter = 0; iter < 25; ++iter) {
        Recorder r(200);
        if (!RunWithRecorder(ex, *plan, &r).ok() || r.clock.load() != 200) {
          failures.fetch_add(1);
          continue;
        }
        for (int t = 0; t < 200; ++t) {
          if (r.runs[t].load() != 1) failures.fetch_add(1);
          for (uint32_t d : b.graph().tasks(t).deps()) {
            if (r.ticket[d] >= r.ticket[t]) failures.fetch_add(1);
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// Every thread on one CPU (the workers inherit the creating thread's
// affinity): each worker finds itself on its run's caller's CPU, so it
// sleeps after a run's tasks instead of spinning, and the caller does not
// spin for it. Wide plans, chains and concurrent runs from several threads
// (each a run's caller) still run every task once after its dependencies,
// with spinning off, short and long.
TEST(ExecutorTest, WorkersOnTheCallersCpuRunEveryTaskOnce) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  int one = -1;
  for (int c = 0; c < CPU_SETSIZE && one < 0; ++c) {
    if (CPU_ISSET(c, &saved)) one = c;
  }
  cpu_set_t single;
  CPU_ZERO(&single);
  CPU_SET(one, &single);
  ASSERT_EQ(sched_setaffinity(0, sizeof(single), &single), 0);
  GraphBuilder b;
  for (int t = 0; t < 600; ++t) b.Add({}, t % 6 == 0);
  for (int t = 0; t < 600; t += 3) b.Add({static_cast<uint32_t>(t)}, t % 9 == 0);
  auto plan = b.Plan();
  for (int spin : {0, 50, 5000}) {
    Executor ex(Executor::Options{2, 1, spin});
    std::atomic<int> failures{0};
    auto runs = [&](int iters) {
      for (int iter = 0; iter < iters; ++iter) {
        Recorder r(b.graph().tasks_size());
        std::vector<ShareEvent> shares;
        RunOptions options;
        options.shares = &shares;
        if (!RunWithRecorder(ex, *plan, &r, options).ok()) failures.fetch_add(1);
        for (int t = 0; t < b.graph().tasks_size(); ++t) {
          if (r.runs[t].load() != 1) failures.fetch_add(1);
          for (uint32_t d : b.graph().tasks(t).deps()) {
            if (r.ticket[d] >= r.ticket[t]) failures.fetch_add(1);
          }
        }
        for (const ShareEvent& e : shares) {
          if (e.cpu_start != one) failures.fetch_add(1);
        }
      }
    };
    runs(5);
    std::vector<std::thread> threads;
    for (int th = 0; th < 3; ++th) threads.emplace_back(runs, 5);
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0) << "spin " << spin << " us";
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

// Every scheduling policy (Executor::Policy bits) runs every task once after
// its dependencies: wide plans with successors of both core kinds, runs from
// four threads at once while a fifth flips the policy between and during
// them, with spinning off and on, on every CPU and confined to one (where
// workers wake onto their caller's CPU and lose it to each other). Each
// run's plan is freed as soon as Run returns, as a plan cache may. The
// shares the caller gets account for every root.
TEST(ExecutorTest, EveryPolicyRunsEveryTaskOnce) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  int one = -1;
  for (int c = 0; c < CPU_SETSIZE && one < 0; ++c) {
    if (CPU_ISSET(c, &saved)) one = c;
  }
  GraphBuilder b;
  for (int t = 0; t < 300; ++t) b.Add({}, t % 7 == 0);
  for (int t = 0; t < 300; t += 3) b.Add({static_cast<uint32_t>(t)}, t % 9 == 0);
  const int n = b.graph().tasks_size();
  int roots = 0;
  for (const pto::v1::Task& t : b.graph().tasks()) roots += t.deps_size() == 0;
  for (bool confined : {false, true}) {
    if (confined) {
      cpu_set_t single;
      CPU_ZERO(&single);
      CPU_SET(one, &single);
      ASSERT_EQ(sched_setaffinity(0, sizeof(single), &single), 0);
    }
    for (int spin : {0, 50}) {
      Executor ex(Executor::Options{2, 1, spin});
      std::atomic<int> failures{0};
      std::atomic<bool> stop{false};
      auto runs = [&](uint32_t policy, int iters) {
        if (policy != ~0u) {
          ASSERT_TRUE(ex.SetPolicyForBench(policy).ok());
        }
        for (int iter = 0; iter < iters; ++iter) {
          Recorder r(n);
          std::vector<ShareEvent> shares;
          RunOptions options;
          options.shares = &shares;
          {
            std::unique_ptr<TaskPlan> plan = b.Plan();
            if (!RunWithRecorder(ex, *plan, &r, options).ok()) failures.fetch_add(1);
          }
          for (int t = 0; t < n; ++t) {
            if (r.runs[t].load() != 1) failures.fetch_add(1);
            for (uint32_t d : b.graph().tasks(t).deps()) {
              if (r.ticket[d] >= r.ticket[t]) failures.fetch_add(1);
            }
          }
          int64_t shared = 0;
          for (const ShareEvent& e : shares) shared += e.roots;
          if (shared != roots) failures.fetch_add(1);
        }
      };
      for (uint32_t policy = 0; policy <= Executor::kAllPolicyBits; ++policy) {
        if ((policy & ~Executor::kAllPolicyBits) == 0) runs(policy, 4);
      }
      std::thread flipper([&] {
        for (uint32_t i = 0; !stop.load(); ++i) {
          ex.SetPolicyForBench(i % (Executor::kAllPolicyBits + 1)).IgnoreError();
          std::this_thread::yield();
        }
      });
      std::vector<std::thread> threads;
      for (int th = 0; th < 4; ++th) threads.emplace_back(runs, ~0u, 6);
      for (auto& t : threads) t.join();
      stop.store(true);
      flipper.join();
      EXPECT_EQ(failures.load(), 0)
          << "spin " << spin << " us" << (confined ? ", one CPU" : "");
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
}

TEST(ExecutorTest, SetPolicyForBenchRefusesUnknownBits) {
  Executor ex(Executor::Options{1, 1});
  EXPECT_EQ(ex.policy(), Executor::kDefaultPolicy);
  EXPECT_EQ(Executor::kDefaultPolicy,
            Executor::kWakeOffCallerCpu | Executor::kHomeSegments);
  absl::StatusOr<uint32_t> previous =
      ex.SetPolicyForBench(Executor::kPinWorkers);
  ASSERT_TRUE(previous.ok());
  EXPECT_EQ(*previous, Executor::kDefaultPolicy);
  // 2 and 8 are not policy bits.
  for (uint32_t bad : {2u, 8u, Executor::kAllPolicyBits + 1}) {
    absl::StatusOr<uint32_t> refused = ex.SetPolicyForBench(bad);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(refused.status().message(), HasSubstr("executor policy"));
  }
  EXPECT_EQ(ex.policy(), Executor::kPinWorkers);
}

// Policy::kHomeSegments: every task once after its dependencies and the
// shares accounting for every root, with one root, fewer roots than
// claimers, chunk boundaries and thousands; pools of 2, 5 and 40 vector
// workers (40 claimers on a machine with fewer CPUs: claimers whose home
// another started take any segment or only steal); vector and cube roots
// (each kind its own segments); runs from one thread and from four at once.
TEST(ExecutorTest, HomeSegmentsRunEveryTaskOnce) {
  for (Executor::Options options :
       {Executor::Options{2, 1}, Executor::Options{5, 2},
        Executor::Options{40, 3}}) {
    Executor ex(options);
    ASSERT_TRUE(ex.SetPolicyForBench(Executor::kHomeSegments |
                                     Executor::kWakeOffCallerCpu)
                    .ok());
    for (int roots : {1, 2, 3, 5, 33, 1000}) {
      for (bool with_deps : {false, true}) {
        GraphBuilder b;
        for (int t = 0; t < roots; ++t) b.Add({}, t % 7 == 3);
        if (with_deps) {
          for (int t = 0; t < roots; t += 2) b.Add({static_cast<uint32_t>(t)});
        }
        auto plan = b.Plan();
        std::atomic<int> failures{0};
        auto runs = [&](int iters) {
          for (int iter = 0; iter < iters; ++iter) {
            Recorder r(b.graph().tasks_size());
            std::vector<ShareEvent> shares;
            RunOptions run_options;
            run_options.shares = &shares;
            if (!RunWithRecorder(ex, *plan, &r, run_options).ok()) {
              failures.fetch_add(1);
            }
            for (int t = 0; t < b.graph().tasks_size(); ++t) {
              if (r.runs[t].load() != 1) failures.fetch_add(1);
              for (uint32_t d : b.graph().tasks(t).deps()) {
                if (r.ticket[d] >= r.ticket[t]) failures.fetch_add(1);
              }
            }
            int64_t claimed = 0;
            for (const ShareEvent& e : shares) {
              claimed += e.roots;
              if (e.segment < -1 || e.segment >= options.vector_workers) {
                failures.fetch_add(1);
              }
            }
            if (claimed != roots) failures.fetch_add(1);
          }
        };
        runs(3);
        std::vector<std::thread> threads;
        for (int th = 0; th < 4; ++th) threads.emplace_back(runs, 3);
        for (auto& t : threads) t.join();
        EXPECT_EQ(failures.load(), 0)
            << options.vector_workers << " vector workers, " << roots
            << " roots" << (with_deps ? ", with successors" : "");
      }
    }
  }
}

// Blocks for HomeSegmentOwnersKeepTheirLeadingRoots: a task takes 100 us
// on the test's main thread (the caller) and 20 us on a worker, so that the
// workers finish their segments first and steal from the caller's while it
// still claims: a stealer taking from the front would then show up between
// the caller's roots.
pthread_t main_thread;
void SlowerOnMainThread(void* const* buffers, const int64_t* args) {
  const bool main = pthread_equal(pthread_self(), main_thread);
  std::this_thread::sleep_for(std::chrono::microseconds(main ? 100 : 20));
  RecordBlock(buffers, args);
}

// Policy::kHomeSegments gives each thread the same segment every call and
// lets others take only its segment's tail: the caller's own claimer owns
// segment 0 in every run; with one queued claimer (2 workers) the worker
// that takes it owns segment 1 in every run; with more, a worker owns a
// segment other than its home only when another claimer owns its home;
// owned segments are distinct; and the roots each segment's owner ran are
// the segment's leading ones (stealers take from the back), here with the
// caller slow enough that the workers steal from it. Vector roots, and cube roots
// (the caller then owns cube segment 0). Another policy owns no segments.
TEST(ExecutorTest, HomeSegmentOwnersKeepTheirLeadingRoots) {
  main_thread = pthread_self();
  struct Case {
    Executor::Options options;
    bool cube;
  };
  for (const Case& c : {Case{{2, 1}, false}, Case{{4, 1}, false},
                        Case{{1, 2}, true}, Case{{1, 3}, true}}) {
    Executor ex(c.options);
    ASSERT_TRUE(ex.SetPolicyForBench(Executor::kHomeSegments).ok());
    const int vectors = ex.num_workers(CoreKind::kVector);
    const int pool = ex.num_workers(c.cube ? CoreKind::kCube : CoreKind::kVector);
    const int first_worker = c.cube ? vectors : 0;
    const int caller = vectors + ex.num_workers(CoreKind::kCube);
    for (int roots : {2, 7, 64}) {
      GraphBuilder b;
      for (int t = 0; t < roots; ++t) b.Add({}, c.cube);
      auto plan = b.Plan(SlowerOnMainThread);
      const int segments = std::min(roots, std::max(2, pool));
      for (int iter = 0; iter < 8; ++iter) {
        SCOPED_TRACE(absl::StrCat(pool, c.cube ? " cube" : " vector",
                                  " workers, ", roots, " roots, run ", iter));
        Recorder r(roots);
        std::vector<TaskEvent> trace;
        std::vector<ShareEvent> shares;
        RunOptions run_options;
        run_options.trace = &trace;
        run_options.shares = &shares;
        ASSERT_TRUE(RunWithRecorder(ex, *plan, &r, run_options).ok());
        ExpectRespectsDeps(b.graph(), r);
        std::vector<int> owner(segments, -1);  // worker id
        std::vector<int> shares_of(caller + 1, 0);
        bool caller_owns_first = false;
        for (const ShareEvent& e : shares) {
          ++shares_of[e.worker];
          if (e.segment < 0) continue;
          ASSERT_LT(e.segment, segments);
          EXPECT_EQ(owner[e.segment], -1) << "segment " << e.segment << " owned twice";
          owner[e.segment] = e.worker;
          caller_owns_first |= e.worker == caller && e.segment == 0;
        }
        EXPECT_TRUE(caller_owns_first);
        for (const ShareEvent& e : shares) {
          if (e.worker == caller) continue;
          const int home = 1 + (e.worker - first_worker) % (segments - 1);
          if (segments == 2) {
            EXPECT_EQ(e.segment, 1) << ex.WorkerName(e.worker);
          }
          if (e.segment != home) {
            EXPECT_NE(owner[home], -1)
                << ex.WorkerName(e.worker) << " left its home " << home;
          }
        }
        // Per segment whose owner ran one claimer: the roots it ran are a
        // prefix of the segment.
        std::vector<int> ran_by(roots, -1);
        for (const TaskEvent& e : trace) ran_by[e.task] = e.worker;
        for (int s = 0; s < segments; ++s) {
          if (owner[s] < 0 || shares_of[owner[s]] != 1) continue;
          bool others = false;
          for (int t = roots * s / segments; t < roots * (s + 1) / segments; ++t) {
            if (ran_by[t] != owner[s]) {
              others = true;
            } else {
              EXPECT_FALSE(others) << "root " << t << " of segment " << s
                                   << " ran on its owner after a stolen one";
            }
          }
        }
      }
    }
    // The shared counter owns no segments.
    ASSERT_TRUE(ex.SetPolicyForBench(Executor::kWakeOffCallerCpu).ok());
    GraphBuilder b;
    for (int t = 0; t < 20; ++t) b.Add({}, c.cube);
    auto plan = b.Plan();
    Recorder r(20);
    std::vector<ShareEvent> shares;
    RunOptions run_options;
    run_options.shares = &shares;
    ASSERT_TRUE(RunWithRecorder(ex, *plan, &r, run_options).ok());
    for (const ShareEvent& e : shares) EXPECT_EQ(e.segment, -1);
  }
}

// Options::worker_cpus pins every worker to its CPU (kPinWorkers, on from
// the start): each worker's share of a run begins and ends there, and every
// task still runs once after its dependencies. The caller is not pinned.
TEST(ExecutorTest, WorkerCpusPinTheWorkers) {
  const std::vector<int> allowed = *Executor::ParseWorkerCpus("all");
  ASSERT_FALSE(allowed.empty());
  const int last = allowed.back();
  Executor::Options options{2, 1, 0};
  options.worker_cpus = {last};
  Executor ex(options);
  EXPECT_EQ(ex.policy(), Executor::kDefaultPolicy | Executor::kPinWorkers);
  GraphBuilder b;
  for (int t = 0; t < 400; ++t) b.Add({}, t % 5 == 0);
  for (int t = 0; t < 400; t += 4) b.Add({static_cast<uint32_t>(t)});
  auto plan = b.Plan();
  const int callers = ex.num_workers(CoreKind::kVector) +
                      ex.num_workers(CoreKind::kCube);
  for (int iter = 0; iter < 20; ++iter) {
    Recorder r(b.graph().tasks_size());
    std::vector<ShareEvent> shares;
    RunOptions run_options;
    run_options.shares = &shares;
    ASSERT_TRUE(RunWithRecorder(ex, *plan, &r, run_options).ok());
    ExpectRespectsDeps(b.graph(), r);
    for (const ShareEvent& e : shares) {
      if (e.worker == callers) continue;  // the caller
      EXPECT_EQ(e.cpu_start, last) << ex.WorkerName(e.worker);
      EXPECT_EQ(e.cpu_end, last) << ex.WorkerName(e.worker);
    }
  }
}

// One cube worker pinned to the first of two CPUs and the caller on that
// CPU: the caller moves the worker it wakes to the second CPU, so the two
// cube roots run side by side (each waits for the other to start, so the
// caller cannot take both) on two CPUs. Pinned to the caller's CPU, the
// worker would only take turns with the caller there.
std::atomic<int> met_started{0};
void MeetOnce(void* const*, const int64_t*) {
  met_started.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (met_started.load() % 2 != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
}

TEST(ExecutorTest, AWorkerPinnedToTheCallersCpuIsMovedOffIt) {
  const std::vector<int> allowed = *Executor::ParseWorkerCpus("all");
  if (allowed.size() < 2) GTEST_SKIP() << "needs two CPUs this process may use";
  Executor::Options options{1, 1, 0};
  options.worker_cpus = {allowed[0], allowed[1]};
  Executor ex(options);
  GraphBuilder b;
  b.Add({}, /*cube=*/true);
  b.Add({}, /*cube=*/true);
  auto plan = b.Plan(MeetOnce);
  cpu_set_t own, first;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(own), &own), 0);
  CPU_ZERO(&first);
  CPU_SET(allowed[0], &first);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(first), &first), 0);
  const int caller = ex.num_workers(CoreKind::kVector) + ex.num_workers(CoreKind::kCube);
  int moved = 0;
  for (int iter = 0; iter < 10; ++iter) {
    // Lets the worker go to sleep (it is moved only as a sleeper).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    met_started.store(0);
    std::vector<ShareEvent> shares;
    RunOptions run_options;
    run_options.shares = &shares;
    void* buffers[] = {nullptr};
    ASSERT_TRUE(ex.Run(*plan, buffers, run_options).ok());
    EXPECT_EQ(met_started.load(), 2);
    for (const ShareEvent& e : shares) {
      if (e.worker == caller) {
        EXPECT_EQ(e.cpu_start, allowed[0]);
      } else if (e.tasks > 0 && e.cpu_start == allowed[1]) {
        ++moved;
      }
    }
  }
  pthread_setaffinity_np(pthread_self(), sizeof(own), &own);
  EXPECT_GT(moved, 0) << "the cube worker ran each root on the caller's CPU";
}

TEST(ExecutorTest, ParseWorkerCpus) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mask)) allowed.push_back(c);
  }
  EXPECT_EQ(*Executor::ParseWorkerCpus("all"), allowed);
  EXPECT_TRUE(Executor::ParseWorkerCpus("none")->empty());
  const std::string first = std::to_string(allowed[0]);
  EXPECT_EQ(*Executor::ParseWorkerCpus(first + "," + first),
            (std::vector<int>{allowed[0], allowed[0]}));
  for (const char* bad : {"", "x", "0,,0", "-1", "1.5"}) {
    absl::StatusOr<std::vector<int>> parsed = Executor::ParseWorkerCpus(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("PTO_WORKER_CPUS"));
    EXPECT_THAT(parsed.status().message(), HasSubstr("is not a CPU number"));
  }
  absl::StatusOr<std::vector<int>> far = Executor::ParseWorkerCpus("100000");
  EXPECT_EQ(far.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(far.status().message(),
              HasSubstr("CPU 100000 is not one this process may use"));
}

// Sets an environment variable for a scope (unset: nullptr), then puts
// back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    had_ = std::getenv(name) != nullptr;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// The default executor pins its workers to every CPU the process may use
// unless PTO_WORKER_CPUS says otherwise ("none": unpinned; a bad value:
// unpinned, with a warning); the pool sizes and spin come from theirs.
TEST(ExecutorTest, OptionsFromEnvironmentPinUnlessNone) {
  const std::vector<int> allowed = *Executor::ParseWorkerCpus("all");
  {
    ScopedEnv cpus("PTO_WORKER_CPUS", nullptr);
    ScopedEnv vectors("PTO_VECTOR_WORKERS", "3");
    ScopedEnv spin("PTO_SPIN_MICROS", "7");
    const Executor::Options options = Executor::OptionsFromEnvironment();
    EXPECT_EQ(options.worker_cpus, allowed);
    EXPECT_EQ(options.vector_workers, 3);
    EXPECT_EQ(options.spin_micros, 7);
    Executor ex(options);
    EXPECT_EQ(ex.policy(), Executor::kDefaultPolicy | Executor::kPinWorkers);
  }
  {
    ScopedEnv cpus("PTO_WORKER_CPUS", "none");
    const Executor::Options options = Executor::OptionsFromEnvironment();
    EXPECT_TRUE(options.worker_cpus.empty());
    Executor ex(options);
    EXPECT_EQ(ex.policy(), Executor::kDefaultPolicy);
  }
  {
    const std::string first = std::to_string(allowed[0]);
    ScopedEnv cpus("PTO_WORKER_CPUS", first.c_str());
    EXPECT_EQ(Executor::OptionsFromEnvironment().worker_cpus, std::vector<int>{allowed[0]});
  }
  {
    ScopedEnv cpus("PTO_WORKER_CPUS", "0,x");
    EXPECT_TRUE(Executor::OptionsFromEnvironment().worker_cpus.empty());
  }
}

// Several threads run one wide plan (roots claimed in chunks of 64) at
// once: every run gets each of its tasks exactly once.
TEST(ExecutorTest, ConcurrentRunsOfAWidePlan) {
  GraphBuilder b;
  for (int t = 0; t < 5000; ++t) b.Add({}, t % 9 == 0);
  auto plan = b.Plan();
  Executor ex(Executor::Options{2, 1});
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int th = 0; th < 4; ++th) {
    threads.emplace_back([&] {
      for (int iter = 0; iter < 10; ++iter) {
        Recorder r(5000);
        if (!RunWithRecorder(ex, *plan, &r).ok()) failures.fetch_add(1);
        for (int t = 0; t < 5000; ++t) {
          if (r.runs[t].load() != 1) failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// No barrier between independent tasks: root A waits until task C has run,
// and C depends on the other root B. A level-by-level scheduler would need A
// done before C starts and would never finish (A gives up after 30 s).
std::atomic<bool> c_ran{false};
std::atomic<bool> a_saw_c{false};
void WaitForC(void* const*, const int64_t* args) {
  if (args[0] != 0) {
    if (args[0] == 2) c_ran.store(true);
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!c_ran.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  a_saw_c.store(c_ran.load());
}

TEST(ExecutorTest, NoBarrierBetweenIndependentTasks) {
  GraphBuilder b;
  b.Add({});   // A
  b.Add({});   // B
  b.Add({1});  // C, after B only
  b.Add({0, 2});
  auto plan = b.Plan(WaitForC);
  Executor ex(Executor::Options{2, 1});
  void* buffers[] = {nullptr};
  ASSERT_TRUE(ex.Run(*plan, buffers).ok());
  EXPECT_TRUE(a_saw_c.load());
}

// Root chunks are sized per core kind: thousands of vector roots make
// vector chunks of 64, but two cube roots still go to two claimers. Each
// cube root waits (up to 30 s) for the other to start: one thread taking
// both in one chunk would never see that.
std::atomic<int> cube_started{0};
std::atomic<int> cube_saw_other{0};
void CubesMeet(void* const*, const int64_t* args) {
  if (args[0] >= 2) return;  // a vector root
  cube_started.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (cube_started.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  if (cube_started.load() >= 2) cube_saw_other.fetch_add(1);
}

TEST(ExecutorTest, RootChunksAreSizedPerCoreKind) {
  GraphBuilder b;
  b.Add({}, /*cube=*/true);
  b.Add({}, /*cube=*/true);
  for (int t = 0; t < 6000; ++t) b.Add({});
  auto plan = b.Plan(CubesMeet);
  Executor ex(Executor::Options{2, 2});
  void* buffers[] = {nullptr};
  ASSERT_TRUE(ex.Run(*plan, buffers).ok());
  EXPECT_EQ(cube_saw_other.load(), 2);
}

TEST(ExecutorTest, CubeTasksRunOnCubeWorkersOrCaller) {
  GraphBuilder b;
  for (int t = 0; t < 400; ++t) b.Add({}, t % 2 == 1);
  auto plan = b.Plan();
  Executor ex(Executor::Options{2, 2});
  Recorder r(400);
  std::vector<TaskEvent> trace;
  ASSERT_TRUE(RunWithRecorder(ex, *plan, &r, RunOptions{&trace}).ok());
  ASSERT_EQ(trace.size(), 400u);
  for (const TaskEvent& e : trace) {
    const std::string worker = ex.WorkerName(e.worker);
    const bool cube = e.task % 2 == 1;
    EXPECT_EQ(e.core, cube ? CoreKind::kCube : CoreKind::kVector);
    if (worker != "caller") {
      EXPECT_EQ(worker.substr(0, worker.find('/')), cube ? "cube" : "vector")
          << "task " << e.task;
    }
    EXPECT_LE(e.start_ns, e.end_ns);
  }
  const std::string json = ex.ChromeTraceJson(trace);
  EXPECT_THAT(json, HasSubstr("\"traceEvents\""));
  EXPECT_THAT(json, HasSubstr("\"name\":\"task 399\""));
  EXPECT_THAT(json, HasSubstr("cube/1"));
}

// Policy::kCallerRunsCubeRoots: a plan of cube roots only runs on the
// calling thread, every task once, however many cube workers there are.
TEST(ExecutorTest, CallerRunsCubeRootsRunsThemAllOnTheCaller) {
  GraphBuilder b;
  for (int t = 0; t < 64; ++t) b.Add({}, /*cube=*/true);
  auto plan = b.Plan();
  Executor ex(Executor::Options{1, 2});
  ASSERT_TRUE(
      ex.SetPolicyForBench(Executor::kDefaultPolicy | Executor::kCallerRunsCubeRoots).ok());
  for (int iter = 0; iter < 3; ++iter) {
    Recorder r(64);
    std::vector<TaskEvent> trace;
    std::vector<ShareEvent> shares;
    RunOptions options;
    options.trace = &trace;
    options.shares = &shares;
    ASSERT_TRUE(RunWithRecorder(ex, *plan, &r, options).ok());
    ASSERT_EQ(trace.size(), 64u);
    for (int t = 0; t < 64; ++t) EXPECT_EQ(r.runs[t].load(), 1) << "task " << t;
    for (const TaskEvent& e : trace) {
      EXPECT_EQ(ex.WorkerName(e.worker), "caller") << "task " << e.task;
    }
    // One claimer, none queued for a worker (each claimer that ran, even
    // one that found no roots left, has a share).
    ASSERT_EQ(shares.size(), 1u);
    EXPECT_EQ(ex.WorkerName(shares[0].worker), "caller");
    EXPECT_EQ(shares[0].roots, 64);
  }
}

// Blocks may keep large tiles on the stack.
void BigStackBlock(void* const* buffers, const int64_t* args) {
  volatile char tiles[600 << 10];
  for (size_t i = 0; i < sizeof(tiles); i += 4096) tiles[i] = static_cast<char>(i);
  RecordBlock(buffers, args);
  (void)tiles[args[0] % sizeof(tiles)];
}

TEST(ExecutorTest, WorkersHaveRoomForLargeTiles) {
  GraphBuilder b;
  for (int t = 0; t < 64; ++t) b.Add({}, t % 2 == 0);
  auto plan = b.Plan(BigStackBlock);
  Executor ex(Executor::Options{2, 1});
  Recorder r(64);
  ASSERT_TRUE(RunWithRecorder(ex, *plan, &r).ok());
  ExpectRespectsDeps(b.graph(), r);
}

// A caller on a small stack (a 256 KiB thread) leaves every task to the
// workers instead of running a block that could overflow it.
TEST(ExecutorTest, CallerOnSmallStackDoesNotHelp) {
  GraphBuilder b;
  for (int t = 0; t < 200; ++t) b.Add({});
  auto plan = b.Plan();
  Executor ex(Executor::Options{2, 1});
  struct Call {
    Executor* ex;
    const TaskPlan* plan;
    std::vector<TaskEvent> trace;
    bool ok = false;
  } call{&ex, plan.get(), {}, false};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 << 10);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                  auto* c = static_cast<Call*>(arg);
                  Recorder r(200);
                  c->ok = RunWithRecorder(*c->ex, *c->plan, &r,
                                          RunOptions{&c->trace})
                              .ok() &&
                          r.clock.load() == 200;
                  return nullptr;
                },
                &call),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  ASSERT_TRUE(call.ok);
  ASSERT_EQ(call.trace.size(), 200u);
  for (const TaskEvent& e : call.trace) {
    EXPECT_NE(ex.WorkerName(e.worker), "caller") << "task " << e.task;
  }
}

// After fork() the child has none of the parent's worker threads; the
// default executor must give it workers again. The plan needs two threads at
// once (see NoBarrierBetweenIndependentTasks): the calling thread alone
// would wait in task A forever (30 s, then fail).
TEST(ExecutorTest, DefaultExecutorWorksInForkedChild) {
  GraphBuilder b;
  b.Add({});   // A: waits for C
  b.Add({});   // B
  b.Add({1});  // C
  b.Add({0, 2});
  auto plan = b.Plan(WaitForC);
  void* buffers[] = {nullptr};
  ASSERT_TRUE(Executor::Default().Run(*plan, buffers).ok());  // parent's
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a hang fails the test instead of blocking it
    c_ran.store(false);
    a_saw_c.store(false);
    const bool ok = Executor::Default().Run(*plan, buffers).ok() && a_saw_c;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(TaskPlanTest, RejectsForwardDependency) {
  pto::v1::ExecuteGraph g;
  pto::v1::BlockFunction* f = g.add_functions();
  f->set_num_args(0);
  g.add_tasks()->add_deps(0);
  std::vector<pto_block_fn> fns = {RecordBlock};
  auto plan = TaskPlan::Create(g, fns);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("task 0: dependency 0"));
}

TEST(TaskPlanTest, RejectsMissingBlock) {
  pto::v1::ExecuteGraph g;
  g.add_functions();
  g.add_tasks()->set_function(0);
  std::vector<pto_block_fn> fns = {nullptr};
  auto plan = TaskPlan::Create(g, fns);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("function 0 has no block"));
}

}  // namespace
}  // namespace pto::runtime
