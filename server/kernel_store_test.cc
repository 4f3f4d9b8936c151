#include "server/kernel_store.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <functional>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "gtest/gtest.h"
#include "pto/server/store_records.pb.h"
#include "rocksdb/db.h"
#include "runtime/sha256.h"

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
  kernel.binary.set_payload_sha256(runtime::Sha256(payload));
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
  // Different keys (the binary names its key) with the same native code.
  const std::string native(4096, 'x');
  CompiledKernel kernel = MakeKernel(native);
  kernel.binary.set_key(Key('a'));
  ASSERT_TRUE(store->Put(Key('a'), kernel).ok());
  const uint64_t one_entry = store->GetStats().bytes;
  ASSERT_GT(one_entry, native.size());
  kernel.binary.set_key(Key('b'));
  ASSERT_TRUE(store->Put(Key('b'), kernel).ok());
  KernelStore::Stats stats = store->GetStats();
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.payloads, 1u);
  // The second entry costs only its manifest.
  EXPECT_LT(stats.bytes, one_entry + native.size() / 2);
  const uint64_t one_payload = stats.bytes;
  auto b = store->Get(Key('b'));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->binary.key(), Key('b'));
  EXPECT_EQ(b->binary.native_payload(), native);
  // Writing the same key again adds nothing.
  ASSERT_TRUE(store->Put(Key('b'), kernel).ok());
  EXPECT_EQ(store->GetStats().entries, 2u);
  EXPECT_EQ(store->GetStats().bytes, one_payload);
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
  // Flip one byte of the stored native payload behind the store's back.
  const std::string payload_key =
      "p/" + Sha256Hex(kernel.binary.native_payload());
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


// A clock the tests move by hand.
struct FakeClock {
  absl::Time now = absl::FromUnixSeconds(1'000'000);
  std::function<absl::Time()> Fn() {
    return [this] { return now; };
  }
};

CompiledKernel Sized(char c, size_t bytes) {
  CompiledKernel kernel = MakeKernel(std::string(bytes, c));
  kernel.binary.set_key(Key(c));
  return kernel;
}

