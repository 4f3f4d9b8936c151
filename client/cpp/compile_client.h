// A thin C++ client of ptod's pto.v1.CompileService.
//
//   pto::client::CompileClient client("127.0.0.1:7070");
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
// Errors: a gRPC status becomes the absl::Status with the same code and the
// server's message, prefixed with the server address. When the server is
// overloaded (RESOURCE_EXHAUSTED) its back-off hint is in the message and in
// RetryAfter(status).
//
// Issue 5 adds retries with back-off (RESOURCE_EXHAUSTED, UNAVAILABLE) and a
// fallback to in-process compiles: both belong in CompileClient::Compile,
// around the single attempt in CallCompile.
//
// Thread-safe: one client may be shared by many threads.
#ifndef PTO_CLIENT_CPP_COMPILE_CLIENT_H_
#define PTO_CLIENT_CPP_COMPILE_CLIENT_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

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
};

class CompileClient {
 public:
  // Connects (lazily) to ptod at `address`, "host:port".
  explicit CompileClient(const std::string& address,
                         const ClientOptions& options = ClientOptions());
  ~CompileClient();

  CompileClient(const CompileClient&) = delete;
  CompileClient& operator=(const CompileClient&) = delete;

  // Compiles `graph` for `target` with `options`, waiting until `deadline`.
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

  const std::string& address() const { return address_; }

 private:
  struct Stub;

  // A context with the deadline and the token.
  void Prepare(grpc::ClientContext* context, absl::Time deadline) const;

  const std::string address_;
  const ClientOptions options_;
  std::unique_ptr<Stub> stub_;
};

// The server's back-off hint carried by a RESOURCE_EXHAUSTED status from
// CompileClient, if any.
std::optional<absl::Duration> RetryAfter(const absl::Status& status);

// Compiles through `client`, then verifies and loads the binary with the
// runtime (pto::runtime::Kernel::Load).
absl::StatusOr<std::unique_ptr<pto::runtime::Kernel>> CompileAndLoad(
    CompileClient& client, const pto::v1::Graph& graph,
    const std::string& target,
    const std::map<std::string, std::string>& options, absl::Time deadline);

}  // namespace pto::client

#endif  // PTO_CLIENT_CPP_COMPILE_CLIENT_H_
