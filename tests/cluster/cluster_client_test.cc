// The Redis Cluster client against a real 3-primary, 3-replica cluster.
#include "server/redis/cluster_client.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/redis/key_slot.h"
#include "tests/cluster/cluster_suite.h"

namespace pto::server::redis {
namespace {

using pto::testing::RedisCluster;

class ClusterClientTest : public pto::testing::RedisClusterSuite {
 protected:
  ClusterOptions Options() {
    ClusterOptions options;
    options.seeds = {cluster().seeds()[0]};
    options.connection = cluster().connection_options();
    options.connection.connect_timeout = absl::Milliseconds(500);
    options.connection.command_timeout = absl::Milliseconds(500);
    return options;
  }



  // The calls of `command` node `node` has served (INFO commandstats).
  int64_t CommandCalls(int node, const std::string& command) {
    const std::string info = On(node, {"INFO", "commandstats"}).str;
    const std::string prefix = absl::StrCat("cmdstat_", command, ":calls=");
    const size_t at = info.find(prefix);
    if (at == std::string::npos) return 0;
    return std::stoll(info.substr(at + prefix.size()));
  }

  bool IsPrimary(int node) {
    Reply role = On(node, {"ROLE"});
    return !role.elements.empty() && role.elements[0].str == "master";
  }

};

TEST_F(ClusterClientTest, KeysSpreadOverEveryPrimaryAndReadBack) {
  std::unique_ptr<ClusterClient> client = NewClient(Options());
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(client
                    ->Set(absl::StrCat("key-", i), absl::StrCat("value-", i),
                          absl::Minutes(5))
                    .ok());
  }
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<std::optional<std::string>> v =
        client->Get(absl::StrCat("key-", i));
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_TRUE(v->has_value());
    EXPECT_EQ(**v, absl::StrCat("value-", i));
  }
  absl::StatusOr<std::optional<std::string>> absent = client->Get("no-such");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  // Routed by slot: every primary holds some keys, and no command needed a
  // redirect once the map was loaded.
  int primaries = 0;
  for (int i = 0; i < cluster().size(); ++i) {
    if (!IsPrimary(i)) continue;
    ++primaries;
    EXPECT_GT(On(i, {"DBSIZE"}).integer, 0) << cluster().address(i);
  }
  EXPECT_EQ(primaries, 3);
  EXPECT_EQ(client->stats().moved, 0u);
  EXPECT_EQ(client->slot_map()->shards().size(), 3u);
  // Connections are pooled: far fewer than the 400 commands.
  EXPECT_LE(client->pool().connections_opened(), 12u);
}

TEST_F(ClusterClientTest, ScanKeysFindsTheMatchingKeysOfEveryPrimary) {
  std::unique_ptr<ClusterClient> client = NewClient(Options());
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(
        client->Set(absl::StrCat("scan:", i), "v", absl::Minutes(5)).ok());
  }
  ASSERT_TRUE(client->Set("other:1", "v", absl::Minutes(5)).ok());
  absl::StatusOr<std::vector<std::string>> keys =
      client->ScanKeys("scan:*", /*count=*/7);
  ASSERT_TRUE(keys.ok()) << keys.status();
  const std::set<std::string> found(keys->begin(), keys->end());
  EXPECT_EQ(found.size(), 60u);
  EXPECT_EQ(keys->size(), 60u);  // replicas are not scanned twice
  EXPECT_EQ(found.count("other:1"), 0u);
  for (int i = 0; i < 60; ++i) {
    EXPECT_EQ(found.count(absl::StrCat("scan:", i)), 1u) << i;
  }
}

TEST_F(ClusterClientTest, ExpiryAndSetIfAbsent) {
  std::unique_ptr<ClusterClient> client = NewClient(Options());
  ASSERT_NE(client, nullptr);
  absl::StatusOr<bool> first =
      client->SetIfAbsent("lease", "token-a", absl::Minutes(1));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(*first);
  absl::StatusOr<bool> second =
      client->SetIfAbsent("lease", "token-b", absl::Minutes(1));
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  EXPECT_EQ(**client->Get("lease"), "token-a");
  ASSERT_TRUE(client->Set("ttl", "v", absl::Minutes(3)).ok());
  absl::StatusOr<Reply> pttl = client->Command("ttl", {"PTTL", "ttl"});
  ASSERT_TRUE(pttl.ok());
  EXPECT_GT(pttl->integer, 0);
  EXPECT_LE(pttl->integer, 180000);
  EXPECT_TRUE(*client->Del("ttl"));
  EXPECT_FALSE(*client->Del("ttl"));
}

