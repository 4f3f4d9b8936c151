// Three ptod replicas sharing a real 3+3 Redis Cluster, under concurrent
// clients: each kernel is compiled once cluster-wide, a new replica starts
// warm, and a Redis primary dying mid-run costs clients nothing.
//
// The replicas run in this process (real gRPC on loopback, real RocksDB in
// temp dirs) with the fake backend, whose kernels carry their key in their
// payload; the clients are processes (cluster_client_process.cc), each with
// its own channel per replica.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "pto/v1/compile_service.pb.h"
#include "server/ptod_server.h"
#include "server/redis/key_slot.h"
#include "tests/cluster/cluster_ptod.h"
#include "tests/cluster/cluster_suite.h"
#include "tests/cluster/fake_backend.h"

namespace pto::testing {
namespace {

using pto::server::PtodOptions;
using pto::server::PtodServer;

const char kClusterKey[] = "the-cluster-signing-key-0123456789abcdef";
constexpr int kKernels = 20;
constexpr int kClients = 8;

struct Replica {
  std::unique_ptr<TempDir> dir = std::make_unique<TempDir>();
  std::atomic<int> compiles{0};
  std::unique_ptr<PtodServer> server;
};

class PtodClusterTest : public RedisClusterSuite {
 protected:
  void Start(Replica* replica, absl::Duration compile_delay) {
    PtodOptions options = ClusterPtodOptions(cluster(), replica->dir->path(), kClusterKey);
    options.service.workers = 4;
    options.redis.lease_ttl = absl::Seconds(2);
    absl::StatusOr<std::unique_ptr<PtodServer>> server = PtodServer::Start(
        options,
        std::make_unique<FakeBackend>(&replica->compiles, compile_delay));
    ASSERT_TRUE(server.ok()) << server.status();
    replica->server = *std::move(server);
  }

  struct Outcome {
    int ok = 0;
    int errors = 0;
    int wrong = 0;  // a kernel whose payload is not its key's
    std::vector<std::string> messages;
  };

  // `clients` client processes (cluster_client_process.cc) each request
  // every kernel in `kernels` through every replica in `replicas` (in an
  // order of their own), `rounds` times, all at once.
  Outcome RunClients(const std::vector<Replica*>& replicas,
                     const std::vector<std::string>& kernels, int clients,
                     int rounds) {
    std::vector<std::string> addresses;
    for (Replica* r : replicas) addresses.push_back(r->server->address());
    std::vector<std::string> outputs(clients);
    std::vector<std::thread> readers;
    for (int c = 0; c < clients; ++c) {
      const std::string command = absl::StrCat(
          "'", ClientProcessPath(), "' ", absl::StrJoin(addresses, ","), " ",
          absl::StrJoin(kernels, ","), " ", c, " ", rounds);
      readers.emplace_back([command, &out = outputs[c]] {
        FILE* pipe = popen(command.c_str(), "r");
        if (pipe == nullptr) return;
        char buffer[4096];
        size_t n;
        while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
          out.append(buffer, n);
        }
        pclose(pipe);
      });
    }
    for (std::thread& t : readers) t.join();
    Outcome outcome;
    for (int c = 0; c < clients; ++c) {
      int ok = 0, errors = 0, wrong = 0;
      char message[4096] = {};
      const int fields = sscanf(outputs[c].c_str(), "ok %d errors %d wrong %d\n%4095[^\n]",
                                &ok, &errors, &wrong, message);
      if (fields < 3) {
        ++outcome.errors;
        outcome.messages.push_back(absl::StrCat("client process ", c,
                                                " printed: ", outputs[c]));
        continue;
      }
      outcome.ok += ok;
      outcome.errors += errors;
      outcome.wrong += wrong;
      if (fields == 4) outcome.messages.push_back(message);
    }
    return outcome;
  }

  static std::string ClientProcessPath() {
    const char* srcdir = getenv("TEST_SRCDIR");
    const char* workspace = getenv("TEST_WORKSPACE");
    return absl::StrCat(srcdir != nullptr ? srcdir : ".", "/",
                        workspace != nullptr ? workspace : "pto",
                        "/tests/cluster/cluster_client_process");
  }

