// ptod's shared tier: kernels in a Redis Cluster, so that a cluster of ptod
// replicas compiles each kernel once and a new replica starts warm.
//
//   RedisTierOptions options;
//   options.cluster.seeds = {"redis-0.redis:6379"};
//   options.signing_key = key;                   // required
//   auto tier = RedisTier::Create(options, &metrics);
//   store_options.remote = tier->get();          // KernelStore asks it
//
// Entries: "<key_prefix><storage key>" -> redis_entry.h's sealed record,
// written with SET PX `ttl`; Redis's own eviction (maxmemory-policy
// allkeys-lru on the cluster) bounds their bytes. A read is GET (from a
// replica when the cluster options say so); an entry that does not verify
// under the signing key is deleted at once, counted
// (pto_redis_corrupt_entries_total) and a miss. Writes, Discard's deletes and
// lease releases go through a queue of at most `max_queued_writes` to one
// background thread: PutAsync never waits for Redis, and a full queue drops
// the write (counted as result="dropped").
//
// Compile leases (AwaitCompileLease): "<lease_prefix><storage key>" ->
// a random token, SET NX PX `lease_ttl`; renewed every lease_ttl / 3 by a
// background thread while held (compare-and-renew, so a lease that expired
// and was taken by another ptod is not stolen back), and released by
// compare-and-delete through the write queue, after the kernel's own write.
// A ptod that finds the lease held polls (every lease_poll_min, doubling to
// lease_poll_max) for the kernel or for the lease to go; it compiles itself
// when the lease goes without a kernel (its holder failed, or died and the
// lease expired), or after `lease_wait`. Counted in pto_redis_leases_total.
//
// The cluster's cache generation (SyncGeneration): `generation_key` holds
// the newest generation any ptod has, raised by a max-merge script and never
// lowered; it has no TTL, and every ptod reads it every few seconds, so LRU
// eviction finds it recently used (were it lost, the next sync of a ptod
// that knows the generation writes it back). DeleteAll scans the primaries
// for "<key_prefix>*" and deletes what it finds.
//
// Redis down, slow or partitioned: every operation is bounded by the cluster
// client's timeouts, and a node that failed is skipped at no cost during its
// back-off (cluster_client.h); errors are counted, and logged at most every
// 10 s while they go on (and once when they stop), never per request. Get
// then fails (the store treats it as a miss), no lease is taken, and ptod
// compiles.
//
// Thread-safe.
#ifndef PTO_SERVER_REDIS_TIER_H_
#define PTO_SERVER_REDIS_TIER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/metrics.h"
#include "server/redis/cluster_client.h"
#include "server/remote_tier.h"

namespace pto::server {

struct RedisTierOptions {
  // Seeds, timeouts, credentials, replica reads, pool.
  redis::ClusterOptions cluster;
  // The cluster's signing key (the one binaries are signed with); entries
  // are sealed and verified with it. Required.
  std::string signing_key;
  // Expiry of each entry from its write.
  absl::Duration ttl = absl::Hours(24 * 7);
  size_t max_queued_writes = 256;
  // Entries larger than this are neither written nor accepted on read.
  size_t max_entry_bytes = size_t{64} << 20;
  std::string key_prefix = "pto:kernel:";
  // Compile leases (see above); lease_ttl zero: none.
  absl::Duration lease_ttl = absl::Seconds(10);
  absl::Duration lease_wait = absl::Seconds(130);
  absl::Duration lease_poll_min = absl::Milliseconds(20);
  absl::Duration lease_poll_max = absl::Milliseconds(500);
  std::string lease_prefix = "pto:lease:";
  // The cluster's cache generation (see above).
  std::string generation_key = "pto:generation";
};

class RedisTier final : public RemoteTier {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t corrupt = 0;  // entries that did not verify (deleted)
    uint64_t errors = 0;   // gets, sets and deletes that did not reach Redis
    uint64_t writes = 0;   // entries written
    uint64_t dropped = 0;  // writes not queued (queue full, or too large)
  };

  // INVALID_ARGUMENT without a signing key or with bad cluster options.
  // Does not need Redis up. `metrics` (may be null) must outlive the tier.
  static absl::StatusOr<std::unique_ptr<RedisTier>> Create(
      RedisTierOptions options, Metrics* metrics);

  // StopWaiting(), then stops the writer and the lease renewer: the write
  // in progress finishes (within the timeouts), queued ones are dropped.
  ~RedisTier() override;

  RedisTier(const RedisTier&) = delete;
  RedisTier& operator=(const RedisTier&) = delete;

  absl::StatusOr<CompiledKernel> Get(const std::string& key) override;
  void PutAsync(const std::string& key, const CompiledKernel& kernel) override;
  void Discard(const std::string& key) override;
  bool AwaitCompileLease(const std::string& key) override;
  void ReleaseCompileLease(const std::string& key) override;
  absl::StatusOr<uint64_t> SyncGeneration(uint64_t local) override;
  absl::StatusOr<uint64_t> DeleteAll() override;

  // Ends every lease wait now (they return false) and makes later ones
  // return at once: for shutdown.
  void StopWaiting();

  // Waits until every write queued so far has been attempted.
  void WaitForWrites();

  // The Redis key of storage key `key`.
  std::string RedisKey(const std::string& key) const {
    return options_.key_prefix + key;
  }
  // The Redis key of storage key `key`'s compile lease.
  std::string LeaseKey(const std::string& key) const {
    return options_.lease_prefix + key;
  }
  // Leases this ptod holds now.
  size_t leases_held() const;

  Stats stats() const;
  redis::ClusterClient& client() { return *client_; }

 private:
  struct Write {
    enum Kind { kSet, kDelete, kReleaseLease };
    Kind kind = kSet;
    std::string redis_key;
    std::string value;  // kSet: the entry; kReleaseLease: the token
  };

  RedisTier(RedisTierOptions options, std::unique_ptr<redis::ClusterClient>
                                          client, Metrics* metrics);
  // Whether storage key `key`'s entry is in Redis (asked of its primary).
  bool EntryExists(const std::string& key);
  void Enqueue(Write write);
  void WriterLoop();
  void RenewerLoop();
  // Records whether Redis answered; logs failures (at most every 10 s) and
  // recovery.
  void NoteReachable(bool reachable, const absl::Status& error);

  const RedisTierOptions options_;
  const std::unique_ptr<redis::ClusterClient> client_;
  Metrics* const metrics_;

  absl::Mutex mu_;
  std::deque<Write> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  // Leases held: storage key -> token.
  mutable absl::Mutex lease_mu_;
  absl::flat_hash_map<std::string, std::string> held_
      ABSL_GUARDED_BY(lease_mu_);
  bool stop_waiting_ ABSL_GUARDED_BY(lease_mu_) = false;
  // Set by the destructor: leases of compiles still running at shutdown
  // are renewed until then.
  bool stop_renewing_ ABSL_GUARDED_BY(lease_mu_) = false;

  // What NoteReachable has logged.
  absl::Mutex log_mu_;
  bool down_logged_ ABSL_GUARDED_BY(log_mu_) = false;
  absl::Time last_down_log_ ABSL_GUARDED_BY(log_mu_);
  absl::Time last_failure_ ABSL_GUARDED_BY(log_mu_);
  uint64_t failures_unlogged_ ABSL_GUARDED_BY(log_mu_) = 0;

  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> corrupt_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> dropped_{0};

  // Last: started after everything they use.
  std::thread writer_;
  std::thread renewer_;
};

}  // namespace pto::server

#endif  // PTO_SERVER_REDIS_TIER_H_
