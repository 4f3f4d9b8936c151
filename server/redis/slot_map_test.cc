#include "server/redis/slot_map.h"

#include "gtest/gtest.h"
#include "server/redis/key_slot.h"
#include "server/redis/reply.h"

namespace pto::server::redis {
namespace {

Reply Node(const std::string& host, int64_t port, const std::string& id) {
  return Reply::Array({Reply::String(host), Reply::Integer(port),
                       Reply::String(id), Reply::Array({})});
}

Reply Range(int64_t first, int64_t last, std::vector<Reply> nodes) {
  std::vector<Reply> e = {Reply::Integer(first), Reply::Integer(last)};
  for (Reply& n : nodes) e.push_back(std::move(n));
  return Reply::Array(std::move(e));
}

// A three-shard cluster as CLUSTER SLOTS describes it.
Reply ThreeShards() {
  return Reply::Array({
      Range(0, 5460, {Node("10.0.0.1", 7000, "a"), Node("10.0.0.4", 7003, "d")}),
      Range(5461, 10922,
            {Node("10.0.0.2", 7001, "b"), Node("10.0.0.5", 7004, "e")}),
      Range(10923, 16383,
            {Node("10.0.0.3", 7002, "c"), Node("10.0.0.6", 7005, "f")}),
  });
}

TEST(SlotMapTest, RoutesEachSlotToItsShard) {
  absl::StatusOr<SlotMap> map = SlotMap::FromClusterSlots(ThreeShards(), "x");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->assigned_slots(), kSlots);
  EXPECT_EQ(map->ShardFor(0)->primary, "10.0.0.1:7000");
  EXPECT_EQ(map->ShardFor(5460)->primary, "10.0.0.1:7000");
  EXPECT_EQ(map->ShardFor(5461)->primary, "10.0.0.2:7001");
  EXPECT_EQ(map->ShardFor(KeySlot("foo"))->primary, "10.0.0.3:7002");
  ASSERT_EQ(map->ShardFor(KeySlot("foo"))->replicas.size(), 1u);
  EXPECT_EQ(map->ShardFor(KeySlot("foo"))->replicas[0], "10.0.0.6:7005");
  EXPECT_EQ(map->Nodes().size(), 6u);
  EXPECT_EQ(map->ShardFor(-1), nullptr);
  EXPECT_EQ(map->ShardFor(kSlots), nullptr);
}

TEST(SlotMapTest, EmptyHostIsTheNodeAskedAndUnknownEndpointsAreSkipped) {
  Reply reply = Reply::Array({
      Range(0, 100, {Node("", 7000, "a"), Node("?", 7003, "d")}),
  });
  absl::StatusOr<SlotMap> map = SlotMap::FromClusterSlots(reply, "10.1.1.1");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->ShardFor(50)->primary, "10.1.1.1:7000");
  EXPECT_TRUE(map->ShardFor(50)->replicas.empty());
  EXPECT_EQ(map->ShardFor(101), nullptr);
  EXPECT_EQ(map->assigned_slots(), 101);
}

TEST(SlotMapTest, RangesOfOnePrimaryShareAShard) {
  Reply reply = Reply::Array({
      Range(0, 10, {Node("h", 1, "a")}),
      Range(11, 20, {Node("h", 2, "b")}),
      Range(21, 30, {Node("h", 1, "a")}),
  });
  absl::StatusOr<SlotMap> map = SlotMap::FromClusterSlots(reply, "x");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->shards().size(), 2u);
  EXPECT_EQ(map->ShardFor(25), map->ShardFor(5));
}

TEST(SlotMapTest, Ipv6HostsAreBracketed) {
  Reply reply = Reply::Array({Range(0, 0, {Node("::1", 7000, "a")})});
  absl::StatusOr<SlotMap> map = SlotMap::FromClusterSlots(reply, "x");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->ShardFor(0)->primary, "[::1]:7000");
}