  static std::vector<std::string> Kernels(const std::string& prefix, int n) {
    std::vector<std::string> kernels;
    for (int i = 0; i < n; ++i) kernels.push_back(absl::StrCat(prefix, i));
    return kernels;
  }
};

TEST_F(PtodClusterTest, TwentyKernelsFromEightClientsThroughThreeReplicas) {
  Replica a, b, c;
  for (Replica* r : {&a, &b, &c}) {
    Start(r, absl::Milliseconds(300));
    if (HasFatalFailure()) return;
  }
  const std::vector<std::string> kernels = Kernels("kernel-", kKernels);
  Outcome outcome = RunClients({&a, &b, &c}, kernels, kClients, 1);
  EXPECT_EQ(outcome.errors, 0) << (outcome.messages.empty()
                                       ? ""
                                       : outcome.messages.front());
  EXPECT_EQ(outcome.wrong, 0);
  EXPECT_EQ(outcome.ok, kKernels * kClients);
  // Once per kernel, cluster-wide.
  EXPECT_EQ(a.compiles + b.compiles + c.compiles, kKernels);
  for (Replica* r : {&a, &b, &c}) r->server->redis_tier()->WaitForWrites();

  // A new replica with an empty RocksDB: every kernel is a hit from Redis.
  Replica fresh;
  Start(&fresh, absl::Milliseconds(300));
  Outcome warm = RunClients({&fresh}, kernels, 1, 1);
  EXPECT_EQ(warm.ok, kKernels);
  EXPECT_EQ(fresh.compiles, 0);
  EXPECT_EQ(fresh.server->redis_tier()->stats().hits,
            static_cast<uint64_t>(kKernels));
  EXPECT_EQ(fresh.server->store_stats().entries,
            static_cast<uint64_t>(kKernels));
}

TEST_F(PtodClusterTest, APrimaryKilledMidRunCostsClientsNothing) {
  Replica a, b, c;
  for (Replica* r : {&a, &b, &c}) {
    Start(r, absl::Milliseconds(50));
    if (HasFatalFailure()) return;
  }
  // Kernels spread over all three shards; the first round fills Redis.
  const std::vector<std::string> kernels = Kernels("failover-", kKernels);
  Outcome first = RunClients({&a, &b, &c}, kernels, 2, 1);
  ASSERT_EQ(first.errors, 0);
  for (Replica* r : {&a, &b, &c}) r->server->redis_tier()->WaitForWrites();

  // Kill the primary of the first kernel's entry while clients run.
  pto::v1::CompileRequest request;
  request.set_target(kernels[0]);
  std::atomic<int> unused{0};
  const std::string redis_key =
      a.server->redis_tier()->RedisKey(*FakeBackend(&unused).Key(request));
  auto map = a.server->redis_tier()->client().slot_map();
  ASSERT_NE(map->ShardFor(pto::server::redis::KeySlot(redis_key)), nullptr);
  const int victim = cluster().IndexOf(
      map->ShardFor(pto::server::redis::KeySlot(redis_key))->primary);
  ASSERT_GE(victim, 0);
  std::thread killer([&] {
    absl::SleepFor(absl::Milliseconds(100));
    cluster().Kill(victim);
  });
  // New kernels too, so that compiles and writes meet the dead primary.
  std::vector<std::string> mixed = kernels;
  for (const std::string& k : Kernels("after-", 10)) mixed.push_back(k);
  Outcome during = RunClients({&a, &b, &c}, mixed, kClients, 3);
  killer.join();
  EXPECT_EQ(during.errors, 0) << (during.messages.empty()
                                      ? ""
                                      : during.messages.front());
  EXPECT_EQ(during.wrong, 0);
  EXPECT_EQ(during.ok, static_cast<int>(mixed.size()) * kClients * 3);
  // The cluster fails over; the replicas' Redis tier follows it.
  ASSERT_TRUE(cluster().WaitUntilHealthy(absl::Seconds(30)).ok());
}

}  // namespace
}  // namespace pto::testing
