#include "server/singleflight.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/worker_pool.h"

namespace pto::server {
namespace {

CompiledKernelPtr KernelNamed(const std::string& name) {
  auto kernel = std::make_shared<CompiledKernel>();
  kernel->binary.set_kernel_name(name);
  return kernel;
}

class SingleflightTest : public ::testing::Test {
 protected:
  Singleflight::Launcher OnPool() {
    return [this](std::function<void()> run) {
      return pool_.Submit(std::move(run));
    };
  }

  // Declared before pool_ so launched runs finish before it is destroyed.
  Singleflight flights_;
  WorkerPool pool_{4, 64};
};

TEST_F(SingleflightTest, ConcurrentCallersShareOneRun) {
  constexpr int kCallers = 16;
  std::atomic<int> runs{0};
  absl::Notification release;
  std::atomic<int> arrived{0};
  auto work = [&]() -> Singleflight::Result {
    ++runs;
    release.WaitForNotification();
    return KernelNamed("k");
  };
  std::vector<Singleflight::Outcome> outcomes(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      ++arrived;
      outcomes[i] =
          flights_.Do("key", work, OnPool(), absl::InfiniteFuture());
    });
  }
  // Let every caller reach Do() while the run is blocked.
  while (arrived.load() < kCallers) absl::SleepFor(absl::Milliseconds(1));
  absl::SleepFor(absl::Milliseconds(50));
  release.Notify();
  for (auto& t : callers) t.join();

