#include "server/kernel_store.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "pto/server/store_records.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"
#include "runtime/sha256.h"
#include "spdlog/spdlog.h"

namespace pto::server {
namespace {

constexpr size_t kSha256Bytes = 32;

constexpr uint32_t kManifestVersion = 3;
// A store written with another layout is emptied on open.
constexpr uint32_t kLayoutVersion = 3;
// The store's own secret for record seals: a file in the RocksDB directory
// (RocksDB leaves files it did not name alone), mode 0600.
constexpr char kSealKeyFile[] = "PTO_RECORD_KEY";
constexpr size_t kSealKeyBytes = 32;
constexpr char kSealDomain[] = "pto-store-record-v1";
// Written when RocksDB fails a write for corruption it cannot repair; a
// store holding it is moved aside at the next open.
constexpr char kDamagedMarkerFile[] = "PTO_DAMAGED";
constexpr char kStatsKey[] = "s/stats";
constexpr char kAccessPrefix[] = "a/";
// Pending access times written once this many have gathered, even if the
// granularity has not passed.
constexpr size_t kAccessBatch = 1024;

std::string ManifestKey(absl::string_view key) {
  return absl::StrCat("m/", key);
}
std::string PayloadKey(absl::string_view digest_hex) {
  return absl::StrCat("p/", digest_hex);
}
std::string RefsKey(absl::string_view digest_hex) {
  return absl::StrCat("r/", digest_hex);
}
std::string AccessKey(absl::string_view key) {
  return absl::StrCat(kAccessPrefix, key);
}

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("kernel store: ", what, ": ",
                                          s.ToString()));
}

// The seal of `manifest_bytes` stored under `key` (store_records.proto).
std::string Seal(absl::string_view seal_key, absl::string_view key,
                 absl::string_view manifest_bytes) {
  return runtime::HmacSha256(
      seal_key, absl::StrCat(absl::string_view(kSealDomain, sizeof(kSealDomain)),
                             key, absl::string_view("\0", 1), manifest_bytes));
}

// The manifest inside an "m/" record, its seal unchecked (for dropping the
// entry's references); false if it does not parse.
bool UnwrapManifest(absl::string_view record, Manifest* manifest,
                    SealedManifest* sealed) {
  return sealed->ParseFromArray(record.data(), static_cast<int>(record.size())) &&
         manifest->ParseFromString(sealed->manifest()) &&
         manifest->payload_sha256().size() == kSha256Bytes;
}

// The byte budget of a store kept in memory (OpenOrRecover).
constexpr uint64_t kMaxInMemoryBytes = uint64_t{1} << 30;

// RocksDB is not safe on a full disk (an assertion aborts the process when a
// write fails and a sync follows): the store writes only while the
// filesystem keeps this much free.
constexpr uint64_t kMinFreeDiskBytes = uint64_t{64} << 20;

// RESOURCE_EXHAUSTED when the filesystem holding `path` (or its nearest
// existing ancestor) has less than kMinFreeDiskBytes free.
absl::Status CheckDiskRoom(const std::string& path) {
  std::string at = path;
  struct statvfs fs;
  while (statvfs(at.c_str(), &fs) != 0) {
    const size_t slash = at.find_last_of('/');
    if (errno != ENOENT || slash == std::string::npos || slash == 0) {
      return absl::OkStatus();  // RocksDB will say what is wrong
    }
    at.resize(slash);
  }
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes >= kMinFreeDiskBytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "only ", free_bytes, " bytes free on the filesystem of ", path,
      " (the kernel store keeps ", kMinFreeDiskBytes, " free)"));
}

// `n` bytes from the kernel's random source.
absl::StatusOr<std::string> RandomBytes(size_t n) {
  std::string bytes(n, '\0');
  size_t filled = 0;
  while (filled < n) {
    ssize_t got = getrandom(bytes.data() + filled, n - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return absl::InternalError(
          absl::StrCat("getrandom: ", strerror(errno)));
    }
    filled += static_cast<size_t>(got);
  }
  return bytes;
}

