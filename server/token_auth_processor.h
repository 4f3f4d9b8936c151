// Authentication before the request body: a gRPC AuthMetadataProcessor that
// checks the bearer token of every CompileService call from its initial
// metadata, so an unauthenticated caller is refused (UNAUTHENTICATED) before
// gRPC hands its message to ptod.
//
//   auto credentials = grpc::SslServerCredentials(ssl);
//   credentials->SetAuthMetadataProcessor(
//       std::make_shared<TokenAuthProcessor>(&tokens));
//
// gRPC runs such processors only on secure ports (TLS): on a plaintext port
// the token is checked when the call reaches the service (compile_service.h),
// after its body was received, still within --max_request_bytes and the
// request memory budget. Health and reflection calls pass without a token
// (probes), as they do in the service.
#ifndef PTO_SERVER_TOKEN_AUTH_PROCESSOR_H_
#define PTO_SERVER_TOKEN_AUTH_PROCESSOR_H_

#include "grpcpp/security/auth_metadata_processor.h"
#include "server/tenant_tokens.h"

namespace pto::server {

class TokenAuthProcessor final : public grpc::AuthMetadataProcessor {
 public:
  // `tokens` must outlive the processor, and be enabled().
  explicit TokenAuthProcessor(const TenantTokens* tokens) : tokens_(tokens) {}

  // Cheap (a hash and a map lookup): run on gRPC's own thread.
  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& auth_metadata,
                       grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  const TenantTokens* const tokens_;
};

}  // namespace pto::server

#endif  // PTO_SERVER_TOKEN_AUTH_PROCESSOR_H_
