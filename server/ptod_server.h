// A running ptod: kernel store, compile service, gRPC server (with health
// checking and reflection) and metrics endpoint, started and stopped as one.
//
//   PtodOptions options;
//   options.address = "127.0.0.1:0";          // port 0: pick a free port
//   options.cache_dir = "/tmp/ptod-cache";
//   auto ptod = PtodServer::Start(options, NewPtoCompilerBackend());
//   if (!ptod.ok()) ...                        // names what could not start
//   std::cout << (*ptod)->address();           // "127.0.0.1:41234"
//   (*ptod)->Shutdown(absl::Seconds(5));       // or just destroy it
//
// ptod_main.cc is flags and signals around this; integration tests start it
// in-process.
#ifndef PTO_SERVER_PTOD_SERVER_H_
#define PTO_SERVER_PTOD_SERVER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/compile_service.h"
#include "server/compiler_backend.h"
#include "server/kernel_store.h"
#include "server/metrics.h"
#include "server/redis_tier.h"

namespace grpc {
class Server;
}

namespace pto::server {

struct PtodOptions {
  // gRPC listen address, "host:port"; port 0 picks a free port.
  std::string address = "127.0.0.1:7070";
  // /metrics listen address; empty: no metrics endpoint.
  std::string metrics_address;
  // RocksDB directory (created, with parents, if missing; mode 0700). A
  // damaged store there is moved aside (KernelStore::OpenOrRecover).
  std::string cache_dir;
  // Largest request accepted, in bytes.
  size_t max_request_bytes = size_t{16} << 20;
  // Threads for RPCs: Compile calls that are not memory hits each hold one
  // of this many request threads while they wait (service.request_threads
  // is set to it), and gRPC's pool for the other RPCs is bounded by it;
  // beyond it new calls get RESOURCE_EXHAUSTED rather than an unbounded
  // thread count. Memory hits need none (compile_service.h, "Threads").
  int max_rpc_threads = 256;
  // Memory budget for requests in flight: the bound of gRPC's resource
  // quota, and Start refuses max_rpc_threads x max_request_bytes above it.
  size_t request_memory_bytes = size_t{4} << 30;
  // TLS: the server's certificate chain and private key (PEM); both empty:
  // plaintext. With `tls_client_ca_pem`, clients must present a certificate
  // signed by it.
  std::string tls_cert_pem;
  std::string tls_key_pem;
  std::string tls_client_ca_pem;
  // The persistent cache's byte budget and eviction (on_evict, on_hit and
  // remote are set by Start).
  KernelStore::Options store;
  CompileServiceOptions service;
  // The Redis Cluster tier behind the store: on when redis.cluster.seeds is
  // not empty, and then service.signing_key is required (Start sets
  // redis.signing_key to it).
  RedisTierOptions redis;
  // Dead ptods' work directories removed before start (WorkRoot), for
  // pto_stale_work_dirs_removed_total.
  uint64_t stale_work_dirs_removed = 0;
};

// The default cache directory: $XDG_CACHE_HOME/pto/ptod, else
// $HOME/.cache/pto/ptod, else /tmp/pto-ptod-<uid>.
std::string DefaultCacheDir();

class PtodServer {
 public:
  // Opens the store, builds the service around `backend`, and starts
  // listening. Fails (nothing left running) if the store cannot be opened or
  // an address cannot be bound.
  static absl::StatusOr<std::unique_ptr<PtodServer>> Start(
      const PtodOptions& options, std::unique_ptr<CompilerBackend> backend);

  // Shutdown(absl::ZeroDuration()) if not already shut down.
  ~PtodServer();

  PtodServer(const PtodServer&) = delete;
  PtodServer& operator=(const PtodServer&) = delete;

  // Marks health NOT_SERVING, stops accepting RPCs, gives running RPCs up to
  // `grace` to finish (then cancels them), waits for compiles in progress to
  // finish and be stored (queued ones are dropped) until `grace` from the
  // call is over, then cancels those still running
  // (CompilerBackend::CancelCompiles: the real backend kills their compiler
  // processes) and waits for them to end, and closes the store and the
  // Redis tier (writes to Redis still queued are dropped). Idempotent. Idle client connections that do not answer the GOAWAY can
  // hold gRPC's part for a few seconds (bounded by `grace`).
  void Shutdown(absl::Duration grace);

  // The bound gRPC address, e.g. "127.0.0.1:41234", and its port.
  const std::string& address() const { return address_; }
  int port() const { return port_; }
  // The bound metrics port; 0 when metrics are off.
  int metrics_port() const { return metrics_port_; }

  CompileServiceImpl& service() { return *service_; }
  Metrics& metrics() { return *metrics_; }
  // Empty after Shutdown() (the store is closed).
  KernelStore::Stats store_stats() const {
    return store_ != nullptr ? store_->GetStats() : KernelStore::Stats{};
  }
  const std::string& cache_dir() const { return cache_dir_; }
  // The Redis tier; null when off or after Shutdown().
  RedisTier* redis_tier() { return redis_.get(); }

 private:
  PtodServer() = default;

  // Destroyed in reverse: server, service (drains compiles), store, Redis
  // tier, backend, metrics.
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<CompilerBackend> backend_;
  std::unique_ptr<RedisTier> redis_;
  std::unique_ptr<KernelStore> store_;
  std::unique_ptr<CompileServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::string cache_dir_;
  int port_ = 0;
  int metrics_port_ = 0;
  bool shut_down_ = false;
};

}  // namespace pto::server

#endif  // PTO_SERVER_PTOD_SERVER_H_