// Reads the store's seal key from `dir`, creating it (random, 0600) if
// there is none.
absl::StatusOr<std::string> LoadOrCreateSealKey(const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/", kSealKeyFile);
  std::string key;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream bytes;
      bytes << in.rdbuf();
      key = bytes.str();
    }
  }
  if (key.size() == kSealKeyBytes) return key;
  if (!key.empty()) {
    spdlog::warn("kernel store in {}: {} is damaged; making a new one (every "
                 "entry will read as corrupt and be recompiled)",
                 dir, kSealKeyFile);
  }
  absl::StatusOr<std::string> fresh = RandomBytes(kSealKeyBytes);
  if (!fresh.ok()) return fresh.status();
  key = *std::move(fresh);
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", tmp, ": ", strerror(errno)));
  }
  const bool written =
      write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) &&
      fsync(fd) == 0;
  close(fd);
  if (!written || rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return absl::UnavailableError(
        absl::StrCat("cannot write ", path, ": ", strerror(errno)));
  }
  return key;
}

std::string AccessRecord(int64_t unix_seconds) {
  AccessTime access;
  access.set_unix_seconds(unix_seconds);
  return access.SerializeAsString();
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
  return runtime::ToHex(runtime::Sha256(bytes));
}

absl::StatusOr<std::unique_ptr<KernelStore>> KernelStore::Open(
    const std::string& dir, Options options) {
  return OpenWithEnv(dir, std::move(options), nullptr);
}

absl::StatusOr<KernelStore::Recovered> KernelStore::OpenOrRecover(
    const std::string& dir, const Options& options) {
  Recovered recovered;
  absl::StatusOr<std::unique_ptr<KernelStore>> opened = Open(dir, options);
  if (opened.ok()) {
    recovered.store = *std::move(opened);
    return recovered;
  }
  if (absl::IsFailedPrecondition(opened.status())) return opened.status();
  recovered.why = std::string(opened.status().message());
  if (absl::IsDataLoss(opened.status())) {
    recovered.moved_to = absl::StrCat(
        dir, ".damaged-",
        absl::FormatTime("%Y%m%dT%H%M%E6SZ", absl::Now(), absl::UTCTimeZone()));
    if (rename(dir.c_str(), recovered.moved_to.c_str()) == 0) {
      spdlog::error(
          "kernel store in {} is damaged ({}); moved it to {} and starting "
          "on a fresh one",
          dir, recovered.why, recovered.moved_to);
      opened = Open(dir, options);
      if (opened.ok()) {
        recovered.store = *std::move(opened);
        recovered.recovery = Recovery::kMovedAside;
        return recovered;
      }
      recovered.why = std::string(opened.status().message());
    } else {
      recovered.why = absl::StrCat(recovered.why, "; moving it to ",
                                   recovered.moved_to, ": ", strerror(errno));
    }
    recovered.moved_to.clear();
  }
  spdlog::error(
      "no kernel store can be opened in {} ({}); keeping kernels in memory "
      "until restart",
      dir, recovered.why);
  // In memory the budget is memory: at most kMaxInMemoryBytes, and young
  // entries are evicted too.
  Options in_memory = options;
  in_memory.max_bytes = options.max_bytes == 0
                            ? kMaxInMemoryBytes
                            : std::min(options.max_bytes, kMaxInMemoryBytes);
  in_memory.min_age = absl::ZeroDuration();
  auto env = std::unique_ptr<rocksdb::Env>(
      rocksdb::NewMemEnv(rocksdb::Env::Default()));
  opened = OpenWithEnv("/pto-kernel-store", in_memory, env.get());
  if (!opened.ok()) return opened.status();
  (*opened)->env_ = std::move(env);
  (*opened)->persistent_ = false;
  recovered.store = *std::move(opened);
  recovered.recovery = Recovery::kInMemory;
  return recovered;
}

