// Redis Cluster over TLS: the cluster client (slots, MOVED, reads and
// writes, certificate checks) and the ptod binary's --redis_tls flags,
// against a real 3-primary cluster serving TLS only, with client
// certificates required.
#include <sys/stat.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "pto/v1/compile_service.grpc.pb.h"
#include "server/redis/cluster_client.h"
#include "server/redis/key_slot.h"
#include "tests/cluster/cluster_suite.h"
#include "tests/ptod/ptod_process.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

using pto::server::redis::ClusterClient;
using pto::server::redis::ClusterOptions;
using pto::server::redis::Connection;
using pto::server::redis::KeySlot;
using pto::server::redis::Reply;
using pto::server::redis::TlsContext;
using pto::server::redis::TlsOptions;

class TlsClusterTest : public TlsRedisClusterSuite {
 protected:
  void SetUp() override {
    TlsRedisClusterSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    PtodSecretFiles secrets = WritePtodSecretFiles(files_.path());
    key_file_ = secrets.key_file;
    credentials_file_ = secrets.credentials_file;
  }

  // Client options for the cluster with TLS settings `tls`.
  ClusterOptions Options(const TlsOptions& tls) {
    ClusterOptions options;
    options.seeds = {cluster().seeds()[0]};
    options.connection = cluster().connection_options();
    options.connection.connect_timeout = absl::Milliseconds(500);
    options.connection.command_timeout = absl::Milliseconds(500);
    absl::StatusOr<std::shared_ptr<const TlsContext>> context =
        TlsContext::Create(tls);
    EXPECT_TRUE(context.ok()) << context.status();
    if (context.ok()) options.connection.tls = *context;
    return options;
  }



  // ptod's flags on the TLS cluster, trusting `ca_file`.
  std::vector<std::string> Flags(const std::string& name,
                                 const std::string& ca_file) {
    const TestCertificates& tls = cluster().certificates();
    return {"--address=127.0.0.1:0",
            "--metrics_address=127.0.0.1:0",
            "--cache_dir=" + files_.path() + "/cache-" + name,
            "--workers=2",
            "--signing_key_file=" + key_file_,
            "--redis_nodes=" + absl::StrJoin(cluster().seeds(), ","),
            "--redis_credentials_file=" + credentials_file_,
            "--redis_tls",
            "--redis_tls_ca_file=" + ca_file,
            "--redis_tls_cert_file=" + tls.client_cert_file,
            "--redis_tls_key_file=" + tls.client_key_file};
  }
  std::string Log(const std::string& name) {
    return files_.path() + "/" + name + ".log";
  }

  static absl::StatusOr<pto::v1::CompileResponse> Compile(
      const std::string& address, const pto::v1::Graph& graph) {
    return CompileAt(address, graph);
  }

  static std::string Metrics(PtodProcess& ptod) {
    absl::StatusOr<std::string> text = HttpGet(ptod.metrics_port(), "/metrics");
    return text.ok() ? *text : "";
  }

  TempDir files_;
  std::string key_file_;
  std::string credentials_file_;
};

TEST_F(TlsClusterTest, ClientReadsAndWritesEveryShardOverTls) {
  std::unique_ptr<ClusterClient> client =
      NewClient(Options(cluster().certificates().ClientOptions()));
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Refresh().ok());
  EXPECT_EQ(client->slot_map()->assigned_slots(), 16384u);
  std::set<std::string> primaries;
  for (int i = 0; i < 100; ++i) {
    const std::string key = absl::StrCat("tls-key-", i);
    ASSERT_TRUE(client->Set(key, absl::StrCat("value-", i), absl::Minutes(5))
                    .ok());
    primaries.insert(client->slot_map()->ShardFor(KeySlot(key))->primary);
  }
  EXPECT_EQ(primaries.size(), 3u);
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<std::optional<std::string>> v =
        client->Get(absl::StrCat("tls-key-", i));
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_TRUE(v->has_value());
    EXPECT_EQ(**v, absl::StrCat("value-", i));
  }
  absl::StatusOr<bool> deleted = client->Del("tls-key-0");
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_TRUE(*deleted);
  EXPECT_EQ(client->stats().moved, 0u);
}

