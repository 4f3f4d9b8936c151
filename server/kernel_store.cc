#include "server/kernel_store.h"

#include <openssl/sha.h>

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "pto/server/store_records.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"
#include "spdlog/spdlog.h"

namespace pto::server {
namespace {

constexpr uint32_t kManifestVersion = 1;
constexpr char kStatsKey[] = "s/stats";

std::string ManifestKey(absl::string_view key) {
  return absl::StrCat("m/", key);
}
std::string PayloadKey(absl::string_view digest_hex) {
  return absl::StrCat("p/", digest_hex);
}

std::string Sha256Raw(absl::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
         digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("kernel store: ", what, ": ",
                                          s.ToString()));
}

}  // namespace

bool IsWellFormedKey(absl::string_view key) {
  if (key.size() != 64) return false;
  for (char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string Sha256Hex(absl::string_view bytes) {
  return absl::BytesToHexString(Sha256Raw(bytes));
}

absl::StatusOr<std::unique_ptr<KernelStore>> KernelStore::Open(
    const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  // Kernels are written once and read many times; a few MB of write buffer
  // is plenty and keeps ptod's footprint small.
  options.write_buffer_size = 16 << 20;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  if (!s.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "cannot open kernel store in ", dir, ": ", s.ToString()));
  }
  std::unique_ptr<KernelStore> store(
      new KernelStore(dir, std::unique_ptr<rocksdb::DB>(raw)));
  std::string stats_bytes;
  s = store->db_->Get(rocksdb::ReadOptions(), kStatsKey, &stats_bytes);
  if (s.ok()) {
    StoreStats stats;
    if (!stats.ParseFromString(stats_bytes)) {
      return absl::DataLossError(
          absl::StrCat("kernel store in ", dir, ": unreadable stats record"));
    }
    absl::MutexLock lock(&store->write_mu_);
    store->entries_ = stats.entries();
    store->payloads_ = stats.payloads();
    store->bytes_ = stats.payload_bytes();
  } else if (!s.IsNotFound()) {
    return FromRocks(s, "reading stats");
  }
  return store;
}

KernelStore::KernelStore(std::string dir, std::unique_ptr<rocksdb::DB> db)
    : dir_(std::move(dir)), db_(std::move(db)) {}

KernelStore::~KernelStore() {
  if (db_ != nullptr) {
    rocksdb::Status s = db_->Close();
    if (!s.ok()) spdlog::warn("closing kernel store: {}", s.ToString());
  }
}

absl::StatusOr<CompiledKernel> KernelStore::Get(const std::string& key) {
  std::string manifest_bytes;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), ManifestKey(key), &manifest_bytes);
  if (s.IsNotFound()) return absl::NotFoundError("not in the kernel store");
  if (!s.ok()) return FromRocks(s, "reading manifest");

  Manifest manifest;
  if (!manifest.ParseFromString(manifest_bytes) ||
      manifest.payload_sha256().size() != SHA256_DIGEST_LENGTH) {
    DeleteCorrupt(key, "", 0, "unreadable manifest");
    return absl::NotFoundError("corrupt manifest deleted");
  }
  const std::string digest_hex =
      absl::BytesToHexString(manifest.payload_sha256());
  std::string payload;
  s = db_->Get(rocksdb::ReadOptions(), PayloadKey(digest_hex), &payload);
  if (s.IsNotFound()) {
    DeleteCorrupt(key, "", 0, "manifest points at a missing payload");
    return absl::NotFoundError("dangling manifest deleted");
  }
  if (!s.ok()) return FromRocks(s, "reading payload");

  CompiledKernel kernel;
  if (Sha256Raw(payload) != manifest.payload_sha256()) {
    DeleteCorrupt(key, digest_hex, manifest.payload_bytes(),
                  "payload digest mismatch");
    return absl::NotFoundError("corrupt payload deleted");
  }
  if (!kernel.binary.ParseFromString(payload)) {
    DeleteCorrupt(key, digest_hex, manifest.payload_bytes(),
                  "payload is not a KernelBinary");
    return absl::NotFoundError("corrupt payload deleted");
  }
  kernel.compile_seconds = manifest.compile_seconds();
  for (const StageSeconds& stage : manifest.stages()) {
    pto::v1::StageTiming& t = kernel.stages.emplace_back();
    t.set_stage(stage.stage());
    t.set_seconds(stage.seconds());
  }
  return kernel;
}

