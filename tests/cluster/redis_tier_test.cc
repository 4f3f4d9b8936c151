// ptod's Redis Cluster tier with real ptods (in-process, real gRPC on
// loopback, real RocksDB in temp dirs) and a real 3+3 Redis Cluster.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "pto/v1/compile_service.grpc.pb.h"
#include "server/ptod_server.h"
#include "server/redis_entry.h"
#include "server/redis_tier.h"
#include "tests/cluster/cluster_ptod.h"
#include "tests/cluster/cluster_suite.h"
#include "tests/cluster/fake_backend.h"

namespace pto::testing {
namespace {

using pto::server::PtodOptions;
using pto::server::PtodServer;
using pto::server::RedisTier;

const char kClusterKey[] = "the-cluster-signing-key-0123456789abcdef";

// One ptod replica: its directory, compile count and client stub.
struct Replica {
  std::unique_ptr<TempDir> dir;
  std::atomic<int> compiles{0};
  std::unique_ptr<PtodServer> server;
  std::unique_ptr<pto::v1::CompileService::Stub> stub;

  RedisTier& tier() { return *server->redis_tier(); }

  absl::StatusOr<pto::v1::CompileResponse> Compile(
      const std::string& kernel,
      const std::map<std::string, std::string>& options = {}) {
    pto::v1::CompileRequest request;
    request.set_target(kernel);
    for (const auto& [name, value] : options) {
      (*request.mutable_options())[name] = value;
    }
    pto::v1::CompileResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    grpc::Status status = stub->Compile(&context, request, &response);
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    return response;
  }

  absl::StatusOr<pto::v1::AdminResponse> Admin(pto::v1::AdminAction action) {
    pto::v1::AdminRequest request;
    request.set_action(action);
    pto::v1::AdminResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    grpc::Status status = stub->Admin(&context, request, &response);
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    return response;
  }

  uint64_t Generation() {
    pto::v1::StatsResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    if (!stub->Stats(&context, pto::v1::StatsRequest(), &response).ok()) {
      return ~uint64_t{0};
    }
    return response.generation();
  }

  // Whether the replica's generation becomes `generation` within `timeout`.
  bool ReachesGeneration(uint64_t generation,
                         absl::Duration timeout = absl::Seconds(10)) {
    const absl::Time give_up = absl::Now() + timeout;
    while (Generation() != generation) {
      if (absl::Now() > give_up) return false;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return true;
  }

  std::string Metrics() {
    return prometheus::TextSerializer().Serialize(
        server->metrics().registry().Collect());
  }
};

class RedisTierTest : public RedisClusterSuite {
 protected:
  // Starts (or restarts, keeping its directory) `replica` against the
  // cluster, signing with `signing_key`.
  void Start(Replica* replica, const std::string& signing_key = kClusterKey,
             absl::Duration compile_delay = absl::ZeroDuration(),
             absl::Duration lease_ttl = absl::Seconds(10)) {
    if (replica->dir == nullptr) replica->dir = std::make_unique<TempDir>();
    replica->server.reset();
    PtodOptions options = ClusterPtodOptions(cluster(), replica->dir->path(), signing_key);
    options.service.workers = 2;
    options.redis.ttl = absl::Hours(1);
    options.redis.lease_ttl = lease_ttl;
    options.service.allow_anonymous_admin = true;
    options.service.generation_sync_interval = absl::Milliseconds(100);
    absl::StatusOr<std::unique_ptr<PtodServer>> server = PtodServer::Start(
        options,
        std::make_unique<FakeBackend>(&replica->compiles, compile_delay));
    ASSERT_TRUE(server.ok()) << server.status();
    replica->server = *std::move(server);
    replica->stub = pto::v1::CompileService::NewStub(grpc::CreateChannel(
        replica->server->address(), grpc::InsecureChannelCredentials()));
  }

  std::unique_ptr<pto::server::redis::ClusterClient> Client() {
    pto::server::redis::ClusterOptions options;
    options.seeds = cluster().seeds();
    options.connection = cluster().connection_options();
    auto client = pto::server::redis::ClusterClient::Create(options);
    EXPECT_TRUE(client.ok());
    return *std::move(client);
  }

