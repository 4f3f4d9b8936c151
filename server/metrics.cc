#include "server/metrics.h"

#include <cmath>
#include <exception>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace pto::server {

struct Metrics::StageHistograms {
  prometheus::Family<prometheus::Histogram>* family;
  // Family::Add is thread-safe; this makes the corrupt-entry counter's
  // read-and-increment atomic and serializes stage lookups.
  absl::Mutex mu;
};

struct Metrics::RequestCounters {
  prometheus::Family<prometheus::Counter>* family;
  // Read-locked on every request, write-locked to add a series.
  absl::Mutex mu;
  // (result, tenant) -> counter; tenants come from the tokens file, so this
  // stays small.
  std::map<std::pair<int, std::string>, prometheus::Counter*, std::less<>>
      counters ABSL_GUARDED_BY(mu);
};

struct Metrics::TargetSeries {
  prometheus::Family<prometheus::Counter>* requests;
  prometheus::Family<prometheus::Histogram>* compiles;
  absl::Mutex mu;  // serializes lookups (Add returns a known label's series)
};

struct Metrics::RedisSeries {
  // (op, result) and (lease result) -> series, all made in the constructor.
  std::map<std::pair<std::string, std::string>, prometheus::Counter*> ops;
  std::map<std::string, prometheus::Histogram*> durations;
  std::map<std::string, prometheus::Counter*> leases;
  prometheus::Counter* corrupt = nullptr;
  prometheus::Gauge* up = nullptr;
};

namespace {

// 0.1 ms to ~10 s, each bound ~2.5x the last: a Redis operation is far
// quicker than a compile.
std::vector<double> RedisBuckets() {
  std::vector<double> bounds;
  for (int i = 0; i <= 12; ++i) bounds.push_back(1e-4 * std::pow(10.0, 0.4 * i));
  return bounds;
}

}  // namespace

std::vector<double> DurationBuckets() {
  // 1 ms * 10^(0.4 i): each bound ~2.51x the previous, up to 6310 s; then
  // 10^4 s closes the range.
  std::vector<double> bounds;
  for (int i = 0; i <= 17; ++i) bounds.push_back(1e-3 * std::pow(10.0, 0.4 * i));
  bounds.push_back(1e4);
  return bounds;
}

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(std::make_unique<RequestCounters>()),
      stages_(std::make_unique<StageHistograms>()),
      targets_(std::make_unique<TargetSeries>()) {
  targets_->requests = &prometheus::BuildCounter()
                            .Name("pto_target_requests_total")
                            .Help("Served compile requests by target and result.")
                            .Register(*registry_);
  targets_->compiles = &prometheus::BuildHistogram()
                            .Name("pto_target_compile_duration_seconds")
                            .Help("Compile time by target.")
                            .Register(*registry_);
  requests_->family = &prometheus::BuildCounter()
                           .Name("pto_requests_total")
                           .Help("Compile requests by result and tenant.")
                           .Register(*registry_);
  // The anonymous tenant's series exist (at 0) from the start.
  for (RequestResult r : {RequestResult::kHit, RequestResult::kMiss,
                          RequestResult::kCoalesced, RequestResult::kError}) {
    RequestCounter(r, "");
  }
  compile_duration_ =
      &prometheus::BuildHistogram()
           .Name("pto_compile_duration_seconds")
           .Help("Wall time of each compile (cache misses).")
           .Register(*registry_)
           .Add({}, DurationBuckets());
  stages_->family = &prometheus::BuildHistogram()
                         .Name("pto_compile_stage_duration_seconds")
                         .Help("Wall time of each compile stage.")
                         .Register(*registry_);
  queue_wait_ = &prometheus::BuildHistogram()
                     .Name("pto_queue_wait_seconds")
                     .Help("Time a compile waited for a worker.")
                     .Register(*registry_)
                     .Add({}, DurationBuckets());
  in_flight_ = &prometheus::BuildGauge()
                    .Name("pto_compiles_in_flight")
                    .Help("Compiles running now.")
                    .Register(*registry_)
                    .Add({});
  cache_entries_ = &prometheus::BuildGauge()
                        .Name("pto_cache_entries")
                        .Help("Kernels in the persistent cache.")
                        .Register(*registry_)
                        .Add({});
  cache_bytes_ = &prometheus::BuildGauge()
                      .Name("pto_cache_bytes")
                      .Help("Payload and manifest bytes in the persistent cache.")
                      .Register(*registry_)
                      .Add({});
  memory_cache_bytes_ = &prometheus::BuildGauge()
                             .Name("pto_memory_cache_bytes")
                             .Help("Bytes in the in-memory kernel cache.")
                             .Register(*registry_)
                             .Add({});
  corrupt_entries_ = &prometheus::BuildCounter()
                          .Name("pto_cache_corrupt_entries_total")
                          .Help("Cache entries found corrupt and deleted.")
                          .Register(*registry_)
                          .Add({});
  store_recoveries_ = &prometheus::BuildCounter()
                           .Name("pto_cache_store_recoveries_total")
                           .Help("Kernel stores that would not open: moved "
                                 "aside (damaged) or replaced by one in "
                                 "memory (no usable directory).")
                           .Register(*registry_);
  store_persistent_ = &prometheus::BuildGauge()
                           .Name("pto_cache_store_persistent")
                           .Help("1 while the kernel store is on disk, 0 while "
                                 "kernels are kept in memory only.")
                           .Register(*registry_)
                           .Add({});
  store_persistent_->Set(1);
  compile_timeouts_ =
      &prometheus::BuildCounter()
           .Name("pto_compile_timeouts_total")
           .Help("Compiles whose native compiler ran past "
                 "--native_compile_timeout and was killed.")
           .Register(*registry_)
           .Add({});
  stale_work_dirs_removed_ =
      &prometheus::BuildCounter()
           .Name("pto_stale_work_dirs_removed_total")
           .Help("Work directories of dead ptods removed at start.")
           .Register(*registry_)
           .Add({});
  evictions_ = &prometheus::BuildCounter()
                    .Name("pto_cache_evictions_total")
                    .Help("Entries evicted from the persistent cache.")
                    .Register(*registry_)
                    .Add({});
  evicted_idle_ =
      &prometheus::BuildHistogram()
           .Name("pto_cache_evicted_idle_seconds")
           .Help("How long each evicted entry had gone unused.")
           .Register(*registry_)
           .Add({}, DurationBuckets());
  cache_max_bytes_ = &prometheus::BuildGauge()
                          .Name("pto_cache_max_bytes")
                          .Help("Byte budget of the persistent cache (0: none).")
                          .Register(*registry_)
                          .Add({});
  auto& tier_hits = prometheus::BuildCounter()
                        .Name("pto_cache_tier_hits_total")
                        .Help("Lookups served by each cache tier: memory, "
                              "rocksdb, redis.")
                        .Register(*registry_);
  tier_hits_memory_ = &tier_hits.Add({{"tier", "memory"}});
  tier_hits_rocksdb_ = &tier_hits.Add({{"tier", "rocksdb"}});
  tier_hits_redis_ = &tier_hits.Add({{"tier", "redis"}});
  seconds_saved_ = &prometheus::BuildCounter()
                        .Name("pto_compile_seconds_saved_total")
                        .Help("Compile seconds saved by hits and coalescing.")
                        .Register(*registry_)
                        .Add({});
}

