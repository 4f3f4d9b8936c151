#include "server/worker_pool.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace pto::server {
namespace {

TEST(WorkerPoolTest, RunsEveryTask) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(3, 100);
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(pool.Submit([&ran] { ++ran; }).ok());
    }
    pool.Shutdown();
  }
  EXPECT_EQ(ran.load(), 50);
}

TEST(WorkerPoolTest, FullQueueRefusesWithResourceExhausted) {
  WorkerPool pool(1, 1);
  absl::Notification started, release;
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.Submit([&] {
                    started.Notify();
                    release.WaitForNotification();
                    ++ran;
                  }).ok());
  started.WaitForNotification();  // the only worker is now busy
  ASSERT_TRUE(pool.Submit([&ran] { ++ran; }).ok());  // fills the queue
  EXPECT_EQ(pool.queued(), 1u);
  EXPECT_EQ(pool.running(), 1);

  absl::Status refused = pool.Submit([&ran] { ran += 100; });
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_NE(refused.message().find("full"), std::string::npos);

  release.Notify();
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 2);  // the refused task never ran
}

TEST(WorkerPoolTest, ShutdownDrainsQueueThenRefuses) {
  WorkerPool pool(1, 10);
  absl::Notification release;
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.Submit([&] { release.WaitForNotification(); }).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(pool.Submit([&ran] { ++ran; }).ok());
  release.Notify();
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 5);
  EXPECT_TRUE(absl::IsFailedPrecondition(pool.Submit([] {})));
  pool.Shutdown();  // idempotent
}

}  // namespace
}  // namespace pto::server
