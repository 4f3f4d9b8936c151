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
#include "client/cpp/rendezvous.h"
#include "client/cpp/replicas.h"
#include "grpcpp/grpcpp.h"
#include "pto/v1/compile_service.grpc.pb.h"

namespace pto::client {
namespace {

// Where RetryAfter() finds the server's hint on a status.
constexpr char kRetryAfterPayload[] = "type.pto.dev/retry-after-ms";
// Where ReplicaAddress() finds the replica's address on a status.
constexpr char kAddressPayload[] = "type.pto.dev/ptod-address";

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
  result.SetPayload(kAddressPayload, absl::Cord(address));
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
  std::string address;
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

// A stub for `replica`, connecting lazily.
std::shared_ptr<CompileClient::Stub> MakeStub(const Replica& replica,
                                              const ClientOptions& options,
                                              bool several) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxResponseBytes);
  if (several) {
    // A replica that comes back is noticed within seconds, not gRPC's
    // default two minutes, so its requests return to it.
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_root_ca_pem;
    ssl.pem_cert_chain = options.tls_cert_pem;
    ssl.pem_private_key = options.tls_key_pem;
    credentials = grpc::SslCredentials(ssl);
    if (!replica.tls_name.empty()) {
      args.SetSslTargetNameOverride(replica.tls_name);
    }
  }
  auto stub = std::make_shared<CompileClient::Stub>();
  stub->address = replica.address;
  stub->channel = grpc::CreateCustomChannel(replica.address, credentials, args);
  stub->stub = pto::v1::CompileService::NewStub(stub->channel);
  return stub;
}

// The addresses of `stubs`.
std::vector<std::string> AddressesOf(
    const std::vector<std::shared_ptr<CompileClient::Stub>>& stubs) {
  std::vector<std::string> addresses;
  addresses.reserve(stubs.size());
  for (const auto& stub : stubs) addresses.push_back(stub->address);
  return addresses;
}

}  // namespace

CompileClient::CompileClient(const std::string& address,
                             const ClientOptions& options)
    : address_(address), options_(options) {
  absl::StatusOr<std::vector<Replica>> replicas = ResolveReplicas(address);
  if (!replicas.ok()) {
    spec_status_ = replicas.status();
  } else {
    for (const Replica& replica : *replicas) {
      replicas_.push_back(MakeStub(replica, options_, replicas->size() > 1 ||
                                                          HasDnsEntry(address)));
    }
  }
  if (HasDnsEntry(address)) {
    next_resolve_ = absl::Now() + options_.resolve_interval;
    // A name that did not resolve is tried again at the next call.
    if (absl::IsUnavailable(spec_status_)) next_resolve_ = absl::InfinitePast();
  }
}

absl::StatusOr<std::vector<std::shared_ptr<CompileClient::Stub>>>
CompileClient::Route(const std::string& key) {
  std::vector<std::shared_ptr<Stub>> replicas;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Now() >= next_resolve_) {
      next_resolve_ = absl::Now() + options_.resolve_interval;
      absl::StatusOr<std::vector<Replica>> resolved = ResolveReplicas(address_);
      // A failed resolution keeps the replicas known (if any).
      if (resolved.ok() && !resolved->empty()) {
        std::vector<std::shared_ptr<Stub>> next;
        for (const Replica& replica : *resolved) {
          auto known = std::find_if(
              replicas_.begin(), replicas_.end(),
              [&](const auto& stub) { return stub->address == replica.address; });
          next.push_back(known != replicas_.end()
                             ? *known
                             : MakeStub(replica, options_, /*several=*/true));
        }
        replicas_ = std::move(next);
        spec_status_ = absl::OkStatus();
      } else if (replicas_.empty()) {
        spec_status_ = resolved.ok()
                           ? absl::UnavailableError(absl::StrCat(
                                 "ptod address ", address_,
                                 ": the name resolves to no address"))
                           : resolved.status();
      }
    }
    if (!spec_status_.ok()) return spec_status_;
    replicas = replicas_;
  }
  std::vector<std::shared_ptr<Stub>> route;
  route.reserve(replicas.size());
  for (size_t i : RendezvousOrder(AddressesOf(replicas), key)) {
    route.push_back(replicas[i]);
  }
  return route;
}

std::vector<std::string> CompileClient::ReplicaAddresses() {
  std::lock_guard<std::mutex> lock(mu_);
  return AddressesOf(replicas_);
}

absl::StatusOr<std::vector<std::string>> CompileClient::RouteOf(
    const std::string& key) {
  absl::StatusOr<std::vector<std::shared_ptr<Stub>>> route = Route(key);
  if (!route.ok()) return route.status();
  return AddressesOf(*route);
}

