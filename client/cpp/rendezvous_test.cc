// Rendezvous ordering (stable, balanced, minimal movement), the routing key,
// and address specs.
#include "client/cpp/rendezvous.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cpp/replicas.h"
#include "gtest/gtest.h"

namespace pto::client {
namespace {

std::vector<std::string> Replicas(int n) {
  std::vector<std::string> addresses;
  for (int i = 0; i < n; ++i) {
    addresses.push_back(absl::StrCat("10.0.0.", i + 1, ":7070"));
  }
  return addresses;
}

std::string Key(int i) { return absl::StrCat("kernel-", i); }

TEST(RendezvousTest, OrderIsAPermutationAndStable) {
  const std::vector<std::string> replicas = Replicas(5);
  for (int k = 0; k < 50; ++k) {
    std::vector<size_t> order = RendezvousOrder(replicas, Key(k));
    std::vector<size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<size_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(order, RendezvousOrder(replicas, Key(k)));
    // Weights descend along the order.
    for (size_t i = 1; i < order.size(); ++i) {
      EXPECT_GE(RendezvousWeight(replicas[order[i - 1]], Key(k)),
                RendezvousWeight(replicas[order[i]], Key(k)));
    }
  }
}

TEST(RendezvousTest, OrderDoesNotDependOnTheListsOrder) {
  // Clients that list (or resolve) the replicas in another order agree.
  const std::vector<std::string> replicas = Replicas(4);
  std::vector<std::string> reversed(replicas.rbegin(), replicas.rend());
  for (int k = 0; k < 50; ++k) {
    std::vector<size_t> a = RendezvousOrder(replicas, Key(k));
    std::vector<size_t> b = RendezvousOrder(reversed, Key(k));
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(replicas[a[i]], reversed[b[i]]) << "key " << k;
    }
  }
}

TEST(RendezvousTest, KeysSpreadEvenly) {
  const std::vector<std::string> replicas = Replicas(3);
  std::map<size_t, int> first;
  const int keys = 30000;
  for (int k = 0; k < keys; ++k) ++first[RendezvousOrder(replicas, Key(k))[0]];
  ASSERT_EQ(first.size(), 3u);
  for (const auto& [replica, count] : first) {
    // 10000 expected; a binomial's standard deviation is about 82.
    EXPECT_GT(count, 9500) << replicas[replica];
    EXPECT_LT(count, 10500) << replicas[replica];
  }
}

TEST(RendezvousTest, RemovingAReplicaMovesOnlyItsKeysToTheirSecondChoice) {
  const std::vector<std::string> all = Replicas(4);
  std::vector<std::string> without = all;
  const std::string removed = all[2];
  without.erase(without.begin() + 2);
  int moved = 0;
  const int keys = 4000;
  for (int k = 0; k < keys; ++k) {
    std::vector<size_t> before = RendezvousOrder(all, Key(k));
    const std::string& was = all[before[0]];
    const std::string& now = without[RendezvousOrder(without, Key(k))[0]];
    if (was == removed) {
      ++moved;
      EXPECT_EQ(now, all[before[1]]) << "key " << k;
    } else {
      EXPECT_EQ(now, was) << "key " << k;
    }
  }
  EXPECT_GT(moved, keys / 4 - keys / 20);
  EXPECT_LT(moved, keys / 4 + keys / 20);
}

TEST(RendezvousTest, AddingAReplicaTakesKeysOnlyForItself) {
  const std::vector<std::string> three = Replicas(3);
  const std::vector<std::string> four = Replicas(4);
  for (int k = 0; k < 2000; ++k) {
    const std::string& was = three[RendezvousOrder(three, Key(k))[0]];
    const std::string& now = four[RendezvousOrder(four, Key(k))[0]];
    if (now != four[3]) EXPECT_EQ(now, was) << "key " << k;
  }
}

TEST(RoutingKeyTest, EqualRequestsHaveEqualKeysWhateverTheMapOrder) {
  pto::v1::CompileRequest a;
  a.set_target("host");
  a.mutable_graph()->set_name("k");
  (*a.mutable_options())["opt_level"] = "2";
  (*a.mutable_options())["fast_math"] = "1";
  pto::v1::CompileRequest b;
  b.set_target("host");
  b.mutable_graph()->set_name("k");
  (*b.mutable_options())["fast_math"] = "1";
  (*b.mutable_options())["opt_level"] = "2";
  EXPECT_EQ(RoutingKey(a), RoutingKey(b));
  EXPECT_EQ(RoutingKey(a).size(), 32u);
  // A parsed copy (what the Python client hands over) routes the same.
  pto::v1::CompileRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(a.SerializeAsString()));
  EXPECT_EQ(RoutingKey(parsed), RoutingKey(a));
  // Target, options and graph all count.
  b.set_target("host-x86_64-v3");
  EXPECT_NE(RoutingKey(a), RoutingKey(b));
  b = a;
  (*b.mutable_options())["opt_level"] = "3";
  EXPECT_NE(RoutingKey(a), RoutingKey(b));
  b = a;
  b.mutable_graph()->set_name("k2");
  EXPECT_NE(RoutingKey(a), RoutingKey(b));
}

