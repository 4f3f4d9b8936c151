// The persistent kernel cache: one RocksDB directory, content addressed.
//
//   auto store = KernelStore::Open("/var/cache/pto/ptod");
//   (*store)->Put(key, kernel);
//   absl::StatusOr<CompiledKernel> k = (*store)->Get(key);  // NOT_FOUND: miss
//
// Layout (keys are ASCII):
//   "m/<request key>"        -> Manifest (server/proto/.../store_records.proto):
//                               payload digest and size, compile time, stages,
//                               creation time
//   "p/<hex sha256(bytes)>"  -> bytes: the serialized KernelBinary
//   "s/stats"                -> StoreStats: entry, payload and byte counters
// A Put writes the manifest, the payload (unless identical bytes are already
// stored: they are stored once) and the updated counters in one WriteBatch,
// so a crash leaves all three or none, and Open() needs no scan to know the
// cache's size. Writes go to the WAL without fsync: a power cut may lose the
// last few kernels, which are recompiled on demand.
//
// Every Get re-hashes the payload. A payload whose digest does not match (or
// that does not parse, or a manifest pointing at nothing) is deleted, counted
// in corrupt_entries, logged, and reported as a miss: a cache must never hand
// out bytes it did not store.
//
// Thread-safe. Size-bounded eviction is issue 5: it belongs in Put (after the
// batch, while stats are at hand) and will need payload reference counts,
// since several manifests may share one payload.
#ifndef PTO_SERVER_KERNEL_STORE_H_
#define PTO_SERVER_KERNEL_STORE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/compiled_kernel.h"

namespace rocksdb {
class DB;
}

namespace pto::server {

// Whether `key` looks like a cache key: 64 lowercase hex digits.
bool IsWellFormedKey(absl::string_view key);

// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(absl::string_view bytes);

class KernelStore {
 public:
  struct Stats {
    uint64_t entries = 0;          // manifests (one per request key)
    uint64_t payloads = 0;         // distinct payloads
    uint64_t bytes = 0;            // bytes of all payloads
    uint64_t corrupt_entries = 0;  // deleted as corrupt since Open()
  };

  // Opens (creating if needed) the store in directory `dir`. Fails with the
  // RocksDB message if the directory is unusable or another process holds it.
  static absl::StatusOr<std::unique_ptr<KernelStore>> Open(
      const std::string& dir);

  // Flushes and closes the database.
  ~KernelStore();

  KernelStore(const KernelStore&) = delete;
  KernelStore& operator=(const KernelStore&) = delete;

  // The kernel stored for `key`. NOT_FOUND on a miss, including an entry
  // found corrupt (and deleted) just now; other errors are I/O failures.
  absl::StatusOr<CompiledKernel> Get(const std::string& key);

  // Stores `kernel` under `key` (replacing an earlier entry for the key).
  absl::Status Put(const std::string& key, const CompiledKernel& kernel);

  Stats GetStats() const;

  const std::string& dir() const { return dir_; }

 private:
  KernelStore(std::string dir, std::unique_ptr<rocksdb::DB> db);

  // Deletes `key`'s manifest and, when `payload_hex` is given, the payload
  // it points at (`payload_bytes` as the manifest recorded it); counts one
  // corrupt entry and logs `why`.
  void DeleteCorrupt(const std::string& key, const std::string& payload_hex,
                     uint64_t payload_bytes, const std::string& why);

  const std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  // Serializes writers: each batch updates the counters read-modify-write.
  mutable absl::Mutex write_mu_;
  uint64_t entries_ ABSL_GUARDED_BY(write_mu_) = 0;
  uint64_t payloads_ ABSL_GUARDED_BY(write_mu_) = 0;
  uint64_t bytes_ ABSL_GUARDED_BY(write_mu_) = 0;
  uint64_t corrupt_entries_ ABSL_GUARDED_BY(write_mu_) = 0;
};

}  // namespace pto::server

#endif  // PTO_SERVER_KERNEL_STORE_H_
