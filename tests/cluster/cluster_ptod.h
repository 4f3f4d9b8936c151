// The options of an in-process ptod replica on a test's Redis Cluster: its
// RocksDB under `dir`, entries signed with `signing_key`, and Redis timeouts
// short enough that a test killing nodes does not wait long. Tests set what
// they vary (workers, TTLs) on the result.
#ifndef PTO_TESTS_CLUSTER_CLUSTER_PTOD_H_
#define PTO_TESTS_CLUSTER_CLUSTER_PTOD_H_

#include <string>

#include "absl/time/time.h"
#include "server/ptod_server.h"
#include "tests/cluster/redis_cluster_fixture.h"

namespace pto::testing {

inline pto::server::PtodOptions ClusterPtodOptions(const RedisCluster& cluster,
                                                   const std::string& dir,
                                                   const std::string& signing_key) {
  pto::server::PtodOptions options;
  options.address = "127.0.0.1:0";
  options.cache_dir = dir + "/cache";
  options.service.signing_key = signing_key;
  options.redis.cluster.seeds = cluster.seeds();
  options.redis.cluster.connection = cluster.connection_options();
  options.redis.cluster.connection.connect_timeout = absl::Milliseconds(200);
  options.redis.cluster.connection.command_timeout = absl::Milliseconds(500);
  return options;
}

}  // namespace pto::testing

#endif  // PTO_TESTS_CLUSTER_CLUSTER_PTOD_H_
