#include "runtime/kernel.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/executor.h"
#include "runtime/test_payload.h"

namespace pto::runtime {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Kernel> LoadAddOneTimesTwo(int64_t n, int64_t tile) {
  auto binary = testing::AddOneTimesTwoBinary(n, tile);
  EXPECT_TRUE(binary.ok()) << binary.status();
  if (!binary.ok()) return nullptr;
  auto kernel = Kernel::Load(*binary);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? *std::move(kernel) : nullptr;
}

// Runs `kernel` (a 4096-element add-one-times-two) from `threads` threads
// at once through one executor, `iters` runs each on fresh inputs
// x[i] = fill(thread, iter, i); returns the failed runs plus wrong outputs.
int WrongInConcurrentRuns(Kernel& kernel, int threads, int iters,
                          float (*fill)(int th, int iter, int i)) {
  Executor executor(Executor::Options{2, 1});
  std::atomic<int> wrong{0};
  std::vector<std::thread> running;
  for (int th = 0; th < threads; ++th) {
    running.emplace_back([&, th] {
      std::vector<float> x(4096), y(4096);
      for (int iter = 0; iter < iters; ++iter) {
        for (int i = 0; i < 4096; ++i) x[i] = fill(th, iter, i);
        std::vector<TensorArg> args = {{x.data(), pto::v1::DT_FP32, {4096}},
                                       {y.data(), pto::v1::DT_FP32, {4096}}};
        if (!kernel.Run(args, &executor).ok()) wrong.fetch_add(1);
        for (int i = 0; i < 4096; ++i) {
          if (y[i] != (x[i] + 1.0f) * 2.0f) wrong.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : running) t.join();
  return wrong.load();
}

TEST(KernelTest, RunsAndComputesTheRightNumbers) {
  // 1000 is not a multiple of 64: the last tile is a tail.
  auto kernel = LoadAddOneTimesTwo(1000, 64);
  ASSERT_NE(kernel, nullptr);
  std::vector<float> x(1000), y(1000, -1.0f);
  for (int i = 0; i < 1000; ++i) x[i] = 0.25f * i - 7.0f;
  std::vector<TensorArg> args = {{x.data(), pto::v1::DT_FP32, {1000}},
                                 {y.data(), pto::v1::DT_FP32, {1000}}};
  ASSERT_TRUE(kernel->Run(args).ok());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(y[i], (x[i] + 1.0f) * 2.0f) << i;
}

TEST(KernelTest, TracesEveryTask) {
  auto kernel = LoadAddOneTimesTwo(256, 64);  // 4 tiles, 2 tasks each
  ASSERT_NE(kernel, nullptr);
  std::vector<float> x(256, 1.0f), y(256);
  std::vector<TensorArg> args = {{x.data(), pto::v1::DT_FP32, {256}},
                                 {y.data(), pto::v1::DT_FP32, {256}}};
  std::vector<TaskEvent> trace;
  Executor executor(Executor::Options{2, 1});
  ASSERT_TRUE(kernel->Run(args, &executor, RunOptions{&trace}).ok());
  ASSERT_EQ(trace.size(), 8u);
  std::vector<int64_t> end(8), start(8);
  for (const TaskEvent& e : trace) {
    start[e.task] = e.start_ns;
    end[e.task] = e.end_ns;
  }
  // Task 2k+1 (times_two) depends on task 2k (add_one) of the same tile.
  for (int k = 0; k < 4; ++k) EXPECT_LE(end[2 * k], start[2 * k + 1]);
  EXPECT_EQ(y[0], 4.0f);
}

TEST(KernelTest, ConcurrentRunsOnOwnExecutor) {
  auto kernel = LoadAddOneTimesTwo(4096, 100);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(WrongInConcurrentRuns(*kernel, 4, 10,
                                   [](int th, int iter, int i) {
                                     return static_cast<float>(th * 1000 + iter + i);
                                   }),
            0);
}

TEST(KernelTest, SequentialRunsReuseOneWorkspace) {
  auto kernel = LoadAddOneTimesTwo(1000, 64);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->workspace_allocations(), 0);
  std::vector<float> x(1000), y(1000);
  std::vector<TensorArg> args = {{x.data(), pto::v1::DT_FP32, {1000}},
                                 {y.data(), pto::v1::DT_FP32, {1000}}};
  for (int iter = 0; iter < 5; ++iter) {
    // New inputs each run: a stale workspace from the last run would show.
    for (int i = 0; i < 1000; ++i) x[i] = iter * 3.0f - i;
    ASSERT_TRUE(kernel->Run(args).ok());
    for (int i = 0; i < 1000; ++i) {
      ASSERT_EQ(y[i], (x[i] + 1.0f) * 2.0f) << "run " << iter << " i " << i;
    }
    EXPECT_EQ(kernel->workspace_allocations(), 1) << "run " << iter;
  }
}

TEST(KernelTest, NoIdleWorkspacesMeansEveryRunAllocates) {
  auto kernel = LoadAddOneTimesTwo(256, 64);
  ASSERT_NE(kernel, nullptr);
  std::vector<float> x(256, 1.0f), y(256);
  std::vector<TensorArg> args = {{x.data(), pto::v1::DT_FP32, {256}},
                                 {y.data(), pto::v1::DT_FP32, {256}}};
  ASSERT_TRUE(kernel->Run(args).ok());
  kernel->set_max_idle_workspaces(0);  // frees the idle arena
  ASSERT_TRUE(kernel->Run(args).ok());
  ASSERT_TRUE(kernel->Run(args).ok());
  EXPECT_EQ(kernel->workspace_allocations(), 3);
  kernel->set_max_idle_workspaces(1);
  ASSERT_TRUE(kernel->Run(args).ok());
  ASSERT_TRUE(kernel->Run(args).ok());
  EXPECT_EQ(kernel->workspace_allocations(), 4);
  EXPECT_EQ(y[255], 4.0f);
}

TEST(KernelTest, ConcurrentRunsGetTheirOwnWorkspaces) {
  constexpr int kThreads = 6;  // more than kMaxIdleWorkspaces
  auto kernel = LoadAddOneTimesTwo(4096, 64);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(WrongInConcurrentRuns(*kernel, kThreads, 20,
                                   [](int th, int iter, int i) {
                                     return static_cast<float>(th * 7919 - iter * 31 + i);
                                   }),
            0);
  // At most one arena per run in flight; more only when a return found the
  // pool full and a later run had to allocate again.
  EXPECT_GE(kernel->workspace_allocations(), 1);
  EXPECT_LE(kernel->workspace_allocations(), kThreads * 20);
  // Once idle, the pool serves a run without allocating.
  const int64_t before = kernel->workspace_allocations();
  std::vector<float> x(4096, 1.0f), y(4096);
  std::vector<TensorArg> args = {{x.data(), pto::v1::DT_FP32, {4096}},
                                 {y.data(), pto::v1::DT_FP32, {4096}}};
  ASSERT_TRUE(kernel->Run(args).ok());
  EXPECT_EQ(kernel->workspace_allocations(), before);
  EXPECT_EQ(y[4095], 4.0f);
}

TEST(KernelTest, RejectsBadArguments) {
  auto kernel = LoadAddOneTimesTwo(64, 16);
  ASSERT_NE(kernel, nullptr);
  std::vector<float> x(64), y(64);
  auto run = [&](std::vector<TensorArg> args) { return kernel->Run(args); };

  absl::Status s = run({{x.data(), pto::v1::DT_FP32, {64}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("takes 2 arguments, got 1"));

  s = run({{x.data(), pto::v1::DT_FP32, {64}},
           {y.data(), pto::v1::DT_FP32, {32}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("argument 1 'y': expected shape [64], got [32]"));

  s = run({{x.data(), pto::v1::DT_FP32, {8, 8}},
           {y.data(), pto::v1::DT_FP32, {64}}});
  EXPECT_THAT(s.message(),
              HasSubstr("argument 0 'x': expected shape [64], got [8,8]"));

  s = run({{x.data(), pto::v1::DT_FP16, {64}},
           {y.data(), pto::v1::DT_FP32, {64}}});
  EXPECT_THAT(s.message(), HasSubstr("argument 0 'x': expected dtype DT_FP32, "
                                     "got DT_FP16"));

  s = run({{x.data(), pto::v1::DT_FP32, {64}},
           {nullptr, pto::v1::DT_FP32, {64}}});
  EXPECT_THAT(s.message(), HasSubstr("argument 1 'y': data pointer is null"));
}

TEST(KernelTest, SymbolicDimsAreNotSupportedYet) {
  auto binary = testing::AddOneTimesTwoBinary(64, 16);
  ASSERT_TRUE(binary.ok());
  binary->mutable_params(0)->mutable_shape()->mutable_dims(0)->set_symbol("n");
  auto kernel = Kernel::Load(*binary);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> x(64), y(64);
  std::vector<TensorArg> args = {{x.data(), pto::v1::DT_FP32, {64}},
                                 {y.data(), pto::v1::DT_FP32, {64}}};
  absl::Status s = (*kernel)->Run(args);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("argument 0 'x': symbolic dim 'n'"));
}

TEST(KernelTest, RefusesBlockIndexBeyondPayload) {
  auto binary = testing::AddOneTimesTwoBinary(64, 16);
  ASSERT_TRUE(binary.ok());
  binary->mutable_execute_graph()->mutable_functions(1)->set_index(5);
  auto kernel = Kernel::Load(*binary);
  ASSERT_FALSE(kernel.ok());
  EXPECT_THAT(kernel.status().message(),
              HasSubstr("function 1 'times_two' names block 5 but the payload "
                        "has 2 blocks"));
}

TEST(KernelTest, RefusesFlippedPayloadByte) {
  auto binary = testing::AddOneTimesTwoBinary(64, 16);
  ASSERT_TRUE(binary.ok());
  (*binary->mutable_native_payload())[100] ^= 0x40;
  auto kernel = Kernel::Load(*binary);
  ASSERT_FALSE(kernel.ok());
  EXPECT_THAT(kernel.status().message(),
              HasSubstr("kernel binary refused: payload checksum mismatch"));
}

}  // namespace
}  // namespace pto::runtime
