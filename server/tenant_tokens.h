// Who is calling: bearer tokens per tenant, from a file.
//
//   # tenant   token                          [admin]
//   training   3f9c1e0d8b7a...
//   ops        a81f...                        admin
//
//   auto tokens = TenantTokens::Load("/etc/ptod/tokens");
//   absl::StatusOr<Caller> caller = tokens->Authenticate(*context);
//
// A caller sends "authorization: Bearer <token>" metadata. With tokens
// configured, a missing or unknown token is UNAUTHENTICATED; without any (no
// --tokens_file) every caller is the anonymous tenant "", not an admin (ptod
// grants it admin rights only with --allow_anonymous_admin). A tenant's name becomes part of its cache keys
// (compile_service.h), so tenants never see each other's kernels.
//
// Tokens are compared by their SHA-256 (the map holds no token), so lookup
// time does not depend on how much of a guess matches. The file must not be
// readable by others (like an ssh key): Load refuses one that is.
#ifndef PTO_SERVER_TENANT_TOKENS_H_
#define PTO_SERVER_TENANT_TOKENS_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace grpc {
class ServerContextBase;
}

namespace pto::server {

struct Caller {
  std::string tenant;  // "" for the anonymous tenant
  bool admin = false;  // may invalidate and purge the cache
};

class TenantTokens {
 public:
  // No tokens: everyone is the anonymous tenant.
  TenantTokens() = default;

  // Parses the file's text; errors name the line. Tenant names are
  // [A-Za-z0-9_.-]{1,64}; tokens at least 16 characters; each token once.
  static absl::StatusOr<TenantTokens> Parse(absl::string_view text,
                                            absl::string_view origin);
  // Reads and parses `path`.
  static absl::StatusOr<TenantTokens> Load(const std::string& path);

  bool enabled() const { return !by_digest_.empty(); }
  size_t size() const { return by_digest_.size(); }

  // The caller a token belongs to; UNAUTHENTICATED when unknown.
  absl::StatusOr<Caller> Lookup(absl::string_view token) const;

  // The caller of an RPC, from its "authorization" metadata.
  absl::StatusOr<Caller> Authenticate(
      const grpc::ServerContextBase& context) const;

 private:
  absl::flat_hash_map<std::string, Caller> by_digest_;
};

}  // namespace pto::server

#endif  // PTO_SERVER_TENANT_TOKENS_H_