  // Flips one byte of the native payload in the Redis entry of `key`.
  void Tamper(const std::string& redis_key) {
    auto client = Client();
    absl::StatusOr<std::optional<std::string>> entry = client->Get(redis_key);
    ASSERT_TRUE(entry.ok()) << entry.status();
    ASSERT_TRUE(entry->has_value()) << "no entry to tamper with";
    std::string bytes = **entry;
    const size_t at = bytes.find("native code of ");
    ASSERT_NE(at, std::string::npos);
    bytes[at] = 'N';
    ASSERT_TRUE(client->Set(redis_key, bytes, absl::Hours(1)).ok());
  }

  // The kernel entries in Redis now.
  size_t KernelEntries() {
    absl::StatusOr<std::vector<std::string>> keys =
        Client()->ScanKeys("pto:kernel:*");
    EXPECT_TRUE(keys.ok()) << keys.status();
    return keys.ok() ? keys->size() : 0;
  }

  // The cluster's generation record; -1 when absent.
  int64_t SharedGeneration() {
    absl::StatusOr<std::optional<std::string>> value =
        Client()->Get("pto:generation");
    if (!value.ok() || !value->has_value()) return -1;
    return std::stoll(**value);
  }
};

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST_F(RedisTierTest, AKernelCompiledOnOneReplicaIsAHitOnAnother) {
  Replica a, b;
  Start(&a);
  Start(&b);
  absl::StatusOr<pto::v1::CompileResponse> first = a.Compile("kernel-1");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->cache_status(), pto::v1::CACHE_STATUS_MISS);
  a.tier().WaitForWrites();
  EXPECT_EQ(a.tier().stats().writes, 1u);

  // The entry: under its key, with the TTL, verifiable with the cluster key.
  const std::string redis_key = a.tier().RedisKey(first->key());
  auto client = Client();
  absl::StatusOr<std::optional<std::string>> entry = client->Get(redis_key);
  ASSERT_TRUE(entry.ok() && entry->has_value());
  EXPECT_TRUE(pto::server::DecodeRedisEntry(kClusterKey, first->key(), **entry)
                  .ok());
  absl::StatusOr<pto::server::redis::Reply> pttl =
      client->Command(redis_key, {"PTTL", redis_key});
  ASSERT_TRUE(pttl.ok());
  EXPECT_GT(pttl->integer, 0);
  EXPECT_LE(pttl->integer, 3600 * 1000);

