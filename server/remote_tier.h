// A kernel cache shared by several ptods, behind each one's own RocksDB
// store (KernelStore::Options::remote): the store asks it on a miss and
// writes what it gets back locally, and hands it every kernel it stores.
// RedisTier (redis_tier.h) is the one ptod ships.
#ifndef PTO_SERVER_REMOTE_TIER_H_
#define PTO_SERVER_REMOTE_TIER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/compiled_kernel.h"

namespace pto::server {

class RemoteTier {
 public:
  virtual ~RemoteTier() = default;

  // The kernel stored under `key`, verified (a tier never returns bytes it
  // cannot vouch for). NOT_FOUND on a miss, including an entry that failed
  // verification (deleted); other errors mean the tier could not be asked
  // within its timeouts. Either way the caller goes on without it.
  virtual absl::StatusOr<CompiledKernel> Get(const std::string& key) = 0;

  // Stores `kernel` under `key` in the background; returns at once.
  virtual void PutAsync(const std::string& key,
                        const CompiledKernel& kernel) = 0;

  // Deletes `key`'s entry in the background (the caller found it wrong).
  virtual void Discard(const std::string& key) = 0;

  // One compile per kernel across the ptods sharing the tier: called before
  // compiling `key`. Takes the compile lease of `key` and returns false
  // (compile it; ReleaseCompileLease after storing it), or, while another
  // ptod holds the lease, waits (bounded) until its kernel is in the tier
  // and returns true (look it up again). Returns false too when the lease
  // cannot be had (the tier is unreachable, the wait timed out, or its
  // holder vanished): compiling twice is better than not at all. The
  // default has no leases.
  virtual bool AwaitCompileLease(const std::string& key) { return false; }

  // Gives up `key`'s lease if this ptod holds it, after the writes queued
  // before (so a waiter finds the kernel once the lease is gone).
  virtual void ReleaseCompileLease(const std::string& key) {}

  // The cache generation the ptods sharing the tier agree on (the salt of
  // every storage key: compile_service.h), after raising it to `local` if
  // it was lower: a max-merge, so the newest generation any ptod has wins
  // and one that missed an update (or a tier that lost the record) catches
  // up. Errors: the tier could not be asked. The default shares nothing and
  // returns `local`.
  virtual absl::StatusOr<uint64_t> SyncGeneration(uint64_t local) {
    return local;
  }

  // Deletes every kernel entry of the tier (admin purge); how many there
  // were. Errors: not every entry could be deleted.
  virtual absl::StatusOr<uint64_t> DeleteAll() { return uint64_t{0}; }
};

}  // namespace pto::server

#endif  // PTO_SERVER_REMOTE_TIER_H_