TEST(SlotMapTest, MalformedRepliesAreRefused) {
  const std::vector<Reply> bad = {
      Reply::String("not an array"),
      Reply::Array({Reply::Integer(1)}),
      Reply::Array({Range(0, kSlots, {Node("h", 1, "a")})}),
      Reply::Array({Range(-1, 3, {Node("h", 1, "a")})}),
      Reply::Array({Range(9, 3, {Node("h", 1, "a")})}),
      Reply::Array({Range(0, 3, {Node("h", 0, "a")})}),
      Reply::Array({Range(0, 3, {Node("h", 65536, "a")})}),
      Reply::Array({Range(0, 3, {Node("?", 7000, "a")})}),
      Reply::Array({Range(0, 3, {Reply::Array({Reply::String("h")})})}),
      Reply::Array({Range(0, 3, {Reply::Integer(5)})}),
  };
  for (const Reply& reply : bad) {
    EXPECT_EQ(SlotMap::FromClusterSlots(reply, "x").status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

TEST(SlotMapTest, MovedPatchesOneSlot) {
  absl::StatusOr<SlotMap> map = SlotMap::FromClusterSlots(ThreeShards(), "x");
  ASSERT_TRUE(map.ok());
  map->Move(100, "10.0.0.2:7001");
  EXPECT_EQ(map->ShardFor(100)->primary, "10.0.0.2:7001");
  EXPECT_EQ(map->ShardFor(101)->primary, "10.0.0.1:7000");
  map->Move(200, "10.9.9.9:7009");  // a primary not in the map yet
  EXPECT_EQ(map->ShardFor(200)->primary, "10.9.9.9:7009");
  EXPECT_EQ(map->shards().size(), 4u);
}

TEST(RedirectTest, ParsesMovedAndAsk) {
  std::optional<Redirect> moved = ParseRedirect("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(moved.has_value());
  EXPECT_FALSE(moved->ask);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->address, "127.0.0.1:6381");
  std::optional<Redirect> ask = ParseRedirect("ASK 3999 [::1]:6381");
  ASSERT_TRUE(ask.has_value());
  EXPECT_TRUE(ask->ask);
  EXPECT_EQ(ask->address, "[::1]:6381");
}

TEST(RedirectTest, OtherErrorsAreNotRedirects) {
  EXPECT_FALSE(ParseRedirect("ERR unknown command").has_value());
  EXPECT_FALSE(ParseRedirect("MOVED 16384 h:1").has_value());
  EXPECT_FALSE(ParseRedirect("MOVED -1 h:1").has_value());
  EXPECT_FALSE(ParseRedirect("MOVED 1 h").has_value());
  EXPECT_FALSE(ParseRedirect("MOVED 1 h:0").has_value());
  EXPECT_FALSE(ParseRedirect("MOVED x h:1").has_value());
  EXPECT_FALSE(ParseRedirect("MOVED 1").has_value());
  EXPECT_TRUE(IsTransientError("TRYAGAIN Multiple keys request"));
  EXPECT_TRUE(IsTransientError("CLUSTERDOWN The cluster is down"));
  EXPECT_FALSE(IsTransientError("WRONGTYPE Operation against a key"));
}

TEST(SplitAddressTest, HostAndPort) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(SplitAddress("redis-0.redis:6379", &host, &port));
  EXPECT_EQ(host, "redis-0.redis");
  EXPECT_EQ(port, 6379);
  ASSERT_TRUE(SplitAddress("[fe80::1]:7000", &host, &port));
  EXPECT_EQ(host, "fe80::1");
  EXPECT_FALSE(SplitAddress("nohost", &host, &port));
  EXPECT_FALSE(SplitAddress(":7000", &host, &port));
  EXPECT_FALSE(SplitAddress("h:70000", &host, &port));
  EXPECT_FALSE(SplitAddress("h:", &host, &port));
}

}  // namespace
}  // namespace pto::server::redis
