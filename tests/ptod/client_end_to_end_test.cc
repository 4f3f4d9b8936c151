// The C++ client end to end: compile through ptod on loopback, load with the
// runtime, run, and compare with a reference computed here.
#include <random>
#include <vector>

#include "absl/time/clock.h"
#include "client/cpp/compile_client.h"
#include "client/cpp/local_compile.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "server/ptod_server.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

using pto::client::CompileClient;

class ClientEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pto::server::PtodOptions options;
    options.address = "127.0.0.1:0";
    options.cache_dir = dir_.path();
    options.service.workers = 2;
    auto ptod = pto::server::PtodServer::Start(options, MakeInnerBackend());
    ASSERT_TRUE(ptod.ok()) << ptod.status();
    ptod_ = std::move(*ptod);
    client_ = std::make_unique<CompileClient>(ptod_->address());
  }

  TempDir dir_;
  std::unique_ptr<pto::server::PtodServer> ptod_;
  std::unique_ptr<CompileClient> client_;
};

TEST_F(ClientEndToEndTest, CompileAndLoadRunsTheKernel) {
  // 37 x 50 with 16 x 16 tiles: tail tiles in both dims.
  const std::vector<int64_t> shape = {37, 50};
  auto kernel = pto::client::CompileAndLoad(*client_, AddGraph(shape, {16, 16}),
                                            "host", {},
                                            absl::Now() + absl::Seconds(120));
  ASSERT_TRUE(kernel.ok()) << kernel.status();

  const size_t n = 37 * 50;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  for (size_t i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }
  std::vector<pto::runtime::TensorArg> args = {
      {x.data(), pto::v1::DT_FP32, shape},
      {y.data(), pto::v1::DT_FP32, shape},
      {out.data(), pto::v1::DT_FP32, shape}};
  absl::Status ran = (*kernel)->Run(args);
  ASSERT_TRUE(ran.ok()) << ran;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], x[i] + y[i]) << "element " << i;
  }
}

TEST_F(ClientEndToEndTest, ServerErrorsKeepTheirCodeAndMessage) {
  pto::v1::Graph graph = AddGraph();
  graph.mutable_ops(0)->set_kind("frobnicate");
  auto kernel = pto::client::CompileAndLoad(*client_, graph, "host", {},
                                            absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(absl::IsInvalidArgument(kernel.status())) << kernel.status();
  EXPECT_NE(kernel.status().message().find("frobnicate"), std::string::npos);
  EXPECT_NE(kernel.status().message().find(ptod_->address()),
            std::string::npos);
}

TEST(ClientTest, UnreachableServerIsUnavailableOrDeadlineNamingTheAddress) {
  // Port 1 on loopback: nothing listens there.
  CompileClient client("127.0.0.1:1");
  auto stats = client.Stats(absl::Now() + absl::Seconds(5));
  ASSERT_FALSE(stats.ok());
  EXPECT_TRUE(absl::IsUnavailable(stats.status()) ||
              absl::IsDeadlineExceeded(stats.status()))
      << stats.status();
  EXPECT_NE(stats.status().message().find("127.0.0.1:1"), std::string::npos);
  EXPECT_FALSE(pto::client::RetryAfter(stats.status()).has_value());
}

TEST(ClientTest, UnreachableDaemonFallsBackToTheLocalCompilerAndRuns) {
  if (!InnerBackendIsReal()) GTEST_SKIP() << "needs the real compiler";
  pto::client::ClientOptions options;
  options.connect_timeout = absl::Milliseconds(200);
  options.max_attempts = 2;
  options.local_compile = pto::client::LocalCompiler();
  CompileClient client("127.0.0.1:1", options);
  auto kernel = pto::client::CompileAndLoad(client, AddGraph({16, 16}, {8, 8}),
                                            "host", {},
                                            absl::Now() + absl::Seconds(120));
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> x(256, 1.5f), y(256, 2.0f), out(256, 0.0f);
  ASSERT_TRUE((*kernel)
                  ->Run({{x.data(), pto::v1::DT_FP32, {16, 16}},
                         {y.data(), pto::v1::DT_FP32, {16, 16}},
                         {out.data(), pto::v1::DT_FP32, {16, 16}}})
                  .ok());
  EXPECT_EQ(out[0], 3.5f);
  EXPECT_EQ(out[255], 3.5f);
}

}  // namespace
}  // namespace pto::testing
