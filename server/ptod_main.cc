// ptod: the PTO compile daemon.
//
//   ptod --address=127.0.0.1:7070 --metrics_address=127.0.0.1:7071
//        --cache_dir=$HOME/.cache/pto/ptod
//
// Prints "ptod listening on HOST:PORT" (the bound port, so --address=...:0
// works) once it serves. SIGTERM or SIGINT: stop taking requests, let running
// ones and compiles in flight finish within --shutdown_grace, then kill the
// compilers still running, close the cache, exit 0. Compiles run in a work
// directory of its own under $TMPDIR (server/work_root.h); the native
// compilers die with ptod, even on kill -9 (compiler/util/subprocess.h).
#include <signal.h>
#include <sys/stat.h>

#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "runtime/signature.h"
#include "server/compiler_limits.h"
#include "server/ptod_server.h"
#include "server/pto_compiler_backend.h"
#include "server/redis/credentials.h"
#include "server/redis/tls_context.h"
#include "server/tenant_tokens.h"
#include "server/work_root.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, address, "127.0.0.1:7070",
          "gRPC listen address host:port (port 0: pick a free port)");
ABSL_FLAG(std::string, metrics_address, "127.0.0.1:7071",
          "Prometheus /metrics address host:port; empty disables");
ABSL_FLAG(std::string, cache_dir, "",
          "kernel cache directory (default $XDG_CACHE_HOME/pto/ptod or "
          "$HOME/.cache/pto/ptod)");
ABSL_FLAG(int, workers, 0, "compile threads (0: one per hardware thread)");
ABSL_FLAG(int, queue_size, 256,
          "compiles that may wait for a thread before RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, memory_cache_bytes, int64_t{256} << 20,
          "bound of the in-memory kernel cache");
ABSL_FLAG(int64_t, key_memo_bytes, int64_t{16} << 20,
          "bound of the memo of request bytes -> cache key (0: off)");
ABSL_FLAG(int64_t, cache_max_bytes, int64_t{10} << 30,
          "byte budget of the persistent cache (payloads and manifests); "
          "least recently used entries are evicted beyond it; 0: unbounded");
ABSL_FLAG(absl::Duration, cache_min_age, absl::Minutes(10),
          "entries used more recently than this are never evicted");
ABSL_FLAG(int64_t, max_request_bytes, int64_t{16} << 20,
          "largest Compile request accepted");
ABSL_FLAG(int, max_rpc_threads, 256,
          "threads for RPCs (each waiting caller holds one; memory hits need "
          "none); beyond it "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, request_memory_bytes, int64_t{4} << 30,
          "memory budget for requests in flight: gRPC's buffers are bounded "
          "by it, and --max_rpc_threads x --max_request_bytes may not exceed "
          "it");
ABSL_FLAG(bool, allow_anonymous_admin, false,
          "without --tokens_file, let any caller use Admin (invalidate, "
          "purge); for a ptod on loopback only");
ABSL_FLAG(std::string, tokens_file, "",
          "bearer tokens per tenant, lines \"<tenant> <token> [admin]\" "
          "(mode 600); empty: no authentication, every caller is the "
          "anonymous tenant");
ABSL_FLAG(std::string, signing_key_file, "",
          "HMAC-SHA256 key (>= 32 bytes) ptod signs every kernel binary with; "
          "runtimes verify with the same key (PTO_KERNEL_VERIFY_KEY_FILE)");
ABSL_FLAG(std::string, tls_cert_file, "",
          "server certificate chain (PEM); with --tls_key_file enables TLS");
ABSL_FLAG(std::string, tls_key_file, "", "server private key (PEM)");
ABSL_FLAG(std::string, tls_client_ca_file, "",
          "CA (PEM) client certificates must be signed by; empty: clients "
          "need no certificate");
ABSL_FLAG(std::string, log_level, "info",
          "trace, debug, info, warn, error, critical or off");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(10),
          "on SIGTERM/SIGINT, how long running requests and compiles may take "
          "to finish; compilers still running after it are killed");
ABSL_FLAG(absl::Duration, native_compile_timeout, absl::Seconds(120),
          "wall-clock limit of one native (C++) compile; past it the compiler "
          "and its children are killed and the request is DEADLINE_EXCEEDED");
ABSL_FLAG(std::string, cxx, "c++", "the native C++ compiler");
ABSL_FLAG(absl::Duration, compile_cpu_limit, absl::Minutes(10),
          "CPU time one native compile may use (ulimit -t); 0: unlimited");