TEST_F(KernelStoreTest, EvictionKeepsTheBudgetAndTheHotEntries) {
  FakeClock clock;
  std::vector<double> evicted_idle;
  KernelStore::Options options;
  options.max_bytes = 10 * 10'000;  // room for about nine 10 kB kernels
  options.min_age = absl::Seconds(30);
  options.access_granularity = absl::Seconds(1);
  options.clock = clock.Fn();
  options.on_evict = [&](double idle) { evicted_idle.push_back(idle); };
  auto opened = KernelStore::Open(dir_, options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  KernelStore& store = **opened;
  // 'a' is used all along; the others are written once.
  const std::string letters = "abcdefghijklmnopqrstuvwxyz";
  for (char c : letters) {
    ASSERT_TRUE(store.Put(Key(c), Sized(c, 10'000)).ok());
    clock.now += absl::Minutes(1);
    ASSERT_TRUE(store.Get(Key('a')).ok()) << "after putting " << c;
    EXPECT_LE(store.GetStats().bytes, options.max_bytes) << "after " << c;
  }
  const KernelStore::Stats stats = store.GetStats();
  EXPECT_GT(stats.evictions, 0u);
  EXPECT_EQ(stats.evictions, evicted_idle.size());
  EXPECT_EQ(stats.entries + stats.evictions, letters.size());
  EXPECT_EQ(stats.payloads, stats.entries);
  for (double idle : evicted_idle) EXPECT_GE(idle, 30);
  // The oldest cold entries went; the hot one and the newest stayed.
  EXPECT_TRUE(store.Get(Key('a')).ok());
  EXPECT_TRUE(store.Get(Key('z')).ok());
  EXPECT_TRUE(absl::IsNotFound(store.Get(Key('b')).status()));
}

TEST_F(KernelStoreTest, YoungEntriesAreKeptOverBudget) {
  FakeClock clock;
  KernelStore::Options options;
  options.max_bytes = 25'000;
  options.min_age = absl::Minutes(10);
  options.clock = clock.Fn();
  auto opened = KernelStore::Open(dir_, options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  for (char c : std::string("abcd")) {
    ASSERT_TRUE((*opened)->Put(Key(c), Sized(c, 10'000)).ok());
  }
  EXPECT_EQ((*opened)->GetStats().evictions, 0u);
  EXPECT_EQ((*opened)->GetStats().entries, 4u);
  // Later, the next write finds them old enough.
  clock.now += absl::Minutes(11);
  ASSERT_TRUE((*opened)->Put(Key('e'), Sized('e', 10'000)).ok());
  EXPECT_LE((*opened)->GetStats().bytes, options.max_bytes);
  EXPECT_TRUE((*opened)->Get(Key('e')).ok());
}

TEST_F(KernelStoreTest, SharedPayloadIsFreedWithItsLastReference) {
  FakeClock clock;
  KernelStore::Options options;
  options.max_bytes = 30'000;
  options.min_age = absl::ZeroDuration();
  options.clock = clock.Fn();
  auto opened = KernelStore::Open(dir_, options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  KernelStore& store = **opened;
  CompiledKernel shared = Sized('s', 12'000);
  ASSERT_TRUE(store.Put(Key('a'), shared).ok());
  clock.now += absl::Seconds(1);
  ASSERT_TRUE(store.Put(Key('b'), shared).ok());
  EXPECT_EQ(store.GetStats().payloads, 1u);
  clock.now += absl::Seconds(1);
  // Over budget: both sharers are the oldest and go; the payload with them.
  ASSERT_TRUE(store.Put(Key('c'), Sized('c', 20'000)).ok());
  const KernelStore::Stats stats = store.GetStats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.payloads, 1u);
  EXPECT_LE(stats.bytes, options.max_bytes);
  EXPECT_GT(stats.bytes, 20'000u);
  EXPECT_TRUE(store.Get(Key('c')).ok());
}

TEST_F(KernelStoreTest, ReplacingAnEntryDropsItsOldPayload) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(Key('a'), Sized('x', 5000)).ok());
  const uint64_t one = store->GetStats().bytes;
  ASSERT_TRUE(store->Put(Key('a'), Sized('y', 5000)).ok());
  KernelStore::Stats stats = store->GetStats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.payloads, 1u);
  EXPECT_EQ(stats.bytes, one);
  auto got = store->Get(Key('a'));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->binary.native_payload(), std::string(5000, 'y'));
}

TEST_F(KernelStoreTest, CorruptSharedPayloadIsAMissForEverySharer) {
  const CompiledKernel kernel = Sized('s', 1000);
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(Key('a'), kernel).ok());
    ASSERT_TRUE(store->Put(Key('b'), kernel).ok());
  }
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    const std::string payload_key =
        "p/" + Sha256Hex(kernel.binary.native_payload());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), payload_key, "junk").ok());
    ASSERT_TRUE(db->Close().ok());
  }
  auto store = OpenStore();
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('b')).status()));
  KernelStore::Stats stats = store->GetStats();
  EXPECT_EQ(stats.corrupt_entries, 2u);
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.payloads, 0u);
  EXPECT_EQ(stats.bytes, 0u);
  ASSERT_TRUE(store->Put(Key('b'), kernel).ok());
  EXPECT_TRUE(store->Get(Key('b')).ok());
}

TEST_F(KernelStoreTest, TamperedMetadataIsDetected) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(Key('a'), Sized('a', 100)).ok());
  }
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string bytes;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "m/" + Key('a'), &bytes).ok());
    // The kernel name "add" lives in the metadata: make it "adc".
    const size_t at = bytes.find("add");
    ASSERT_NE(at, std::string::npos);
    bytes[at + 2] = 'c';
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "m/" + Key('a'), bytes).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  auto store = OpenStore();
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  EXPECT_EQ(store->GetStats().corrupt_entries, 1u);
  EXPECT_EQ(store->GetStats().entries, 0u);
}

// Rewrites the RocksDB record `key` of the store in `dir` with `edit`
// (the store must be closed).
void EditRecord(const std::string& dir, const std::string& key,
                const std::function<void(std::string*)>& edit) {
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string bytes;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), key, &bytes).ok()) << key;
  edit(&bytes);
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, bytes).ok());
  ASSERT_TRUE(db->Close().ok());
}

TEST_F(KernelStoreTest, MetadataEditedWithItsDigestRecomputedIsDetected) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(Key('a'), Sized('a', 100)).ok());
  }
  EditRecord(dir_, "m/" + Key('a'), [](std::string* bytes) {
    SealedManifest sealed;
    ASSERT_TRUE(sealed.ParseFromString(*bytes));
    Manifest manifest;
    ASSERT_TRUE(manifest.ParseFromString(sealed.manifest()));
    pto::v1::KernelBinary meta;
    ASSERT_TRUE(meta.ParseFromString(manifest.binary_meta()));
    meta.set_kernel_name("evil");
    manifest.set_binary_meta(meta.SerializeAsString());
    manifest.set_binary_meta_sha256(runtime::Sha256(manifest.binary_meta()));
    sealed.set_manifest(manifest.SerializeAsString());
    *bytes = sealed.SerializeAsString();
  });
  auto store = OpenStore();
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  EXPECT_EQ(store->GetStats().corrupt_entries, 1u);
  EXPECT_EQ(store->GetStats().entries, 0u);
}

