// Faults in ptod's cache and at its door, against the real daemon: records
// edited on disk with their digests recomputed, manifests swapped, store
// files damaged, oversized requests, file modes, exposed addresses. Each
// ends with ptod serving the right kernel.
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/cpp/compile_client.h"
#include "gtest/gtest.h"
#include "pto/server/store_records.pb.h"
#include "rocksdb/db.h"
#include "runtime/kernel.h"
#include "runtime/sha256.h"
#include "runtime/signature.h"
#include "tests/ptod/ptod_process.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

constexpr char kSigningKey[] = "fault-test-signing-key-0123456789abcdef";

absl::Time In(absl::Duration d) { return absl::Now() + d; }

// Whether this process may mount a tmpfs (on a directory under `scratch`)
// in a user and mount namespace of its own.
bool CanMountTmpfs(const std::string& scratch) {
  const std::string dir = scratch + "/probe-mount";
  std::filesystem::create_directories(dir);
  const std::string command = "unshare -rm sh -c 'mount -t tmpfs -o size=64k "
                              "tmpfs " + dir + "' >/dev/null 2>&1";
  return system(command.c_str()) == 0;
}

class FaultStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_file_ = logs_.path() + "/signing.key";
    std::ofstream(key_file_) << kSigningKey;
    chmod(key_file_.c_str(), 0600);
    cache_dir_ = cache_.path() + "/ptod";
  }
  void TearDown() override { runtime::SetKernelVerificationKey(""); }

  std::vector<std::string> Flags() {
    return {"--address=127.0.0.1:0", "--metrics_address=127.0.0.1:0",
            "--cache_dir=" + cache_dir_, "--workers=2",
            "--signing_key_file=" + key_file_};
  }
  std::string Log(const std::string& name) { return logs_.path() + "/" + name; }

  // Starts ptod (log `name`), compiles `graph` once and returns the
  // response; stops ptod.
  pto::v1::CompileResponse CompileOnce(const pto::v1::Graph& graph,
                                       const std::string& name) {
    PtodProcess ptod(Flags(), Log(name));
    const std::string address = ptod.WaitUntilListening();
    EXPECT_FALSE(address.empty()) << ReadWholeFile(Log(name));
    pto::client::CompileClient client(address);
    auto r = client.Compile(graph, "host", {}, In(absl::Seconds(120)));
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
    return r.ok() ? *r : pto::v1::CompileResponse();
  }

  // Rewrites RocksDB record `key` of the (stopped) ptod's store.
  void Edit(const std::string& key,
            const std::function<void(std::string*)>& edit) {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), cache_dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string bytes;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), key, &bytes).ok()) << key;
    edit(&bytes);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, bytes).ok());
    ASSERT_TRUE(db->Close().ok());
  }

  // Starts ptod again and checks that `graph` compiles afresh (MISS) to a
  // binary keyed `key` that verifies under the signing key, with `corrupt`
  // entries counted.
  void ExpectRecompiled(const pto::v1::Graph& graph, const std::string& key,
                        uint64_t corrupt, const std::string& name) {
    PtodProcess ptod(Flags(), Log(name));
    const std::string address = ptod.WaitUntilListening();
    ASSERT_FALSE(address.empty()) << ReadWholeFile(Log(name));
    pto::client::CompileClient client(address);
    auto r = client.Compile(graph, "host", {}, In(absl::Seconds(120)));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->cache_status(), pto::v1::CACHE_STATUS_MISS);
    EXPECT_EQ(r->binary().key(), key);
    runtime::SetKernelVerificationKey(kSigningKey);
    EXPECT_TRUE(runtime::VerifyBinary(r->binary()).ok())
        << runtime::VerifyBinary(r->binary());
    auto stats = client.Stats(In(absl::Seconds(10)));
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->corrupt_entries(), corrupt);
    auto page = HttpGet(ptod.metrics_port(), "/metrics");
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_NE(page->find(absl::StrCat("pto_cache_corrupt_entries_total ",
                                      corrupt)),
              std::string::npos)
        << *page;
    ASSERT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
  }

  TempDir cache_;
  TempDir logs_;
  std::string cache_dir_;
  std::string key_file_;
};

