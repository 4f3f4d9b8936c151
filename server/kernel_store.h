// The persistent kernel cache: one RocksDB directory, content addressed, with
// a byte budget.
//
//   KernelStore::Options options;
//   options.max_bytes = 10ull << 30;
//   auto store = KernelStore::Open("/var/cache/pto/ptod", options);
//   (*store)->Put(key, kernel);
//   absl::StatusOr<CompiledKernel> k = (*store)->Get(key);  // NOT_FOUND: miss
//
// Layout (keys are ASCII; records in server/proto/.../store_records.proto):
//   "m/<request key>"        -> Manifest: the KernelBinary without its native
//                               payload (and that record's SHA-256), the
//                               payload's digest and size, compile time,
//                               stages, creation time
//   "p/<hex sha256(native)>" -> bytes: the native payload
//   "r/<hex sha256(native)>" -> PayloadRefs: manifests sharing the payload
//   "a/<request key>"        -> AccessTime: last use, coarse
//   "s/stats"                -> StoreStats: entry, payload and byte counters
// The native payload is the bulk of a kernel and the same for every key that
// compiles to the same code (two tenants with one graph, option spellings the
// compiler ignores): it is stored once and reference counted. A Put writes the
// manifest, the payload (unless already stored), its reference count, the
// access time and the counters in one WriteBatch, so a crash leaves all or
// none, and Open() needs no scan to know the cache's size. Writes go to the
// WAL without fsync: a power cut may lose the last few kernels, which are
// recompiled on demand.
//
// Every record is bound to its key: the manifest is stored with a seal, an
// HMAC-SHA256 under the store's own secret (a random file in the directory,
// mode 0600) over the key and the manifest's bytes, written by Put and never
// recomputed. Every Get checks the seal, re-hashes the metadata and the
// payload, and checks that the metadata's payload digest is the manifest's.
// A mismatch (a record edited on disk even with its digests recomputed, two
// manifests swapped, a record that does not parse, a manifest pointing at
// nothing, a block RocksDB finds corrupt) deletes the entry, counts it in
// corrupt_entries, logs it, and is a miss: a cache must never hand out bytes
// it did not store under that key.
//
// A damaged block also fails other reads whose keys fall in its range, and
// the compactions (and so the writes) that meet it: on the first corruption
// RocksDB reports, the store marks itself damaged (a file in the directory),
// keeps answering (what it cannot read is a miss, what it cannot write is
// not stored), and the next open moves it aside.
//
// Eviction (approximate LRU): a hit records its time in memory, at most once
// per `access_granularity` per key; the times are written in batches. When a
// Put takes the bytes over `max_bytes`, entries are evicted least recently
// used first until the bytes are under `low_water` of the budget; entries
// used within `min_age` are never evicted (so a burst of new kernels cannot
// flush the working set, and the cache may exceed its budget when everything
// is young). Eviction reads the access records (small) to order them: it runs
// rarely, in the writer's thread, never on open.
//
// A second tier shared with other ptods (Options::remote, remote_tier.h)
// sits behind the store: Get asks it on a miss and keeps what it returns,
// Put hands it what was stored, Discard deletes there too.
//
// Thread-safe.
#ifndef PTO_SERVER_KERNEL_STORE_H_
#define PTO_SERVER_KERNEL_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/compiled_kernel.h"
#include "server/remote_tier.h"

namespace rocksdb {
class DB;
class Env;
class Status;
class WriteBatch;
}

namespace pto::server {

class Manifest;

// Whether `key` looks like a cache key: 64 lowercase hex digits.
bool IsWellFormedKey(absl::string_view key);

// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(absl::string_view bytes);

class KernelStore {
 public:
  struct Options {
    // Byte budget of payloads plus manifests; 0: unbounded.
    uint64_t max_bytes = 0;
    // Eviction stops once the bytes are at most this fraction of max_bytes.
    double low_water = 0.9;
    // Entries used more recently than this are never evicted.
    absl::Duration min_age = absl::Minutes(10);
    // Resolution of recorded access times (and so the most often one key's
    // time is written).
    absl::Duration access_granularity = absl::Seconds(60);
    // Called once per evicted entry with the seconds since its last use.
    std::function<void(double idle_seconds)> on_evict;
    // The time (tests move it); empty: absl::Now.
    std::function<absl::Time()> clock;
    // A tier shared with other ptods (remote_tier.h), or null. Get asks it
    // on a miss (or a failed read) and stores what it returns here; Put
    // hands it every kernel after storing it here; Discard deletes there
    // too. Must outlive the store.
    RemoteTier* remote = nullptr;
    // Called on each Get that finds a kernel: `remote` when the remote tier
    // had it.
    std::function<void(bool remote)> on_hit;
  };

