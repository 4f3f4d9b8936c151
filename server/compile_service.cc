#include "server/compile_service.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace pto::server {
namespace {

// The caller's deadline; none means wait as long as the compile takes.
absl::Time DeadlineOf(const grpc::ServerContext* context) {
  const auto deadline = context->deadline();
  // gRPC reports "no deadline" as (roughly) the largest time_point.
  if (deadline >= std::chrono::system_clock::time_point::max() -
                      std::chrono::hours(24 * 365)) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

std::string KeyPrefix(const std::string& key) { return key.substr(0, 12); }

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

CompileServiceImpl::CompileServiceImpl(CompilerBackend* backend,
                                       KernelStore* store, Metrics* metrics,
                                       const CompileServiceOptions& options)
    : backend_(backend),
      store_(store),
      metrics_(metrics),
      options_(options),
      memory_(options.memory_cache_bytes,
              [](const CompiledKernel& k) { return KernelMemoryBytes(k); }),
      pool_(options.workers, options.queue_size) {
  UpdateCacheGauges();
}

CompileServiceImpl::~CompileServiceImpl() { Drain(); }

void CompileServiceImpl::Drain() {
  draining_ = true;
  pool_.Shutdown();
}

grpc::Status CompileServiceImpl::Compile(grpc::ServerContext* context,
                                         const pto::v1::CompileRequest* request,
                                         pto::v1::CompileResponse* response) {
  const absl::Time start = absl::Now();
  ++requests_;

  absl::StatusOr<std::string> key = backend_->Key(*request);
  if (!key.ok()) return Fail(context, key.status(), "");

  pto::v1::CacheStatus cache_status = pto::v1::CACHE_STATUS_HIT;
  CompiledKernelPtr kernel = Lookup(*key);
  if (kernel == nullptr) {
    // The compile may outlive this RPC: it owns a copy of the request.
    auto owned = std::make_shared<const pto::v1::CompileRequest>(*request);
    auto compiled = std::make_shared<std::atomic<bool>>(false);
    const std::string k = *key;
    Singleflight::Work work = [this, owned, compiled, k] {
      return CompileAndStore(*owned, k, compiled.get());
    };
    Singleflight::Launcher launch = [this](std::function<void()> run) {
      const absl::Time queued = absl::Now();
      return pool_.Submit([this, queued, run = std::move(run)] {
        metrics_->ObserveQueueWait(absl::ToDoubleSeconds(absl::Now() - queued));
        run();
      });
    };
    Singleflight::Outcome outcome =
        flights_.Do(*key, std::move(work), launch, DeadlineOf(context),
                    [context] { return context->IsCancelled(); });
    if (!outcome.result.ok()) return Fail(context, outcome.result.status(), *key);
    kernel = *outcome.result;
    if (outcome.shared) {
      cache_status = pto::v1::CACHE_STATUS_COALESCED;
    } else if (compiled->load()) {
      cache_status = pto::v1::CACHE_STATUS_MISS;
    }  // else: a racing request stored it between our lookup and the flight.
  }

  switch (cache_status) {
    case pto::v1::CACHE_STATUS_MISS:
      ++misses_;
      metrics_->RecordRequest(RequestResult::kMiss);
      break;
    case pto::v1::CACHE_STATUS_COALESCED:
      ++coalesced_;
      metrics_->RecordRequest(RequestResult::kCoalesced);
      break;
    default:
      ++hits_;
      metrics_->RecordRequest(RequestResult::kHit);
      break;
  }
  if (cache_status != pto::v1::CACHE_STATUS_MISS) {
    absl::MutexLock lock(&saved_mu_);
    seconds_saved_ += kernel->compile_seconds;
    metrics_->AddSecondsSaved(kernel->compile_seconds);
  }

  response->set_key(*key);
  *response->mutable_binary() = kernel->binary;
  response->set_cache_status(cache_status);
  response->set_compile_seconds(kernel->compile_seconds);
  for (const pto::v1::StageTiming& stage : kernel->stages) {
    *response->add_stages() = stage;
  }
  response->set_server_seconds(absl::ToDoubleSeconds(absl::Now() - start));
  spdlog::debug("request {} {} in {:.3f}s", KeyPrefix(*key),
                pto::v1::CacheStatus_Name(cache_status),
                response->server_seconds());
  return grpc::Status::OK;
}

CompiledKernelPtr CompileServiceImpl::Lookup(const std::string& key) {
  if (CompiledKernelPtr hot = memory_.Get(key)) return hot;
  absl::StatusOr<CompiledKernel> stored = store_->Get(key);
  if (!stored.ok()) {
    if (!absl::IsNotFound(stored.status())) {
      // An I/O error is not a reason to fail the request: compile instead.
      spdlog::error("kernel store read of {} failed: {}", KeyPrefix(key),
                    stored.status().ToString());
    }
    metrics_->SetCorruptEntries(store_->GetStats().corrupt_entries);
    UpdateCacheGauges();
    return nullptr;
  }
  auto kernel = std::make_shared<const CompiledKernel>(*std::move(stored));
  memory_.Insert(key, kernel);
  metrics_->SetMemoryCacheBytes(memory_.bytes());
  return kernel;
}

Singleflight::Result CompileServiceImpl::CompileAndStore(
    const pto::v1::CompileRequest& request, const std::string& key,
    std::atomic<bool>* compiled) {
  // A request that missed just before the previous flight for this key
  // finished would otherwise compile the kernel a second time.
  if (CompiledKernelPtr kernel = Lookup(key)) return kernel;
  // Queued compiles not yet started when ptod stops are dropped: their
  // callers are gone with the RPC server, and SIGTERM should not wait for a
  // whole queue of compiles.
  if (draining_) {
    return absl::UnavailableError("ptod is shutting down; compile not started");
  }

  metrics_->CompileStarted();
  const absl::Time start = absl::Now();
  absl::StatusOr<CompiledKernel> result = backend_->Compile(request);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  metrics_->CompileFinished();
  ++compiles_;
  compiled->store(true);
  if (!result.ok()) {
    spdlog::warn("compile {} failed after {:.3f}s: {}", KeyPrefix(key),
                 seconds, result.status().ToString());
    return result.status();
  }
  if (result->binary.key() != key) {
    // Serving it would put one kernel under another's key: refuse loudly.
    spdlog::error("compile {} produced a binary keyed {}", KeyPrefix(key),
                  KeyPrefix(result->binary.key()));
    return absl::InternalError(absl::StrCat(
        "compiler bug: binary key ", result->binary.key(),
        " does not match the request key ", key));
  }
  metrics_->ObserveCompile(seconds);
  for (const pto::v1::StageTiming& stage : result->stages) {
    metrics_->ObserveStage(stage.stage(), stage.seconds());
  }
  auto kernel = std::make_shared<const CompiledKernel>(*std::move(result));
  absl::Status stored = store_->Put(key, *kernel);
  if (!stored.ok()) {
    // The kernel is good; only persistence failed. Serve it from memory.
    spdlog::error("storing {} failed: {}", KeyPrefix(key), stored.ToString());
  }
  memory_.Insert(key, kernel);
  metrics_->SetMemoryCacheBytes(memory_.bytes());
  UpdateCacheGauges();
  // The kernel name comes from the client: escaped and cut for the log.
  spdlog::info("compiled {} ({}) in {:.3f}s, {} bytes", KeyPrefix(key),
               absl::CEscape(kernel->binary.kernel_name().substr(0, 64)),
               seconds,
               kernel->binary.ByteSizeLong());
  return kernel;
}

grpc::Status CompileServiceImpl::Fail(grpc::ServerContext* context,
                                      const absl::Status& status,
                                      const std::string& key) {
  ++errors_;
  metrics_->RecordRequest(RequestResult::kError);
  if (absl::IsResourceExhausted(status)) {
    const int64_t retry_ms = absl::ToInt64Milliseconds(options_.retry_after);
    context->AddTrailingMetadata("retry-after-ms", std::to_string(retry_ms));
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat(status.message(), "; retry after ", retry_ms, " ms"));
  }
  if (!absl::IsInvalidArgument(status)) {
    spdlog::warn("request {} failed: {}", key.empty() ? "-" : KeyPrefix(key),
                 status.ToString());
  }
  return ToGrpcStatus(status);
}

grpc::Status CompileServiceImpl::GetKernel(
    grpc::ServerContext* context, const pto::v1::GetKernelRequest* request,
    pto::v1::GetKernelResponse* response) {
  if (!IsWellFormedKey(request->key())) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("GetKernel: key must be 64 lowercase hex digits, got \"",
                     absl::CEscape(request->key().substr(0, 80)), "\""));
  }
  CompiledKernelPtr kernel = Lookup(request->key());
  if (kernel == nullptr) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no kernel cached under key ",
                                     request->key()));
  }
  *response->mutable_binary() = kernel->binary;
  return grpc::Status::OK;
}

grpc::Status CompileServiceImpl::Stats(grpc::ServerContext* context,
                                       const pto::v1::StatsRequest* request,
                                       pto::v1::StatsResponse* response) {
  *response = GetStats();
  return grpc::Status::OK;
}

pto::v1::StatsResponse CompileServiceImpl::GetStats() const {
  pto::v1::StatsResponse stats;
  stats.set_requests(requests_.load());
  stats.set_hits(hits_.load());
  stats.set_misses(misses_.load());
  stats.set_coalesced(coalesced_.load());
  stats.set_errors(errors_.load());
  stats.set_compiles(compiles_.load());
  const KernelStore::Stats store = store_->GetStats();
  stats.set_entries(store.entries);
  stats.set_bytes(store.bytes);
  absl::MutexLock lock(&saved_mu_);
  stats.set_compile_seconds_saved(seconds_saved_);
  return stats;
}

void CompileServiceImpl::UpdateCacheGauges() {
  const KernelStore::Stats store = store_->GetStats();
  metrics_->SetCacheContents(store.entries, store.bytes);
}

}  // namespace pto::server
