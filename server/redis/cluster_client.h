// A Redis Cluster client: routes each command to the node serving its key's
// slot, as the Redis Cluster specification describes.
//
//   ClusterOptions options;
//   options.seeds = {"10.0.0.5:6379", "10.0.0.6:6379"};
//   auto client = ClusterClient::Create(options);
//   (*client)->Set("k", "v", absl::Hours(1));
//   absl::StatusOr<std::optional<std::string>> v = (*client)->Get("k");
//
// Routing: the slot is KeySlot(key) (key_slot.h); the slot map comes from
// CLUSTER SLOTS, asked of the seeds and of the nodes last known. A MOVED
// reply patches the slot, retries at once on the node named, and schedules a
// full refresh of the map; an ASK reply sends ASKING and the command to the
// node named, once, without touching the map; TRYAGAIN, CLUSTERDOWN and
// LOADING are retried after a short pause. A node that fails is marked down
// (ConnectionPool: a back-off, during which it is skipped at no cost) and the
// map is refreshed, so a primary's failover is followed once the cluster has
// promoted a replica. With `read_from_replicas`, reads go to a replica of
// the slot's shard (READONLY connections), the primary when none is up. The
// map is also reloaded every `refresh_interval`.
//
// Bounds: each connect and each socket read or write has its timeout;
// retries and redirects stop after `max_attempts` or once
// `operation_timeout` has passed since the call began, whichever is first.
// A failure is UNAVAILABLE or DEADLINE_EXCEEDED with the last node's error,
// or RESOURCE_EXHAUSTED (not retried) for a reply over max_reply_bytes;
// a Redis error reply (e.g. WRONGTYPE) is returned as a Reply of kError.
//
// Create() does not need the cluster up: the map is loaded on first use and
// whenever it is stale, so a client made while Redis is down works once it
// returns. Thread-safe; connections are pooled per node.
#ifndef PTO_SERVER_REDIS_CLUSTER_CLIENT_H_
#define PTO_SERVER_REDIS_CLUSTER_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/redis/connection_pool.h"
#include "server/redis/reply.h"
#include "server/redis/slot_map.h"

namespace pto::server::redis {

struct ClusterOptions {
  // Nodes to load the slot map from ("host:port"); any one is enough.
  std::vector<std::string> seeds;
  // Timeouts, credentials and TLS of every connection.
  ConnectionOptions connection;
  bool read_from_replicas = false;
  size_t max_idle_per_node = 8;
  absl::Duration operation_timeout = absl::Seconds(1);
  int max_attempts = 6;
  // A node that failed is skipped for this long, doubling per failure.
  absl::Duration down_min = absl::Milliseconds(100);
  absl::Duration down_max = absl::Seconds(5);
  // A stale map is reloaded at most this often.
  absl::Duration min_refresh_interval = absl::Milliseconds(100);
  // A map older than this is reloaded by the next command, so changes that
  // send no redirect (replicas added or removed) are seen too.
  absl::Duration refresh_interval = absl::Seconds(60);
};

class ClusterClient {
 public:
  struct Stats {
    uint64_t moved = 0;       // MOVED redirects followed
    uint64_t ask = 0;         // ASK redirects followed
    uint64_t refreshes = 0;   // slot maps loaded
    uint64_t node_failures = 0;  // connects or commands that failed
  };

  // INVALID_ARGUMENT when there are no seeds or one is not host:port.
  static absl::StatusOr<std::unique_ptr<ClusterClient>> Create(
      ClusterOptions options);

  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;

  // Loads the slot map now. UNAVAILABLE naming each node's error when no
  // node answered with a usable one.
  absl::Status Refresh();

  // Runs `argv` on the node serving `key`'s slot (a replica when `read` and
  // the client reads from replicas).
  absl::StatusOr<Reply> Command(absl::string_view key,
                                const std::vector<std::string>& argv,
                                bool read = false);

  // GET: the value, nullopt when absent.
  absl::StatusOr<std::optional<std::string>> Get(const std::string& key);
  // SET key value PX ttl (ttl zero or less: no expiry).
  absl::Status Set(const std::string& key, const std::string& value,
                   absl::Duration ttl);
  // SET key value NX PX ttl: true when it was set (the key was absent).
  absl::StatusOr<bool> SetIfAbsent(const std::string& key,
                                   const std::string& value,
                                   absl::Duration ttl);
  // DEL: whether the key existed.
  absl::StatusOr<bool> Del(const std::string& key);

  // Every key on the cluster's primaries matching glob `pattern` (SCAN on
  // each, `count` keys a step), in no order: for administration, not for
  // serving. UNAVAILABLE when a primary could not be scanned to the end
  // (the keys of the others are not returned then).
  absl::StatusOr<std::vector<std::string>> ScanKeys(const std::string& pattern,
                                                    int count = 1000);

  // The current slot map (empty until loaded).
  std::shared_ptr<const SlotMap> slot_map() const;
  Stats stats() const;
  ConnectionPool& pool() { return pool_; }

 private:
  explicit ClusterClient(ClusterOptions options);

  // Refresh() unless one ran within min_refresh_interval or is running.
  void MaybeRefresh();
  // Whether the map is older than refresh_interval.
  bool MapIsOld() const;

  // The node to send a command for `slot` to; "" when the slot is
  // unassigned in `map`.
  std::string PickNode(const SlotMap& map, int slot, bool read) const;

  const ClusterOptions options_;
  ConnectionPool pool_;

  mutable absl::Mutex map_mu_;
  std::shared_ptr<const SlotMap> map_ ABSL_GUARDED_BY(map_mu_);
  absl::Time last_refresh_ ABSL_GUARDED_BY(map_mu_) = absl::InfinitePast();
  std::atomic<bool> stale_{true};
  // Held by the thread loading the map.
  absl::Mutex refresh_mu_;

  std::atomic<uint64_t> moved_{0};
  std::atomic<uint64_t> ask_{0};
  std::atomic<uint64_t> refreshes_{0};
  std::atomic<uint64_t> node_failures_{0};
};

}  // namespace pto::server::redis

#endif  // PTO_SERVER_REDIS_CLUSTER_CLIENT_H_