absl::StatusOr<std::unique_ptr<KernelStore>> KernelStore::OpenWithEnv(
    const std::string& dir, Options options, rocksdb::Env* env) {
  if (env == nullptr) {
    absl::Status room = CheckDiskRoom(dir);
    if (!room.ok()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "cannot open kernel store in ", dir, ": ", room.message()));
    }
    std::ifstream marker(absl::StrCat(dir, "/", kDamagedMarkerFile));
    if (marker) {
      std::string why;
      std::getline(marker, why);
      return absl::DataLossError(absl::StrCat(
          "kernel store in ", dir, " was marked damaged: ", why));
    }
  }
  rocksdb::Options rocks;
  rocks.create_if_missing = true;
  if (env != nullptr) rocks.env = env;
  // Kernels are written once and read many times; a few MB of write buffer
  // is plenty, keeps ptod's footprint small, and bounds the WAL a restart
  // after a crash must replay.
  rocks.write_buffer_size = 4 << 20;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(rocks, dir, &raw);
  if (!s.ok()) {
    const std::string message = absl::StrCat(
        "cannot open kernel store in ", dir, ": ", s.ToString());
    const std::string text = s.ToString();
    if (absl::StrContains(text, "lock file") ||
        absl::StrContains(text, "/LOCK")) {
      return absl::FailedPreconditionError(
          absl::StrCat(message, " (is another ptod using it?)"));
    }
    if (s.IsNoSpace() || absl::StrContains(text, "No space left")) {
      return absl::ResourceExhaustedError(message);
    }
    if (absl::StrContains(text, "Permission denied") ||
        absl::StrContains(text, "Read-only file system")) {
      return absl::UnavailableError(message);
    }
    return absl::DataLossError(message);
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  absl::StatusOr<std::string> seal_key =
      env == nullptr ? LoadOrCreateSealKey(dir) : RandomBytes(kSealKeyBytes);
  if (!seal_key.ok()) return seal_key.status();
  std::unique_ptr<KernelStore> store(new KernelStore(
      dir, std::move(db), *std::move(seal_key), std::move(options)));
  std::string stats_bytes;
  s = store->db_->Get(rocksdb::ReadOptions(), kStatsKey, &stats_bytes);
  if (s.IsNotFound()) {
    std::unique_ptr<rocksdb::Iterator> it(
        store->db_->NewIterator(rocksdb::ReadOptions()));
    it->SeekToFirst();
    if (it->Valid() || !it->status().ok()) {
      return absl::DataLossError(absl::StrCat(
          "kernel store in ", dir, ": records without a stats record"));
    }
    // A new store: record the layout so that a later one can tell.
    absl::MutexLock lock(&store->write_mu_);
    rocksdb::WriteBatch batch;
    absl::Status status = store->CommitLocked(&batch, 0, 0, 0);
    if (!status.ok()) return status;
    return store;
  }
  if (!s.ok()) {
    return absl::DataLossError(absl::StrCat("kernel store in ", dir,
                                            ": reading stats: ", s.ToString()));
  }
  StoreStats stats;
  if (!stats.ParseFromString(stats_bytes)) {
    return absl::DataLossError(
        absl::StrCat("kernel store in ", dir, ": unreadable stats record"));
  }
  if (stats.layout_version() != kLayoutVersion) {
    spdlog::warn(
        "kernel store in {}: record layout {} (this ptod writes {}); "
        "dropping its {} kernels",
        dir, stats.layout_version(), kLayoutVersion, stats.entries());
    absl::Status status = store->Purge();
    if (!status.ok()) return status;
    return store;
  }
  absl::MutexLock lock(&store->write_mu_);
  store->entries_ = stats.entries();
  store->payloads_ = stats.payloads();
  store->bytes_ = stats.payload_bytes();
  store->generation_ = stats.generation();
  return store;
}

KernelStore::KernelStore(std::string dir, std::unique_ptr<rocksdb::DB> db,
                         std::string seal_key, Options options)
    : dir_(std::move(dir)),
      db_(std::move(db)),
      seal_key_(std::move(seal_key)),
      options_(std::move(options)),
      last_access_flush_(Now()) {}

KernelStore::~KernelStore() {
  if (db_ != nullptr) {
    FlushAccessTimes();
    if (persistent_) {
      absl::Status room = CheckDiskRoom(dir_);
      if (!room.ok()) {
        // Closing writes, and RocksDB aborts the process when a write fails
        // on a full disk: leave it open for the process's exit to close.
        // Everything stored is in the WAL, replayed at the next open.
        spdlog::warn("kernel store in {}: not closed ({})", dir_,
                     std::string(room.message()));
        (void)db_.release();
        return;
      }
    }
    // Write the memtable out so that the next Open has no WAL to replay
    // (replaying a full write buffer of kernels takes ~0.15 s). After a
    // crash the replay is still bounded by that size.
    rocksdb::Status flushed = db_->Flush(rocksdb::FlushOptions());
    if (!flushed.ok()) {
      spdlog::warn("flushing kernel store: {}", flushed.ToString());
    }
    rocksdb::Status s = db_->Close();
    if (!s.ok()) spdlog::warn("closing kernel store: {}", s.ToString());
  }
}