ABSL_FLAG(int64_t, compile_memory_bytes, int64_t{8} << 30,
          "address space one native compiler process may use (ulimit -v); "
          "0: unlimited");
ABSL_FLAG(std::string, redis_nodes, "",
          "Redis Cluster seed nodes, host:port,host:port,...: a second cache "
          "tier shared by ptod replicas (needs --signing_key_file, the same "
          "on every replica); empty: off");
ABSL_FLAG(std::string, redis_credentials_file, "",
          "Redis ACL credentials: one line (the default user's password) or "
          "two (user, then password); empty: no AUTH");
ABSL_FLAG(bool, redis_tls, false,
          "reach Redis over TLS (needs --redis_tls_ca_file); node "
          "certificates are verified, chain and name");
ABSL_FLAG(std::string, redis_tls_ca_file, "",
          "CA certificates (PEM) Redis node certificates must chain to");
ABSL_FLAG(std::string, redis_tls_cert_file, "",
          "client certificate chain (PEM) for nodes that require one "
          "(tls-auth-clients); with --redis_tls_key_file");
ABSL_FLAG(std::string, redis_tls_key_file, "",
          "private key (PEM) of --redis_tls_cert_file");
ABSL_FLAG(std::string, redis_tls_server_name, "",
          "the name Redis node certificates must carry (also sent as SNI); "
          "empty: each node's address as the cluster reports it (an IP "
          "address, checked against the certificates' IP SANs)");
ABSL_FLAG(bool, redis_read_replicas, false,
          "read kernels from the Redis replicas (writes go to primaries)");
ABSL_FLAG(absl::Duration, redis_connect_timeout, absl::Milliseconds(200),
          "timeout of one connect to a Redis node");
ABSL_FLAG(absl::Duration, redis_command_timeout, absl::Milliseconds(200),
          "timeout of each socket read or write of a Redis command");
ABSL_FLAG(absl::Duration, redis_operation_timeout, absl::Milliseconds(500),
          "no retry or redirect of a Redis operation starts after this");
ABSL_FLAG(int, redis_pool_size, 8, "idle connections kept per Redis node");
ABSL_FLAG(absl::Duration, redis_ttl, absl::Hours(24 * 7),
          "expiry of a kernel in Redis, from its write");
ABSL_FLAG(int, redis_max_queued_writes, 256,
          "writes to Redis waiting at most; more are dropped (counted)");
ABSL_FLAG(int64_t, redis_max_entry_bytes, int64_t{64} << 20,
          "largest kernel entry written to or accepted from Redis");
ABSL_FLAG(absl::Duration, redis_lease_ttl, absl::Seconds(10),
          "expiry of a compile lease in Redis (renewed every third of it "
          "while compiling): how soon other replicas take over from a "
          "replica that died compiling; 0: no leases");
ABSL_FLAG(absl::Duration, redis_generation_sync, absl::Seconds(1),
          "how often the cluster's cache generation is read from Redis: "
          "another replica's Admin invalidate or purge reaches this one "
          "within it; 0: only at start");
ABSL_FLAG(absl::Duration, redis_lease_wait, absl::Seconds(130),
          "longest a replica waits for another replica's compile of the "
          "same kernel before compiling it itself");

namespace {

// Logs why ptod cannot run (stderr) and returns the exit code.
int Fail(const std::string& message) {
  spdlog::critical("ptod: {}", message);
  return 1;
}

// The contents of `path` for --`flag`; "" for an empty path.
absl::StatusOr<std::string> ReadFlagFile(const char* flag,
                                         const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("--", flag, ": cannot read ", path));
  }
  return text.str();
}

// Whether `address` ("host:port") listens on loopback only.
bool IsLoopback(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host == "localhost" || host == "::1" ||
         absl::StartsWith(host, "127.");
}