Metrics::~Metrics() = default;

absl::StatusOr<int> Metrics::Serve(const std::string& address) {
  if (exposer_ != nullptr) {
    return absl::FailedPreconditionError("metrics are already served");
  }
  // prometheus-cpp (civetweb) reports a failed bind by throwing; keep that
  // inside this file.
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat(
        "cannot serve metrics on ", address, ": ", e.what()));
  }
  exposer_->RegisterCollectable(registry_);
  std::vector<int> ports = exposer_->GetListeningPorts();
  if (ports.empty()) {
    return absl::UnavailableError(
        absl::StrCat("metrics endpoint on ", address, " has no port"));
  }
  return ports.front();
}

prometheus::Counter* Metrics::RequestCounter(RequestResult result,
                                             const std::string& tenant) {
  static const char* const kNames[] = {"hit", "miss", "coalesced", "error",
                                       "unauthenticated"};
  const int index = static_cast<int>(result);
  const std::pair<int, std::string> series(index, tenant);
  {
    absl::ReaderMutexLock lock(&requests_->mu);
    auto it = requests_->counters.find(series);
    if (it != requests_->counters.end()) return it->second;
  }
  absl::MutexLock lock(&requests_->mu);
  prometheus::Counter*& slot = requests_->counters[series];
  if (slot == nullptr) {
    slot = &requests_->family->Add(
        {{"result", kNames[index]}, {"tenant", tenant}});
  }
  return slot;
}

void Metrics::RecordRequest(RequestResult result, const std::string& tenant) {
  RequestCounter(result, tenant)->Increment();
}

void Metrics::ObserveCompile(double seconds) {
  compile_duration_->Observe(seconds);
}

void Metrics::RecordTargetRequest(const std::string& target, RequestResult result) {
  const char* name = result == RequestResult::kHit    ? "hit"
                     : result == RequestResult::kMiss ? "miss"
                                                      : "coalesced";
  prometheus::Counter* counter;
  {
    absl::MutexLock lock(&targets_->mu);
    counter = &targets_->requests->Add({{"target", target}, {"result", name}});
  }
  counter->Increment();
}

void Metrics::ObserveTargetCompile(const std::string& target, double seconds) {
  prometheus::Histogram* histogram;
  {
    absl::MutexLock lock(&targets_->mu);
    histogram = &targets_->compiles->Add({{"target", target}}, DurationBuckets());
  }
  histogram->Observe(seconds);
}

void Metrics::ObserveStage(const std::string& stage, double seconds) {
  prometheus::Histogram* histogram;
  {
    absl::MutexLock lock(&stages_->mu);
    // Add() returns the existing series for known labels.
    histogram = &stages_->family->Add({{"stage", stage}}, DurationBuckets());
  }
  histogram->Observe(seconds);
}