absl::StatusOr<CompiledKernel> KernelStore::Get(const std::string& key) {
  absl::StatusOr<CompiledKernel> local = GetLocal(key);
  if (local.ok() && options_.on_hit) options_.on_hit(false);
  if (local.ok() || options_.remote == nullptr) return local;
  absl::StatusOr<CompiledKernel> remote = options_.remote->Get(key);
  if (!remote.ok()) return local;
  if (options_.on_hit) options_.on_hit(true);
  absl::Status stored = PutLocal(key, *remote);
  if (!stored.ok()) {
    spdlog::warn("kernel store: keeping {} from the remote tier failed: {}",
                 key.substr(0, 12), stored.ToString());
  }
  return remote;
}

absl::Status KernelStore::Put(const std::string& key,
                              const CompiledKernel& kernel) {
  absl::Status stored = PutLocal(key, kernel);
  // A kernel refused as malformed is not shared either.
  if (options_.remote != nullptr && !absl::IsInvalidArgument(stored)) {
    options_.remote->PutAsync(key, kernel);
  }
  return stored;
}

absl::StatusOr<CompiledKernel> KernelStore::GetLocal(const std::string& key) {
  std::string record;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), ManifestKey(key), &record);
  if (s.IsNotFound()) return absl::NotFoundError("not in the kernel store");
  if (s.IsCorruption()) {
    MarkDamaged(s.ToString());
    DeleteCorrupt(key, false, absl::StrCat("manifest: ", s.ToString()));
    return absl::NotFoundError("corrupt manifest deleted");
  }
  if (!s.ok()) return Failed(s, "reading manifest");

  SealedManifest sealed;
  Manifest manifest;
  CompiledKernel kernel;
  if (!sealed.ParseFromString(record) ||
      !runtime::ConstantTimeEquals(
          sealed.seal(), Seal(seal_key_, key, sealed.manifest()))) {
    DeleteCorrupt(key, false,
                  "record seal mismatch (changed on disk or moved from "
                  "another key)");
    return absl::NotFoundError("corrupt manifest deleted");
  }
  if (!manifest.ParseFromString(sealed.manifest()) ||
      manifest.version() != kManifestVersion ||
      manifest.payload_sha256().size() != kSha256Bytes ||
      runtime::Sha256(manifest.binary_meta()) != manifest.binary_meta_sha256() ||
      !kernel.binary.ParseFromString(manifest.binary_meta()) ||
      kernel.binary.payload_sha256() != manifest.payload_sha256() ||
      !kernel.binary.native_payload().empty()) {
    DeleteCorrupt(key, false, "unreadable manifest");
    return absl::NotFoundError("corrupt manifest deleted");
  }
  const std::string digest_hex =
      absl::BytesToHexString(manifest.payload_sha256());
  std::string payload;
  s = db_->Get(rocksdb::ReadOptions(), PayloadKey(digest_hex), &payload);
  if (s.IsNotFound()) {
    DeleteCorrupt(key, false, "manifest points at a missing payload");
    return absl::NotFoundError("dangling manifest deleted");
  }
  if (s.IsCorruption()) {
    MarkDamaged(s.ToString());
    DeleteCorrupt(key, true, absl::StrCat("payload: ", s.ToString()));
    return absl::NotFoundError("corrupt payload deleted");
  }
  if (!s.ok()) return Failed(s, "reading payload");
  if (payload.size() != manifest.payload_bytes() ||
      runtime::Sha256(payload) != manifest.payload_sha256()) {
    DeleteCorrupt(key, true, "payload digest mismatch");
    return absl::NotFoundError("corrupt payload deleted");
  }
  kernel.binary.set_native_payload(std::move(payload));
  kernel.compile_seconds = manifest.compile_seconds();
  for (const StageSeconds& stage : manifest.stages()) {
    pto::v1::StageTiming& t = kernel.stages.emplace_back();
    t.set_stage(stage.stage());
    t.set_seconds(stage.seconds());
  }
  Touch(key);
  return kernel;
}