  struct Stats {
    uint64_t entries = 0;          // manifests (one per request key)
    uint64_t payloads = 0;         // distinct native payloads
    uint64_t bytes = 0;            // bytes of all payloads and manifests
    uint64_t corrupt_entries = 0;  // deleted as corrupt since Open()
    uint64_t evictions = 0;        // evicted since Open()
  };

  // Opens (creating if needed) the store in directory `dir`. Fails with the
  // RocksDB message if the directory is unusable or another process holds it:
  // DATA_LOSS when the store is damaged (a file corrupt or missing, the stats
  // record unreadable), RESOURCE_EXHAUSTED when the disk is full,
  // UNAVAILABLE when another process holds it or it cannot be read. A store
  // written with another record layout is emptied (its kernels are
  // recompiled on demand).
  static absl::StatusOr<std::unique_ptr<KernelStore>> Open(
      const std::string& dir, Options options);
  static absl::StatusOr<std::unique_ptr<KernelStore>> Open(
      const std::string& dir) {
    return Open(dir, Options());
  }

  // How OpenOrRecover got its store.
  enum class Recovery {
    kNone,        // opened `dir` as it was
    kMovedAside,  // `dir` was damaged: renamed to `moved_to`, a fresh one made
    kInMemory,    // no store could be opened on disk: an empty one in memory
  };
  struct Recovered {
    std::unique_ptr<KernelStore> store;
    Recovery recovery = Recovery::kNone;
    std::string moved_to;  // kMovedAside: where the damaged store is kept
    std::string why;       // kMovedAside, kInMemory: the error that caused it
  };

  // Open(), never kept down by the store's state: a damaged store is moved
  // aside to "<dir>.damaged-<UTC time>" (kept for inspection) and a fresh
  // one opened in its place; when no store can be opened on disk (a full
  // disk, an unwritable directory) the kernels are kept in memory until
  // restart, under the byte budget but at most 1 GiB, young entries
  // evictable too. Fails only when another process holds
  // `dir` (two ptods must not share a cache). Logs what it did.
  static absl::StatusOr<Recovered> OpenOrRecover(const std::string& dir,
                                                 const Options& options);

  // Whether the store is on disk (false: kept in memory, see OpenOrRecover).
  bool persistent() const { return persistent_; }

  // Writes pending access times, then flushes and closes the database.
  ~KernelStore();

  KernelStore(const KernelStore&) = delete;
  KernelStore& operator=(const KernelStore&) = delete;

  // The kernel stored for `key`, else the remote tier's (then stored here).
  // NOT_FOUND on a miss in both, including an entry found corrupt (and
  // deleted) just now; other errors are I/O failures here when the remote
  // tier did not have it either.
  absl::StatusOr<CompiledKernel> Get(const std::string& key);

  // Stores `kernel` under `key` (replacing an earlier entry for the key),
  // then evicts if over budget, then hands it to the remote tier (whatever
  // happened here). RESOURCE_EXHAUSTED, writing nothing here, when the disk
  // has less than 64 MiB free (RocksDB is not safe on a full disk).
  absl::Status Put(const std::string& key, const CompiledKernel& kernel);

  // Deletes `key`'s entry as corrupt (counted and logged with `why`), here
  // and in the remote tier: for a caller that finds a stored kernel wrong in
  // a way the store cannot see (e.g. its signature does not verify).
  void Discard(const std::string& key, const std::string& why);

  // The remote tier's compile lease (RemoteTier::AwaitCompileLease and
  // ReleaseCompileLease); without a remote tier, false and nothing.
  bool AwaitCompileLease(const std::string& key) {
    return options_.remote != nullptr &&
           options_.remote->AwaitCompileLease(key);
  }
  void ReleaseCompileLease(const std::string& key) {
    if (options_.remote != nullptr) options_.remote->ReleaseCompileLease(key);
  }
  // The remote tier (Options::remote), or null.
  RemoteTier* remote() const { return options_.remote; }

  // Deletes every entry (admin purge). The counters restart at zero.
  absl::Status Purge();

