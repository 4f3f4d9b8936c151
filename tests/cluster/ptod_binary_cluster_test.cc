// The ptod binary on a real Redis Cluster: its --redis_* flags, the real
// compiler's signed kernels shared between replicas, and a replica killed
// (SIGKILL) while it holds a compile lease.
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "pto/v1/compile_service.grpc.pb.h"
#include "tests/cluster/cluster_suite.h"
#include "tests/ptod/ptod_process.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

using pto::server::redis::Reply;

class PtodBinaryClusterTest : public RedisClusterSuite {
 protected:
  void SetUp() override {
    RedisClusterSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    PtodSecretFiles secrets = WritePtodSecretFiles(files_.path());
    key_file_ = secrets.key_file;
    credentials_file_ = secrets.credentials_file;
    // A compiler that takes a few seconds, so that a compile can be caught
    // in progress.
    slow_cxx_ = files_.path() + "/slow-cxx";
    std::ofstream(slow_cxx_) << "#!/bin/sh\nsleep 3\nexec c++ \"$@\"\n";
    chmod(slow_cxx_.c_str(), 0755);
  }

  std::vector<std::string> Flags(const std::string& name) {
    return {"--address=127.0.0.1:0",
            "--metrics_address=127.0.0.1:0",
            "--cache_dir=" + files_.path() + "/cache-" + name,
            "--workers=2",
            "--signing_key_file=" + key_file_,
            "--redis_nodes=" + absl::StrJoin(cluster().seeds(), ","),
            "--redis_credentials_file=" + credentials_file_,
            "--redis_lease_ttl=2s",
            "--cxx=" + slow_cxx_};
  }
  std::string Log(const std::string& name) {
    return files_.path() + "/" + name + ".log";
  }

  static absl::StatusOr<pto::v1::CompileResponse> Compile(
      const std::string& address, const pto::v1::Graph& graph) {
    return CompileAt(address, graph);
  }

  // The compile lease keys in the cluster now (each once: replicas hold
  // copies).
  std::vector<std::string> LeaseKeys() {
    std::set<std::string> keys;
    for (int i = 0; i < cluster().size(); ++i) {
      auto c = cluster().Connect(i);
      if (!c.ok()) continue;
      absl::StatusOr<Reply> found = (*c)->Command({"KEYS", "pto:lease:*"});
      if (!found.ok()) continue;
      for (const Reply& k : found->elements) keys.insert(k.str);
    }
    return std::vector<std::string>(keys.begin(), keys.end());
  }

  static std::string Metrics(PtodProcess& ptod) {
    absl::StatusOr<std::string> text = HttpGet(ptod.metrics_port(), "/metrics");
    return text.ok() ? *text : "";
  }

  TempDir files_;
  std::string key_file_;
  std::string credentials_file_;
  std::string slow_cxx_;
};

TEST_F(PtodBinaryClusterTest, AReplicaKilledHoldingALeaseIsTakenOverAfterIt) {
  const pto::v1::Graph graph = AddGraph({48, 32}, {16, 16});
  PtodProcess a(Flags("a"), Log("a"));
  const std::string address_a = a.WaitUntilListening();
  ASSERT_FALSE(address_a.empty()) << ReadWholeFile(Log("a"));
  PtodProcess b(Flags("b"), Log("b"));
  const std::string address_b = b.WaitUntilListening();
  ASSERT_FALSE(address_b.empty()) << ReadWholeFile(Log("b"));

  // A starts compiling (and so holds the lease); then it is killed.
  std::thread doomed([&] { Compile(address_a, graph).IgnoreError(); });
  std::vector<std::string> leases;
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (leases.empty() && absl::Now() < give_up) {
    leases = LeaseKeys();
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(leases.size(), 1u) << absl::StrJoin(leases, " ");
  a.StopWith(SIGKILL, absl::Seconds(10));
  doomed.join();

  // B waits for A's lease, which nobody renews now; once it expires B takes
  // it and compiles.
  absl::StatusOr<pto::v1::CompileResponse> r = Compile(address_b, graph);
  ASSERT_TRUE(r.ok()) << r.status() << ReadWholeFile(Log("b"));
  EXPECT_EQ(r->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_FALSE(r->binary().signature().empty());
  const std::string metrics = Metrics(b);
  EXPECT_TRUE(absl::StrContains(
      metrics, "pto_redis_leases_total{result=\"expired\"} 1"))
      << metrics;

  // A replacement for A, with an empty cache: a hit from Redis, the same
  // signed kernel.
  PtodProcess c(Flags("c"), Log("c"));
  const std::string address_c = c.WaitUntilListening();
  ASSERT_FALSE(address_c.empty()) << ReadWholeFile(Log("c"));
  absl::StatusOr<pto::v1::CompileResponse> hit = Compile(address_c, graph);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_EQ(hit->binary().SerializeAsString(), r->binary().SerializeAsString());
  EXPECT_TRUE(absl::StrContains(
      Metrics(c), "pto_redis_operations_total{op=\"get\",result=\"hit\"} 1"));
}

TEST_F(PtodBinaryClusterTest, RedisFlagsAreCheckedAtStart) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  std::vector<std::string> no_key = Flags("x");
  no_key.erase(no_key.begin() + 4);  // --signing_key_file
  std::vector<std::string> tls = Flags("x");
  tls.push_back("--redis_tls");  // without --redis_tls_ca_file
  std::vector<std::string> bad_credentials = Flags("x");
  bad_credentials.push_back("--redis_credentials_file=" + files_.path() +
                            "/missing");
  for (const Case& c :
       {Case{no_key, "needs --signing_key_file"}, Case{tls, "--redis_tls needs --redis_tls_ca_file"},
        Case{bad_credentials, "missing"}}) {
    PtodProcess ptod(c.flags, Log("refused"));
    EXPECT_TRUE(ptod.WaitUntilListening().empty());
    EXPECT_EQ(ptod.Wait(absl::Seconds(30)), 1 << 8);
    EXPECT_TRUE(absl::StrContains(ReadWholeFile(Log("refused")), c.message))
        << ReadWholeFile(Log("refused"));
  }
}

}  // namespace
}  // namespace pto::testing
