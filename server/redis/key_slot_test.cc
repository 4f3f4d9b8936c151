#include "server/redis/key_slot.h"

#include "gtest/gtest.h"

namespace pto::server::redis {
namespace {

TEST(Crc16Test, MatchesTheClusterSpecificationsVector) {
  // The Redis Cluster specification: the output of CRC16("123456789").
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(Crc16(""), 0);
}

TEST(KeySlotTest, MatchesClusterKeyslotOfRedis) {
  // What `CLUSTER KEYSLOT <key>` answers on redis-server 7.0.
  EXPECT_EQ(KeySlot("foo"), 12182);
  EXPECT_EQ(KeySlot("bar"), 5061);
  EXPECT_EQ(KeySlot("123456789"), 12739);
  EXPECT_EQ(KeySlot(""), 0);
}

TEST(KeySlotTest, HashTagsPickThePartThatIsHashed) {
  EXPECT_EQ(HashedPart("{user1000}.following"), "user1000");
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("user1000"));
  EXPECT_EQ(KeySlot("{user1000}.following"), 3443);
  EXPECT_EQ(KeySlot("{user1000}.followers"), KeySlot("{user1000}.following"));
  // Only the first "{" and the first "}" after it count.
  EXPECT_EQ(HashedPart("foo{bar}{zap}"), "bar");
  EXPECT_EQ(KeySlot("foo{bar}{zap}"), 5061);
  EXPECT_EQ(HashedPart("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), 4015);
  // An empty tag, or none closed, hashes the whole key.
  EXPECT_EQ(HashedPart("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(KeySlot("foo{}{bar}"), 8363);
  EXPECT_EQ(KeySlot("{}"), 15257);
  EXPECT_EQ(HashedPart("foo{bar"), "foo{bar");
}

TEST(KeySlotTest, BinaryKeysStayInRange) {
  std::string key;
  for (int i = 0; i < 256; ++i) {
    key.push_back(static_cast<char>(i));
    const int slot = KeySlot(key);
    EXPECT_GE(slot, 0);
    EXPECT_LT(slot, kSlots);
  }
}

}  // namespace
}  // namespace pto::server::redis