  absl::StatusOr<pto::v1::CompileResponse> second = b.Compile("kernel-1");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_EQ(b.compiles, 0);
  EXPECT_EQ(second->binary().native_payload(), FakePayload(first->key()));
  EXPECT_EQ(second->binary().signature(), first->binary().signature());
  EXPECT_EQ(b.tier().stats().hits, 1u);
  EXPECT_TRUE(Has(b.Metrics(),
                  "pto_redis_operations_total{op=\"get\",result=\"hit\"} 1"))
      << b.Metrics();
  EXPECT_TRUE(Has(b.Metrics(), "pto_cache_tier_hits_total{tier=\"redis\"} 1"));
  // Written back to B's RocksDB: after a restart it is a hit from there.
  EXPECT_EQ(b.server->store_stats().entries, 1u);
  Start(&b);
  absl::StatusOr<pto::v1::CompileResponse> third = b.Compile("kernel-1");
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_EQ(b.tier().stats().hits, 0u);
  EXPECT_TRUE(
      Has(b.Metrics(), "pto_cache_tier_hits_total{tier=\"rocksdb\"} 1"));
  ASSERT_TRUE(b.Compile("kernel-1").ok());
  EXPECT_TRUE(Has(b.Metrics(), "pto_cache_tier_hits_total{tier=\"memory\"} 1"));
  EXPECT_EQ(b.compiles, 0);
}

TEST_F(RedisTierTest, ATamperedEntryIsRefusedDeletedCountedAndRecompiled) {
  Replica a, b;
  Start(&a);
  Start(&b);
  absl::StatusOr<pto::v1::CompileResponse> first = a.Compile("kernel-2");
  ASSERT_TRUE(first.ok()) << first.status();
  a.tier().WaitForWrites();
  const std::string redis_key = a.tier().RedisKey(first->key());
  Tamper(redis_key);

  absl::StatusOr<pto::v1::CompileResponse> second = b.Compile("kernel-2");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(b.compiles, 1);
  EXPECT_EQ(second->binary().native_payload(), FakePayload(first->key()));
  EXPECT_EQ(b.tier().stats().corrupt, 1u);
  EXPECT_EQ(b.tier().stats().hits, 0u);
  EXPECT_TRUE(Has(b.Metrics(), "pto_redis_corrupt_entries_total 1"))
      << b.Metrics();
  // B deleted the bad entry, then shared its own compile: good again.
  b.tier().WaitForWrites();
  absl::StatusOr<std::optional<std::string>> entry = Client()->Get(redis_key);
  ASSERT_TRUE(entry.ok() && entry->has_value());
  EXPECT_TRUE(pto::server::DecodeRedisEntry(kClusterKey, first->key(), **entry)
                  .ok());

  // Tampered again and read by the tier alone: refused and deleted.
  Tamper(redis_key);
  EXPECT_TRUE(absl::IsNotFound(a.tier().Get(first->key()).status()));
  a.tier().WaitForWrites();
  entry = Client()->Get(redis_key);
  ASSERT_TRUE(entry.ok());
  EXPECT_FALSE(entry->has_value());
}

TEST_F(RedisTierTest, AnEntryFromAnotherSigningKeyIsNeverServed) {
  Replica stranger, b;
  Start(&stranger, "a-different-signing-key-0123456789abcdef");
  Start(&b);
  absl::StatusOr<pto::v1::CompileResponse> first =
      stranger.Compile("kernel-3");
  ASSERT_TRUE(first.ok()) << first.status();
  stranger.tier().WaitForWrites();

  absl::StatusOr<pto::v1::CompileResponse> second = b.Compile("kernel-3");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(b.compiles, 1);
  EXPECT_EQ(b.tier().stats().corrupt, 1u);
  EXPECT_NE(second->binary().signature(), first->binary().signature());
}

TEST_F(RedisTierTest, WithRedisDownPtodServesAndCompilesThenRecovers) {
  Replica a;
  Start(&a);
  cluster().KillAll();

  absl::StatusOr<pto::v1::CompileResponse> miss = a.Compile("kernel-4");
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_EQ(miss->cache_status(), pto::v1::CACHE_STATUS_MISS);
  absl::StatusOr<pto::v1::CompileResponse> hit = a.Compile("kernel-4");
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_EQ(a.compiles, 1);
  a.tier().WaitForWrites();
  EXPECT_GT(a.tier().stats().errors, 0u);
  EXPECT_TRUE(Has(a.Metrics(), "pto_redis_up 0")) << a.Metrics();
  EXPECT_FALSE(Has(a.Metrics(),
                   "pto_redis_operations_total{op=\"set\",result=\"error\"} 0"));

  // Redis returns: new kernels are shared again, once the nodes' back-off
  // has passed.
  for (int i = 0; i < cluster().size(); ++i) {
    ASSERT_TRUE(cluster().Restart(i).ok());
  }
  ASSERT_TRUE(cluster().WaitUntilHealthy(absl::Seconds(30)).ok());
  const uint64_t writes = a.tier().stats().writes;
  std::string shared;
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  for (int i = 0; absl::Now() < give_up; ++i) {
    const std::string kernel = absl::StrCat("kernel-back-", i);
    ASSERT_TRUE(a.Compile(kernel).ok());
    a.tier().WaitForWrites();
    if (a.tier().stats().writes > writes) {
      shared = kernel;
      break;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_FALSE(shared.empty()) << "no write reached Redis after it returned";
  EXPECT_TRUE(Has(a.Metrics(), "pto_redis_up 1"));
  Replica b;
  Start(&b);
  absl::StatusOr<pto::v1::CompileResponse> from_redis = b.Compile(shared);
  ASSERT_TRUE(from_redis.ok()) << from_redis.status();
  EXPECT_EQ(from_redis->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_EQ(b.compiles, 0);
}

// Identical compiles at two replicas at once: one compiles, the other waits
// for its lease and serves the result.
TEST_F(RedisTierTest, TheSameKernelAtTwoReplicasAtOnceIsCompiledOnce) {
  Replica a, b;
  // The lease (1.5 s) is shorter than the compile (3 s): only renewal keeps
  // it.
  Start(&a, kClusterKey, absl::Seconds(3), absl::Milliseconds(1500));
  Start(&b, kClusterKey, absl::Seconds(3), absl::Milliseconds(1500));
  absl::StatusOr<pto::v1::CompileResponse> at_a, at_b;
  std::thread ta([&] { at_a = a.Compile("kernel-5"); });
  std::thread tb([&] { at_b = b.Compile("kernel-5"); });
  ta.join();
  tb.join();
  ASSERT_TRUE(at_a.ok()) << at_a.status();
  ASSERT_TRUE(at_b.ok()) << at_b.status();
  EXPECT_EQ(a.compiles + b.compiles, 1);
  EXPECT_EQ(at_a->binary().native_payload(), at_b->binary().native_payload());
  EXPECT_EQ(at_a->binary().native_payload(), FakePayload(at_a->key()));
  const std::string metrics = a.Metrics() + b.Metrics();
  EXPECT_TRUE(Has(metrics, "pto_redis_leases_total{result=\"taken\"} 1"))
      << metrics;
  EXPECT_TRUE(Has(metrics, "pto_redis_leases_total{result=\"waited\"} 1"))
      << metrics;
  // Released after the kernel was stored.
  a.tier().WaitForWrites();
  b.tier().WaitForWrites();
  EXPECT_EQ(a.tier().leases_held() + b.tier().leases_held(), 0u);
  absl::StatusOr<std::optional<std::string>> lease =
      Client()->Get(a.tier().LeaseKey(at_a->key()));
  ASSERT_TRUE(lease.ok());
  EXPECT_FALSE(lease->has_value());
}

// A lease whose holder died (no renewal): it expires and the waiting
// replica compiles.
TEST_F(RedisTierTest, ALeaseWhoseHolderVanishedExpiresAndAnotherCompiles) {
  Replica b;
  Start(&b);
  pto::v1::CompileRequest request;
  request.set_target("kernel-6");
  std::atomic<int> unused{0};
  const std::string key = *FakeBackend(&unused).Key(request);
  // The lease as a holder that then died would have left it.
  ASSERT_TRUE(*Client()->SetIfAbsent(b.tier().LeaseKey(key), "dead-holder",
                                     absl::Milliseconds(800)));
  absl::StatusOr<pto::v1::CompileResponse> r = b.Compile("kernel-6");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(b.compiles, 1);
  EXPECT_TRUE(Has(b.Metrics(), "pto_redis_leases_total{result=\"expired\"} 1"))
      << b.Metrics();
}

TEST_F(RedisTierTest, AFailedCompileReleasesItsLease) {
  Replica a;
  Start(&a);
  absl::StatusOr<pto::v1::CompileResponse> r =
      a.Compile("kernel-7", {{"fail", "1"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(a.compiles, 1);
  EXPECT_TRUE(Has(a.Metrics(), "pto_redis_leases_total{result=\"taken\"} 1"));
  a.tier().WaitForWrites();
  EXPECT_EQ(a.tier().leases_held(), 0u);
  pto::v1::CompileRequest request;
  request.set_target("kernel-7");
  (*request.mutable_options())["fail"] = "1";
  std::atomic<int> unused{0};
  const std::string key = *FakeBackend(&unused).Key(request);
  absl::StatusOr<std::optional<std::string>> lease =
      Client()->Get(a.tier().LeaseKey(key));
  ASSERT_TRUE(lease.ok());
  EXPECT_FALSE(lease->has_value());
}

TEST(RedisTierOptionsTest, TheTierNeedsASigningKey) {
  pto::server::RedisTierOptions options;
  options.cluster.seeds = {"127.0.0.1:1"};
  EXPECT_EQ(RedisTier::Create(options, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  PtodOptions ptod;
  ptod.address = "127.0.0.1:0";
  TempDir dir;
  ptod.cache_dir = dir.path();
  ptod.redis.cluster.seeds = {"127.0.0.1:1"};
  std::atomic<int> compiles{0};
  EXPECT_EQ(PtodServer::Start(ptod, std::make_unique<FakeBackend>(&compiles))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// Admin invalidate on one replica: every replica starts the new generation
// within its sync interval, and none serves the old kernels from any tier,
// Redis included (a fresh replica too).
TEST_F(RedisTierTest, AnInvalidateOnOneReplicaReachesEveryReplica) {
  Replica a, b;
  Start(&a);
  Start(&b);
  ASSERT_TRUE(a.Compile("kernel-old-1").ok());
  ASSERT_TRUE(a.Compile("kernel-old-2").ok());
  a.tier().WaitForWrites();
  absl::StatusOr<pto::v1::CompileResponse> shared = b.Compile("kernel-old-1");
  ASSERT_TRUE(shared.ok()) << shared.status();
  ASSERT_EQ(shared->cache_status(), pto::v1::CACHE_STATUS_HIT);
  ASSERT_EQ(b.compiles, 0);

  absl::StatusOr<pto::v1::AdminResponse> invalidated =
      a.Admin(pto::v1::ADMIN_ACTION_INVALIDATE);
  ASSERT_TRUE(invalidated.ok()) << invalidated.status();
  EXPECT_TRUE(invalidated->cluster_notified());
  const uint64_t generation = invalidated->generation();
  EXPECT_GE(generation, 1u);
  EXPECT_EQ(SharedGeneration(), static_cast<int64_t>(generation));

  // B held kernel-old-1 in memory and RocksDB: it compiles it again.
  ASSERT_TRUE(b.ReachesGeneration(generation));
  absl::StatusOr<pto::v1::CompileResponse> again = b.Compile("kernel-old-1");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(b.compiles, 1);

  // A fresh replica adopts the generation at start: kernel-old-2's entry is
  // still in Redis under the old generation, and is not served.
  Replica c;
  Start(&c);
  ASSERT_TRUE(c.ReachesGeneration(generation));
  absl::StatusOr<pto::v1::CompileResponse> fresh = c.Compile("kernel-old-2");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(fresh->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(c.compiles, 1);

  // The new generation is shared as before: B's recompile is a hit at C.
  b.tier().WaitForWrites();
  absl::StatusOr<pto::v1::CompileResponse> hit = c.Compile("kernel-old-1");
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_EQ(c.compiles, 1);

  // A restarted replica keeps the generation.
  Start(&b);
  EXPECT_EQ(b.Generation(), generation);
}

// Admin purge on one replica: its entries and every kernel entry in Redis
// are deleted, and the other replicas stop serving what they hold.
TEST_F(RedisTierTest, APurgeDeletesTheRedisEntriesAndReachesEveryReplica) {
  Replica a, b;
  Start(&a);
  Start(&b);
  ASSERT_TRUE(a.Compile("kernel-p1").ok());
  ASSERT_TRUE(a.Compile("kernel-p2").ok());
  a.tier().WaitForWrites();
  ASSERT_EQ(b.Compile("kernel-p1")->cache_status(), pto::v1::CACHE_STATUS_HIT);
  ASSERT_EQ(KernelEntries(), 2u);

  absl::StatusOr<pto::v1::AdminResponse> purged =
      a.Admin(pto::v1::ADMIN_ACTION_PURGE);
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(purged->entries(), 0u);
  EXPECT_EQ(purged->shared_entries_deleted(), 2u);
  EXPECT_TRUE(purged->cluster_notified());
  EXPECT_EQ(KernelEntries(), 0u);

  ASSERT_TRUE(b.ReachesGeneration(purged->generation()));
  absl::StatusOr<pto::v1::CompileResponse> again = b.Compile("kernel-p1");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(b.compiles, 1);
  absl::StatusOr<pto::v1::CompileResponse> recompiled = a.Compile("kernel-p2");
  ASSERT_TRUE(recompiled.ok()) << recompiled.status();
  EXPECT_EQ(recompiled->cache_status(), pto::v1::CACHE_STATUS_MISS);
}

// Invalidate while Redis is down: done on this replica, the response says
// the cluster was not told, and the replica publishes the generation once
// Redis is back (a restarted cluster has lost the record: it is written
// back), so the others adopt it.
TEST_F(RedisTierTest, AnInvalidateWhileRedisIsDownReachesTheOthersLater) {
  Replica a, b;
  Start(&a);
  Start(&b);
  cluster().KillAll();
  absl::StatusOr<pto::v1::AdminResponse> invalidated =
      a.Admin(pto::v1::ADMIN_ACTION_INVALIDATE);
  ASSERT_TRUE(invalidated.ok()) << invalidated.status();
  EXPECT_FALSE(invalidated->cluster_notified());
  const uint64_t generation = invalidated->generation();
  EXPECT_EQ(b.Generation(), 0u);

  for (int i = 0; i < cluster().size(); ++i) {
    ASSERT_TRUE(cluster().Restart(i).ok());
  }
  ASSERT_TRUE(cluster().WaitUntilHealthy(absl::Seconds(30)).ok());
  EXPECT_TRUE(b.ReachesGeneration(generation, absl::Seconds(20)))
      << "B's generation: " << b.Generation();
  EXPECT_EQ(SharedGeneration(), static_cast<int64_t>(generation));
}

}  // namespace
}  // namespace pto::testing