// Warns about each protection that is off on a ptod other hosts can reach.
void WarnIfExposed(const pto::server::PtodOptions& options) {
  if (IsLoopback(options.address)) return;
  if (!options.service.tokens.enabled()) {
    spdlog::warn("{} is not loopback and --tokens_file is not set: any host "
                 "that reaches it may compile and read kernels",
                 options.address);
  }
  if (options.tls_cert_pem.empty()) {
    spdlog::warn("{} is not loopback and TLS is off (--tls_cert_file): "
                 "requests, tokens and kernels cross the network in clear",
                 options.address);
  }
  if (options.service.signing_key.empty()) {
    spdlog::warn("{} is not loopback and --signing_key_file is not set: "
                 "runtimes cannot verify the kernels they load",
                 options.address);
  }
  if (options.service.allow_anonymous_admin &&
      !options.service.tokens.enabled()) {
    spdlog::warn("{} is not loopback and --allow_anonymous_admin is set: any "
                 "host that reaches it may purge the cache",
                 options.address);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Files ptod creates (the cache, temporary compiles) are its own: 0600,
  // directories 0700, whatever the caller's umask.
  umask(077);
  absl::SetProgramUsageMessage("PTO compile daemon");
  absl::ParseCommandLine(argc, argv);
  // absl::Mutex checks lock order on every acquisition unless built with
  // NDEBUG (we build -O2 without it): a debugging aid that costs a few
  // percent of a hit; tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Logs go to stderr; stdout carries only the lines scripts wait for.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ptod"));

  const spdlog::level::level_enum level =
      spdlog::level::from_str(absl::GetFlag(FLAGS_log_level));
  if (level == spdlog::level::off && absl::GetFlag(FLAGS_log_level) != "off") {
    return Fail(absl::StrCat("--log_level: unknown level \"",
                             absl::GetFlag(FLAGS_log_level), "\""));
  }
  spdlog::set_level(level);

  // Block the stop signals in every thread (gRPC's and RocksDB's threads
  // inherit this mask) so that only the sigwait() below receives them: no
  // code runs in signal-handler context at all.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  pto::server::PtodOptions options;
  options.address = absl::GetFlag(FLAGS_address);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  options.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  int workers = absl::GetFlag(FLAGS_workers);
  if (workers <= 0) workers = std::max(1u, std::thread::hardware_concurrency());
  if (absl::GetFlag(FLAGS_queue_size) < 1) return Fail("--queue_size must be >= 1");
  if (absl::GetFlag(FLAGS_max_request_bytes) < 1024) {
    return Fail("--max_request_bytes must be >= 1024");
  }
  if (absl::GetFlag(FLAGS_memory_cache_bytes) < 0) {
    return Fail("--memory_cache_bytes must be >= 0");
  }
  if (absl::GetFlag(FLAGS_key_memo_bytes) < 0) {
    return Fail("--key_memo_bytes must be >= 0");
  }
  if (absl::GetFlag(FLAGS_cache_max_bytes) < 0) {
    return Fail("--cache_max_bytes must be >= 0");
  }
  if (absl::GetFlag(FLAGS_cache_min_age) < absl::ZeroDuration()) {
    return Fail("--cache_min_age must be >= 0");
  }
  options.store.max_bytes = absl::GetFlag(FLAGS_cache_max_bytes);
  options.store.min_age = absl::GetFlag(FLAGS_cache_min_age);
  options.service.workers = workers;
  options.service.queue_size = absl::GetFlag(FLAGS_queue_size);
  options.service.memory_cache_bytes = absl::GetFlag(FLAGS_memory_cache_bytes);
  options.service.key_memo_bytes = absl::GetFlag(FLAGS_key_memo_bytes);
  options.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  if (absl::GetFlag(FLAGS_max_rpc_threads) < 4) {
    return Fail("--max_rpc_threads must be >= 4");
  }
  options.max_rpc_threads = absl::GetFlag(FLAGS_max_rpc_threads);
  if (absl::GetFlag(FLAGS_request_memory_bytes) < (int64_t{64} << 20)) {
    return Fail("--request_memory_bytes must be >= 64 MiB");
  }
  options.request_memory_bytes = absl::GetFlag(FLAGS_request_memory_bytes);
  options.service.allow_anonymous_admin =
      absl::GetFlag(FLAGS_allow_anonymous_admin);

  if (!absl::GetFlag(FLAGS_tokens_file).empty()) {
    auto tokens =
        pto::server::TenantTokens::Load(absl::GetFlag(FLAGS_tokens_file));
    if (!tokens.ok()) {
      return Fail(absl::StrCat("--tokens_file: ", tokens.status().message()));
    }
    spdlog::info("{} tenant tokens from {}", tokens->size(),
                 absl::GetFlag(FLAGS_tokens_file));
    options.service.tokens = *std::move(tokens);
  }
  if (!absl::GetFlag(FLAGS_signing_key_file).empty()) {
    auto key = pto::runtime::ReadSigningKeyFile(
        absl::GetFlag(FLAGS_signing_key_file));
    if (!key.ok()) {
      return Fail(absl::StrCat("--signing_key_file: ", key.status().message()));
    }
    options.service.signing_key = *std::move(key);
  }
  const bool redis_tls_files_given =
      !absl::GetFlag(FLAGS_redis_tls_ca_file).empty() ||
      !absl::GetFlag(FLAGS_redis_tls_cert_file).empty() ||
      !absl::GetFlag(FLAGS_redis_tls_key_file).empty() ||
      !absl::GetFlag(FLAGS_redis_tls_server_name).empty();
  if (redis_tls_files_given && !absl::GetFlag(FLAGS_redis_tls)) {
    return Fail(
        "--redis_tls_ca_file, --redis_tls_cert_file, --redis_tls_key_file "
        "and --redis_tls_server_name need --redis_tls");
  }
  if (absl::GetFlag(FLAGS_redis_tls)) {
    if (absl::GetFlag(FLAGS_redis_nodes).empty()) {
      return Fail("--redis_tls needs --redis_nodes");
    }
    if (absl::GetFlag(FLAGS_redis_tls_ca_file).empty()) {
      return Fail(
          "--redis_tls needs --redis_tls_ca_file: the CA (PEM) the Redis "
          "nodes' certificates chain to");
    }
    if (absl::GetFlag(FLAGS_redis_tls_cert_file).empty() !=
        absl::GetFlag(FLAGS_redis_tls_key_file).empty()) {
      return Fail(
          "--redis_tls_cert_file and --redis_tls_key_file go together (a "
          "client certificate and its key)");
    }
    pto::server::redis::TlsOptions tls;
    tls.ca_file = absl::GetFlag(FLAGS_redis_tls_ca_file);
    tls.cert_file = absl::GetFlag(FLAGS_redis_tls_cert_file);
    tls.key_file = absl::GetFlag(FLAGS_redis_tls_key_file);
    tls.server_name = absl::GetFlag(FLAGS_redis_tls_server_name);
    for (auto [flag, path] :
         {std::make_pair("redis_tls_ca_file", tls.ca_file),
          std::make_pair("redis_tls_cert_file", tls.cert_file),
          std::make_pair("redis_tls_key_file", tls.key_file)}) {
      absl::StatusOr<std::string> text = ReadFlagFile(flag, path);
      if (!text.ok()) return Fail(std::string(text.status().message()));
    }
    // Files that are there but not PEM, or a key not the certificate's: the
    // message names the file.
    absl::StatusOr<std::shared_ptr<const pto::server::redis::TlsContext>>
        context = pto::server::redis::TlsContext::Create(tls);
    if (!context.ok()) {
      return Fail(absl::StrCat("--redis_tls: ", context.status().message()));
    }
    options.redis.cluster.connection.tls = *std::move(context);
  }
  if (!absl::GetFlag(FLAGS_redis_nodes).empty()) {
    pto::server::RedisTierOptions& redis = options.redis;
    for (absl::string_view node :
         absl::StrSplit(absl::GetFlag(FLAGS_redis_nodes), ',',
                        absl::SkipWhitespace())) {
      redis.cluster.seeds.push_back(
          std::string(absl::StripAsciiWhitespace(node)));
    }
    if (options.service.signing_key.empty()) {
      return Fail(
          "--redis_nodes needs --signing_key_file (the same key on every "
          "replica): nothing read from Redis is served unless it verifies");
    }
    if (!absl::GetFlag(FLAGS_redis_credentials_file).empty()) {
      absl::StatusOr<pto::server::redis::Credentials> credentials =
          pto::server::redis::ReadCredentialsFile(
              absl::GetFlag(FLAGS_redis_credentials_file));
      if (!credentials.ok()) {
        return Fail(absl::StrCat("--redis_credentials_file: ",
                                 credentials.status().message()));
      }
      redis.cluster.connection.user = credentials->user;
      redis.cluster.connection.password = credentials->password;
    }
    if (absl::GetFlag(FLAGS_redis_pool_size) < 0 ||
        absl::GetFlag(FLAGS_redis_max_queued_writes) < 0 ||
        absl::GetFlag(FLAGS_redis_max_entry_bytes) <= 0) {
      return Fail(
          "--redis_pool_size and --redis_max_queued_writes must be >= 0, "
          "--redis_max_entry_bytes > 0");
    }
    redis.cluster.read_from_replicas = absl::GetFlag(FLAGS_redis_read_replicas);
    redis.cluster.connection.connect_timeout =
        absl::GetFlag(FLAGS_redis_connect_timeout);
    redis.cluster.connection.command_timeout =
        absl::GetFlag(FLAGS_redis_command_timeout);
    redis.cluster.operation_timeout =
        absl::GetFlag(FLAGS_redis_operation_timeout);
    redis.cluster.max_idle_per_node = absl::GetFlag(FLAGS_redis_pool_size);
    redis.ttl = absl::GetFlag(FLAGS_redis_ttl);
    redis.max_queued_writes = absl::GetFlag(FLAGS_redis_max_queued_writes);
    redis.max_entry_bytes = absl::GetFlag(FLAGS_redis_max_entry_bytes);
    redis.lease_ttl = absl::GetFlag(FLAGS_redis_lease_ttl);
    redis.lease_wait = absl::GetFlag(FLAGS_redis_lease_wait);
    if (absl::GetFlag(FLAGS_redis_generation_sync) < absl::ZeroDuration()) {
      return Fail("--redis_generation_sync must be >= 0");
    }
    options.service.generation_sync_interval =
        absl::GetFlag(FLAGS_redis_generation_sync);
  }
  for (auto [flag, path, pem] :
       {std::make_tuple("tls_cert_file", absl::GetFlag(FLAGS_tls_cert_file),
                        &options.tls_cert_pem),
        std::make_tuple("tls_key_file", absl::GetFlag(FLAGS_tls_key_file),
                        &options.tls_key_pem),
        std::make_tuple("tls_client_ca_file",
                        absl::GetFlag(FLAGS_tls_client_ca_file),
                        &options.tls_client_ca_pem)}) {
    absl::StatusOr<std::string> text = ReadFlagFile(flag, path);
    if (!text.ok()) return Fail(std::string(text.status().message()));
    *pem = *std::move(text);
  }

  pto::compiler::CompileSettings settings;
  settings.native_compile_timeout = absl::GetFlag(FLAGS_native_compile_timeout);
  if (absl::GetFlag(FLAGS_compile_memory_bytes) < 0 ||
      absl::GetFlag(FLAGS_compile_cpu_limit) < absl::ZeroDuration()) {
    return Fail("--compile_memory_bytes and --compile_cpu_limit must be >= 0");
  }
  // Every file ptod writes outside the cache (the limits wrapper, each
  // compile's temp directory) lives in its work root, removed at exit; the
  // roots of ptods that died without removing theirs are removed here.
  absl::StatusOr<std::unique_ptr<pto::server::WorkRoot>> work_root =
      pto::server::WorkRoot::Create("");
  if (!work_root.ok()) return Fail(std::string(work_root.status().message()));
  if (!(*work_root)->stale_removed().empty()) {
    spdlog::info("removed {} stale work directories of dead ptods",
                 (*work_root)->stale_removed().size());
  }
  options.stale_work_dirs_removed = (*work_root)->stale_removed().size();
  const std::string wrapper_dir = (*work_root)->path();
  absl::StatusOr<std::string> cxx = pto::server::WriteLimitedCompiler(
      wrapper_dir, absl::GetFlag(FLAGS_cxx),
      absl::GetFlag(FLAGS_compile_cpu_limit),
      static_cast<uint64_t>(absl::GetFlag(FLAGS_compile_memory_bytes)));
  if (!cxx.ok()) return Fail(std::string(cxx.status().message()));
  settings.cxx = *cxx;
  settings.cxx_name = absl::GetFlag(FLAGS_cxx);
  settings.work_dir = (*work_root)->path();

  auto ptod = pto::server::PtodServer::Start(
      options, pto::server::NewPtoCompilerBackend(settings));
  if (!ptod.ok()) return Fail(std::string(ptod.status().message()));

  WarnIfExposed(options);
  const pto::server::KernelStore::Stats stats = (*ptod)->store_stats();
  spdlog::info(
      "ptod serving on {} (metrics {}), cache {} with {} kernels, {} bytes, "
      "{} workers",
      (*ptod)->address(),
      (*ptod)->metrics_port() != 0
          ? absl::StrCat(options.metrics_address.substr(
                             0, options.metrics_address.rfind(':')),
                         ":", (*ptod)->metrics_port(), "/metrics")
          : std::string("off"),
      (*ptod)->cache_dir(), stats.entries, stats.bytes, workers);
  // The line scripts and tests wait for; stdout, flushed.
  std::printf("ptod listening on %s\n", (*ptod)->address().c_str());
  if ((*ptod)->metrics_port() != 0) {
    std::printf("ptod metrics on port %d\n", (*ptod)->metrics_port());
  }
  std::fflush(stdout);

  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) != 0) {
  }
  spdlog::info("received {}, shutting down",
               signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  (*ptod)->Shutdown(absl::GetFlag(FLAGS_shutdown_grace));
  spdlog::info("ptod stopped");
  return 0;
}