void CompileClient::StartConnecting() {
  std::vector<std::shared_ptr<Stub>> replicas;
  {
    std::lock_guard<std::mutex> lock(mu_);
    replicas = replicas_;
  }
  for (const std::shared_ptr<Stub>& stub : replicas) {
    stub->channel->GetState(/*try_to_connect=*/true);
  }
}

bool CompileClient::Connects(Stub& stub, absl::Time deadline, bool fail_fast) {
  grpc_connectivity_state state = stub.channel->GetState(true);
  while (state != GRPC_CHANNEL_READY) {
    if (fail_fast && state == GRPC_CHANNEL_TRANSIENT_FAILURE) return false;
    if (!stub.channel->WaitForStateChange(state, absl::ToChronoTime(deadline))) {
      return false;
    }
    state = stub.channel->GetState(true);
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
  return Compile(request, deadline);
}

absl::StatusOr<pto::v1::CompileResponse> CompileClient::Compile(
    const pto::v1::CompileRequest& request, absl::Time deadline) {
  absl::StatusOr<std::vector<std::shared_ptr<Stub>>> routed =
      Route(RoutingKey(request));
  if (!routed.ok() && !absl::IsUnavailable(routed.status())) {
    return routed.status();
  }
  const std::vector<std::shared_ptr<Stub>> route =
      routed.ok() ? *std::move(routed) : std::vector<std::shared_ptr<Stub>>();
  if (options_.local_compile) {
    bool down;
    {
      std::lock_guard<std::mutex> lock(down_mu_);
      down = absl::Now() < down_until_;
    }
    const bool any_ready = std::any_of(route.begin(), route.end(), [](auto& s) {
      return s->channel->GetState(true) == GRPC_CHANNEL_READY;
    });
    if (down && !any_ready) return options_.local_compile(request);
  }
  absl::Status last = routed.status();
  const int attempts = route.empty() ? 0 : std::max(1, options_.max_attempts);
  const bool several = route.size() > 1;
  size_t at = 0;     // the replica tried next (index into route)
  int backoffs = 0;  // back-offs slept so far
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    Stub& stub = *route[at];
    // An unreachable replica fails fast (connect_timeout), not at the
    // caller's deadline, so the next replica or the fallback has time.
    const absl::Time connect_by =
        std::min(deadline, absl::Now() + options_.connect_timeout);
    const absl::Time tried = absl::Now();
    if (!Connects(stub, connect_by, several)) {
      const std::string waited = absl::FormatDuration(
          absl::Trunc(absl::Now() - tried, absl::Milliseconds(1)));
      if (absl::Now() >= deadline) {
        last = absl::DeadlineExceededError(absl::StrCat(
            "ptod at ", stub.address,
            ": Compile: deadline passed before a connection (waited ", waited,
            ")"));
        last.SetPayload(kAddressPayload, absl::Cord(stub.address));
        return last;
      }
      last = absl::UnavailableError(absl::StrCat(
          "ptod at ", stub.address, ": Compile: cannot connect (waited ",
          waited, ")"));
      last.SetPayload(kAddressPayload, absl::Cord(stub.address));
    } else {
      absl::StatusOr<pto::v1::CompileResponse> response =
          CallCompile(stub, request, deadline);
      if (response.ok() || !Retryable(response.status())) return response;
      last = response.status();
    }
    if (absl::Now() >= deadline) break;
    if (attempt == attempts) break;
    // Unreachable: the next replica in rendezvous order, at once; a back-off
    // only once every replica has been tried. Busy: the same replica (its
    // queue is the kernel's), after a back-off.
    if (absl::IsUnavailable(last) && several) {
      at = (at + 1) % route.size();
      if (at != 0) continue;
    }
    absl::Duration wait = Backoff(options_, ++backoffs);
    if (std::optional<absl::Duration> hint = RetryAfter(last)) {
      wait = std::max(wait, *hint);
    }
    if (absl::Now() + wait >= deadline) break;
    absl::SleepFor(wait);
  }
  if (absl::IsUnavailable(last) && options_.local_compile) {
    if (options_.on_fallback) {
      options_.on_fallback(last);
    } else {
      std::call_once(fallback_logged_, [&] {
        std::fprintf(stderr,
                     "pto: ptod at %s cannot be reached (%s); compiling "
                     "locally (logged once)\n",
                     address_.c_str(), std::string(last.message()).c_str());
      });
    }
    {
      std::lock_guard<std::mutex> lock(down_mu_);
      down_until_ = absl::Now() + options_.fallback_period;
    }
    return options_.local_compile(request);
  }
  return last;
}

