#include "client/cpp/compile_client.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "pto/v1/compile_service.grpc.pb.h"

namespace pto::client {
namespace {

// Where RetryAfter() finds the server's hint on a status.
constexpr char kRetryAfterPayload[] = "type.pto.dev/retry-after-ms";

// Kernel binaries carry shared objects; gRPC's default 4 MiB limit is too
// small for big ones.
constexpr int kMaxResponseBytes = 256 << 20;

void SetDeadline(grpc::ClientContext& context, absl::Time deadline) {
  if (deadline != absl::InfiniteFuture()) {
    context.set_deadline(absl::ToChronoTime(deadline));
  }
}

// gRPC status -> absl::Status: same code, the server's message, and the
// retry hint from the trailing metadata.
absl::Status FromGrpc(const grpc::Status& status,
                      const grpc::ClientContext& context,
                      const std::string& address, const char* method) {
  if (status.ok()) return absl::OkStatus();
  absl::Status result(
      static_cast<absl::StatusCode>(status.error_code()),
      absl::StrCat("ptod at ", address, ": ", method, ": ",
                   status.error_message()));
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find("retry-after-ms");
  if (it != trailers.end()) {
    result.SetPayload(kRetryAfterPayload,
                      absl::Cord(std::string(it->second.data(),
                                             it->second.size())));
  }
  return result;
}

}  // namespace

struct CompileClient::Stub {
  std::unique_ptr<pto::v1::CompileService::Stub> stub;
};

CompileClient::CompileClient(const std::string& address,
                             const ClientOptions& options)
    : address_(address), options_(options), stub_(std::make_unique<Stub>()) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxResponseBytes);
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_root_ca_pem;
    ssl.pem_cert_chain = options.tls_cert_pem;
    ssl.pem_private_key = options.tls_key_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  stub_->stub = pto::v1::CompileService::NewStub(
      grpc::CreateCustomChannel(address, credentials, args));
}

void CompileClient::Prepare(grpc::ClientContext* context,
                            absl::Time deadline) const {
  SetDeadline(*context, deadline);
  if (!options_.token.empty()) {
    context->AddMetadata("authorization", "Bearer " + options_.token);
  }
}

CompileClient::~CompileClient() = default;

absl::StatusOr<pto::v1::CompileResponse> CompileClient::Compile(
    const pto::v1::Graph& graph, const std::string& target,
    const std::map<std::string, std::string>& options, absl::Time deadline) {
  pto::v1::CompileRequest request;
  *request.mutable_graph() = graph;
  request.set_target(target);
  request.mutable_options()->insert(options.begin(), options.end());
  // Issue 5: retries with back-off and the local fallback wrap this call.
  grpc::ClientContext context;
  Prepare(&context, deadline);
  pto::v1::CompileResponse response;
  grpc::Status status = stub_->stub->Compile(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, context, address_, "Compile");
  return response;
}

absl::StatusOr<pto::v1::KernelBinary> CompileClient::GetKernel(
    const std::string& key, absl::Time deadline) {
  pto::v1::GetKernelRequest request;
  request.set_key(key);
  grpc::ClientContext context;
  Prepare(&context, deadline);
  pto::v1::GetKernelResponse response;
  grpc::Status status = stub_->stub->GetKernel(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, context, address_, "GetKernel");
  return std::move(*response.mutable_binary());
}

absl::StatusOr<pto::v1::StatsResponse> CompileClient::Stats(
    absl::Time deadline) {
  grpc::ClientContext context;
  Prepare(&context, deadline);
  pto::v1::StatsResponse response;
  grpc::Status status =
      stub_->stub->Stats(&context, pto::v1::StatsRequest(), &response);
  if (!status.ok()) return FromGrpc(status, context, address_, "Stats");
  return response;
}

absl::StatusOr<pto::v1::AdminResponse> CompileClient::Admin(
    pto::v1::AdminAction action, absl::Time deadline) {
  pto::v1::AdminRequest request;
  request.set_action(action);
  grpc::ClientContext context;
  Prepare(&context, deadline);
  pto::v1::AdminResponse response;
  grpc::Status status = stub_->stub->Admin(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, context, address_, "Admin");
  return response;
}

std::optional<absl::Duration> RetryAfter(const absl::Status& status) {
  auto payload = status.GetPayload(kRetryAfterPayload);
  if (!payload.has_value()) return std::nullopt;
  int64_t ms = 0;
  if (!absl::SimpleAtoi(std::string(*payload), &ms) || ms < 0) {
    return std::nullopt;
  }
  return absl::Milliseconds(ms);
}

absl::StatusOr<std::unique_ptr<pto::runtime::Kernel>> CompileAndLoad(
    CompileClient& client, const pto::v1::Graph& graph,
    const std::string& target,
    const std::map<std::string, std::string>& options, absl::Time deadline) {
  absl::StatusOr<pto::v1::CompileResponse> response =
      client.Compile(graph, target, options, deadline);
  if (!response.ok()) return response.status();
  return pto::runtime::Kernel::Load(response->binary());
}

}  // namespace pto::client
