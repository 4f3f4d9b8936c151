// The TLS settings of a Redis client, loaded once: the CA that node
// certificates must chain to, an optional client certificate (for nodes
// that require one: Redis's tls-auth-clients), and the name node
// certificates must carry.
//
//   TlsOptions tls;
//   tls.ca_file = "/etc/ptod/redis-tls/ca.crt";
//   tls.cert_file = "/etc/ptod/redis-tls/tls.crt";   // optional
//   tls.key_file = "/etc/ptod/redis-tls/tls.key";    // with cert_file
//   absl::StatusOr<std::shared_ptr<const TlsContext>> context =
//       TlsContext::Create(tls);
//   connection_options.tls = *context;               // every connection
//
// Node certificates are always verified: the chain against `ca_file` (TLS
// 1.2 or newer), and the name: `server_name` when set (also sent as SNI),
// else the host the connection was opened to (an IP address is checked
// against the certificate's IP SANs, a DNS name against its DNS names and
// sent as SNI). Redis Cluster reports its nodes by IP address, so either
// the node certificates list every node's address, or they share a name
// given as `server_name`.
//
// Creating a TlsContext makes the process ignore SIGPIPE (if it had the
// default action): OpenSSL writes to sockets with write(2), and a node that
// closes its end must be a failed command, not a dead process.
//
// Thread-safe (immutable once created; OpenSSL's SSL_CTX is shared by the
// connections made from it).
#ifndef PTO_SERVER_REDIS_TLS_CONTEXT_H_
#define PTO_SERVER_REDIS_TLS_CONTEXT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace pto::server::redis {

struct TlsOptions {
  // CA certificates (PEM) node certificates must chain to. Required.
  std::string ca_file;
  // Client certificate chain and its private key (PEM), presented to nodes
  // that ask for one; both or neither.
  std::string cert_file;
  std::string key_file;
  // The name node certificates must carry (and the SNI); "": the host of
  // each node's address.
  std::string server_name;
};

class TlsContext {
 public:
  // Loads the files. INVALID_ARGUMENT naming the option and the file (and
  // OpenSSL's reason) when one is missing, unreadable, not PEM, or the key
  // does not match the certificate.
  static absl::StatusOr<std::shared_ptr<const TlsContext>> Create(
      const TlsOptions& options);
  ~TlsContext();

  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* ssl_ctx() const { return ctx_; }
  const std::string& server_name() const { return options_.server_name; }
  // For messages: the CA file certificates are checked against.
  const std::string& ca_file() const { return options_.ca_file; }

 private:
  TlsContext(SSL_CTX* ctx, TlsOptions options)
      : ctx_(ctx), options_(std::move(options)) {}

  SSL_CTX* const ctx_;
  const TlsOptions options_;
};

// The reasons OpenSSL queued on this thread, joined with "; " (and the
// queue cleared); "" when there are none.
std::string DrainOpenSslErrors();

}  // namespace pto::server::redis

#endif  // PTO_SERVER_REDIS_TLS_CONTEXT_H_