absl::StatusOr<pto::v1::CompileResponse> CompileClient::CallCompile(
    Stub& stub, const pto::v1::CompileRequest& request, absl::Time deadline) {
  grpc::ClientContext context;
  Prepare(&context, deadline);
  pto::v1::CompileResponse response;
  grpc::Status status = stub.stub->Compile(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, context, stub.address, "Compile");
  if (absl::Status keyed = CheckBinaryKey(response.binary(), response.key(),
                                          stub.address, "Compile");
      !keyed.ok()) {
    return keyed;
  }
  return response;
}

absl::Status CompileClient::OnFirstReachable(
    const std::vector<std::shared_ptr<Stub>>& route, absl::Time deadline,
    const std::function<absl::Status(Stub&)>& rpc) {
  absl::Status last;
  for (const std::shared_ptr<Stub>& stub : route) {
    const bool more = stub != route.back();
    if (more && !Connects(*stub,
                          std::min(deadline,
                                   absl::Now() + options_.connect_timeout),
                          /*fail_fast=*/true)) {
      last = absl::UnavailableError(
          absl::StrCat("ptod at ", stub->address, ": cannot connect"));
      last.SetPayload(kAddressPayload, absl::Cord(stub->address));
      continue;
    }
    last = rpc(*stub);
    if (!absl::IsUnavailable(last)) return last;
  }
  return last;
}

absl::StatusOr<pto::v1::KernelBinary> CompileClient::GetKernel(
    const std::string& key, absl::Time deadline) {
  absl::StatusOr<std::vector<std::shared_ptr<Stub>>> route = Route(key);
  if (!route.ok()) return route.status();
  pto::v1::KernelBinary binary;
  absl::Status status = OnFirstReachable(*route, deadline, [&](Stub& stub) {
    pto::v1::GetKernelRequest request;
    request.set_key(key);
    grpc::ClientContext context;
    Prepare(&context, deadline);
    pto::v1::GetKernelResponse response;
    grpc::Status s = stub.stub->GetKernel(&context, request, &response);
    if (!s.ok()) return FromGrpc(s, context, stub.address, "GetKernel");
    if (absl::Status keyed =
            CheckBinaryKey(response.binary(), key, stub.address, "GetKernel");
        !keyed.ok()) {
      return keyed;
    }
    binary = std::move(*response.mutable_binary());
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return binary;
}

absl::StatusOr<pto::v1::StatsResponse> CompileClient::Stats(
    absl::Time deadline) {
  absl::StatusOr<std::vector<std::shared_ptr<Stub>>> route = Route("");
  if (!route.ok()) return route.status();
  pto::v1::StatsResponse response;
  absl::Status status = OnFirstReachable(*route, deadline, [&](Stub& stub) {
    grpc::ClientContext context;
    Prepare(&context, deadline);
    grpc::Status s =
        stub.stub->Stats(&context, pto::v1::StatsRequest(), &response);
    return FromGrpc(s, context, stub.address, "Stats");
  });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<pto::v1::AdminResponse> CompileClient::Admin(
    pto::v1::AdminAction action, absl::Time deadline) {
  absl::StatusOr<std::vector<std::shared_ptr<Stub>>> route = Route("");
  if (!route.ok()) return route.status();
  pto::v1::AdminResponse response;
  absl::Status status = OnFirstReachable(*route, deadline, [&](Stub& stub) {
    pto::v1::AdminRequest request;
    request.set_action(action);
    grpc::ClientContext context;
    Prepare(&context, deadline);
    grpc::Status s = stub.stub->Admin(&context, request, &response);
    return FromGrpc(s, context, stub.address, "Admin");
  });
  if (!status.ok()) return status;
  return response;
}

absl::Status CheckBinaryKey(const pto::v1::KernelBinary& binary,
                            const std::string& key, const std::string& address,
                            const std::string& rpc) {
  if (!key.empty() && binary.key() == key) return absl::OkStatus();
  absl::Status status = absl::DataLossError(absl::StrCat(
      "ptod at ", address, ": ", rpc, ": the binary served is keyed '",
      absl::CEscape(binary.key().substr(0, 80)), "', not '",
      absl::CEscape(key.substr(0, 80)),
      "' (the request's key): refused (a wrong kernel; the server's cache may "
      "be damaged)"));
  status.SetPayload(kAddressPayload, absl::Cord(address));
  return status;
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

std::optional<std::string> ReplicaAddress(const absl::Status& status) {
  auto payload = status.GetPayload(kAddressPayload);
  if (!payload.has_value()) return std::nullopt;
  return std::string(*payload);
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