TEST_F(KernelStoreTest, PayloadReplacedWithItsDigestsRecomputedIsDetected) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(Key('a'), Sized('a', 100)).ok());
  }
  // Point the manifest (and the binary's own digest) at other bytes stored
  // under their own digest, as an attacker who knows the layout would.
  const std::string evil(100, 'e');
  const std::string evil_digest = runtime::Sha256(evil);
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(),
                        "p/" + runtime::ToHex(evil_digest), evil)
                    .ok());
    ASSERT_TRUE(db->Close().ok());
  }
  EditRecord(dir_, "m/" + Key('a'), [&](std::string* bytes) {
    SealedManifest sealed;
    ASSERT_TRUE(sealed.ParseFromString(*bytes));
    Manifest manifest;
    ASSERT_TRUE(manifest.ParseFromString(sealed.manifest()));
    pto::v1::KernelBinary meta;
    ASSERT_TRUE(meta.ParseFromString(manifest.binary_meta()));
    meta.set_payload_sha256(evil_digest);
    manifest.set_binary_meta(meta.SerializeAsString());
    manifest.set_binary_meta_sha256(runtime::Sha256(manifest.binary_meta()));
    manifest.set_payload_sha256(evil_digest);
    sealed.set_manifest(manifest.SerializeAsString());
    *bytes = sealed.SerializeAsString();
  });
  auto store = OpenStore();
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  EXPECT_EQ(store->GetStats().corrupt_entries, 1u);
}

TEST_F(KernelStoreTest, SwappedManifestsAreDetected) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(Key('a'), Sized('a', 100)).ok());
    ASSERT_TRUE(store->Put(Key('b'), Sized('b', 100)).ok());
  }
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string a, b;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "m/" + Key('a'), &a).ok());
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "m/" + Key('b'), &b).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "m/" + Key('a'), b).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "m/" + Key('b'), a).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  auto store = OpenStore();
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('b')).status()));
  EXPECT_EQ(store->GetStats().corrupt_entries, 2u);
  EXPECT_EQ(store->GetStats().entries, 0u);
  EXPECT_EQ(store->GetStats().payloads, 0u);
  // Healed: both store again.
  ASSERT_TRUE(store->Put(Key('a'), Sized('a', 100)).ok());
  EXPECT_TRUE(store->Get(Key('a')).ok());
}

TEST_F(KernelStoreTest, RecordKeyIsPrivateAndStable) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(Key('a'), Sized('a', 100)).ok());
  }
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/PTO_RECORD_KEY").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto store = OpenStore();
  EXPECT_TRUE(store->Get(Key('a')).ok());  // same key after reopening
}

TEST_F(KernelStoreTest, DiscardCountsAndDeletes) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(Key('a'), Sized('a', 100)).ok());
  store->Discard(Key('a'), "test");
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  EXPECT_EQ(store->GetStats().corrupt_entries, 1u);
  EXPECT_EQ(store->GetStats().entries, 0u);
  EXPECT_EQ(store->GetStats().bytes, 0u);
}

// The files of the store in `dir` whose names start with `prefix` or end
// with `suffix`.
std::vector<std::string> StoreFiles(const std::string& dir,
                                    const std::string& prefix,
                                    const std::string& suffix = "\x01") {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 ||
        (name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
             0)) {
      files.push_back(entry.path().string());
    }
  }
  return files;
}

void Overwrite(const std::string& path, size_t at, const std::string& bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f) << path;
  f.seekp(static_cast<std::streamoff>(at));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class DamagedStoreTest : public KernelStoreTest {
 protected:
  // A store with two kernels, closed (so they are in an SST file).
  void Fill() {
    auto store = OpenStore();
    ASSERT_TRUE(store->Put(Key('a'), Sized('a', 5000)).ok());
    ASSERT_TRUE(store->Put(Key('b'), Sized('b', 5000)).ok());
  }
  // Opens with OpenOrRecover and checks that the store works.
  KernelStore::Recovered Recover() {
    auto recovered = KernelStore::OpenOrRecover(dir_, KernelStore::Options());
    EXPECT_TRUE(recovered.ok()) << recovered.status();
    if (!recovered.ok()) return {};
    EXPECT_TRUE(recovered->store->Put(Key('c'), Sized('c', 100)).ok());
    EXPECT_TRUE(recovered->store->Get(Key('c')).ok());
    return *std::move(recovered);
  }
  void ExpectMovedAside(const KernelStore::Recovered& r) {
    EXPECT_EQ(r.recovery, KernelStore::Recovery::kMovedAside) << r.why;
    EXPECT_TRUE(std::filesystem::is_directory(r.moved_to)) << r.moved_to;
    EXPECT_EQ(r.moved_to.rfind(dir_ + ".damaged-", 0), 0u) << r.moved_to;
    EXPECT_TRUE(r.store->persistent());
    EXPECT_EQ(r.store->GetStats().entries, 1u);  // only the new one
    std::filesystem::remove_all(r.moved_to);
  }
};