// Decodes the manifest under `bytes`, lets `edit` change its binary's
// metadata, and re-encodes it with every digest recomputed (but not the
// seal, whose secret an attacker of the records does not have).
void EditMeta(std::string* bytes,
              const std::function<void(pto::v1::KernelBinary*,
                                       pto::server::Manifest*)>& edit) {
  pto::server::SealedManifest sealed;
  ASSERT_TRUE(sealed.ParseFromString(*bytes));
  pto::server::Manifest manifest;
  ASSERT_TRUE(manifest.ParseFromString(sealed.manifest()));
  pto::v1::KernelBinary meta;
  ASSERT_TRUE(meta.ParseFromString(manifest.binary_meta()));
  edit(&meta, &manifest);
  manifest.set_binary_meta(meta.SerializeAsString());
  manifest.set_binary_meta_sha256(runtime::Sha256(manifest.binary_meta()));
  sealed.set_manifest(manifest.SerializeAsString());
  *bytes = sealed.SerializeAsString();
}

TEST_F(FaultStoreTest, MetadataChangedWithDigestsRecomputedIsRecompiled) {
  const pto::v1::Graph graph = AddGraph({24, 24}, {8, 8});
  const pto::v1::CompileResponse first = CompileOnce(graph, "first.log");
  // Rename the kernel and drop its signature, every digest recomputed.
  Edit("m/" + first.key(), [](std::string* bytes) {
    EditMeta(bytes, [](pto::v1::KernelBinary* meta, pto::server::Manifest*) {
      meta->set_kernel_name("evil");
      meta->clear_signature();
    });
  });
  ExpectRecompiled(graph, first.key(), 1, "second.log");
  EXPECT_NE(ReadWholeFile(Log("second.log")).find("record seal mismatch"),
            std::string::npos);
}

TEST_F(FaultStoreTest, PayloadReplacedWithDigestsRecomputedIsRecompiled) {
  const pto::v1::Graph graph = AddGraph({24, 24}, {8, 8});
  const pto::v1::CompileResponse first = CompileOnce(graph, "first.log");
  // Other native code under its own digest, and the manifest and binary
  // pointed at it: the layout is public, only the seal's secret is not.
  const std::string evil = first.binary().native_payload() + "evil";
  const std::string digest = runtime::Sha256(evil);
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), cache_dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "p/" + runtime::ToHex(digest),
                        evil)
                    .ok());
    ASSERT_TRUE(db->Close().ok());
  }
  Edit("m/" + first.key(), [&](std::string* bytes) {
    EditMeta(bytes, [&](pto::v1::KernelBinary* meta,
                        pto::server::Manifest* manifest) {
      meta->set_payload_sha256(digest);
      manifest->set_payload_sha256(digest);
      manifest->set_payload_bytes(evil.size());
    });
  });
  ExpectRecompiled(graph, first.key(), 1, "second.log");
}

TEST_F(FaultStoreTest, SwappedManifestsAreCaughtAndRecompiled) {
  const pto::v1::Graph a = AddGraph({24, 24}, {8, 8});
  const pto::v1::Graph b = AddGraph({32, 32}, {8, 8});
  std::string key_a, key_b;
  {
    PtodProcess ptod(Flags(), Log("first.log"));
    const std::string address = ptod.WaitUntilListening();
    ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("first.log"));
    pto::client::CompileClient client(address);
    auto ra = client.Compile(a, "host", {}, In(absl::Seconds(120)));
    auto rb = client.Compile(b, "host", {}, In(absl::Seconds(120)));
    ASSERT_TRUE(ra.ok() && rb.ok()) << ra.status() << rb.status();
    key_a = ra->key();
    key_b = rb->key();
    ASSERT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
  }
  std::string manifest_a, manifest_b;
  Edit("m/" + key_a, [&](std::string* bytes) { manifest_a = *bytes; });
  Edit("m/" + key_b, [&](std::string* bytes) {
    manifest_b = *bytes;
    *bytes = manifest_a;
  });
  Edit("m/" + key_a, [&](std::string* bytes) { *bytes = manifest_b; });
  // Each key gets its own kernel again, never the other's (both binaries
  // are validly signed: only the binding to the key tells them apart).
  ExpectRecompiled(a, key_a, 1, "second.log");
  ExpectRecompiled(b, key_b, 1, "third.log");
}