void Metrics::ObserveQueueWait(double seconds) { queue_wait_->Observe(seconds); }
void Metrics::CompileStarted() { in_flight_->Increment(); }
void Metrics::CompileFinished() { in_flight_->Decrement(); }

void Metrics::SetCacheContents(uint64_t entries, uint64_t bytes) {
  cache_entries_->Set(static_cast<double>(entries));
  cache_bytes_->Set(static_cast<double>(bytes));
}

void Metrics::SetMemoryCacheBytes(uint64_t bytes) {
  memory_cache_bytes_->Set(static_cast<double>(bytes));
}

void Metrics::SetCacheMaxBytes(uint64_t bytes) {
  cache_max_bytes_->Set(static_cast<double>(bytes));
}

void Metrics::ObserveEviction(double idle_seconds) {
  evictions_->Increment();
  evicted_idle_->Observe(idle_seconds);
}

void Metrics::SetCorruptEntries(uint64_t total) {
  absl::MutexLock lock(&stages_->mu);
  const double delta = static_cast<double>(total) - corrupt_entries_->Value();
  if (delta > 0) corrupt_entries_->Increment(delta);
}

void Metrics::RecordStoreRecovery(const std::string& action,
                                  bool persistent) {
  store_recoveries_->Add({{"action", action}}).Increment();
  store_persistent_->Set(persistent ? 1 : 0);
}

void Metrics::AddSecondsSaved(double seconds) {
  if (seconds > 0) seconds_saved_->Increment(seconds);
}

void Metrics::RecordCompileTimeout() { compile_timeouts_->Increment(); }

void Metrics::AddStaleWorkDirsRemoved(uint64_t count) {
  if (count > 0) stale_work_dirs_removed_->Increment(static_cast<double>(count));
}

void Metrics::RecordTierHit(const std::string& tier) {
  if (tier == "memory") {
    tier_hits_memory_->Increment();
  } else if (tier == "rocksdb") {
    tier_hits_rocksdb_->Increment();
  } else if (tier == "redis") {
    tier_hits_redis_->Increment();
  }
}

void Metrics::EnableRedisTier() {
  if (redis_ != nullptr) return;
  redis_ = std::make_unique<RedisSeries>();
  auto& redis_ops = prometheus::BuildCounter()
                        .Name("pto_redis_operations_total")
                        .Help("Operations on the Redis Cluster tier by "
                              "result.")
                        .Register(*registry_);
  for (const char* result : {"hit", "miss", "corrupt", "error"}) {
    redis_->ops[{"get", result}] =
        &redis_ops.Add({{"op", "get"}, {"result", result}});
  }
  for (const char* result : {"ok", "error", "dropped"}) {
    redis_->ops[{"set", result}] =
        &redis_ops.Add({{"op", "set"}, {"result", result}});
  }
  auto& redis_durations =
      prometheus::BuildHistogram()
          .Name("pto_redis_operation_duration_seconds")
          .Help("Wall time of each Redis Cluster tier operation.")
          .Register(*registry_);
  for (const char* op : {"get", "set"}) {
    redis_->durations[op] = &redis_durations.Add({{"op", op}}, RedisBuckets());
  }
  redis_->corrupt = &prometheus::BuildCounter()
                         .Name("pto_redis_corrupt_entries_total")
                         .Help("Entries read from Redis whose signature did "
                               "not verify; deleted and recompiled.")
                         .Register(*registry_)
                         .Add({});
  redis_->up = &prometheus::BuildGauge()
                    .Name("pto_redis_up")
                    .Help("1 when the last Redis operation reached the "
                          "cluster, 0 when it failed.")
                    .Register(*registry_)
                    .Add({});
  auto& leases = prometheus::BuildCounter()
                     .Name("pto_redis_leases_total")
                     .Help("Cluster-wide compile leases: taken, waited for "
                           "(another replica compiled), expired (its holder "
                           "failed or vanished; compiled here), timeout "
                           "(waited too long; compiled here), error.")
                     .Register(*registry_);
  for (const char* result :
       {"taken", "waited", "expired", "timeout", "error"}) {
    redis_->leases[result] = &leases.Add({{"result", result}});
  }
}

void Metrics::RecordRedisOperation(const std::string& op,
                                   const std::string& result, double seconds) {
  if (redis_ == nullptr) return;
  auto counter = redis_->ops.find({op, result});
  if (counter != redis_->ops.end()) counter->second->Increment();
  if (result == "dropped") return;
  auto duration = redis_->durations.find(op);
  if (duration != redis_->durations.end()) duration->second->Observe(seconds);
}

void Metrics::RecordRedisCorruptEntry() {
  if (redis_ != nullptr) redis_->corrupt->Increment();
}

void Metrics::SetRedisUp(bool up) {
  if (redis_ != nullptr) redis_->up->Set(up ? 1 : 0);
}

void Metrics::RecordRedisLease(const std::string& result) {
  if (redis_ == nullptr) return;
  auto counter = redis_->leases.find(result);
  if (counter != redis_->leases.end()) counter->second->Increment();
}

}  // namespace pto::server