absl::Status KernelStore::Put(const std::string& key,
                              const CompiledKernel& kernel) {
  std::string payload;
  if (!kernel.binary.SerializeToString(&payload)) {
    return absl::InternalError("kernel binary does not serialize");
  }
  Manifest manifest;
  manifest.set_version(kManifestVersion);
  manifest.set_payload_sha256(Sha256Raw(payload));
  manifest.set_payload_bytes(payload.size());
  manifest.set_compile_seconds(kernel.compile_seconds);
  for (const pto::v1::StageTiming& t : kernel.stages) {
    StageSeconds* stage = manifest.add_stages();
    stage->set_stage(t.stage());
    stage->set_seconds(t.seconds());
  }
  manifest.set_created_unix_micros(absl::ToUnixMicros(absl::Now()));
  const std::string payload_key =
      PayloadKey(absl::BytesToHexString(manifest.payload_sha256()));

  absl::MutexLock lock(&write_mu_);
  std::string existing;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), ManifestKey(key), &existing);
  if (!s.ok() && !s.IsNotFound()) return FromRocks(s, "reading manifest");
  const bool new_entry = s.IsNotFound();
  // Identical bytes are stored once, whichever key they were compiled for.
  s = db_->Get(rocksdb::ReadOptions(), payload_key, &existing);
  if (!s.ok() && !s.IsNotFound()) return FromRocks(s, "reading payload");
  const bool new_payload = s.IsNotFound();

  StoreStats stats;
  stats.set_entries(entries_ + (new_entry ? 1 : 0));
  stats.set_payloads(payloads_ + (new_payload ? 1 : 0));
  stats.set_payload_bytes(bytes_ + (new_payload ? payload.size() : 0));

  rocksdb::WriteBatch batch;
  batch.Put(ManifestKey(key), manifest.SerializeAsString());
  if (new_payload) batch.Put(payload_key, payload);
  batch.Put(kStatsKey, stats.SerializeAsString());
  rocksdb::WriteOptions write_options;
  write_options.sync = false;  // WAL on, no fsync: see the header
  s = db_->Write(write_options, &batch);
  if (!s.ok()) return FromRocks(s, "writing kernel");
  entries_ = stats.entries();
  payloads_ = stats.payloads();
  bytes_ = stats.payload_bytes();
  // Issue 5: size-bounded eviction goes here (oldest manifests first, then
  // payloads no manifest refers to), in its own batch with the counters.
  return absl::OkStatus();
}

void KernelStore::DeleteCorrupt(const std::string& key,
                                const std::string& payload_hex,
                                uint64_t payload_bytes,
                                const std::string& why) {
  absl::MutexLock lock(&write_mu_);
  rocksdb::WriteBatch batch;
  uint64_t entries = entries_, payloads = payloads_, bytes = bytes_;
  std::string ignored;
  if (db_->Get(rocksdb::ReadOptions(), ManifestKey(key), &ignored).ok()) {
    batch.Delete(ManifestKey(key));
    if (entries > 0) --entries;
  }
  if (!payload_hex.empty()) {
    if (db_->Get(rocksdb::ReadOptions(), PayloadKey(payload_hex), &ignored)
            .ok()) {
      batch.Delete(PayloadKey(payload_hex));
      if (payloads > 0) --payloads;
      // What Put counted is the manifest's size; the corrupt bytes may differ.
      bytes = bytes >= payload_bytes ? bytes - payload_bytes : 0;
    }
  }
  StoreStats stats;
  stats.set_entries(entries);
  stats.set_payloads(payloads);
  stats.set_payload_bytes(bytes);
  batch.Put(kStatsKey, stats.SerializeAsString());
  rocksdb::Status s = db_->Write(rocksdb::WriteOptions(), &batch);
  ++corrupt_entries_;
  if (!s.ok()) {
    spdlog::error("kernel store: deleting corrupt entry {}: {}",
                  key.substr(0, 12), s.ToString());
    return;
  }
  entries_ = entries;
  payloads_ = payloads;
  bytes_ = bytes;
  spdlog::warn("kernel store: deleted corrupt entry {} ({})",
               key.substr(0, 12), why);
}

KernelStore::Stats KernelStore::GetStats() const {
  absl::MutexLock lock(&write_mu_);
  return Stats{entries_, payloads_, bytes_, corrupt_entries_};
}

}  // namespace pto::server