TEST_F(FaultStoreTest, EntriesSignedWithAnotherKeyAreRecompiledNotResigned) {
  const pto::v1::Graph graph = AddGraph({24, 24}, {8, 8});
  std::ofstream(key_file_, std::ios::trunc) << "an-older-signing-key-0123456789abcdef";
  const pto::v1::CompileResponse first = CompileOnce(graph, "first.log");
  std::ofstream(key_file_, std::ios::trunc) << kSigningKey;  // rotated
  ExpectRecompiled(graph, first.key(), 1, "second.log");
  EXPECT_NE(ReadWholeFile(Log("second.log")).find("wrong signature"),
            std::string::npos);
}

TEST_F(FaultStoreTest, DamagedStoreIsMovedAsideAndPtodStarts) {
  const pto::v1::Graph graph = AddGraph({24, 24}, {8, 8});
  const pto::v1::CompileResponse first = CompileOnce(graph, "first.log");
  std::ofstream(cache_dir_ + "/CURRENT", std::ios::trunc) << "MANIFEST-9999\n";
  const absl::Time start = absl::Now();
  PtodProcess ptod(Flags(), Log("second.log"));
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("second.log"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));  // a bound, not a timing
  std::vector<std::string> aside;
  for (const auto& entry :
       std::filesystem::directory_iterator(cache_.path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("ptod.damaged-", 0) == 0) aside.push_back(name);
  }
  ASSERT_EQ(aside.size(), 1u);
  // Kept for inspection, whole.
  EXPECT_TRUE(std::filesystem::exists(cache_.path() + "/" + aside[0] +
                                      "/CURRENT"));
  pto::client::CompileClient client(address);
  auto r = client.Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cache_status(), pto::v1::CACHE_STATUS_MISS);
  auto page = HttpGet(ptod.metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find("pto_cache_store_recoveries_total{action=\"moved_aside\"} 1"),
            std::string::npos)
      << *page;
  EXPECT_NE(page->find("pto_cache_store_persistent 1"), std::string::npos);
  ASSERT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
  EXPECT_NE(ReadWholeFile(Log("second.log")).find("is damaged"),
            std::string::npos);
}

TEST_F(FaultStoreTest, AFullDiskKeepsKernelsInMemory) {
  // A full filesystem of the test's own: a 256 KiB tmpfs, filled, mounted in
  // a user and mount namespace of ptod's (no privileges needed).
  if (!CanMountTmpfs(cache_.path())) {
    GTEST_SKIP() << "needs unprivileged user namespaces (unshare -rm) that "
                    "may mount a tmpfs";
  }
  const std::string disk = cache_.path() + "/disk";
  std::filesystem::create_directories(disk);
  const std::vector<std::string> launcher = {
      "unshare", "-rm", "sh", "-c",
      "mount -t tmpfs -o size=256k tmpfs " + disk + " && mkdir " + disk +
          "/ptod && dd if=/dev/zero of=" + disk +
          "/fill bs=4k >/dev/null 2>&1; exec \"$0\" \"$@\""};
  std::vector<std::string> flags = Flags();
  flags[2] = "--cache_dir=" + disk + "/ptod";
  PtodProcess ptod(flags, Log("ptod.log"), {}, launcher);
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("ptod.log"));
  pto::client::CompileClient client(address);
  const pto::v1::Graph graph = AddGraph({24, 24}, {8, 8});
  auto first = client.Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = client.Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->cache_status(), pto::v1::CACHE_STATUS_HIT);
  auto page = HttpGet(ptod.metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find("pto_cache_store_persistent 0"), std::string::npos)
      << *page;
  EXPECT_NE(page->find("pto_cache_store_recoveries_total{action=\"in_memory\"} 1"),
            std::string::npos);
  EXPECT_NE(page->find("pto_cache_max_bytes 1073741824"), std::string::npos);
  ASSERT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
  EXPECT_NE(ReadWholeFile(Log("ptod.log")).find("keeping kernels in memory"),
            std::string::npos);
}

