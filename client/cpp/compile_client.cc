#include "client/cpp/compile_client.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/escaping.h"
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
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pto::v1::CompileService::Stub> stub;
};

namespace {

bool Retryable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsResourceExhausted(status);
}

// The back-off before retry `retry` (1-based), jittered.
absl::Duration Backoff(const ClientOptions& options, int retry) {
  absl::Duration b = options.initial_backoff;
  for (int i = 1; i < retry && b < options.max_backoff; ++i) b *= 2;
  b = std::min(b, options.max_backoff);
  thread_local std::mt19937_64 random(std::random_device{}());
  std::uniform_real_distribution<double> half_to_one(0.5, 1.0);
  return b * half_to_one(random);
}

}  // namespace

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
  stub_->channel = grpc::CreateCustomChannel(address, credentials, args);
  stub_->stub = pto::v1::CompileService::NewStub(stub_->channel);
}

bool CompileClient::Connects(absl::Time deadline) {
  grpc_connectivity_state state = stub_->channel->GetState(true);
  while (state != GRPC_CHANNEL_READY) {
    if (!stub_->channel->WaitForStateChange(state,
                                            absl::ToChronoTime(deadline))) {
      return false;
    }
    state = stub_->channel->GetState(true);
  }
  return true;
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
  if (options_.local_compile) {
    bool down;
    {
      std::lock_guard<std::mutex> lock(down_mu_);
      down = absl::Now() < down_until_;
    }
    if (down && stub_->channel->GetState(true) != GRPC_CHANNEL_READY) {
      return options_.local_compile(request);
    }
  }
  absl::Status last;
  const int attempts = std::max(1, options_.max_attempts);
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    // An unreachable daemon fails fast (connect_timeout), not at the
    // caller's deadline, so the fallback still has time.
    const absl::Time connect_by =
        std::min(deadline, absl::Now() + options_.connect_timeout);
    const absl::Time tried = absl::Now();
    if (!Connects(connect_by)) {
      const std::string waited = absl::FormatDuration(
          absl::Trunc(absl::Now() - tried, absl::Milliseconds(1)));
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(
            absl::StrCat("ptod at ", address_,
                         ": Compile: deadline passed before a connection (waited ",
                         waited, ")"));
      }
      last = absl::UnavailableError(absl::StrCat(
          "ptod at ", address_, ": Compile: cannot connect (waited ", waited,
          ")"));
    } else {
      absl::StatusOr<pto::v1::CompileResponse> response =
          CallCompile(request, deadline);
      if (response.ok() || !Retryable(response.status())) return response;
      last = response.status();
    }
    if (absl::Now() >= deadline) break;
    if (attempt == attempts) break;
    absl::Duration wait = Backoff(options_, attempt);
    if (std::optional<absl::Duration> hint = RetryAfter(last)) {
      wait = std::max(wait, *hint);
    }
    if (absl::Now() + wait >= deadline) break;
    absl::SleepFor(wait);
  }
  if (absl::IsUnavailable(last) && options_.local_compile) {
    std::call_once(fallback_logged_, [&] {
      std::fprintf(stderr,
                   "pto: ptod at %s cannot be reached (%s); compiling "
                   "locally (logged once)\n",
                   address_.c_str(), std::string(last.message()).c_str());
    });
    {
      std::lock_guard<std::mutex> lock(down_mu_);
      down_until_ = absl::Now() + options_.fallback_period;
    }
    return options_.local_compile(request);
  }
  return last;
}

absl::StatusOr<pto::v1::CompileResponse> CompileClient::CallCompile(
    const pto::v1::CompileRequest& request, absl::Time deadline) {
  grpc::ClientContext context;
  Prepare(&context, deadline);
  pto::v1::CompileResponse response;
  grpc::Status status = stub_->stub->Compile(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, context, address_, "Compile");
  if (absl::Status keyed = CheckBinaryKey(response.binary(), response.key(),
                                          address_, "Compile");
      !keyed.ok()) {
    return keyed;
  }
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
  if (absl::Status keyed =
          CheckBinaryKey(response.binary(), key, address_, "GetKernel");
      !keyed.ok()) {
    return keyed;
  }
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

absl::Status CheckBinaryKey(const pto::v1::KernelBinary& binary,
                            const std::string& key, const std::string& address,
                            const std::string& rpc) {
  if (!key.empty() && binary.key() == key) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "ptod at ", address, ": ", rpc, " answered with a binary keyed \"",
      absl::CEscape(binary.key().substr(0, 80)), "\" for key \"",
      absl::CEscape(key.substr(0, 80)),
      "\": refused (a wrong kernel; the server's cache may be damaged)"));
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