  EXPECT_EQ(runs.load(), 1);
  int leaders = 0;
  for (const auto& out : outcomes) {
    ASSERT_TRUE(out.result.ok()) << out.result.status();
    EXPECT_EQ((*out.result)->binary.kernel_name(), "k");
    if (!out.shared) ++leaders;
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(flights_.in_flight(), 0u);
}

TEST_F(SingleflightTest, FailureGoesToAllWaitersAndIsNotCached) {
  std::atomic<int> runs{0};
  absl::Notification release;
  auto failing = [&]() -> Singleflight::Result {
    ++runs;
    release.WaitForNotification();
    return absl::InternalError("compiler crashed");
  };
  std::vector<Singleflight::Outcome> outcomes(4);
  std::vector<std::thread> callers;
  for (int i = 0; i < 4; ++i) {
    callers.emplace_back([&, i] {
      outcomes[i] =
          flights_.Do("key", failing, OnPool(), absl::InfiniteFuture());
    });
  }
  while (flights_.in_flight() == 0) absl::SleepFor(absl::Milliseconds(1));
  absl::SleepFor(absl::Milliseconds(50));
  release.Notify();
  for (auto& t : callers) t.join();
  for (const auto& out : outcomes) {
    EXPECT_TRUE(absl::IsInternal(out.result.status()));
    EXPECT_EQ(out.result.status().message(), "compiler crashed");
  }
  const int failed_runs = runs.load();
  EXPECT_GE(failed_runs, 1);

  // The next caller runs the work again and gets its success.
  auto ok = [&]() -> Singleflight::Result {
    ++runs;
    return KernelNamed("second");
  };
  Singleflight::Outcome next =
      flights_.Do("key", ok, OnPool(), absl::InfiniteFuture());
  ASSERT_TRUE(next.result.ok());
  EXPECT_FALSE(next.shared);
  EXPECT_EQ((*next.result)->binary.kernel_name(), "second");
  EXPECT_EQ(runs.load(), failed_runs + 1);
}

TEST_F(SingleflightTest, WaiterDeadlineDoesNotCancelTheRun) {
  absl::Notification release, finished;
  auto work = [&]() -> Singleflight::Result {
    release.WaitForNotification();
    finished.Notify();
    return KernelNamed("late");
  };
  Singleflight::Outcome out = flights_.Do(
      "key", work, OnPool(), absl::Now() + absl::Milliseconds(20));
  EXPECT_TRUE(absl::IsDeadlineExceeded(out.result.status()))
      << out.result.status();
  EXPECT_EQ(flights_.in_flight(), 1u);  // still running, detached

  // A caller arriving now joins the same run and gets its result.
  std::thread release_later([&] {
    absl::SleepFor(absl::Milliseconds(20));
    release.Notify();
  });
  Singleflight::Outcome joined = flights_.Do(
      "key", [] { return Singleflight::Result(KernelNamed("other")); },
      OnPool(), absl::InfiniteFuture());
  release_later.join();
  ASSERT_TRUE(joined.result.ok());
  EXPECT_TRUE(joined.shared);
  EXPECT_EQ((*joined.result)->binary.kernel_name(), "late");
  EXPECT_TRUE(finished.HasBeenNotified());
}

TEST_F(SingleflightTest, RunWhoseCallersAllLeftBeforeItStartedIsSkipped) {
  // A launcher that holds runs back until told, like a busy queue.
  absl::Mutex mu;
  std::vector<std::function<void()>> queued;
  auto hold = [&](std::function<void()> run) {
    absl::MutexLock lock(&mu);
    queued.push_back(std::move(run));
    return absl::OkStatus();
  };
  std::atomic<int> runs{0};
  auto work = [&]() -> Singleflight::Result {
    ++runs;
    return KernelNamed("k");
  };
  Singleflight::Outcome out =
      flights_.Do("key", work, hold, absl::Now() + absl::Milliseconds(20));
  EXPECT_TRUE(absl::IsDeadlineExceeded(out.result.status()));
  ASSERT_EQ(queued.size(), 1u);
  queued[0]();  // its turn comes: nobody is waiting any more
  EXPECT_EQ(runs.load(), 0);
  EXPECT_EQ(flights_.in_flight(), 0u);
  // The next caller starts afresh.
  Singleflight::Outcome next =
      flights_.Do("key", work, OnPool(), absl::InfiniteFuture());
  ASSERT_TRUE(next.result.ok()) << next.result.status();
  EXPECT_FALSE(next.shared);
  EXPECT_EQ(runs.load(), 1);
}

TEST_F(SingleflightTest, LaunchFailureIsTheResultAndNotRemembered) {
  auto refuse = [](std::function<void()>) {
    return absl::ResourceExhaustedError("queue full");
  };
  bool ran = false;
  Singleflight::Outcome out = flights_.Do(
      "key",
      [&]() -> Singleflight::Result {
        ran = true;
        return KernelNamed("never");
      },
      refuse, absl::InfiniteFuture());
  EXPECT_TRUE(absl::IsResourceExhausted(out.result.status()));
  EXPECT_FALSE(ran);
  EXPECT_EQ(flights_.in_flight(), 0u);
}

TEST_F(SingleflightTest, DifferentKeysRunSeparately) {
  std::atomic<int> runs{0};
  auto work = [&]() -> Singleflight::Result {
    ++runs;
    return KernelNamed("k");
  };
  EXPECT_TRUE(flights_.Do("a", work, OnPool(), absl::InfiniteFuture())
                  .result.ok());
  EXPECT_TRUE(flights_.Do("b", work, OnPool(), absl::InfiniteFuture())
                  .result.ok());
  EXPECT_EQ(runs.load(), 2);
}

}  // namespace
}  // namespace pto::server

namespace pto::server {
namespace {

TEST_F(SingleflightTest, CancelledWaiterLeavesTheRunToOthers) {
  absl::Notification release;
  std::atomic<bool> cancel{false};
  auto work = [&]() -> Singleflight::Result {
    release.WaitForNotification();
    return KernelNamed("k");
  };
  std::thread canceller([&] {
    absl::SleepFor(absl::Milliseconds(30));
    cancel = true;
  });
  Singleflight::Outcome out =
      flights_.Do("key", work, OnPool(), absl::InfiniteFuture(),
                  [&cancel] { return cancel.load(); });
  canceller.join();
  EXPECT_TRUE(absl::IsCancelled(out.result.status())) << out.result.status();
  EXPECT_EQ(flights_.in_flight(), 1u);
  release.Notify();
  Singleflight::Outcome after =
      flights_.Do("key", work, OnPool(), absl::InfiniteFuture());
  ASSERT_TRUE(after.result.ok());
}

}  // namespace
}  // namespace pto::server