TEST_F(FaultStoreTest, ADiskThatFillsWhileServingKeepsNewKernelsInMemory) {
  if (!CanMountTmpfs(cache_.path())) {
    GTEST_SKIP() << "needs unprivileged user namespaces (unshare -rm) that "
                    "may mount a tmpfs";
  }
  // A 96 MiB tmpfs that a helper fills once the test says "go" (files
  // outside the mount, which the test sees too).
  const std::string disk = cache_.path() + "/disk";
  const std::string go = cache_.path() + "/go";
  const std::string filling = cache_.path() + "/filling";
  const std::string filled = cache_.path() + "/filled";
  std::filesystem::create_directories(disk);
  const std::vector<std::string> launcher = {
      "unshare", "-rm", "sh", "-c",
      "mount -t tmpfs -o size=96m tmpfs " + disk + " && mkdir " + disk +
          "/ptod && (while [ ! -e " + go + " ]; do sleep 0.05; done; touch " +
          filling + "; dd if=/dev/zero of=" + disk +
          "/fill bs=1M >/dev/null 2>&1; touch " + filled +
          ") & exec \"$0\" \"$@\""};
  std::vector<std::string> flags = Flags();
  flags[2] = "--cache_dir=" + disk + "/ptod";
  PtodProcess ptod(flags, Log("ptod.log"), {}, launcher);
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("ptod.log"));
  pto::client::CompileClient client(address);
  ASSERT_TRUE(client.Compile(AddGraph({24, 24}, {8, 8}), "host", {},
                             In(absl::Seconds(120)))
                  .ok());
  std::ofstream(go) << "go";
  // Generous: on a loaded machine the helper and dd may wait for a core.
  for (int i = 0; i < 2400 && !std::filesystem::exists(filled); ++i) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(std::filesystem::exists(filled))
      << "the fill helper " << (std::filesystem::exists(filling)
                                    ? "started but dd did not finish"
                                    : "never saw the go file")
      << "; ptod's log:\n"
      << ReadWholeFile(Log("ptod.log"));
  const pto::v1::Graph graph = AddGraph({32, 32}, {8, 8});
  auto first = client.Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = client.Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_EQ(ptod.StopWith(SIGTERM, absl::Seconds(60)), 0)
      << ReadWholeFile(Log("ptod.log"));
  EXPECT_NE(ReadWholeFile(Log("ptod.log")).find("bytes free on the filesystem"),
            std::string::npos);
}

TEST_F(FaultStoreTest, OversizedRequestIsRefusedAndPtodServesOn) {
  std::vector<std::string> flags = Flags();
  flags.push_back("--max_request_bytes=65536");
  PtodProcess ptod(flags, Log("ptod.log"));
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("ptod.log"));
  pto::client::CompileClient client(address);
  pto::v1::Graph big = AddGraph({24, 24}, {8, 8});
  big.set_name(std::string(1 << 20, 'x'));
  auto refused = client.Compile(big, "host", {}, In(absl::Seconds(30)));
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();
  auto r = client.Compile(AddGraph({24, 24}, {8, 8}), "host", {},
                          In(absl::Seconds(120)));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
}

TEST_F(FaultStoreTest, CacheIsPrivateWhateverTheUmask) {
  const mode_t old_umask = umask(0);  // ptod inherits it
  PtodProcess ptod(Flags(), Log("ptod.log"));
  umask(old_umask);
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("ptod.log"));
  pto::client::CompileClient client(address);
  ASSERT_TRUE(client.Compile(AddGraph({24, 24}, {8, 8}), "host", {},
                             In(absl::Seconds(120)))
                  .ok());
  ASSERT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
  struct stat st;
  ASSERT_EQ(stat(cache_dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir_)) {
    if (!entry.is_regular_file()) continue;
    ASSERT_EQ(stat(entry.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 077, 0u) << entry.path();
    ++files;
  }
  EXPECT_GT(files, 3);
}

TEST_F(FaultStoreTest, AnExposedAddressWithoutProtectionsIsWarnedAbout) {
  std::vector<std::string> flags = {"--address=0.0.0.0:0",
                                    "--metrics_address=",
                                    "--cache_dir=" + cache_dir_};
  PtodProcess ptod(flags, Log("ptod.log"));
  ASSERT_FALSE(ptod.WaitUntilListening().empty())
      << ReadWholeFile(Log("ptod.log"));
  ASSERT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
  const std::string log = ReadWholeFile(Log("ptod.log"));
  for (const char* flag :
       {"--tokens_file", "--tls_cert_file", "--signing_key_file"}) {
    EXPECT_NE(log.find(flag), std::string::npos) << flag << "\n" << log;
  }
}

}  // namespace
}  // namespace pto::testing
