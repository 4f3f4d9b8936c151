// Idle connections to each Redis node, kept for reuse, and which nodes are
// down.
//
//   ConnectionPool pool(options);
//   absl::StatusOr<std::unique_ptr<Connection>> c = pool.Borrow(address);
//   ... (*c)->Command(...) ...
//   pool.Return(*std::move(c));    // broken ones are dropped, the node marked
//                                  // down
//
// A node that fails (cannot be connected to, a command fails or times out)
// is down for a back-off that starts at `down_min` and doubles per failure
// up to `down_max`; while it is down Borrow fails at once with UNAVAILABLE
// (repeating the error that put it down), so an unreachable node costs no
// timeouts. The first connection after the
// back-off is a probe: success clears the node's failures.
//
// Thread-safe.
#ifndef PTO_SERVER_REDIS_CONNECTION_POOL_H_
#define PTO_SERVER_REDIS_CONNECTION_POOL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/redis/connection.h"

namespace pto::server::redis {

struct PoolOptions {
  ConnectionOptions connection;
  // Idle connections kept per node; more are closed when returned.
  size_t max_idle_per_node = 8;
  absl::Duration down_min = absl::Milliseconds(100);
  absl::Duration down_max = absl::Seconds(5);
};

class ConnectionPool {
 public:
  explicit ConnectionPool(PoolOptions options);

  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // An idle connection to `address`, or a new one. UNAVAILABLE at once while
  // the node is down; a failed connect marks it down.
  absl::StatusOr<std::unique_ptr<Connection>> Borrow(
      const std::string& address);

  // Takes back a borrowed connection: kept if healthy and there is room,
  // else closed; a broken one marks its node down.
  void Return(std::unique_ptr<Connection> connection);

  // `address` failed with `error`: closes its idle connections and marks it
  // down.
  void MarkDown(const std::string& address, const std::string& error = "");

  // Whether `address` is in its back-off now.
  bool IsDown(const std::string& address) const;

  // Connections opened since construction (tests check reuse with it).
  uint64_t connections_opened() const;

 private:
  struct Node {
    std::vector<std::unique_ptr<Connection>> idle;
    int failures = 0;
    absl::Time down_until = absl::InfinitePast();
    std::string last_error;  // why it went down
  };

  const PoolOptions options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Node> nodes_ ABSL_GUARDED_BY(mu_);
  uint64_t opened_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pto::server::redis

#endif  // PTO_SERVER_REDIS_CONNECTION_POOL_H_
