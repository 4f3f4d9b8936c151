#include "server/compile_service.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/support/slice.h"
#include "runtime/signature.h"
#include "spdlog/spdlog.h"

namespace pto::server {
namespace {

// The caller's deadline; none means wait as long as the compile takes.
absl::Time DeadlineOf(const grpc::ServerContextBase* context) {
  const auto deadline = context->deadline();
  // gRPC reports "no deadline" as (roughly) the largest time_point.
  if (deadline >= std::chrono::system_clock::time_point::max() -
                      std::chrono::hours(24 * 365)) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

std::string KeyPrefix(const std::string& key) { return key.substr(0, 12); }

// Releases the ServedKernel reference a response slice holds.
void ReleaseServed(void* served) {
  delete static_cast<std::shared_ptr<const ServedKernel>*>(served);
}

// The response to a hit on `served`: its stored hit response, referenced and
// not copied, then server_seconds (field 6, a double) measured from `start`.
// Protobuf parses concatenated fields as one message.
grpc::ByteBuffer HitResponse(std::shared_ptr<const ServedKernel> served,
                             absl::Time start) {
  const std::string& stored = served->hit_response;
  auto* holder = new std::shared_ptr<const ServedKernel>(std::move(served));
  grpc::Slice slices[2] = {
      grpc::Slice(const_cast<char*>(stored.data()), stored.size(),
                  &ReleaseServed, holder),
      grpc::Slice()};
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  uint64_t bits;
  static_assert(sizeof(bits) == sizeof(seconds));
  std::memcpy(&bits, &seconds, sizeof(bits));
  char field[9];
  field[0] = (6 << 3) | 1;  // field 6, fixed64
  for (int i = 0; i < 8; ++i) field[1 + i] = static_cast<char>(bits >> (8 * i));
  slices[1] = grpc::Slice(field, sizeof(field));
  return grpc::ByteBuffer(slices, 2);
}

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

absl::string_view WireBytes(const grpc::ByteBuffer& buffer, grpc::Slice* single,
                            std::string* joined) {
  if (buffer.TrySingleSlice(single).ok()) {
    return absl::string_view(reinterpret_cast<const char*>(single->begin()),
                             single->size());
  }
  std::vector<grpc::Slice> slices;
  if (buffer.Dump(&slices).ok()) {
    joined->reserve(buffer.Length());
    for (const grpc::Slice& slice : slices) {
      joined->append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  return *joined;
}

CompileServiceImpl::CompileServiceImpl(CompilerBackend* backend,
                                       KernelStore* store, Metrics* metrics,
                                       const CompileServiceOptions& options)
    : backend_(backend),
      store_(store),
      metrics_(metrics),
      options_(options),
      memory_(options.memory_cache_bytes,
              [](const ServedKernel& s) {
                return KernelMemoryBytes(*s.kernel) + s.hit_response.size();
              }),
      key_memo_(options.key_memo_bytes, options.key_memo_max_request_bytes),
      pool_(options.workers, options.queue_size),
      request_pool_(options.request_threads,
                    static_cast<size_t>(std::max(options.request_threads, 1))) {
  generation_ = store->generation();
  UpdateCacheGauges();
  if (store_->remote() != nullptr) {
    generation_sync_ = std::thread([this] { GenerationSyncLoop(); });
  }
}

CompileServiceImpl::~CompileServiceImpl() { Drain(); }

void CompileServiceImpl::Drain() {
  draining_ = true;
  if (generation_sync_.joinable()) {
    stop_sync_.Notify();
    generation_sync_.join();
  }
  pool_.Shutdown();
  request_pool_.Shutdown();
}

void CompileServiceImpl::GenerationSyncLoop() {
  // At start, then every interval (zero: at start only).
  do {
    SyncGeneration();
  } while (options_.generation_sync_interval > absl::ZeroDuration() &&
           !stop_sync_.WaitForNotificationWithTimeout(
               options_.generation_sync_interval));
}

bool CompileServiceImpl::SyncGeneration() {
  absl::MutexLock lock(&generation_mu_);
  absl::StatusOr<uint64_t> shared =
      store_->remote()->SyncGeneration(generation_);
  if (!shared.ok()) return false;  // the tier counts and logs its errors
  if (*shared > generation_) {
    absl::StatusOr<uint64_t> raised = store_->RaiseGeneration(*shared);
    if (!raised.ok()) {
      spdlog::error("cannot adopt the cluster's cache generation {}: {}",
                    *shared, raised.status().ToString());
      return true;
    }
    spdlog::warn(
        "cache generation {} from the cluster (a replica invalidated or "
        "purged the cache): entries of generation {} are no longer served",
        *raised, generation_.load());
    UseGeneration(*raised);
  }
  return true;
}

absl::StatusOr<uint64_t> CompileServiceImpl::NewGeneration(bool* notified) {
  *notified = false;
  RemoteTier* remote = store_->remote();
  if (remote == nullptr) return store_->BumpGeneration();
  // Newer than any generation the cluster knows, even one this replica
  // has not synced yet.
  absl::StatusOr<uint64_t> shared = remote->SyncGeneration(generation_);
  const uint64_t next =
      std::max<uint64_t>(shared.ok() ? *shared : 0, generation_) + 1;
  absl::StatusOr<uint64_t> raised = store_->RaiseGeneration(next);
  if (!raised.ok()) return raised.status();
  if (shared.ok()) {
    absl::StatusOr<uint64_t> published = remote->SyncGeneration(*raised);
    *notified = published.ok() && *published == *raised;
  }
  if (!*notified) {
    spdlog::warn(
        "cache generation {} could not be published in Redis: other replicas "
        "learn it when this one reaches Redis again",
        *raised);
  }
  return raised;
}

void CompileServiceImpl::UseGeneration(uint64_t generation) {
  generation_ = generation;
  // Unreachable now under the old keys; free the memory at once.
  memory_.Clear();
  metrics_->SetMemoryCacheBytes(memory_.bytes());
}

grpc::ServerUnaryReactor* CompileServiceImpl::Compile(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  const absl::Time start = absl::Now();
  ++requests_;
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<Caller> caller = options_.tokens.Authenticate(*context);
  if (!caller.ok()) {
    reactor->Finish(Fail(context, caller.status(), "", "-"));
    return reactor;
  }

  // The hit path: memo, then memory; nothing here blocks.
  if (key_memo_.Remembers(request->Length())) {
    grpc::Slice single;
    std::string joined;
    const absl::string_view wire = WireBytes(*request, &single, &joined);
    if (std::optional<std::string> key =
            key_memo_.KeyOfBytes(caller->tenant, wire)) {
      std::shared_ptr<const ServedKernel> served =
          memory_.Get(StorageKey(caller->tenant, generation_, *key));
      if (served != nullptr) {
        metrics_->RecordTierHit("memory");
        RecordServed(pto::v1::CACHE_STATUS_HIT, caller->tenant, *served->kernel);
        *response = HitResponse(std::move(served), start);
        if (spdlog::should_log(spdlog::level::debug)) {
          spdlog::debug("request {} HIT from memory", KeyPrefix(*key));
        }
        reactor->Finish(grpc::Status::OK);
        return reactor;
      }
    }
  }

  // The rest may block: on a request thread, at most request_threads calls.
  if (slow_calls_.fetch_add(1) >= options_.request_threads) {
    --slow_calls_;
    reactor->Finish(Fail(
        context,
        absl::ResourceExhaustedError(absl::StrCat(
            "ptod has ", options_.request_threads,
            " Compile calls waiting for a compile or a store read "
            "(request_threads, --max_rpc_threads)")),
        "", caller->tenant));
    return reactor;
  }
  absl::Status queued = request_pool_.Submit(
      [this, context, reactor, caller = *caller,
       bytes = grpc::ByteBuffer(*request), response, start] {
        grpc::Status status = CompileSlow(context, caller, bytes, start, response);
        --slow_calls_;
        reactor->Finish(std::move(status));
      });
  if (!queued.ok()) {
    --slow_calls_;
    reactor->Finish(Fail(context, absl::UnavailableError("ptod is shutting down"),
                         "", caller->tenant));
  }
  return reactor;
}

grpc::Status CompileServiceImpl::CompileSlow(
    grpc::CallbackServerContext* context, const Caller& caller,
    const grpc::ByteBuffer& bytes, absl::Time start,
    grpc::ByteBuffer* response) {
  const std::string& tenant = caller.tenant;
  grpc::Slice single;
  std::string joined;
  const absl::string_view wire = WireBytes(bytes, &single, &joined);
  auto request = std::make_shared<pto::v1::CompileRequest>();
  if (!request->ParseFromArray(wire.data(), static_cast<int>(wire.size()))) {
    return Fail(context,
                absl::InvalidArgumentError(absl::StrCat(
                    "the request (", wire.size(),
                    " bytes) is not a pto.v1.CompileRequest")),
                "", tenant);
  }
  absl::StatusOr<std::string> key;
  if (std::optional<std::string> known = key_memo_.KeyOfBytes(tenant, wire)) {
    key = *std::move(known);
  } else {
    key = backend_->Key(*request);
    if (key.ok()) key_memo_.Remember(tenant, wire, *key);
  }
  if (!key.ok()) return Fail(context, key.status(), "", tenant);
  const std::string storage_key = StorageKey(tenant, generation_, *key);

  pto::v1::CacheStatus cache_status = pto::v1::CACHE_STATUS_HIT;
  CompiledKernelPtr kernel = Lookup(storage_key, *key);
  if (kernel == nullptr) {
    // The compile may outlive this RPC: it owns the request.
    std::shared_ptr<const pto::v1::CompileRequest> owned = std::move(request);
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
  RecordServed(cache_status, tenant, *kernel);

  pto::v1::CompileResponse message;
  message.set_key(*key);
  *message.mutable_binary() = kernel->binary;
  message.set_cache_status(cache_status);
  message.set_compile_seconds(kernel->compile_seconds);
  for (const pto::v1::StageTiming& stage : kernel->stages) {
    *message.add_stages() = stage;
  }
  message.set_server_seconds(absl::ToDoubleSeconds(absl::Now() - start));
  spdlog::debug("request {} {} in {:.3f}s", KeyPrefix(*key),
                pto::v1::CacheStatus_Name(cache_status),
                message.server_seconds());
  bool own_buffer = false;
  return grpc::SerializationTraits<pto::v1::CompileResponse>::Serialize(
      message, response, &own_buffer);
}

void CompileServiceImpl::RecordServed(pto::v1::CacheStatus cache_status,
                                      const std::string& tenant,
                                      const CompiledKernel& kernel) {
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
  metrics_->RecordTargetRequest(kernel.binary.target(), result);
  if (result == RequestResult::kMiss) return;  // a miss saved nothing
  double saved = seconds_saved_.load(std::memory_order_relaxed);
  while (!seconds_saved_.compare_exchange_weak(saved, saved + kernel.compile_seconds,
                                               std::memory_order_relaxed)) {
  }
  metrics_->AddSecondsSaved(kernel.compile_seconds);
}

void CompileServiceImpl::RememberInMemory(const std::string& storage_key,
                                          CompiledKernelPtr kernel) {
  auto served = std::make_shared<ServedKernel>();
  pto::v1::CompileResponse hit;
  hit.set_key(kernel->binary.key());
  *hit.mutable_binary() = kernel->binary;
  hit.set_cache_status(pto::v1::CACHE_STATUS_HIT);
  hit.set_compile_seconds(kernel->compile_seconds);
  for (const pto::v1::StageTiming& stage : kernel->stages) {
    *hit.add_stages() = stage;
  }
  served->hit_response = hit.SerializeAsString();
  served->kernel = std::move(kernel);
  memory_.Insert(storage_key, std::move(served));
  metrics_->SetMemoryCacheBytes(memory_.bytes());
}

CompiledKernelPtr CompileServiceImpl::Lookup(const std::string& storage_key,
                                             const std::string& key) {
  if (std::shared_ptr<const ServedKernel> hot = memory_.Get(storage_key)) {
    metrics_->RecordTierHit("memory");
    return hot->kernel;
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
  RememberInMemory(storage_key, kernel);
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
  metrics_->ObserveTargetCompile(result->binary.target(), seconds);
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
  RememberInMemory(storage_key, kernel);
  UpdateCacheGauges();
  // The kernel name comes from the client: escaped and cut for the log.
  spdlog::info("compiled {} ({}) in {:.3f}s, {} bytes", KeyPrefix(key),
               absl::CEscape(kernel->binary.kernel_name().substr(0, 64)),
               seconds,
               kernel->binary.ByteSizeLong());
  return kernel;
}

grpc::Status CompileServiceImpl::Fail(grpc::ServerContextBase* context,
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
  const std::string who = caller->tenant.empty() ? "-" : caller->tenant;
  bool notified = false;
  switch (request->action()) {
    case pto::v1::ADMIN_ACTION_INVALIDATE: {
      absl::MutexLock lock(&generation_mu_);
      absl::StatusOr<uint64_t> generation = NewGeneration(&notified);
      if (!generation.ok()) return ToGrpcStatus(generation.status());
      UseGeneration(*generation);
      spdlog::warn("admin {}: cache invalidated, generation {}", who,
                   *generation);
      break;
    }
    case pto::v1::ADMIN_ACTION_PURGE: {
      absl::MutexLock lock(&generation_mu_);
      if (store_->remote() != nullptr) {
        // Other replicas drop what they hold of the old generation.
        absl::StatusOr<uint64_t> generation = NewGeneration(&notified);
        if (!generation.ok()) return ToGrpcStatus(generation.status());
        UseGeneration(*generation);
      }
      absl::Status purged = store_->Purge();
      if (!purged.ok()) return ToGrpcStatus(purged);
      memory_.Clear();
      if (store_->remote() != nullptr) {
        absl::StatusOr<uint64_t> deleted = store_->remote()->DeleteAll();
        if (deleted.ok()) {
          response->set_shared_entries_deleted(*deleted);
          spdlog::warn("admin {}: cache purged, {} Redis entries deleted, "
                       "generation {}",
                       who, *deleted, generation_.load());
        } else {
          spdlog::warn("admin {}: cache purged, generation {}; Redis entries "
                       "not all deleted (unreachable under the new "
                       "generation, they age out): {}",
                       who, generation_.load(), deleted.status().ToString());
        }
      } else {
        spdlog::warn("admin {}: cache purged", who);
      }
      break;
    }
    default:
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("Admin: unknown action ",
                                       static_cast<int>(request->action())));
  }
  response->set_cluster_notified(notified);
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
  stats.set_compile_seconds_saved(seconds_saved_.load());
  return stats;
}

void CompileServiceImpl::UpdateCacheGauges() {
  const KernelStore::Stats store = store_->GetStats();
  metrics_->SetCacheContents(store.entries, store.bytes);
}

}  // namespace pto::server
