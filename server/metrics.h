// ptod's Prometheus metrics and the HTTP endpoint that serves them.
//
//   Metrics metrics;
//   metrics.RecordRequest(RequestResult::kHit);
//   metrics.ObserveCompile(2.5);
//   absl::StatusOr<int> port = metrics.Serve("127.0.0.1:7071");  // /metrics
//
// Series (all prefixed pto_):
//   requests_total{result="hit|miss|coalesced|error|unauthenticated",
//                  tenant}                             counter ("-": unknown)
//   compile_duration_seconds                           histogram, 1 ms .. 1e4 s
//   target_requests_total{target,result="hit|miss|coalesced"}
//                                                      counter: served requests
//                                                      by the resolved target
//                                                      of their kernel
//   target_compile_duration_seconds{target}            histogram: compiles by
//                                                      resolved target
//   compile_stage_duration_seconds{stage=...}          histogram
//   queue_wait_seconds                                 histogram
//   compiles_in_flight                                 gauge
//   cache_entries, cache_bytes                         gauges (persistent store)
//   memory_cache_bytes                                 gauge
//   cache_corrupt_entries_total                        counter
//   cache_store_recoveries_total{action="moved_aside|in_memory"}
//                                                      counter: stores that
//                                                      would not open
//   cache_store_persistent                             gauge: 1 on disk, 0 in
//                                                      memory only
//   cache_max_bytes                                    gauge (0: unbounded)
//   cache_evictions_total                              counter
//   cache_evicted_idle_seconds                         histogram: how long an
//                                                      evicted entry was unused
//   cache_tier_hits_total{tier="memory|rocksdb|redis"} counter: lookups
//                                                      served by each tier
//   compile_seconds_saved_total                        counter
//   compile_timeouts_total                             counter: native compiles
//                                                      killed at the timeout
//   stale_work_dirs_removed_total                      counter: dead ptods'
//                                                      work directories
//                                                      removed at start
// The Redis Cluster tier (server/redis_tier.h), once EnableRedisTier():
//   redis_operations_total{op="get",result="hit|miss|corrupt|error"}
//   redis_operations_total{op="set",result="ok|error|dropped"}
//                                                      counter; "dropped":
//                                                      writes not queued
//                                                      (queue full)
//   redis_operation_duration_seconds{op="get|set"}     histogram, 0.1 ms ..
//   redis_corrupt_entries_total                        counter: entries whose
//                                                      signature did not
//                                                      verify, deleted
//   redis_up                                           gauge: 1 when the last
//                                                      operation reached Redis
//   redis_leases_total{result="taken|waited|expired|timeout|error"}
//                                                      counter: compile
//                                                      leases
// Thread-safe: prometheus-cpp metrics are atomic.
#ifndef PTO_SERVER_METRICS_H_
#define PTO_SERVER_METRICS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace prometheus {
class Counter;
template <typename T>
class Family;
class Exposer;
class Gauge;
class Histogram;
class Registry;
}  // namespace prometheus

namespace pto::server {

enum class RequestResult { kHit, kMiss, kCoalesced, kError, kUnauthenticated };

// Histogram bucket bounds from 1 ms to 10^4 s, each about 2.5x the last.
std::vector<double> DurationBuckets();

class Metrics {
 public:
  Metrics();
  ~Metrics();

  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Starts serving /metrics on `address` ("host:port"; port 0 picks a free
  // one). Returns the bound port. At most once per Metrics.
  absl::StatusOr<int> Serve(const std::string& address);

  // `tenant`: the caller's tenant ("" is the anonymous one; "-" for
  // callers not authenticated).
  void RecordRequest(RequestResult result, const std::string& tenant = "");
  void ObserveCompile(double seconds);
  // A served request (kHit, kMiss or kCoalesced) for `target` as the request
  // named it ("host-x86_64-v3", "ascend-a2a3", ...): only requests whose key
  // was computed, so only target names the compiler knows.
  void RecordTargetRequest(const std::string& target, RequestResult result);
  void ObserveTargetCompile(const std::string& target, double seconds);
  void ObserveStage(const std::string& stage, double seconds);
  void ObserveQueueWait(double seconds);
  void CompileStarted();
  void CompileFinished();
  void SetCacheContents(uint64_t entries, uint64_t bytes);
  void SetMemoryCacheBytes(uint64_t bytes);
  void SetCacheMaxBytes(uint64_t bytes);
  // One entry evicted from the persistent cache after `idle_seconds` unused.
  void ObserveEviction(double idle_seconds);
  // Sets the counter to `total` (the store counts; metrics mirror it).
  void SetCorruptEntries(uint64_t total);
  // The kernel store would not open and was recovered by `action`
  // ("moved_aside" or "in_memory"); `persistent`: whether it is on disk now.
  void RecordStoreRecovery(const std::string& action, bool persistent);
  void AddSecondsSaved(double seconds);
  // A lookup served by `tier`: "memory", "rocksdb" or "redis".
  void RecordTierHit(const std::string& tier);
  // A compile failed DEADLINE_EXCEEDED (its native compiler was killed).
  void RecordCompileTimeout();
  void AddStaleWorkDirsRemoved(uint64_t count);

  // Registers the Redis tier's series (at zero); until then the Redis
  // methods below do nothing. Call before Serve().
  void EnableRedisTier();
  // One Redis operation `op` ("get", "set") with `result` (see above),
  // taking `seconds` (not observed for "dropped").
  void RecordRedisOperation(const std::string& op, const std::string& result,
                            double seconds);
  void RecordRedisCorruptEntry();
  void SetRedisUp(bool up);
  // `result`: "taken", "waited", "expired", "timeout" or "error".
  void RecordRedisLease(const std::string& result);

  prometheus::Registry& registry() { return *registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  // The series of requests_total for (result, tenant), created on first use.
  prometheus::Counter* RequestCounter(RequestResult result,
                                      const std::string& tenant);

  struct RequestCounters;
  std::unique_ptr<RequestCounters> requests_;
  prometheus::Histogram* compile_duration_;
  prometheus::Histogram* queue_wait_;
  prometheus::Gauge* in_flight_;
  prometheus::Gauge* cache_entries_;
  prometheus::Gauge* cache_bytes_;
  prometheus::Gauge* memory_cache_bytes_;
  prometheus::Counter* corrupt_entries_;
  prometheus::Family<prometheus::Counter>* store_recoveries_;
  prometheus::Gauge* store_persistent_;
  prometheus::Counter* evictions_;
  prometheus::Histogram* evicted_idle_;
  prometheus::Gauge* cache_max_bytes_;
  prometheus::Counter* seconds_saved_;
  prometheus::Counter* tier_hits_memory_;
  prometheus::Counter* tier_hits_rocksdb_;
  prometheus::Counter* tier_hits_redis_;
  prometheus::Counter* compile_timeouts_;
  prometheus::Counter* stale_work_dirs_removed_;
  struct RedisSeries;
  std::unique_ptr<RedisSeries> redis_;
  struct StageHistograms;
  std::unique_ptr<StageHistograms> stages_;
  struct TargetSeries;
  std::unique_ptr<TargetSeries> targets_;
};

}  // namespace pto::server

#endif  // PTO_SERVER_METRICS_H_