TEST_F(DamagedStoreTest, GarbageCurrentIsMovedAside) {
  Fill();
  std::ofstream(dir_ + "/CURRENT", std::ios::trunc) << "garbage\n";
  ExpectMovedAside(Recover());
}

TEST_F(DamagedStoreTest, DamagedManifestIsMovedAside) {
  Fill();
  for (const std::string& m : StoreFiles(dir_, "MANIFEST-")) {
    Overwrite(m, 0, std::string(64, '\x5a'));
  }
  ExpectMovedAside(Recover());
}

TEST_F(DamagedStoreTest, MissingTableFileIsMovedAside) {
  Fill();
  const std::vector<std::string> tables = StoreFiles(dir_, "\x01", ".sst");
  ASSERT_FALSE(tables.empty());
  for (const std::string& t : tables) std::filesystem::remove(t);
  ExpectMovedAside(Recover());
}

TEST_F(DamagedStoreTest, DamagedTableFooterIsMovedAside) {
  Fill();
  const std::vector<std::string> tables = StoreFiles(dir_, "\x01", ".sst");
  ASSERT_FALSE(tables.empty());
  for (const std::string& t : tables) {
    Overwrite(t, std::filesystem::file_size(t) - 48, std::string(48, '\0'));
  }
  ExpectMovedAside(Recover());
}

TEST_F(DamagedStoreTest, UnreadableStatsRecordIsMovedAside) {
  Fill();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "s/stats", "\xff\xff").ok());
    ASSERT_TRUE(db->Close().ok());
  }
  ExpectMovedAside(Recover());
}

TEST_F(DamagedStoreTest, MissingStatsRecordIsMovedAside) {
  Fill();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), "s/stats").ok());
    ASSERT_TRUE(db->Close().ok());
  }
  ExpectMovedAside(Recover());
}

// `n` incompressible bytes, so that they appear as they are in a table
// file's data blocks.
std::string Noise(size_t n, uint32_t seed) {
  std::string noise(n, '\0');
  for (char& c : noise) {
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<char>(seed >> 24);
  }
  return noise;
}

// Stores `kernel` under Key('a') and a small kernel under Key('b'), closes
// the store, then flips bytes inside the payload's data block, leaving
// footer, index and the stats record intact: RocksDB opens the store and
// finds the damage when the block is read.
void StoreThenDamageItsBlock(const std::string& dir,
                             const CompiledKernel& kernel) {
  {
    auto store = KernelStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Put(Key('a'), kernel).ok());
    ASSERT_TRUE((*store)->Put(Key('b'), Sized('b', 100)).ok());
  }
  const std::vector<std::string> tables = StoreFiles(dir, "\x01", ".sst");
  ASSERT_EQ(tables.size(), 1u);
  std::string bytes;
  {
    std::ifstream in(tables[0], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  const std::string& payload = kernel.binary.native_payload();
  const size_t at = bytes.find(payload.substr(payload.size() / 2, 64));
  ASSERT_NE(at, std::string::npos);
  Overwrite(tables[0], at, "XYZ");
}

TEST_F(DamagedStoreTest, CorruptBlockFoundOnReadIsCountedDeletedAndHealed) {
  CompiledKernel kernel = MakeKernel(Noise(20000, 12345));
  kernel.binary.set_key(Key('a'));
  StoreThenDamageItsBlock(dir_, kernel);
  auto recovered = KernelStore::OpenOrRecover(dir_, KernelStore::Options());
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  ASSERT_EQ(recovered->recovery, KernelStore::Recovery::kNone) << recovered->why;
  KernelStore& store = *recovered->store;
  EXPECT_TRUE(absl::IsNotFound(store.Get(Key('a')).status()));
  EXPECT_EQ(store.GetStats().corrupt_entries, 1u);
  // The small entry shares the damaged block: it goes too.
  EXPECT_TRUE(absl::IsNotFound(store.Get(Key('b')).status()));
  // Healed: stored again, read back.
  ASSERT_TRUE(store.Put(Key('a'), kernel).ok());
  absl::StatusOr<CompiledKernel> again = store.Get(Key('a'));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->binary.native_payload(), kernel.binary.native_payload());
}

