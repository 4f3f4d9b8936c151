// The gRPC pto.v1.CompileService: what ptod answers.
//
// Compile walks the tiers in order:
//   key (CompilerBackend::Key; a graph the verifier rejects is
//        INVALID_ARGUMENT with the verifier's message)
//   -> memory LRU -> RocksDB (KernelStore)          : HIT
//   -> singleflight on the key:
//        first caller: on the worker pool, with a remote tier the
//                      cluster-wide lease (KernelStore::AwaitCompileLease:
//                      another ptod's compile is waited for, a HIT),
//                      compile, store, remember in memory : MISS
//        callers while it runs: share its result    : COALESCED
// Every caller waits with its own gRPC deadline (DEADLINE_EXCEEDED; the
// compile carries on for the others and still lands in the cache). A full
// compile queue is RESOURCE_EXHAUSTED with trailing metadata "retry-after-ms".
//
// Callers are authenticated by bearer token (tenant_tokens.h) before
// anything else; a wrong or missing token is UNAUTHENTICATED. The cache key
// of an entry is the compiler's key namespaced by the caller's tenant and the
// cache generation (StorageKey), so tenants never share entries (identical
// native code is still stored once: kernel_store.h) and an admin can
// invalidate every entry at once by bumping the generation. With a signing
// key, every binary is signed when it is compiled (runtime/signature.h) and
// served with that signature.
//
// Threads. Compile is served on gRPC's callback API: the handler runs on
// one of gRPC's own event threads and answers a hit there, without a thread
// switch: authenticate, look the request's bytes up in the key memo (no
// parse), look the storage key up in the memory tier, and send the hit
// response serialized when the kernel entered memory (a reference, not a
// copy of the payload) plus the request's server_seconds. Everything else
// (a request the memo does not know, a kernel only in RocksDB or Redis, a
// compile to run or wait for) may block, so the handler hands the call to a
// pool of `request_threads` threads, which run the tiers above and finish
// the call; when all of them are busy, the call is RESOURCE_EXHAUSTED (hits
// are still answered). GetKernel, Stats and Admin are synchronous
// gRPC methods (gRPC's own thread pool, bounded by PtodOptions).
//
// Admin. Invalidate starts a new cache generation (the salt in every
// storage key) and frees the memory tier; Purge deletes every entry. With a
// remote tier (ptod replicas sharing Redis) both act on every replica: the
// generation is the cluster's (RemoteTier::SyncGeneration, a max-merge),
// and a background thread syncs it at start and every
// generation_sync_interval, so a replica adopts another's new generation
// within that interval: its memory tier is cleared and its RocksDB and
// Redis entries of the old generation are never read again (they age out
// by eviction and TTL). Purge also deletes every kernel entry in Redis and
// bumps the cluster's generation, so other replicas drop what they hold as
// an Invalidate would. When Redis cannot be reached the action is still
// done here, the response says the cluster was not told, and the next sync
// that reaches Redis publishes the generation (Redis entries a Purge could
// not delete are unreachable under the new generation all the same).
//
// Retries, back-off and fallbacks are the client's.
#ifndef PTO_SERVER_COMPILE_SERVICE_H_
#define PTO_SERVER_COMPILE_SERVICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/support/byte_buffer.h"
#include "pto/v1/compile_service.grpc.pb.h"
#include "server/compiled_kernel.h"
#include "server/compiler_backend.h"
#include "server/kernel_store.h"
#include "server/key_memo.h"
#include "server/lru_cache.h"
#include "server/metrics.h"
#include "server/singleflight.h"
#include "server/tenant_tokens.h"
#include "server/worker_pool.h"

namespace pto::server {

struct CompileServiceOptions {
  // Compile threads.
  int workers = 4;
  // Compiles that may wait for a thread before requests are refused.
  size_t queue_size = 256;
  // Bound of the in-memory kernel cache.
  size_t memory_cache_bytes = size_t{256} << 20;
  // Back-off suggested to clients when the queue is full.
  absl::Duration retry_after = absl::Milliseconds(500);
  // Who may call; empty: everyone, as the anonymous admin tenant "".
  TenantTokens tokens;
  // Without tokens, whether the anonymous tenant may use Admin (invalidate,
  // purge); with tokens, only admin tenants may.
  bool allow_anonymous_admin = false;
  // HMAC key binaries are signed with; empty: unsigned.
  std::string signing_key;
  // Bound of the memo of (tenant, request bytes) -> cache key that lets a
  // repeated request skip key computation (server/key_memo.h); 0: off.
  size_t key_memo_bytes = size_t{16} << 20;
  // Requests larger than this are not remembered in that memo.
  size_t key_memo_max_request_bytes = size_t{256} << 10;
  // Threads for Compile calls that are not memory hits (each waiting caller
  // holds one); with all of them busy such a call is RESOURCE_EXHAUSTED.
  int request_threads = 256;
  // With a remote tier: how often the generation the ptods sharing it agree
  // on is synced (RemoteTier::SyncGeneration; see "Admin" above); zero:
  // only at start and by Admin calls.
  absl::Duration generation_sync_interval = absl::Seconds(1);
};

// The key an entry is cached under: the compiler's `key` itself for the
// anonymous tenant "" in generation 0 (a ptod without tokens), else the hex
// SHA-256 of "pto-cache" NUL tenant NUL generation (decimal) NUL key.
std::string StorageKey(const std::string& tenant, uint64_t generation,
                       const std::string& key);

// A kernel in the memory tier, with the response a hit on it sends: a
// serialized CompileResponse with every field but server_seconds (key,
// binary, CACHE_STATUS_HIT, compile_seconds, stages).
struct ServedKernel {
  CompiledKernelPtr kernel;
  std::string hit_response;
};

// The raw callback method for Compile, synchronous methods for the rest.
using CompileServiceBase =
    pto::v1::CompileService::WithRawCallbackMethod_Compile<
        pto::v1::CompileService::Service>;

class CompileServiceImpl final : public CompileServiceBase {
 public:
  // `backend`, `store` and `metrics` must outlive this object.
  CompileServiceImpl(CompilerBackend* backend, KernelStore* store,
                     Metrics* metrics, const CompileServiceOptions& options);
  // Drain().
  ~CompileServiceImpl() override;

