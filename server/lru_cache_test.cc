#include "server/lru_cache.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace pto::server {
namespace {

using StringCache = LruCache<std::string>;

StringCache MakeCache(size_t capacity) {
  return StringCache(capacity, [](const std::string& s) { return s.size(); });
}

std::shared_ptr<const std::string> Blob(size_t n, char c = 'x') {
  return std::make_shared<const std::string>(n, c);
}

TEST(LruCacheTest, GetReturnsWhatWasInserted) {
  StringCache cache = MakeCache(100);
  EXPECT_EQ(cache.Get("a"), nullptr);
  cache.Insert("a", Blob(10, 'a'));
  auto hit = cache.Get("a");
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(*hit, std::string(10, 'a'));
  EXPECT_EQ(cache.bytes(), 10u);
}

TEST(LruCacheTest, EvictsLeastRecentlyUsedWhenOverBytes) {
  StringCache cache = MakeCache(30);
  cache.Insert("a", Blob(10));
  cache.Insert("b", Blob(10));
  cache.Insert("c", Blob(10));
  ASSERT_NE(cache.Get("a"), nullptr);  // "b" is now the oldest
  cache.Insert("d", Blob(10));
  EXPECT_EQ(cache.Get("b"), nullptr);
  EXPECT_NE(cache.Get("a"), nullptr);
  EXPECT_NE(cache.Get("c"), nullptr);
  EXPECT_NE(cache.Get("d"), nullptr);
  EXPECT_EQ(cache.bytes(), 30u);
  EXPECT_EQ(cache.evictions(), 1u);

  // One big entry pushes out several small ones.
  cache.Insert("big", Blob(25));
  EXPECT_LE(cache.bytes(), 30u);
  EXPECT_NE(cache.Get("big"), nullptr);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(LruCacheTest, ReplacingAKeyUpdatesBytes) {
  StringCache cache = MakeCache(100);
  cache.Insert("a", Blob(10));
  cache.Insert("a", Blob(40));
  EXPECT_EQ(cache.bytes(), 40u);
  EXPECT_EQ(cache.size(), 1u);
  cache.Erase("a");
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(LruCacheTest, ValueLargerThanCapacityIsNotCached) {
  StringCache cache = MakeCache(10);
  cache.Insert("a", Blob(5));
  cache.Insert("huge", Blob(11));
  EXPECT_EQ(cache.Get("huge"), nullptr);
  EXPECT_NE(cache.Get("a"), nullptr);
}

TEST(LruCacheTest, EvictedValueStaysAliveForItsHolder) {
  StringCache cache = MakeCache(10);
  cache.Insert("a", Blob(10, 'a'));
  auto held = cache.Get("a");
  cache.Insert("b", Blob(10, 'b'));
  EXPECT_EQ(cache.Get("a"), nullptr);
  EXPECT_EQ(*held, std::string(10, 'a'));
}

TEST(LruCacheTest, ConcurrentUseStaysWithinCapacity) {
  StringCache cache = MakeCache(1000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 500; ++i) {
        const std::string key = std::to_string((t * 7 + i) % 50);
        cache.Insert(key, Blob(10 + i % 40));
        cache.Get(std::to_string(i % 50));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(cache.bytes(), 1000u);
}

}  // namespace
}  // namespace pto::server