  // The cache generation: a number the service mixes into its keys, kept
  // with the counters. BumpGeneration() makes every existing entry
  // unreachable (they age out by eviction) and returns the new one.
  // RaiseGeneration(g) makes it g if it was lower (another ptod sharing the
  // remote tier invalidated) and returns it.
  uint64_t generation() const;
  absl::StatusOr<uint64_t> BumpGeneration();
  absl::StatusOr<uint64_t> RaiseGeneration(uint64_t at_least);

  // Writes the access times recorded in memory (also done every
  // access_granularity, before eviction, and on close).
  void FlushAccessTimes();

  Stats GetStats() const;

  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return options_.max_bytes; }

 private:
  KernelStore(std::string dir, std::unique_ptr<rocksdb::DB> db,
              std::string seal_key, Options options);

  // Get and Put of this store alone.
  absl::StatusOr<CompiledKernel> GetLocal(const std::string& key);
  absl::Status PutLocal(const std::string& key, const CompiledKernel& kernel);

  // Open() on RocksDB environment `env` (null: the default, on disk).
  static absl::StatusOr<std::unique_ptr<KernelStore>> OpenWithEnv(
      const std::string& dir, Options options, rocksdb::Env* env);

  // Adds to `batch` the deletion of `key`'s entry (manifest `manifest`, whose
  // serialized size is `manifest_bytes`), dropping its payload reference,
  // and updates the counters in `*entries`, `*payloads`, `*bytes`.
  absl::Status RemoveEntryLocked(const std::string& key,
                                 const Manifest& manifest,
                                 uint64_t manifest_bytes,
                                 rocksdb::WriteBatch* batch, uint64_t* entries,
                                 uint64_t* payloads, uint64_t* bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  // Writes `batch` plus the counters; on success adopts them.
  absl::Status CommitLocked(rocksdb::WriteBatch* batch, uint64_t entries,
                            uint64_t payloads, uint64_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  // Evicts least recently used entries older than min_age until the bytes
  // are under low_water * max_bytes.
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  // Deletes `key`'s entry and, when `delete_payload`, the payload it points
  // at (corrupt bytes are no use to any key); counts one corrupt entry and
  // logs `why`.
  void DeleteCorrupt(const std::string& key, bool delete_payload,
                     const std::string& why);

  absl::Time Now() const;

  // RocksDB found damaged data (a block that fails its checksum, on a read,
  // a write or a compaction): leaves a marker so that the next open moves the
  // store aside, and logs, once.
  void MarkDamaged(const std::string& why);

  // `s` (not OK) as a status naming `what`; marks the store damaged when it
  // is a corruption.
  absl::Status Failed(const rocksdb::Status& s, absl::string_view what);

  // Records a use of `key` now; writes the batch when it is due.
  void Touch(const std::string& key);

  const std::string dir_;
  // Owns the in-memory environment of a store kept in memory (declared
  // before db_ so it outlives it).
  std::unique_ptr<rocksdb::Env> env_;
  bool persistent_ = true;
  std::unique_ptr<rocksdb::DB> db_;
  // The secret record seals are made with.
  const std::string seal_key_;
  const Options options_;

  // Serializes writers: each batch updates the counters read-modify-write.
  mutable absl::Mutex write_mu_;
  uint64_t entries_ ABSL_GUARDED_BY(write_mu_) = 0;
  uint64_t payloads_ ABSL_GUARDED_BY(write_mu_) = 0;
  uint64_t bytes_ ABSL_GUARDED_BY(write_mu_) = 0;
  uint64_t corrupt_entries_ ABSL_GUARDED_BY(write_mu_) = 0;
  uint64_t evictions_ ABSL_GUARDED_BY(write_mu_) = 0;
  uint64_t generation_ ABSL_GUARDED_BY(write_mu_) = 0;
  std::atomic<bool> damaged_marked_{false};

  // Access times: the last one recorded per key (written or pending), and
  // those not yet written.
  absl::Mutex access_mu_;
  absl::flat_hash_map<std::string, int64_t> recorded_access_
      ABSL_GUARDED_BY(access_mu_);
  std::vector<std::pair<std::string, int64_t>> pending_access_
      ABSL_GUARDED_BY(access_mu_);
  absl::Time last_access_flush_ ABSL_GUARDED_BY(access_mu_);
};

}  // namespace pto::server

#endif  // PTO_SERVER_KERNEL_STORE_H_