absl::Status KernelStore::PutLocal(const std::string& key,
                                   const CompiledKernel& kernel) {
  const std::string& payload = kernel.binary.native_payload();
  const std::string payload_sha256 = runtime::Sha256(payload);
  if (kernel.binary.payload_sha256() != payload_sha256) {
    return absl::InvalidArgumentError(
        "kernel store: the binary's payload_sha256 is not its payload's");
  }
  if (persistent_) {
    absl::Status room = CheckDiskRoom(dir_);
    if (!room.ok()) return room;
  }
  pto::v1::KernelBinary meta = kernel.binary;
  meta.clear_native_payload();
  Manifest manifest;
  manifest.set_version(kManifestVersion);
  manifest.set_payload_sha256(payload_sha256);
  manifest.set_payload_bytes(payload.size());
  manifest.set_compile_seconds(kernel.compile_seconds);
  for (const pto::v1::StageTiming& t : kernel.stages) {
    StageSeconds* stage = manifest.add_stages();
    stage->set_stage(t.stage());
    stage->set_seconds(t.seconds());
  }
  manifest.set_created_unix_micros(absl::ToUnixMicros(Now()));
  if (!meta.SerializeToString(manifest.mutable_binary_meta())) {
    return absl::InternalError("kernel binary does not serialize");
  }
  manifest.set_binary_meta_sha256(runtime::Sha256(manifest.binary_meta()));
  SealedManifest sealed;
  *sealed.mutable_manifest() = manifest.SerializeAsString();
  sealed.set_seal(Seal(seal_key_, key, sealed.manifest()));
  const std::string manifest_bytes = sealed.SerializeAsString();
  const std::string digest_hex =
      absl::BytesToHexString(manifest.payload_sha256());
  const int64_t now_s = absl::ToUnixSeconds(Now());

  absl::MutexLock lock(&write_mu_);
  uint64_t entries = entries_, payloads = payloads_, bytes = bytes_;
  rocksdb::WriteBatch batch;
  // Replacing an entry drops its reference first (it may be this payload).
  std::string old_bytes;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), ManifestKey(key), &old_bytes);
  if (!s.ok() && !s.IsNotFound()) return Failed(s, "reading manifest");
  uint64_t refs = 0;
  if (s.ok()) {
    Manifest old;
    SealedManifest old_sealed;
    if (UnwrapManifest(old_bytes, &old, &old_sealed)) {
      if (old_bytes == manifest_bytes) {
        return absl::OkStatus();  // the same kernel again
      }
      absl::Status removed = RemoveEntryLocked(
          key, old, old_bytes.size(), &batch, &entries, &payloads, &bytes);
      if (!removed.ok()) return removed;
      // Commit the removal first so the reference count read below is
      // current (the batch is not visible to reads).
      absl::Status committed = CommitLocked(&batch, entries, payloads, bytes);
      if (!committed.ok()) return committed;
      batch.Clear();
    } else {
      // Unreadable: replaced without knowing its payload (see DeleteCorrupt).
      if (entries > 0) --entries;
      bytes = bytes >= old_bytes.size() ? bytes - old_bytes.size() : 0;
    }
  }
  std::string refs_bytes;
  s = db_->Get(rocksdb::ReadOptions(), RefsKey(digest_hex), &refs_bytes);
  if (!s.ok() && !s.IsNotFound()) return Failed(s, "reading refs");
  if (s.ok()) {
    PayloadRefs r;
    if (r.ParseFromString(refs_bytes)) refs = r.refs();
  }
  // Identical native code is stored once, whichever key it was compiled for;
  // a shared payload that can no longer be read (a damaged block) is written
  // again.
  if (refs > 0) {
    std::string stored;
    s = db_->Get(rocksdb::ReadOptions(), PayloadKey(digest_hex), &stored);
    if (!s.ok() || runtime::Sha256(stored) != payload_sha256) {
      batch.Put(PayloadKey(digest_hex), payload);
      if (s.IsNotFound()) {
        ++payloads;
        bytes += payload.size();
      }
    }
  } else {
    batch.Put(PayloadKey(digest_hex), payload);
    ++payloads;
    bytes += payload.size();
  }
  PayloadRefs new_refs;
  new_refs.set_refs(refs + 1);
  batch.Put(RefsKey(digest_hex), new_refs.SerializeAsString());
  batch.Put(ManifestKey(key), manifest_bytes);
  batch.Put(AccessKey(key), AccessRecord(now_s));
  ++entries;
  bytes += manifest_bytes.size();
  absl::Status committed = CommitLocked(&batch, entries, payloads, bytes);
  if (!committed.ok()) return committed;
  {
    absl::MutexLock access_lock(&access_mu_);
    recorded_access_[key] = now_s;
  }
  if (options_.max_bytes > 0 && bytes_ > options_.max_bytes) EvictLocked();
  return absl::OkStatus();
}