  // `request` and `response` are a pto.v1.CompileRequest and
  // CompileResponse in their wire form.
  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::Status GetKernel(grpc::ServerContext* context,
                         const pto::v1::GetKernelRequest* request,
                         pto::v1::GetKernelResponse* response) override;
  grpc::Status Stats(grpc::ServerContext* context,
                     const pto::v1::StatsRequest* request,
                     pto::v1::StatsResponse* response) override;
  grpc::Status Admin(grpc::ServerContext* context,
                     const pto::v1::AdminRequest* request,
                     pto::v1::AdminResponse* response) override;

  // Refuses new compiles, drops queued ones that have not started, and waits
  // for running ones to finish and be stored. Call after the gRPC server has
  // stopped taking requests.
  void Drain();

  // Who may call (CompileServiceOptions::tokens).
  const TenantTokens& tokens() const { return options_.tokens; }

  // Whether Drain() has begun.
  bool draining() const { return draining_.load(); }

  // What the Stats RPC returns.
  pto::v1::StatsResponse GetStats() const;

 private:
  // Compile's blocking part, on a request thread: parses the request, keys
  // it, looks it up in every tier, compiles or waits for a compile, and
  // writes the response. `memo_key_known`: the key memo already answered
  // `*key` for these bytes.
  grpc::Status CompileSlow(grpc::CallbackServerContext* context,
                           const Caller& caller, const grpc::ByteBuffer& bytes,
                           absl::Time start, grpc::ByteBuffer* response);

  // Counts a served request of `cache_status` (per tenant, and per target
  // `kernel` was compiled for) with the compile seconds it saved.
  void RecordServed(pto::v1::CacheStatus cache_status, const std::string& tenant,
                    const CompiledKernel& kernel);

  // Remembers `kernel` in the memory tier under `storage_key`, with its hit
  // response.
  void RememberInMemory(const std::string& storage_key,
                        CompiledKernelPtr kernel);

  // The kernel stored under `storage_key` for compiler key `key`, from
  // memory or RocksDB (refilling memory); null on a miss. A stored kernel
  // whose binary is keyed otherwise, or whose signature does not verify
  // under the signing key, is discarded as corrupt (a miss).
  CompiledKernelPtr Lookup(const std::string& storage_key,
                           const std::string& key);

  // Runs on a worker: compiles `request` (whose compiler key is `key`)
  // unless a racing request already stored it, then signs and stores it
  // under `storage_key`. Sets `*compiled` when it did compile.
  Singleflight::Result CompileAndStore(const pto::v1::CompileRequest& request,
                                       const std::string& key,
                                       const std::string& storage_key,
                                       std::atomic<bool>* compiled);

  // Signs `kernel`'s binary when a signing key is configured.
  void Sign(CompiledKernel* kernel) const;

  // Counts and logs a failed request and turns it into a gRPC status.
  grpc::Status Fail(grpc::ServerContextBase* context, const absl::Status& status,
                    const std::string& key, const std::string& tenant);

  void UpdateCacheGauges();

  // Syncs the generation with the remote tier's (raising either); true
  // when it could be asked. Adopts a newer one: persisted, memory cleared.
  bool SyncGeneration() ABSL_LOCKS_EXCLUDED(generation_mu_);
  // A new generation newer than every one the cluster knows, published
  // there when it can be (`*notified`); with no remote tier, local only.
  absl::StatusOr<uint64_t> NewGeneration(bool* notified)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(generation_mu_);
  // Makes `generation` this ptod's (already persisted) and clears memory.
  void UseGeneration(uint64_t generation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(generation_mu_);
  void GenerationSyncLoop();

  CompilerBackend* const backend_;
  KernelStore* const store_;
  Metrics* const metrics_;
  const CompileServiceOptions options_;

  LruCache<ServedKernel> memory_;
  KeyMemo key_memo_;
  Singleflight flights_;

  std::atomic<bool> draining_{false};
  // The cache generation (StorageKey); bumped by Invalidate and Purge,
  // raised by SyncGeneration. Changes hold generation_mu_.
  absl::Mutex generation_mu_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> coalesced_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> compiles_{0};
  // Compile calls handed to the request threads and not finished.
  std::atomic<int> slow_calls_{0};
  std::atomic<double> seconds_saved_{0};

  // Destroyed before the request threads: no compile outlives what it uses.
  WorkerPool pool_;
  // Last: destroyed first; Compile calls that are not memory hits.
  WorkerPool request_pool_;
  // With a remote tier: GenerationSyncLoop, until stop_sync_ (Drain).
  absl::Notification stop_sync_;
  std::thread generation_sync_;
};

// The bytes of `buffer` in one piece: its only slice (kept alive in
// `*single`, not copied) or, when it has several, their concatenation in
// `*joined`. Valid while those live.
absl::string_view WireBytes(const grpc::ByteBuffer& buffer, grpc::Slice* single,
                            std::string* joined);

// absl::Status -> grpc::Status, keeping the code and the message.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace pto::server

#endif  // PTO_SERVER_COMPILE_SERVICE_H_
