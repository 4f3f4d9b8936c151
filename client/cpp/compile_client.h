// The C++ client of ptod's pto.v1.CompileService (pypto's remote compiles
// go through it as well, via its native module).
//
//   pto::client::CompileClient client("127.0.0.1:7070");
//   // Or several replicas (client/cpp/replicas.h for the forms):
//   pto::client::CompileClient cluster("dns:///ptod-headless:7070");
//   absl::StatusOr<pto::v1::CompileResponse> r = client.Compile(
//       graph, "host", {}, absl::Now() + absl::Seconds(60));
//   if (!r.ok()) ...   // the server's code and message, e.g. INVALID_ARGUMENT
//                      // "op 3 (add): input 1: dtype FP16 != FP32"
//
//   // Or straight to something runnable:
//   auto kernel = pto::client::CompileAndLoad(client, graph, "host", {},
//                                             absl::Now() + absl::Seconds(60));
//   (*kernel)->Run(args);
//
// A binary whose `key` is not the key of the request (Compile: the key the
// server computed for it; GetKernel: the key asked for) is refused with
// DATA_LOSS and never returned or loaded. The runtime checks signatures on
// load whenever a verification key is configured (runtime/signature.h).
//
// Replicas: the address may name several ptod replicas ("a:7070,b:7070", or
// "dns:///name:7070" for every address a DNS name resolves to). Each Compile
// goes to the replica chosen by rendezvous hashing of the request
// (client/cpp/rendezvous.h), so identical compiles from many processes
// converge on one replica; when that replica is unreachable (UNAVAILABLE, or
// no connection within connect_timeout) the next in the request's rendezvous
// order is tried at once, without back-off. A back-off is slept only once
// every replica has been tried. dns:/// names are resolved again at most
// every ClientOptions::resolve_interval. GetKernel is routed the same way by
// its key; Stats and Admin go to the first replica reachable in a fixed
// order (a client per address for per-replica numbers).
//
// Errors: a gRPC status becomes the absl::Status with the same code and the
// server's message, prefixed with the replica's address (also in
// ReplicaAddress(status)). When the server is overloaded
// (RESOURCE_EXHAUSTED) its back-off hint is in the message and in
// RetryAfter(status).
//
// Compile retries UNAVAILABLE and RESOURCE_EXHAUSTED with jittered
// exponential back-off (at least the server's retry-after hint), within the
// caller's deadline and ClientOptions::max_attempts. When the daemon stays
// unreachable (UNAVAILABLE after the retries, or no connection within
// ClientOptions::connect_timeout) and a local fallback is configured
// (ClientOptions::local_compile, e.g. LocalCompiler() from
// client/cpp/local_compile.h), the kernel is compiled in-process instead;
// that is reported once per client, not per call (ClientOptions::
// on_fallback, by default a line on stderr), and for the next
// ClientOptions::fallback_period calls fall back at once unless a replica's
// channel has reconnected meanwhile.
//
// Thread-safe: one client may be shared by many threads.
#ifndef PTO_CLIENT_CPP_COMPILE_CLIENT_H_
#define PTO_CLIENT_CPP_COMPILE_CLIENT_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pto/v1/compile_service.pb.h"
#include "pto/v1/graph.pb.h"
#include "pto/v1/kernel.pb.h"
#include "runtime/kernel.h"

namespace grpc {
class ClientContext;
}

namespace pto::client {

struct ClientOptions {
  // Bearer token (ptod --tokens_file); empty: none sent.
  std::string token;
  // TLS: set `tls` to connect with TLS, verifying the server against
  // `tls_root_ca_pem` (empty: the system's roots). A client certificate and
  // key (PEM) when ptod asks for one (--tls_client_ca_file).
  bool tls = false;
  std::string tls_root_ca_pem;
  std::string tls_cert_pem;
  std::string tls_key_pem;

  // Attempts per Compile (1: no retries).
  int max_attempts = 4;
  // Back-off before retry n (1-based): uniformly random in [b/2, b] with
  // b = min(max_backoff, initial_backoff * 2^(n-1)); never less than the
  // server's retry-after hint.
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  // How long one attempt may wait for a connection before the daemon counts
  // as unreachable (capped by the call's deadline).
  absl::Duration connect_timeout = absl::Seconds(2);
  // After a fallback, calls go straight to local_compile (unless the
  // channel is connected again) for this long before the daemon is tried
  // with retries again.
  absl::Duration fallback_period = absl::Seconds(30);
  // Compiles in-process when the daemon cannot be reached; empty: none.
  std::function<absl::StatusOr<pto::v1::CompileResponse>(
      const pto::v1::CompileRequest&)>
      local_compile;
  // Called when a Compile falls back to local_compile because the daemon
  // proved unreachable, with the last error (not for the calls that fall back
  // at once during fallback_period). Empty: one line on stderr per client.
  std::function<void(const absl::Status&)> on_fallback;
  // dns:/// entries of the address are resolved again at most this often.
  absl::Duration resolve_interval = absl::Seconds(30);
};

class CompileClient {
 public:
  // Connects (lazily) to ptod at `address`: "host:port", or several
  // replicas (client/cpp/replicas.h). An address that does not parse makes
  // every call fail with its INVALID_ARGUMENT.
  explicit CompileClient(const std::string& address,
                         const ClientOptions& options = ClientOptions());
  ~CompileClient();