TEST_F(ClusterClientTest, WrongOrMissingCredentialsAreRefused) {
  ClusterOptions wrong = Options();
  wrong.connection.password = "not-the-password";
  std::unique_ptr<ClusterClient> client = NewClient(wrong);
  ASSERT_NE(client, nullptr);
  absl::StatusOr<std::optional<std::string>> v = client->Get("k");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("AUTH"), std::string::npos)
      << v.status();

  ClusterOptions none = Options();
  none.connection.user.clear();
  none.connection.password.clear();
  client = NewClient(none);
  absl::Status refreshed = client->Refresh();
  ASSERT_FALSE(refreshed.ok());
  EXPECT_NE(refreshed.message().find("NOAUTH"), std::string::npos)
      << refreshed;
}

TEST_F(ClusterClientTest, ReadsGoToReplicasWhenConfigured) {
  std::unique_ptr<ClusterClient> writer = NewClient(Options());
  ASSERT_NE(writer, nullptr);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(writer->Set(absl::StrCat("r-", i), "v", absl::Minutes(5)).ok());
  }
  for (int i = 0; i < cluster().size(); ++i) {
    // Replication is asynchronous: every write reaches the replicas first.
    if (IsPrimary(i)) EXPECT_EQ(On(i, {"WAIT", "1", "5000"}).integer, 1);
    On(i, {"CONFIG", "RESETSTAT"});
  }
  ClusterOptions options = Options();
  options.read_from_replicas = true;
  std::unique_ptr<ClusterClient> reader = NewClient(options);
  ASSERT_NE(reader, nullptr);
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<std::optional<std::string>> v =
        reader->Get(absl::StrCat("r-", i));
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_TRUE(v->has_value()) << i;
  }
  int64_t on_replicas = 0;
  int64_t on_primaries = 0;
  for (int i = 0; i < cluster().size(); ++i) {
    (IsPrimary(i) ? on_primaries : on_replicas) += CommandCalls(i, "get");
  }
  EXPECT_EQ(on_replicas, 50);
  EXPECT_EQ(on_primaries, 0);
  // Writes still go to the primaries.
  ASSERT_TRUE(reader->Set("w", "v", absl::Minutes(1)).ok());
}

// Moves `key`'s slot from its primary to another one step by step, checking
// that the client follows ASK while the slot migrates and MOVED after.
TEST_F(ClusterClientTest, FollowsAskDuringMigrationAndMovedAfter) {
  std::unique_ptr<ClusterClient> client = NewClient(Options());
  ASSERT_NE(client, nullptr);
  const std::string key = "{migrating}kernel";
  const std::string moved_key = "{migrating}other";
  ASSERT_TRUE(client->Set(key, "payload", absl::Minutes(5)).ok());
  ASSERT_TRUE(client->Set(moved_key, "other", absl::Minutes(5)).ok());
  const int slot = KeySlot(key);
  const int source =
      cluster().IndexOf(client->slot_map()->ShardFor(slot)->primary);
  ASSERT_GE(source, 0);
  int target = -1;
  for (int i = 0; i < cluster().size(); ++i) {
    if (i != source && IsPrimary(i)) target = i;
  }
  ASSERT_GE(target, 0);
  const std::string source_id = On(source, {"CLUSTER", "MYID"}).str;
  const std::string target_id = On(target, {"CLUSTER", "MYID"}).str;
  const std::string s = absl::StrCat(slot);
  ASSERT_NE(On(target, {"CLUSTER", "SETSLOT", s, "IMPORTING", source_id}).type,
            Reply::kError);
  ASSERT_NE(On(source, {"CLUSTER", "SETSLOT", s, "MIGRATING", target_id}).type,
            Reply::kError);
  // Only `key` moves now: the source answers ASK for it.
  std::string host;
  int port = 0;
  ASSERT_TRUE(SplitAddress(cluster().address(target), &host, &port));
  Reply migrated = On(source, {"MIGRATE", host, absl::StrCat(port), "", "0",
                               "5000", "AUTH2", "ptod", "test-redis-password",
                               "KEYS", key});
  ASSERT_EQ(migrated.type, Reply::kStatus) << migrated.str;

  absl::StatusOr<std::optional<std::string>> v = client->Get(key);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ(**v, "payload");
  EXPECT_GE(client->stats().ask, 1u);
  // ASK does not change the map.
  EXPECT_EQ(client->slot_map()->ShardFor(slot)->primary,
            cluster().address(source));
  EXPECT_EQ(**client->Get(moved_key), "other");  // still on the source

  // Finish the migration: the rest of the slot moves, then its owner.
  Reply rest = On(source, {"MIGRATE", host, absl::StrCat(port), "", "0",
                           "5000", "AUTH2", "ptod", "test-redis-password",
                           "KEYS", moved_key});
  ASSERT_EQ(rest.type, Reply::kStatus) << rest.str;
  for (int i = 0; i < cluster().size(); ++i) {
    if (IsPrimary(i)) On(i, {"CLUSTER", "SETSLOT", s, "NODE", target_id});
  }
  const uint64_t moved_before = client->stats().moved;
  v = client->Get(moved_key);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ(**v, "other");
  EXPECT_GT(client->stats().moved, moved_before);
  EXPECT_EQ(client->slot_map()->ShardFor(slot)->primary,
            cluster().address(target));
}