TEST(ReplicasTest, ListsAndSingleAddresses) {
  auto one = ResolveReplicas("ptod:7070");
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].address, "ptod:7070");
  EXPECT_EQ((*one)[0].tls_name, "");
  auto list = ResolveReplicas("a:1, b:2,a:1,[::1]:3");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 3u);  // the duplicate dropped
  EXPECT_EQ((*list)[0].address, "a:1");
  EXPECT_EQ((*list)[1].address, "b:2");
  EXPECT_EQ((*list)[2].address, "[::1]:3");
}

TEST(ReplicasTest, DnsEntriesExpandToEveryAddress) {
  auto replicas = ResolveReplicas("dns:///localhost:7070");
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  ASSERT_FALSE(replicas->empty());
  std::set<std::string> addresses;
  for (const Replica& r : *replicas) {
    addresses.insert(r.address);
    EXPECT_EQ(r.tls_name, "localhost");
  }
  EXPECT_TRUE(addresses.count("127.0.0.1:7070") || addresses.count("[::1]:7070"))
      << *addresses.begin();
  auto literal = ResolveReplicas("dns:///127.0.0.1:9,10.1.2.3:9");
  ASSERT_TRUE(literal.ok()) << literal.status();
  ASSERT_EQ(literal->size(), 2u);
  EXPECT_EQ((*literal)[0].address, "127.0.0.1:9");
  EXPECT_TRUE(HasDnsEntry("a:1,dns:///b:2"));
  EXPECT_FALSE(HasDnsEntry("a:1,b:2"));
}

TEST(ReplicasTest, BadSpecsAreClearErrors) {
  auto empty = ResolveReplicas("");
  EXPECT_TRUE(absl::IsInvalidArgument(empty.status())) << empty.status();
  auto hole = ResolveReplicas("a:1,,b:2");
  EXPECT_TRUE(absl::IsInvalidArgument(hole.status())) << hole.status();
  EXPECT_NE(hole.status().message().find("empty entry"), std::string::npos);
  auto no_port = ResolveReplicas("a:1,ptod");
  EXPECT_TRUE(absl::IsInvalidArgument(no_port.status())) << no_port.status();
  EXPECT_NE(no_port.status().message().find("\"ptod\""), std::string::npos)
      << no_port.status();
  auto unknown = ResolveReplicas("dns:///no-such-host.invalid:7070");
  EXPECT_TRUE(absl::IsUnavailable(unknown.status())) << unknown.status();
  EXPECT_NE(unknown.status().message().find("no-such-host.invalid"),
            std::string::npos);
}

}  // namespace
}  // namespace pto::client
