#include "server/ptod_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/health_check_service_interface.h"
#include "server/token_auth_processor.h"
#include "spdlog/spdlog.h"

namespace pto::server {

std::string DefaultCacheDir() {
  const char* xdg = getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] != '\0') return absl::StrCat(xdg, "/pto/ptod");
  const char* home = getenv("HOME");
  if (home != nullptr && home[0] != '\0') {
    return absl::StrCat(home, "/.cache/pto/ptod");
  }
  return absl::StrCat("/tmp/pto-ptod-", getuid());
}

absl::StatusOr<std::unique_ptr<PtodServer>> PtodServer::Start(
    const PtodOptions& options, std::unique_ptr<CompilerBackend> backend) {
  if (backend == nullptr) {
    return absl::InvalidArgumentError("ptod needs a compiler backend");
  }
  const int max_threads = std::max(options.max_rpc_threads, 4);
  if (options.max_request_bytes > 0 &&
      static_cast<size_t>(max_threads) >
          options.request_memory_bytes / options.max_request_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_rpc_threads (", max_threads, ") x max_request_bytes (",
        options.max_request_bytes, ") exceeds the request memory budget (",
        options.request_memory_bytes,
        " bytes, request_memory_bytes): lower one of them or raise the "
        "budget"));
  }
  const std::string cache_dir =
      options.cache_dir.empty() ? DefaultCacheDir() : options.cache_dir;
  std::error_code ec;
  const bool created = std::filesystem::create_directories(cache_dir, ec);
  struct stat st;
  if (ec) {
    // The store keeps kernels in memory then (KernelStore::OpenOrRecover).
    spdlog::error("cannot create cache directory {}: {}", cache_dir,
                  ec.message());
  } else if (created) {
    chmod(cache_dir.c_str(), 0700);
  } else if (stat(cache_dir.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    spdlog::warn("cache directory {} is open to other users (mode {:o}); "
                 "chmod 700 it",
                 cache_dir, st.st_mode & 0777);
  }

  std::unique_ptr<PtodServer> ptod(new PtodServer());
  ptod->cache_dir_ = cache_dir;
  ptod->metrics_ = std::make_unique<Metrics>();
  ptod->backend_ = std::move(backend);
  KernelStore::Options store_options = options.store;
  Metrics* metrics = ptod->metrics_.get();
  store_options.on_evict = [metrics](double idle_seconds) {
    metrics->ObserveEviction(idle_seconds);
  };
  store_options.on_hit = [metrics](bool remote) {
    metrics->RecordTierHit(remote ? "redis" : "rocksdb");
  };
  metrics->AddStaleWorkDirsRemoved(options.stale_work_dirs_removed);
  if (!options.redis.cluster.seeds.empty()) {
    RedisTierOptions redis = options.redis;
    redis.signing_key = options.service.signing_key;
    absl::StatusOr<std::unique_ptr<RedisTier>> tier =
        RedisTier::Create(std::move(redis), metrics);
    if (!tier.ok()) return tier.status();
    ptod->redis_ = *std::move(tier);
    store_options.remote = ptod->redis_.get();
    spdlog::info(
        "Redis Cluster tier: {} seed node(s), entries expire after {}, "
        "compile leases {}",
        options.redis.cluster.seeds.size(),
        absl::FormatDuration(options.redis.ttl),
        options.redis.lease_ttl > absl::ZeroDuration()
            ? absl::StrCat("of ", absl::FormatDuration(options.redis.lease_ttl))
            : std::string("off"));
  }
  absl::StatusOr<KernelStore::Recovered> store =
      KernelStore::OpenOrRecover(cache_dir, store_options);
  if (!store.ok()) return store.status();
  switch (store->recovery) {
    case KernelStore::Recovery::kNone:
      break;
    case KernelStore::Recovery::kMovedAside:
      metrics->RecordStoreRecovery("moved_aside", true);
      break;
    case KernelStore::Recovery::kInMemory:
      metrics->RecordStoreRecovery("in_memory", false);
      break;
  }
  ptod->store_ = std::move(store->store);
  metrics->SetCacheMaxBytes(ptod->store_->max_bytes());
  CompileServiceOptions service_options = options.service;
  service_options.request_threads = max_threads;
  ptod->service_ = std::make_unique<CompileServiceImpl>(
      ptod->backend_.get(), ptod->store_.get(), ptod->metrics_.get(),
      service_options);

  // Both are process-wide switches that take effect for servers built after.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  std::shared_ptr<grpc::ServerCredentials> credentials =
      grpc::InsecureServerCredentials();
  if (options.tls_cert_pem.empty() != options.tls_key_pem.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs both a certificate and its private key");
  }
  if (!options.tls_cert_pem.empty()) {
    grpc::SslServerCredentialsOptions ssl(
        options.tls_client_ca_pem.empty()
            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
            : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = options.tls_client_ca_pem;
    ssl.pem_key_cert_pairs.push_back({options.tls_key_pem, options.tls_cert_pem});
    credentials = grpc::SslServerCredentials(ssl);
    if (ptod->service_->tokens().enabled()) {
      credentials->SetAuthMetadataProcessor(
          std::make_shared<TokenAuthProcessor>(&ptod->service_->tokens()));
    }
  } else if (!options.tls_client_ca_pem.empty()) {
    return absl::InvalidArgumentError(
        "a client CA needs TLS (a server certificate and key)");
  }

  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.address, credentials, &port);
  // gRPC sets SO_REUSEPORT by default, which would let a second ptod bind
  // the same port and silently split the traffic; a busy port must fail.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Time and streams before a caller has shown who it is: a connection that
  // has not finished its (TLS) handshake in 10 s is closed, and one
  // connection cannot hold more than 100 calls open at once.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, 10'000);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 100);
  grpc::ResourceQuota quota("ptod");
  quota.SetMaxThreads(max_threads);
  quota.Resize(options.request_memory_bytes);
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<size_t>(options.max_request_bytes, INT32_MAX)));
  builder.RegisterService(ptod->service_.get());
  ptod->server_ = builder.BuildAndStart();
  if (ptod->server_ == nullptr || port == 0) {
    ptod->server_.reset();
    ptod->shut_down_ = true;
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options.address,
        options.tls_cert_pem.empty()
            ? " (address in use or malformed?)"
            : " (address in use or malformed, or a bad TLS certificate or "
              "key?)"));
  }
  if (grpc::HealthCheckServiceInterface* health =
          ptod->server_->GetHealthCheckService()) {
    // "" (the server) is SERVING by default; name the service too.
    health->SetServingStatus(pto::v1::CompileService::service_full_name(),
                             true);
  }
  ptod->port_ = port;
  const size_t colon = options.address.rfind(':');
  ptod->address_ = absl::StrCat(options.address.substr(0, colon), ":", port);

  if (!options.metrics_address.empty()) {
    absl::StatusOr<int> metrics_port =
        ptod->metrics_->Serve(options.metrics_address);
    if (!metrics_port.ok()) {
      ptod->Shutdown(absl::ZeroDuration());
      return metrics_port.status();
    }
    ptod->metrics_port_ = *metrics_port;
  }
  return ptod;
}