TEST_F(ClusterClientTest, FollowsAFailoverWhenAPrimaryDies) {
  std::unique_ptr<ClusterClient> client = NewClient(Options());
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(
        client->Set(absl::StrCat("f-", i), absl::StrCat(i), absl::Minutes(5))
            .ok());
  }
  const std::string key = "f-0";
  const std::string old_primary =
      client->slot_map()->ShardFor(KeySlot(key))->primary;
  const int victim = cluster().IndexOf(old_primary);
  ASSERT_GE(victim, 0);
  EXPECT_EQ(On(victim, {"WAIT", "1", "5000"}).integer, 1);
  cluster().Kill(victim);

  // Until a replica is promoted reads of that slot fail (fast, the node is
  // marked down); afterwards they succeed. Never a wrong value.
  absl::StatusOr<std::optional<std::string>> v;
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  do {
    v = client->Get(key);
    if (v.ok()) break;
    EXPECT_TRUE(absl::IsUnavailable(v.status()) ||
                absl::IsDeadlineExceeded(v.status()))
        << v.status();
    absl::SleepFor(absl::Milliseconds(50));
  } while (absl::Now() < give_up);
  ASSERT_TRUE(v.ok()) << "no failover: " << v.status();
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ(**v, "0");
  EXPECT_NE(client->slot_map()->ShardFor(KeySlot(key))->primary, old_primary);
  for (int i = 0; i < 30; ++i) {
    absl::StatusOr<std::optional<std::string>> each =
        client->Get(absl::StrCat("f-", i));
    ASSERT_TRUE(each.ok()) << each.status();
    EXPECT_EQ(each->value_or(""), absl::StrCat(i));
  }
  // The old primary rejoins as a replica.
  ASSERT_TRUE(cluster().Restart(victim).ok());
}

TEST_F(ClusterClientTest, ClusterDownFailsFastAndRecovers) {
  std::unique_ptr<ClusterClient> client = NewClient(Options());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Set("k", "v", absl::Minutes(5)).ok());
  cluster().KillAll();
  absl::StatusOr<std::optional<std::string>> v = client->Get("k");
  EXPECT_TRUE(absl::IsUnavailable(v.status())) << v.status();
  // A refresh tries every node, and each is then in its back-off: the next
  // call fails without connecting anywhere.
  EXPECT_TRUE(absl::IsUnavailable(client->Refresh()));
  for (const std::string& node : cluster().seeds()) {
    EXPECT_TRUE(client->pool().IsDown(node)) << node;
  }
  const uint64_t opened = client->pool().connections_opened();
  EXPECT_FALSE(client->Get("k").ok());
  EXPECT_EQ(client->pool().connections_opened(), opened);

  for (int i = 0; i < cluster().size(); ++i) {
    ASSERT_TRUE(cluster().Restart(i).ok());
  }
  ASSERT_TRUE(cluster().WaitUntilHealthy(absl::Seconds(30)).ok());
  absl::Status set;
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  do {
    set = client->Set("k2", "v2", absl::Minutes(5));
    if (set.ok()) break;
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < give_up);
  ASSERT_TRUE(set.ok()) << set;
  EXPECT_EQ(client->Get("k2")->value_or(""), "v2");
}

TEST(ClusterClientOptionsTest, SeedsMustBeAddresses) {
  ClusterOptions options;
  EXPECT_EQ(ClusterClient::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.seeds = {"localhost"};
  EXPECT_EQ(ClusterClient::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pto::server::redis
