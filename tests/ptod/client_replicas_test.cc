// The C++ client over three real ptod processes on loopback: identical
// compiles from several clients converge on the request's rendezvous replica
// (each replica's own Stats say where they went), and a replica killed with
// SIGKILL sends its requests to the next replica without an error to the
// callers.
#include <signal.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/cpp/compile_client.h"
#include "client/cpp/rendezvous.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "tests/ptod/ptod_process.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

using pto::client::CompileClient;

constexpr int kReplicas = 3;
constexpr int kClients = 4;

class ClientReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < kReplicas; ++i) {
      caches_.push_back(std::make_unique<TempDir>());
      const std::string log = logs_.path() + "/ptod" + std::to_string(i);
      replicas_.push_back(std::make_unique<PtodProcess>(
          std::vector<std::string>{"--address=127.0.0.1:0",
                                   "--metrics_address=127.0.0.1:0",
                                   "--cache_dir=" + caches_.back()->path(),
                                   "--workers=2"},
          log));
      ASSERT_TRUE(replicas_.back()->spawned()) << PtodPath();
      addresses_.push_back(replicas_.back()->WaitUntilListening());
      ASSERT_FALSE(addresses_.back().empty()) << ReadWholeFile(log);
    }
  }

  // Compile requests replica `i` has received, by its own count.
  uint64_t RequestsAt(int i) {
    CompileClient one(addresses_[i]);
    auto stats = one.Stats(absl::Now() + absl::Seconds(30));
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->requests() : 0;
  }
  int IndexOf(const std::string& address) const {
    for (int i = 0; i < kReplicas; ++i) {
      if (addresses_[i] == address) return i;
    }
    return -1;
  }

  // Each of `clients` compiles `request` once, concurrently; every result
  // must be OK and carry the same key.
  void CompileFromEach(std::vector<std::unique_ptr<CompileClient>>& clients,
                       const pto::v1::CompileRequest& request) {
    std::vector<absl::StatusOr<pto::v1::CompileResponse>> results(
        clients.size(), absl::UnknownError("not run"));
    std::vector<std::thread> threads;
    for (size_t c = 0; c < clients.size(); ++c) {
      threads.emplace_back([&, c] {
        results[c] =
            clients[c]->Compile(request, absl::Now() + absl::Seconds(180));
      });
    }
    for (std::thread& t : threads) t.join();
    for (const auto& r : results) {
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->key(), results[0]->key());
      auto kernel = pto::runtime::Kernel::Load(r->binary());
      EXPECT_TRUE(kernel.ok()) << kernel.status();
    }
  }

  TempDir logs_;
  std::vector<std::unique_ptr<TempDir>> caches_;
  std::vector<std::unique_ptr<PtodProcess>> replicas_;
  std::vector<std::string> addresses_;
};

TEST_F(ClientReplicasTest, IdenticalCompilesConvergeAndFailOverWhenKilled) {
  pto::v1::CompileRequest request;
  *request.mutable_graph() = AddGraph({48, 40}, {16, 16});
  request.set_target("host");
  std::vector<std::unique_ptr<CompileClient>> clients;
  for (int c = 0; c < kClients; ++c) {
    // Ranks may list the replicas in any order.
    std::vector<std::string> listed = addresses_;
    std::rotate(listed.begin(), listed.begin() + c % kReplicas, listed.end());
    clients.push_back(
        std::make_unique<CompileClient>(absl::StrJoin(listed, ",")));
  }
  auto route = clients[0]->RouteOf(pto::client::RoutingKey(request));
  ASSERT_TRUE(route.ok()) << route.status();
  const int first = IndexOf((*route)[0]);
  const int second = IndexOf((*route)[1]);
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);

  CompileFromEach(clients, request);
  for (int i = 0; i < kReplicas; ++i) {
    EXPECT_EQ(RequestsAt(i), i == first ? kClients : 0u) << "replica " << i;
  }

  ASSERT_NE(replicas_[first]->StopWith(SIGKILL, absl::Seconds(30)), -1);
  CompileFromEach(clients, request);
  EXPECT_EQ(RequestsAt(second), static_cast<uint64_t>(kClients));
  const int third = kReplicas - first - second;
  EXPECT_EQ(RequestsAt(third), 0u);
}

}  // namespace
}  // namespace pto::testing