// An empty slot handed to another primary: the client's map is out of
// date, the old owner answers MOVED, and the client follows it over TLS.
TEST_F(TlsClusterTest, ClientFollowsMovedOverTls) {
  std::unique_ptr<ClusterClient> client =
      NewClient(Options(cluster().certificates().ClientOptions()));
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Refresh().ok());
  const std::string key = "{tls-moving}kernel";
  const int slot = KeySlot(key);
  const int source =
      cluster().IndexOf(client->slot_map()->ShardFor(slot)->primary);
  ASSERT_GE(source, 0);
  const int target = (source + 1) % cluster().size();
  const std::string target_id = On(target, {"CLUSTER", "MYID"}).str;
  ASSERT_FALSE(target_id.empty());
  for (int i : {target, source, (source + 2) % cluster().size()}) {
    Reply r = On(i, {"CLUSTER", "SETSLOT", absl::StrCat(slot), "NODE",
                     target_id});
    ASSERT_NE(r.type, Reply::kError) << r.str;
  }
  ASSERT_TRUE(client->Set(key, "moved-payload", absl::Minutes(5)).ok());
  EXPECT_GE(client->stats().moved, 1u);
  EXPECT_EQ(client->slot_map()->ShardFor(slot)->primary,
            cluster().address(target));
  absl::StatusOr<std::optional<std::string>> v = client->Get(key);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ(**v, "moved-payload");
  // The value is on the new owner.
  EXPECT_EQ(On(target, {"GET", key}).str, "moved-payload");
}

TEST_F(TlsClusterTest, AnUntrustedCertificateIsAClearErrorWithinTheTimeout) {
  TempDir other;
  absl::StatusOr<TestCertificates> other_ca =
      MakeTestCertificates(other.path() + "/tls");
  ASSERT_TRUE(other_ca.ok()) << other_ca.status();
  TlsOptions tls = cluster().certificates().ClientOptions();
  tls.ca_file = other_ca->ca_file;
  std::unique_ptr<ClusterClient> client = NewClient(Options(tls));
  ASSERT_NE(client, nullptr);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::optional<std::string>> v = client->Get("k");
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(absl::IsUnavailable(v.status())) << v.status();
  EXPECT_TRUE(absl::StrContains(v.status().message(),
                                "certificate is not trusted by CA file " +
                                    other_ca->ca_file))
      << v.status();
}

TEST_F(TlsClusterTest, AWrongServerNameIsAClearError) {
  TlsOptions tls = cluster().certificates().ClientOptions();
  tls.server_name = "redis.elsewhere.example";
  std::unique_ptr<ClusterClient> client = NewClient(Options(tls));
  ASSERT_NE(client, nullptr);
  absl::Status refreshed = client->Refresh();
  ASSERT_FALSE(refreshed.ok());
  EXPECT_TRUE(absl::StrContains(
      refreshed.message(),
      "certificate does not match \"redis.elsewhere.example\""))
      << refreshed;
  // The name the certificate carries is accepted.
  tls.server_name = "localhost";
  client = NewClient(Options(tls));
  ASSERT_NE(client, nullptr);
  absl::Status named = client->Refresh();
  EXPECT_TRUE(named.ok()) << named;
}

TEST_F(TlsClusterTest, NodesRefuseAClientWithoutACertificate) {
  TlsOptions tls = cluster().certificates().ClientOptions();
  tls.cert_file.clear();
  tls.key_file.clear();
  ClusterOptions options = Options(tls);
  absl::StatusOr<std::unique_ptr<Connection>> c =
      Connection::Open(cluster().address(0), options.connection);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsUnavailable(c.status())) << c.status();
  EXPECT_TRUE(absl::StrContains(c.status().message(), "certificate"))
      << c.status();
}

