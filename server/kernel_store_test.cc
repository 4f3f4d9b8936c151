#include "server/kernel_store.h"

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace pto::server {
namespace {

std::string MakeTempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string pattern =
      std::string(base != nullptr ? base : "/tmp") + "/kernel_store_XXXXXX";
  char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  return pattern;
}

std::string Key(char c) { return std::string(64, c); }

CompiledKernel MakeKernel(const std::string& payload) {
  CompiledKernel kernel;
  kernel.binary.set_magic(0x4F545031);
  kernel.binary.set_kernel_name("add");
  kernel.binary.set_native_payload(payload);
  kernel.compile_seconds = 1.5;
  pto::v1::StageTiming& stage = kernel.stages.emplace_back();
  stage.set_stage("native_compile");
  stage.set_seconds(1.25);
  return kernel;
}

class KernelStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<KernelStore> OpenStore() {
    auto store = KernelStore::Open(dir_);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  std::string dir_;
};

TEST(KeyFormatTest, AcceptsOnlyLowercaseHexSha256) {
  EXPECT_TRUE(IsWellFormedKey(std::string(64, 'a')));
  EXPECT_TRUE(IsWellFormedKey(Sha256Hex("x")));
  EXPECT_FALSE(IsWellFormedKey(std::string(63, 'a')));
  EXPECT_FALSE(IsWellFormedKey(std::string(64, 'A')));
  EXPECT_FALSE(IsWellFormedKey(std::string(63, 'a') + "/"));
  EXPECT_EQ(Sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_F(KernelStoreTest, RoundTrip) {
  auto store = OpenStore();
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  ASSERT_TRUE(store->Put(Key('a'), MakeKernel("payload-a")).ok());
  auto got = store->Get(Key('a'));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->binary.native_payload(), "payload-a");
  EXPECT_EQ(got->binary.kernel_name(), "add");
  EXPECT_DOUBLE_EQ(got->compile_seconds, 1.5);
  ASSERT_EQ(got->stages.size(), 1u);
  EXPECT_EQ(got->stages[0].stage(), "native_compile");
  EXPECT_DOUBLE_EQ(got->stages[0].seconds(), 1.25);
  EXPECT_EQ(store->GetStats().entries, 1u);
}

TEST_F(KernelStoreTest, IdenticalPayloadsAreStoredOnce) {
  auto store = OpenStore();
  const CompiledKernel kernel = MakeKernel("same bytes");
  ASSERT_TRUE(store->Put(Key('a'), kernel).ok());
  const uint64_t one_payload = store->GetStats().bytes;
  ASSERT_GT(one_payload, 0u);
  ASSERT_TRUE(store->Put(Key('b'), kernel).ok());
  KernelStore::Stats stats = store->GetStats();
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.payloads, 1u);
  EXPECT_EQ(stats.bytes, one_payload);
  // Writing the same key again adds nothing.
  ASSERT_TRUE(store->Put(Key('b'), kernel).ok());
  EXPECT_EQ(store->GetStats().entries, 2u);
  ASSERT_TRUE(store->Put(Key('c'), MakeKernel("other bytes")).ok());
  stats = store->GetStats();
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_EQ(stats.payloads, 2u);
  EXPECT_GT(stats.bytes, one_payload);
  EXPECT_TRUE(store->Get(Key('a')).ok());
  EXPECT_TRUE(store->Get(Key('b')).ok());
}

TEST_F(KernelStoreTest, CountersAndEntriesSurviveReopen) {
  KernelStore::Stats before;
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(Key('a'), MakeKernel("one")).ok());
    ASSERT_TRUE(store->Put(Key('b'), MakeKernel("two")).ok());
    before = store->GetStats();
  }
  auto store = OpenStore();
  KernelStore::Stats after = store->GetStats();
  EXPECT_EQ(after.entries, 2u);
  EXPECT_EQ(after.entries, before.entries);
  EXPECT_EQ(after.payloads, before.payloads);
  EXPECT_EQ(after.bytes, before.bytes);
  auto got = store->Get(Key('b'));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->binary.native_payload(), "two");
}

TEST_F(KernelStoreTest, DigestMismatchDeletesEntryAndMisses) {
  const CompiledKernel kernel = MakeKernel("the real payload");
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(Key('a'), kernel).ok());
  }
  // Flip one byte of the stored payload behind the store's back.
  const std::string payload_key =
      "p/" + Sha256Hex(kernel.binary.SerializeAsString());
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string bytes;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), payload_key, &bytes).ok());
    bytes[bytes.size() / 2] ^= 0x01;
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), payload_key, bytes).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  auto store = OpenStore();
  ASSERT_EQ(store->GetStats().entries, 1u);
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  KernelStore::Stats stats = store->GetStats();
  EXPECT_EQ(stats.corrupt_entries, 1u);
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.payloads, 0u);
  EXPECT_EQ(stats.bytes, 0u);
  // Gone for good, and the key can be stored afresh.
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  EXPECT_EQ(store->GetStats().corrupt_entries, 1u);
  ASSERT_TRUE(store->Put(Key('a'), kernel).ok());
  EXPECT_TRUE(store->Get(Key('a')).ok());
}

TEST_F(KernelStoreTest, SecondOpenOfTheSameDirectoryFailsClearly) {
  auto store = OpenStore();
  auto second = KernelStore::Open(dir_);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(dir_), std::string::npos);
}

}  // namespace
}  // namespace pto::server
