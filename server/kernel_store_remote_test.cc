// KernelStore in front of a remote tier (remote_tier.h): what it asks the
// tier and what it hands it. The tier here is an in-memory fake; the Redis
// one is tested against a real cluster in tests/cluster.
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/sha256.h"
#include "server/kernel_store.h"
#include "server/remote_tier.h"

namespace pto::server {
namespace {

std::string Key(char c) { return std::string(64, c); }

CompiledKernel MakeKernel(const std::string& payload) {
  CompiledKernel kernel;
  kernel.binary.set_kernel_name("add");
  kernel.binary.set_native_payload(payload);
  kernel.binary.set_payload_sha256(runtime::Sha256(payload));
  kernel.compile_seconds = 2;
  return kernel;
}

class FakeRemote final : public RemoteTier {
 public:
  absl::StatusOr<CompiledKernel> Get(const std::string& key) override {
    gets.push_back(key);
    if (unreachable) return absl::UnavailableError("remote down");
    auto it = entries.find(key);
    if (it == entries.end()) return absl::NotFoundError("not there");
    return it->second;
  }
  void PutAsync(const std::string& key, const CompiledKernel& k) override {
    entries[key] = k;
    ++puts;
  }
  void Discard(const std::string& key) override {
    entries.erase(key);
    discarded.push_back(key);
  }

  std::map<std::string, CompiledKernel> entries;
  std::vector<std::string> gets;
  std::vector<std::string> discarded;
  int puts = 0;
  bool unreachable = false;
};

class KernelStoreRemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(getenv("TEST_TMPDIR")) + "/store_XXXXXX";
    ASSERT_NE(mkdtemp(dir_.data()), nullptr);
    KernelStore::Options options;
    options.remote = &remote_;
    auto store = KernelStore::Open(dir_, options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  FakeRemote remote_;
  std::string dir_;
  std::unique_ptr<KernelStore> store_;
};

TEST_F(KernelStoreRemoteTest, ALocalMissIsAskedOfTheRemoteAndKeptLocally) {
  remote_.entries[Key('a')] = MakeKernel("from another ptod");
  absl::StatusOr<CompiledKernel> got = store_->Get(Key('a'));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->binary.native_payload(), "from another ptod");
  EXPECT_EQ(remote_.gets.size(), 1u);
  // Kept here, and not written back to the remote.
  EXPECT_EQ(store_->GetStats().entries, 1u);
  EXPECT_EQ(remote_.puts, 0);
  remote_.entries.clear();
  got = store_->Get(Key('a'));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(remote_.gets.size(), 1u);  // a local hit asks nobody
}

TEST_F(KernelStoreRemoteTest, AMissOrAnUnreachableRemoteIsAMiss) {
  EXPECT_TRUE(absl::IsNotFound(store_->Get(Key('b')).status()));
  remote_.unreachable = true;
  EXPECT_TRUE(absl::IsNotFound(store_->Get(Key('b')).status()));
  EXPECT_EQ(remote_.gets.size(), 2u);
  EXPECT_EQ(store_->GetStats().entries, 0u);
}

TEST_F(KernelStoreRemoteTest, PutStoresLocallyThenHandsTheKernelOn) {
  ASSERT_TRUE(store_->Put(Key('c'), MakeKernel("compiled here")).ok());
  EXPECT_EQ(store_->GetStats().entries, 1u);
  ASSERT_EQ(remote_.puts, 1);
  EXPECT_EQ(remote_.entries[Key('c')].binary.native_payload(), "compiled here");
  // A malformed kernel is refused here and not shared either.
  CompiledKernel bad = MakeKernel("x");
  bad.binary.set_payload_sha256("not the digest");
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Put(Key('d'), bad)));
  EXPECT_EQ(remote_.puts, 1);
}

TEST_F(KernelStoreRemoteTest, DiscardDeletesInBothTiers) {
  ASSERT_TRUE(store_->Put(Key('e'), MakeKernel("wrong")).ok());
  store_->Discard(Key('e'), "signature does not verify");
  EXPECT_EQ(store_->GetStats().entries, 0u);
  EXPECT_EQ(remote_.discarded, std::vector<std::string>{Key('e')});
  EXPECT_TRUE(absl::IsNotFound(store_->Get(Key('e')).status()));
}

TEST_F(KernelStoreRemoteTest, WithoutLeasesTheRemoteSaysCompile) {
  // FakeRemote keeps RemoteTier's default: no leases.
  EXPECT_FALSE(store_->AwaitCompileLease(Key('f')));
  store_->ReleaseCompileLease(Key('f'));
}

}  // namespace
}  // namespace pto::server