// A kernel compiled by one ptod on the TLS cluster is a hit from Redis at a
// fresh replica with an empty RocksDB.
TEST_F(TlsClusterTest, PtodSharesKernelsOverTls) {
  const pto::v1::Graph graph = AddGraph({24, 40}, {8, 8});
  const std::string ca = cluster().certificates().ca_file;
  PtodProcess a(Flags("a", ca), Log("a"));
  const std::string address_a = a.WaitUntilListening();
  ASSERT_FALSE(address_a.empty()) << ReadWholeFile(Log("a"));
  absl::StatusOr<pto::v1::CompileResponse> compiled = Compile(address_a, graph);
  ASSERT_TRUE(compiled.ok()) << compiled.status() << ReadWholeFile(Log("a"));
  EXPECT_EQ(compiled->cache_status(), pto::v1::CACHE_STATUS_MISS);

  PtodProcess b(Flags("b", ca), Log("b"));
  const std::string address_b = b.WaitUntilListening();
  ASSERT_FALSE(address_b.empty()) << ReadWholeFile(Log("b"));
  // A's write to Redis is asynchronous: B may miss for a moment.
  absl::StatusOr<pto::v1::CompileResponse> hit;
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  std::string metrics;
  do {
    metrics = Metrics(a);
    if (absl::StrContains(metrics,
                          "pto_redis_operations_total{op=\"set\",result=\"ok\"} 1")) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  } while (absl::Now() < give_up);
  hit = Compile(address_b, graph);
  ASSERT_TRUE(hit.ok()) << hit.status() << ReadWholeFile(Log("b"));
  EXPECT_EQ(hit->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_EQ(hit->binary().SerializeAsString(),
            compiled->binary().SerializeAsString());
  EXPECT_TRUE(absl::StrContains(
      Metrics(b), "pto_redis_operations_total{op=\"get\",result=\"hit\"} 1"))
      << Metrics(b);
}

// A ptod that does not trust the nodes' CA serves from its own tiers and
// says why Redis is unusable.
TEST_F(TlsClusterTest, PtodWithAnUntrustedCaStillServes) {
  TempDir other;
  absl::StatusOr<TestCertificates> other_ca =
      MakeTestCertificates(other.path() + "/tls");
  ASSERT_TRUE(other_ca.ok()) << other_ca.status();
  PtodProcess ptod(Flags("untrusting", other_ca->ca_file), Log("untrusting"));
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("untrusting"));
  const pto::v1::Graph graph = AddGraph({16, 24}, {8, 8});
  const absl::Time start = absl::Now();
  absl::StatusOr<pto::v1::CompileResponse> first = Compile(address, graph);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->cache_status(), pto::v1::CACHE_STATUS_MISS);
  absl::StatusOr<pto::v1::CompileResponse> second = Compile(address, graph);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  const std::string log = ReadWholeFile(Log("untrusting"));
  EXPECT_TRUE(absl::StrContains(
      log, "certificate is not trusted by CA file " + other_ca->ca_file))
      << log;
  EXPECT_TRUE(absl::StrContains(Metrics(ptod), "pto_redis_up 0"))
      << Metrics(ptod);
}

TEST_F(TlsClusterTest, PtodChecksItsTlsFlagsAtStart) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::string ca = cluster().certificates().ca_file;
  std::vector<std::string> no_ca = Flags("x", ca);
  no_ca.erase(no_ca.begin() + 8);  // --redis_tls_ca_file
  const std::string missing = files_.path() + "/missing-ca.pem";
  std::vector<std::string> missing_ca = Flags("x", missing);
  std::vector<std::string> not_pem = Flags("x", credentials_file_);
  std::vector<std::string> without_tls = Flags("x", ca);
  without_tls.erase(without_tls.begin() + 7);  // --redis_tls
  for (const Case& c :
       {Case{no_ca, "--redis_tls needs --redis_tls_ca_file"},
        Case{missing_ca, "--redis_tls_ca_file: cannot read " + missing},
        Case{not_pem, "ca_file " + credentials_file_ +
                          ": no CA certificate (PEM) could be loaded"},
        Case{without_tls, "need --redis_tls"}}) {
    PtodProcess ptod(c.flags, Log("refused"));
    EXPECT_TRUE(ptod.WaitUntilListening().empty());
    EXPECT_EQ(ptod.Wait(absl::Seconds(30)), 1 << 8);
    EXPECT_TRUE(absl::StrContains(ReadWholeFile(Log("refused")), c.message))
        << ReadWholeFile(Log("refused"));
  }
}

}  // namespace
}  // namespace pto::testing
