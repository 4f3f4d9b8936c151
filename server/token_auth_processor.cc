#include "server/token_auth_processor.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace pto::server {
namespace {

absl::string_view View(const grpc::string_ref& ref) {
  return absl::string_view(ref.data(), ref.size());
}

}  // namespace

grpc::Status TokenAuthProcessor::Process(const InputMetadata& auth_metadata,
                                         grpc::AuthContext* /*context*/,
                                         OutputMetadata* /*consumed*/,
                                         OutputMetadata* /*response*/) {
  // Only the compile service needs a token; gRPC gives the method as
  // ":path". Without one the service checks the token itself.
  auto path = auth_metadata.find(":path");
  if (path == auth_metadata.end() ||
      !absl::StartsWith(View(path->second), "/pto.v1.CompileService/")) {
    return grpc::Status::OK;
  }
  auto it = auth_metadata.find("authorization");
  if (it == auth_metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing \"authorization: Bearer <token>\" metadata "
                        "(refused before the request was read)");
  }
  absl::string_view value = View(it->second);
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the authorization metadata must be \"Bearer "
                        "<token>\" (refused before the request was read)");
  }
  absl::StatusOr<Caller> caller =
      tokens_->Lookup(absl::StripAsciiWhitespace(value));
  if (!caller.ok()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        absl::StrCat(caller.status().message(),
                                     " (refused before the request was read)"));
  }
  return grpc::Status::OK;
}

}  // namespace pto::server