absl::Time KernelStore::Now() const {
  return options_.clock ? options_.clock() : absl::Now();
}

absl::Status KernelStore::RemoveEntryLocked(
    const std::string& key, const Manifest& manifest, uint64_t manifest_bytes,
    rocksdb::WriteBatch* batch, uint64_t* entries, uint64_t* payloads,
    uint64_t* bytes) {
  const std::string digest_hex =
      absl::BytesToHexString(manifest.payload_sha256());
  batch->Delete(ManifestKey(key));
  batch->Delete(AccessKey(key));
  if (*entries > 0) --*entries;
  *bytes = *bytes >= manifest_bytes ? *bytes - manifest_bytes : 0;
  std::string refs_bytes;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), RefsKey(digest_hex), &refs_bytes);
  if (s.IsNotFound()) return absl::OkStatus();  // payload already gone
  if (!s.ok()) return Failed(s, "reading refs");
  PayloadRefs refs;
  refs.ParseFromString(refs_bytes);
  if (refs.refs() > 1) {
    refs.set_refs(refs.refs() - 1);
    batch->Put(RefsKey(digest_hex), refs.SerializeAsString());
    return absl::OkStatus();
  }
  batch->Delete(RefsKey(digest_hex));
  batch->Delete(PayloadKey(digest_hex));
  if (*payloads > 0) --*payloads;
  *bytes = *bytes >= manifest.payload_bytes() ? *bytes - manifest.payload_bytes()
                                               : 0;
  return absl::OkStatus();
}

absl::Status KernelStore::CommitLocked(rocksdb::WriteBatch* batch,
                                       uint64_t entries, uint64_t payloads,
                                       uint64_t bytes) {
  StoreStats stats;
  stats.set_entries(entries);
  stats.set_payloads(payloads);
  stats.set_payload_bytes(bytes);
  stats.set_layout_version(kLayoutVersion);
  stats.set_generation(generation_);
  batch->Put(kStatsKey, stats.SerializeAsString());
  rocksdb::WriteOptions write_options;
  write_options.sync = false;  // WAL on, no fsync: see the header
  rocksdb::Status s = db_->Write(write_options, batch);
  if (!s.ok()) {
    return Failed(s, "writing");
  }
  entries_ = entries;
  payloads_ = payloads;
  bytes_ = bytes;
  return absl::OkStatus();
}

