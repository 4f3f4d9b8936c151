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
// under the signing key is deleted, counted (pto_redis_corrupt_entries_total)
// and a miss. Writes and deletes go through a queue of at most
// `max_queued_writes` to one background thread: PutAsync never waits for
// Redis, and a full queue drops the write (counted as result="dropped").
//
// Redis down, slow or partitioned: every operation is bounded by the cluster
// client's timeouts, and a node that failed is skipped without waiting for a
// back-off (cluster_client.h); errors are counted and logged when Redis goes
// from up to down and back, never per request. Get then fails (the store
// treats it as a miss) and ptod compiles.
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

  // Stops the writer: the write in progress finishes (within the timeouts),
  // queued ones are dropped.
  ~RedisTier() override;

  RedisTier(const RedisTier&) = delete;
  RedisTier& operator=(const RedisTier&) = delete;

  absl::StatusOr<CompiledKernel> Get(const std::string& key) override;
  void PutAsync(const std::string& key, const CompiledKernel& kernel) override;
  void Discard(const std::string& key) override;

  // Waits until every write queued so far has been attempted.
  void WaitForWrites();

  // The Redis key of storage key `key`.
  std::string RedisKey(const std::string& key) const {
    return options_.key_prefix + key;
  }

  Stats stats() const;
  redis::ClusterClient& client() { return *client_; }

 private:
  struct Write {
    std::string redis_key;
    std::string value;  // empty: delete
  };

  RedisTier(RedisTierOptions options, std::unique_ptr<redis::ClusterClient>
                                          client, Metrics* metrics);
  void Enqueue(Write write);
  void WriterLoop();
  // Records whether Redis answered; logs the transitions.
  void NoteReachable(bool reachable, const absl::Status& error);

  const RedisTierOptions options_;
  const std::unique_ptr<redis::ClusterClient> client_;
  Metrics* const metrics_;

  absl::Mutex mu_;
  std::deque<Write> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::atomic<bool> reachable_{true};
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> corrupt_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> dropped_{0};

  // Last: started after everything it uses.
  std::thread writer_;
};

}  // namespace pto::server

#endif  // PTO_SERVER_REDIS_TIER_H_
