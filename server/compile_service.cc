#include "server/compile_service.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "runtime/signature.h"
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

std::string StorageKey(const std::string& tenant, uint64_t generation,
                       const std::string& key) {
  if (tenant.empty() && generation == 0) return key;
  return Sha256Hex(absl::StrCat("pto-cache", std::string(1, '\0'), tenant,
                                std::string(1, '\0'), generation,
                                std::string(1, '\0'), key));
}

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
      key_memo_(options.key_memo_bytes, options.key_memo_max_request_bytes),
      pool_(options.workers, options.queue_size) {
  generation_ = store->generation();
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
  absl::StatusOr<Caller> caller = options_.tokens.Authenticate(*context);
  if (!caller.ok()) return Fail(context, caller.status(), "", "-");
  const std::string& tenant = caller->tenant;

  absl::StatusOr<std::string> key = key_memo_.Key(*backend_, tenant, *request);
  if (!key.ok()) return Fail(context, key.status(), "", tenant);
  const std::string storage_key = StorageKey(tenant, generation_, *key);

  pto::v1::CacheStatus cache_status = pto::v1::CACHE_STATUS_HIT;
  CompiledKernelPtr kernel = Lookup(storage_key, *key);
  if (kernel == nullptr) {
    // The compile may outlive this RPC: it owns a copy of the request.
    auto owned = std::make_shared<const pto::v1::CompileRequest>(*request);
    auto compiled = std::make_shared<std::atomic<bool>>(false);
    const std::string k = *key;
    Singleflight::Work work = [this, owned, compiled, k, storage_key] {
      return CompileAndStore(*owned, k, storage_key, compiled.get());
    };
    Singleflight::Launcher launch = [this](std::function<void()> run) {
      const absl::Time queued = absl::Now();
      return pool_.Submit([this, queued, run = std::move(run)] {
        metrics_->ObserveQueueWait(absl::ToDoubleSeconds(absl::Now() - queued));
        run();
      });
    };
    Singleflight::Outcome outcome =
        flights_.Do(storage_key, std::move(work), launch, DeadlineOf(context),
                    [context] { return context->IsCancelled(); });
    if (!outcome.result.ok()) {
      return Fail(context, outcome.result.status(), *key, tenant);
    }
    kernel = *outcome.result;
    if (outcome.shared) {
      cache_status = pto::v1::CACHE_STATUS_COALESCED;
    } else if (compiled->load()) {
      cache_status = pto::v1::CACHE_STATUS_MISS;
    }  // else: a racing request stored it between our lookup and the flight.
  }

  RequestResult result = RequestResult::kHit;
  switch (cache_status) {
    case pto::v1::CACHE_STATUS_MISS:
      ++misses_;
      result = RequestResult::kMiss;
      break;
    case pto::v1::CACHE_STATUS_COALESCED:
      ++coalesced_;
      result = RequestResult::kCoalesced;
      break;
    default:
      ++hits_;
      break;
  }
  metrics_->RecordRequest(result, tenant);
  metrics_->RecordTargetRequest(request->target(), result);
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

CompiledKernelPtr CompileServiceImpl::Lookup(const std::string& storage_key,
                                             const std::string& key) {
  if (CompiledKernelPtr hot = memory_.Get(storage_key)) {
    metrics_->RecordTierHit("memory");
    return hot;
  }
  absl::StatusOr<CompiledKernel> stored = store_->Get(storage_key);
  if (stored.ok()) {
    // The store checked its record seal and digests; these check that the
    // record is the one for this key and was signed by this ptod's key when
    // it was compiled. Nothing is re-signed on read.
    std::string wrong;
    if (stored->binary.key() != key) {
      wrong = absl::StrCat("holds the kernel of key ",
                           KeyPrefix(stored->binary.key()));
    } else if (!options_.signing_key.empty()) {
      absl::Status signed_ok = pto::runtime::CheckKernelSignature(
          stored->binary, options_.signing_key);
      if (!signed_ok.ok()) {
        wrong = absl::StrCat(signed_ok.message(),
                             "; the signing key may have changed");
      }
    }
    if (!wrong.empty()) {
      store_->Discard(storage_key, wrong);
      stored = absl::NotFoundError("discarded");
    }
  }
  if (!stored.ok()) {
    if (!absl::IsNotFound(stored.status())) {
      // An I/O error is not a reason to fail the request: compile instead.
      spdlog::error("kernel store read of {} failed: {}",
                    KeyPrefix(storage_key), stored.status().ToString());
    }
    metrics_->SetCorruptEntries(store_->GetStats().corrupt_entries);
    UpdateCacheGauges();
    return nullptr;
  }
  auto kernel = std::make_shared<const CompiledKernel>(*std::move(stored));
  memory_.Insert(storage_key, kernel);
  metrics_->SetMemoryCacheBytes(memory_.bytes());
  return kernel;
}

void CompileServiceImpl::Sign(CompiledKernel* kernel) const {
  if (options_.signing_key.empty()) return;
  kernel->binary.set_signature(
      pto::runtime::SignKernelBinary(kernel->binary, options_.signing_key));
}

Singleflight::Result CompileServiceImpl::CompileAndStore(
    const pto::v1::CompileRequest& request, const std::string& key,
    const std::string& storage_key, std::atomic<bool>* compiled) {
  // A request that missed just before the previous flight for this key
  // finished would otherwise compile the kernel a second time.
  if (CompiledKernelPtr kernel = Lookup(storage_key, key)) return kernel;
  // Queued compiles not yet started when ptod stops are dropped: their
  // callers are gone with the RPC server, and SIGTERM should not wait for a
  // whole queue of compiles.
  if (draining_) {
    return absl::UnavailableError("ptod is shutting down; compile not started");
  }
  // With a tier shared between ptods: wait while another one compiles it
  // (then it is a hit), or take the cluster-wide lease until it is stored.
  if (store_->AwaitCompileLease(storage_key)) {
    if (CompiledKernelPtr kernel = Lookup(storage_key, key)) return kernel;
  }
  absl::Cleanup release_lease = [this, &storage_key] {
    store_->ReleaseCompileLease(storage_key);
  };
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
    if (absl::IsDeadlineExceeded(result.status())) {
      metrics_->RecordCompileTimeout();
    }
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
  metrics_->ObserveTargetCompile(request.target(), seconds);
  for (const pto::v1::StageTiming& stage : result->stages) {
    metrics_->ObserveStage(stage.stage(), stage.seconds());
  }
  Sign(&*result);
  auto kernel = std::make_shared<const CompiledKernel>(*std::move(result));
  absl::Status stored = store_->Put(storage_key, *kernel);
  if (!stored.ok()) {
    // The kernel is good; only persistence failed. Serve it from memory.
    spdlog::error("storing {} failed: {}", KeyPrefix(key), stored.ToString());
  }
  memory_.Insert(storage_key, kernel);
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
                                      const std::string& key,
                                      const std::string& tenant) {
  ++errors_;
  metrics_->RecordRequest(absl::IsUnauthenticated(status)
                              ? RequestResult::kUnauthenticated
                              : RequestResult::kError,
                          tenant);
  if (absl::IsResourceExhausted(status)) {
    const int64_t retry_ms = absl::ToInt64Milliseconds(options_.retry_after);
    context->AddTrailingMetadata("retry-after-ms", std::to_string(retry_ms));
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat(status.message(), "; retry after ", retry_ms, " ms"));
  }
  if (!absl::IsInvalidArgument(status) && !absl::IsUnauthenticated(status)) {
    spdlog::warn("request {} failed: {}", key.empty() ? "-" : KeyPrefix(key),
                 status.ToString());
  }
  return ToGrpcStatus(status);
}