void KernelStore::EvictLocked() {
  FlushAccessTimes();
  const int64_t now_s = absl::ToUnixSeconds(Now());
  const int64_t newest_evictable =
      now_s - absl::ToInt64Seconds(options_.min_age);
  std::vector<std::pair<int64_t, std::string>> candidates;
  {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek(kAccessPrefix);
         it->Valid() && it->key().starts_with(kAccessPrefix); it->Next()) {
      AccessTime access;
      access.ParseFromArray(it->value().data(),
                            static_cast<int>(it->value().size()));
      if (access.unix_seconds() > newest_evictable) continue;
      candidates.emplace_back(
          access.unix_seconds(),
          it->key().ToString().substr(sizeof(kAccessPrefix) - 1));
    }
  }
  std::sort(candidates.begin(), candidates.end());
  const auto target =
      static_cast<uint64_t>(options_.low_water * options_.max_bytes);
  uint64_t evicted = 0;
  for (const auto& [last_use, key] : candidates) {
    if (bytes_ <= target) break;
    {
      // A hit since the flush above makes it recent again.
      absl::MutexLock access_lock(&access_mu_);
      auto recorded = recorded_access_.find(key);
      if (recorded != recorded_access_.end() &&
          recorded->second > newest_evictable) {
        continue;
      }
      recorded_access_.erase(key);
    }
    uint64_t entries = entries_, payloads = payloads_, bytes = bytes_;
    rocksdb::WriteBatch batch;
    std::string manifest_bytes;
    rocksdb::Status s =
        db_->Get(rocksdb::ReadOptions(), ManifestKey(key), &manifest_bytes);
    Manifest manifest;
    SealedManifest sealed;
    if (s.IsNotFound() ||
        (s.ok() && !UnwrapManifest(manifest_bytes, &manifest, &sealed))) {
      // An access time without a manifest (or a broken one): drop it.
      batch.Delete(AccessKey(key));
      if (s.ok()) batch.Delete(ManifestKey(key));
    } else if (!s.ok() ||
               !RemoveEntryLocked(key, manifest, manifest_bytes.size(), &batch,
                                  &entries, &payloads, &bytes)
                    .ok()) {
      spdlog::error("kernel store: evicting {}: {}", key.substr(0, 12),
                    s.ToString());
      break;
    }
    absl::Status committed = CommitLocked(&batch, entries, payloads, bytes);
    if (!committed.ok()) {
      spdlog::error("kernel store: evicting {}: {}", key.substr(0, 12),
                    committed.ToString());
      break;
    }
    if (s.ok()) {
      ++evictions_;
      ++evicted;
      if (options_.on_evict) {
        options_.on_evict(static_cast<double>(now_s - last_use));
      }
    }
  }
  if (bytes_ > options_.max_bytes) {
    spdlog::warn(
        "kernel store: {} bytes over the budget of {} after evicting {} "
        "entries (the rest were used within the minimum age)",
        bytes_ - options_.max_bytes, options_.max_bytes, evicted);
  } else {
    spdlog::info("kernel store: evicted {} entries, {} bytes left", evicted,
                 bytes_);
  }
}

void KernelStore::DeleteCorrupt(const std::string& key, bool delete_payload,
                                const std::string& why) {
  absl::MutexLock lock(&write_mu_);
  uint64_t entries = entries_, payloads = payloads_, bytes = bytes_;
  rocksdb::WriteBatch batch;
  std::string manifest_bytes;
  const rocksdb::Status read =
      db_->Get(rocksdb::ReadOptions(), ManifestKey(key), &manifest_bytes);
  // Not found: deleted (and counted) by a racing reader. Another I/O error:
  // the record may be fine; leave it.
  if (!read.ok() && !read.IsCorruption()) return;
  ++corrupt_entries_;
  Manifest manifest;
  SealedManifest sealed;
  if (!read.ok() || !UnwrapManifest(manifest_bytes, &manifest, &sealed)) {
    // Unreadable: its payload reference (if any) cannot be dropped; the
    // payload stays counted until its other users go. Rare enough.
    batch.Delete(ManifestKey(key));
    batch.Delete(AccessKey(key));
    if (entries > 0) --entries;
    bytes = bytes >= manifest_bytes.size() ? bytes - manifest_bytes.size() : 0;
  } else {
    absl::Status removed = RemoveEntryLocked(
        key, manifest, manifest_bytes.size(), &batch, &entries, &payloads,
        &bytes);
    if (removed.ok() && delete_payload) {
      // Corrupt bytes are no use to any key: the other manifests sharing them
      // find the payload gone and are deleted when next read.
      const std::string digest_hex =
          absl::BytesToHexString(manifest.payload_sha256());
      std::string refs_bytes;
      if (db_->Get(rocksdb::ReadOptions(), RefsKey(digest_hex), &refs_bytes)
              .ok()) {
        batch.Delete(RefsKey(digest_hex));
        batch.Delete(PayloadKey(digest_hex));
        if (payloads > 0) --payloads;
        bytes = bytes >= manifest.payload_bytes()
                    ? bytes - manifest.payload_bytes()
                    : 0;
      }
    }
  }
  absl::Status committed = CommitLocked(&batch, entries, payloads, bytes);
  if (!committed.ok()) {
    spdlog::error("kernel store: deleting corrupt entry {}: {}",
                  key.substr(0, 12), committed.ToString());
    return;
  }
  spdlog::warn("kernel store: deleted corrupt entry {} ({})",
               key.substr(0, 12), why);
}