  CompileClient(const CompileClient&) = delete;
  CompileClient& operator=(const CompileClient&) = delete;

  // Compiles `graph` for `target` with `options`, waiting until `deadline`
  // (retrying and falling back as described above).
  absl::StatusOr<pto::v1::CompileResponse> Compile(
      const pto::v1::Graph& graph, const std::string& target,
      const std::map<std::string, std::string>& options, absl::Time deadline);

  // The cached kernel under `key`; NOT_FOUND if the server does not have it.
  absl::StatusOr<pto::v1::KernelBinary> GetKernel(const std::string& key,
                                                  absl::Time deadline);

  // The server's counters.
  absl::StatusOr<pto::v1::StatsResponse> Stats(absl::Time deadline);

  // Invalidates (new generation) or purges the cache; needs an admin token.
  absl::StatusOr<pto::v1::AdminResponse> Admin(pto::v1::AdminAction action,
                                               absl::Time deadline);

  // Compiles `request` as Compile above.
  absl::StatusOr<pto::v1::CompileResponse> Compile(
      const pto::v1::CompileRequest& request, absl::Time deadline);

  // Starts connecting to every replica without waiting: a later call finds
  // the connection made (or being made) instead of making it. Cheap when
  // already connected; a replica that cannot be reached fails as it would
  // have at the call (nothing is reported here).
  void StartConnecting();

  // The address as given.
  const std::string& address() const { return address_; }

  // The replicas' addresses now (resolved), in the order given.
  std::vector<std::string> ReplicaAddresses();

  // The replicas' addresses in the order a request with routing key `key`
  // (RoutingKey) tries them.
  absl::StatusOr<std::vector<std::string>> RouteOf(const std::string& key);

  // One replica's channel and stub (defined in the .cc).
  struct Stub;

 private:
  // The replicas' stubs in rendezvous order for `key` (resolving dns:///
  // entries again when due).
  absl::StatusOr<std::vector<std::shared_ptr<Stub>>> Route(
      const std::string& key);

  // A context with the deadline and the token.
  void Prepare(grpc::ClientContext* context, absl::Time deadline) const;

  // One Compile RPC to `stub`.
  absl::StatusOr<pto::v1::CompileResponse> CallCompile(
      Stub& stub, const pto::v1::CompileRequest& request, absl::Time deadline);

  // Whether `stub`'s channel connects by `deadline`. With `fail_fast`, a
  // channel in TRANSIENT_FAILURE (refused, reset) counts as not connecting
  // at once, so that the next replica is tried.
  static bool Connects(Stub& stub, absl::Time deadline, bool fail_fast);

  // Runs `rpc` on the replicas of `route` in order, moving on while one is
  // unreachable (no connection within connect_timeout, or UNAVAILABLE);
  // returns the first other status, or the last one.
  absl::Status OnFirstReachable(
      const std::vector<std::shared_ptr<Stub>>& route, absl::Time deadline,
      const std::function<absl::Status(Stub&)>& rpc);

  const std::string address_;
  const ClientOptions options_;
  // The replicas and their stubs (guarded by mu_); stubs are kept per
  // address across re-resolutions.
  std::mutex mu_;
  absl::Status spec_status_;
  std::vector<std::shared_ptr<Stub>> replicas_;
  absl::Time next_resolve_ = absl::InfiniteFuture();
  std::once_flag fallback_logged_;
  // Until when calls fall back without retrying (guarded by down_mu_).
  std::mutex down_mu_;
  absl::Time down_until_ = absl::InfinitePast();
};

// OK when `binary` is keyed `key` (non-empty); DATA_LOSS naming the server
// at `address` and the `rpc` otherwise.
absl::Status CheckBinaryKey(const pto::v1::KernelBinary& binary,
                            const std::string& key, const std::string& address,
                            const std::string& rpc);

// The server's back-off hint carried by a RESOURCE_EXHAUSTED status from
// CompileClient, if any.
std::optional<absl::Duration> RetryAfter(const absl::Status& status);

// The address of the replica a status from CompileClient's RPCs came from,
// if any.
std::optional<std::string> ReplicaAddress(const absl::Status& status);

// Compiles through `client`, then verifies and loads the binary with the
// runtime (pto::runtime::Kernel::Load).
absl::StatusOr<std::unique_ptr<pto::runtime::Kernel>> CompileAndLoad(
    CompileClient& client, const pto::v1::Graph& graph,
    const std::string& target,
    const std::map<std::string, std::string>& options, absl::Time deadline);

}  // namespace pto::client

#endif  // PTO_CLIENT_CPP_COMPILE_CLIENT_H_