TEST_F(DamagedStoreTest, ADamagedBlockIsServedAroundThenMovedAsideAtTheNextStart) {
  CompiledKernel kernel = MakeKernel(Noise(20000, 777));
  kernel.binary.set_key(Key('a'));
  StoreThenDamageItsBlock(dir_, kernel);
  {
    auto recovered = KernelStore::OpenOrRecover(dir_, KernelStore::Options());
    ASSERT_TRUE(recovered.ok()) << recovered.status();
    KernelStore& store = *recovered->store;
    EXPECT_TRUE(absl::IsNotFound(store.Get(Key('a')).status()));
    // Still answering: a new kernel stores (or, if its key falls in the
    // damaged range, fails cleanly), and reads of others are misses.
    CompiledKernel more = MakeKernel("more");
    more.binary.set_key(Key('m'));
    absl::Status put = store.Put(Key('m'), more);
    if (put.ok()) EXPECT_TRUE(store.Get(Key('m')).ok());
    EXPECT_TRUE(std::filesystem::exists(dir_ + "/PTO_DAMAGED"));
  }
  // The next open moves the store aside and starts afresh.
  ExpectMovedAside(Recover());
}

TEST_F(DamagedStoreTest, AStoreHeldByAnotherOpenerIsNotMovedAside) {
  Fill();
  auto first = OpenStore();
  auto second = KernelStore::OpenOrRecover(dir_, KernelStore::Options());
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
  EXPECT_NE(second.status().message().find(dir_), std::string::npos);
  EXPECT_TRUE(first->Get(Key('a')).ok());
}

TEST_F(DamagedStoreTest, NoUsableDirectoryKeepsKernelsInMemory) {
  // A path under a regular file can be neither created nor moved.
  const std::string file = dir_ + "/file";
  std::ofstream(file) << "x";
  auto recovered =
      KernelStore::OpenOrRecover(file + "/cache", KernelStore::Options());
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_EQ(recovered->recovery, KernelStore::Recovery::kInMemory);
  EXPECT_FALSE(recovered->store->persistent());
  EXPECT_NE(recovered->why.find(file), std::string::npos) << recovered->why;
  ASSERT_TRUE(recovered->store->Put(Key('a'), Sized('a', 100)).ok());
  EXPECT_TRUE(recovered->store->Get(Key('a')).ok());
  EXPECT_EQ(recovered->store->max_bytes(), uint64_t{1} << 30);
}

TEST_F(KernelStoreTest, PurgeEmptiesTheStore) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Put(Key('a'), Sized('a', 100)).ok());
  ASSERT_TRUE(store->Put(Key('b'), Sized('b', 100)).ok());
  ASSERT_TRUE(store->Purge().ok());
  EXPECT_EQ(store->GetStats().entries, 0u);
  EXPECT_EQ(store->GetStats().bytes, 0u);
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  ASSERT_TRUE(store->Put(Key('a'), Sized('a', 100)).ok());
  EXPECT_EQ(store->GetStats().entries, 1u);
}

TEST_F(KernelStoreTest, TheGenerationIsBumpedOrRaisedNeverLoweredAndPersists) {
  {
    auto store = OpenStore();
    EXPECT_EQ(store->generation(), 0u);
    EXPECT_EQ(*store->BumpGeneration(), 1u);
    EXPECT_EQ(*store->RaiseGeneration(5), 5u);
    EXPECT_EQ(*store->RaiseGeneration(3), 5u);  // never lowered
    EXPECT_EQ(store->generation(), 5u);
  }
  auto reopened = OpenStore();
  EXPECT_EQ(reopened->generation(), 5u);
}

TEST_F(KernelStoreTest, OlderLayoutIsEmptiedOnOpen) {
  {
    // What the first ptod wrote: no layout version in the stats record.
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "m/" + Key('a'), "old").ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "s/stats",
                        std::string("\x08\x01\x10\x01\x18\x0a", 6))
                    .ok());
    ASSERT_TRUE(db->Close().ok());
  }
  auto store = OpenStore();
  EXPECT_EQ(store->GetStats().entries, 0u);
  EXPECT_TRUE(absl::IsNotFound(store->Get(Key('a')).status()));
  EXPECT_EQ(store->GetStats().corrupt_entries, 0u);
}

}  // namespace
}  // namespace pto::server