absl::Status KernelStore::Failed(const rocksdb::Status& s,
                                 absl::string_view what) {
  if (s.IsCorruption()) MarkDamaged(s.ToString());
  return FromRocks(s, what);
}

void KernelStore::MarkDamaged(const std::string& why) {
  if (!persistent_ || damaged_marked_.exchange(true)) return;
  const std::string path = absl::StrCat(dir_, "/", kDamagedMarkerFile);
  std::ofstream(path) << why << "\n";
  spdlog::error(
      "kernel store in {}: RocksDB found damaged data ({}); entries it "
      "cannot read are recompiled, those it cannot write are kept in memory, "
      "and the store is moved aside at the next start",
      dir_, why);
}

void KernelStore::Discard(const std::string& key, const std::string& why) {
  DeleteCorrupt(key, false, why);
  if (options_.remote != nullptr) options_.remote->Discard(key);
}

void KernelStore::Touch(const std::string& key) {
  const int64_t now_s = absl::ToUnixSeconds(Now());
  const int64_t granularity =
      std::max<int64_t>(absl::ToInt64Seconds(options_.access_granularity), 0);
  bool flush = false;
  {
    absl::MutexLock lock(&access_mu_);
    auto [it, inserted] = recorded_access_.try_emplace(key, now_s);
    if (!inserted) {
      if (now_s - it->second < granularity || now_s <= it->second) return;
      it->second = now_s;
    }
    pending_access_.emplace_back(key, now_s);
    flush = pending_access_.size() >= kAccessBatch ||
            Now() - last_access_flush_ >= options_.access_granularity;
  }
  if (flush) FlushAccessTimes();
}

void KernelStore::FlushAccessTimes() {
  std::vector<std::pair<std::string, int64_t>> pending;
  {
    absl::MutexLock lock(&access_mu_);
    pending.swap(pending_access_);
    last_access_flush_ = Now();
  }
  if (pending.empty()) return;
  if (persistent_ && !CheckDiskRoom(dir_).ok()) return;  // times are hints
  // Access records are not counted in the byte budget (a few dozen bytes
  // each). One for a key evicted meanwhile is dropped by the next eviction.
  rocksdb::WriteBatch batch;
  for (const auto& [key, seconds] : pending) {
    batch.Put(AccessKey(key), AccessRecord(seconds));
  }
  rocksdb::Status s = db_->Write(rocksdb::WriteOptions(), &batch);
  if (!s.ok()) {
    spdlog::warn("kernel store: writing {} access times: {}", pending.size(),
                 s.ToString());
  }
}

absl::Status KernelStore::Purge() {
  absl::MutexLock lock(&write_mu_);
  {
    absl::MutexLock access_lock(&access_mu_);
    recorded_access_.clear();
    pending_access_.clear();
  }
  // Every record but the stats sorts between these bounds.
  rocksdb::Status s = db_->DeleteRange(rocksdb::WriteOptions(),
                                       db_->DefaultColumnFamily(), "a/", "s/");
  if (!s.ok()) return Failed(s, "purging");
  rocksdb::WriteBatch batch;
  return CommitLocked(&batch, 0, 0, 0);
}

uint64_t KernelStore::generation() const {
  absl::MutexLock lock(&write_mu_);
  return generation_;
}

absl::StatusOr<uint64_t> KernelStore::BumpGeneration() {
  absl::MutexLock lock(&write_mu_);
  ++generation_;
  rocksdb::WriteBatch batch;
  absl::Status s = CommitLocked(&batch, entries_, payloads_, bytes_);
  if (!s.ok()) {
    --generation_;
    return s;
  }
  return generation_;
}

absl::StatusOr<uint64_t> KernelStore::RaiseGeneration(uint64_t at_least) {
  absl::MutexLock lock(&write_mu_);
  if (at_least <= generation_) return generation_;
  const uint64_t before = generation_;
  generation_ = at_least;
  rocksdb::WriteBatch batch;
  absl::Status s = CommitLocked(&batch, entries_, payloads_, bytes_);
  if (!s.ok()) {
    generation_ = before;
    return s;
  }
  return generation_;
}

KernelStore::Stats KernelStore::GetStats() const {
  absl::MutexLock lock(&write_mu_);
  return Stats{entries_, payloads_, bytes_, corrupt_entries_, evictions_};
}

}  // namespace pto::server