PtodServer::~PtodServer() { Shutdown(absl::ZeroDuration()); }

void PtodServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  // Compiles waiting for another ptod's lease stop waiting: they compile
  // within the grace (or, once draining, do not start) rather than hold
  // shutdown up to the lease wait.
  if (redis_ != nullptr) redis_->StopWaiting();
  // The grace bounds the whole shutdown: when it is over, compiles still
  // running are cancelled (their compiler processes killed), so that a hung
  // compiler cannot keep ptod alive.
  absl::Notification drained;
  std::thread cancel_at_end_of_grace([this, grace, &drained] {
    if (!drained.WaitForNotificationWithTimeout(grace)) {
      backend_->CancelCompiles();
    }
  });
  if (server_ != nullptr) {
    if (grpc::HealthCheckServiceInterface* health =
            server_->GetHealthCheckService()) {
      health->Shutdown();  // NOT_SERVING: load balancers stop sending work
    }
    server_->Shutdown(std::chrono::system_clock::now() +
                      absl::ToChronoMilliseconds(grace));
    server_->Wait();
    spdlog::debug("gRPC server stopped");
  }
  if (service_ != nullptr) service_->Drain();
  drained.Notify();
  cancel_at_end_of_grace.join();
  spdlog::debug("compiles drained");
  store_.reset();  // closes RocksDB
  spdlog::debug("kernel store closed");
  redis_.reset();
}

}  // namespace pto::server