grpc::Status CompileServiceImpl::GetKernel(
    grpc::ServerContext* context, const pto::v1::GetKernelRequest* request,
    pto::v1::GetKernelResponse* response) {
  absl::StatusOr<Caller> caller = options_.tokens.Authenticate(*context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (!IsWellFormedKey(request->key())) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("GetKernel: key must be 64 lowercase hex digits, got \"",
                     absl::CEscape(request->key().substr(0, 80)), "\""));
  }
  // Only the caller's own namespace: another tenant's kernel under the same
  // compiler key is not found.
  CompiledKernelPtr kernel =
      Lookup(StorageKey(caller->tenant, generation_, request->key()),
             request->key());
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
  absl::StatusOr<Caller> caller = options_.tokens.Authenticate(*context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  *response = GetStats();
  return grpc::Status::OK;
}

grpc::Status CompileServiceImpl::Admin(grpc::ServerContext* context,
                                       const pto::v1::AdminRequest* request,
                                       pto::v1::AdminResponse* response) {
  absl::StatusOr<Caller> caller = options_.tokens.Authenticate(*context);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (!options_.tokens.enabled() && !options_.allow_anonymous_admin) {
    return grpc::Status(
        grpc::StatusCode::PERMISSION_DENIED,
        "Admin from an unauthenticated caller is refused: give ptod a "
        "--tokens_file with an admin tenant, or start it with "
        "--allow_anonymous_admin (loopback only)");
  }
  if (options_.tokens.enabled() && !caller->admin) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("tenant ", caller->tenant,
                                     " is not an admin (add \"admin\" to its "
                                     "line in the tokens file)"));
  }
  switch (request->action()) {
    case pto::v1::ADMIN_ACTION_INVALIDATE: {
      absl::StatusOr<uint64_t> generation = store_->BumpGeneration();
      if (!generation.ok()) return ToGrpcStatus(generation.status());
      generation_ = *generation;
      // Unreachable now under the old keys; free the memory at once.
      memory_.Clear();
      spdlog::warn("admin {}: cache invalidated, generation {}",
                   caller->tenant.empty() ? "-" : caller->tenant, *generation);
      break;
    }
    case pto::v1::ADMIN_ACTION_PURGE: {
      absl::Status purged = store_->Purge();
      if (!purged.ok()) return ToGrpcStatus(purged);
      memory_.Clear();
      spdlog::warn("admin {}: cache purged",
                   caller->tenant.empty() ? "-" : caller->tenant);
      break;
    }
    default:
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("Admin: unknown action ",
                                       static_cast<int>(request->action())));
  }
  metrics_->SetMemoryCacheBytes(memory_.bytes());
  UpdateCacheGauges();
  const KernelStore::Stats stats = store_->GetStats();
  response->set_generation(generation_);
  response->set_entries(stats.entries);
  response->set_bytes(stats.bytes);
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
  stats.set_evictions(store.evictions);
  stats.set_corrupt_entries(store.corrupt_entries);
  stats.set_max_bytes(store_->max_bytes());
  stats.set_generation(generation_);
  stats.set_payloads(store.payloads);
  absl::MutexLock lock(&saved_mu_);
  stats.set_compile_seconds_saved(seconds_saved_);
  return stats;
}

void CompileServiceImpl::UpdateCacheGauges() {
  const KernelStore::Stats store = store_->GetStats();
  metrics_->SetCacheContents(store.entries, store.bytes);
}

}  // namespace pto::server
