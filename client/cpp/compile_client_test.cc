// CompileClient against a scripted in-process CompileService: what goes on
// the wire (request fields, deadline) and how answers and errors come back.
#include "client/cpp/compile_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <algorithm>
#include <memory>

#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "client/cpp/rendezvous.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "pto/v1/compile_service.grpc.pb.h"

namespace pto::client {
namespace {

class ScriptedService final : public pto::v1::CompileService::Service {
 public:
  grpc::Status Compile(grpc::ServerContext* context,
                       const pto::v1::CompileRequest* request,
                       pto::v1::CompileResponse* response) override {
    ++compile_calls_;
    {
      absl::MutexLock lock(&mu_);
      last_request_ = *request;
      last_deadline_ = absl::FromChrono(context->deadline());
    }
    if (request->target() == "busy-twice" && busy_answers_++ < 2) {
      context->AddTrailingMetadata("retry-after-ms", "20");
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "busy");
    }
    if (request->target() == "draining") {
      ++unavailable_answers_;
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down");
    }
    if (request->target() == "busy") {
      context->AddTrailingMetadata("retry-after-ms", "750");
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "compile queue is full; retry after 750 ms");
    }
    if (request->target() == "bad") {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "op 0 (add): input 1: dangling value id 9");
    }
    response->set_key(std::string(64, 'a'));
    response->set_cache_status(pto::v1::CACHE_STATUS_MISS);
    response->mutable_binary()->set_kernel_name(request->graph().name());
    // "wrong-key": a damaged cache's answer, another kernel's binary.
    response->mutable_binary()->set_key(
        std::string(64, request->target() == "wrong-key" ? 'b' : 'a'));
    return grpc::Status::OK;
  }

  grpc::Status GetKernel(grpc::ServerContext*,
                         const pto::v1::GetKernelRequest* request,
                         pto::v1::GetKernelResponse* response) override {
    if (request->key() != std::string(64, 'a') &&
        request->key() != std::string(64, 'c')) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no kernel cached");
    }
    response->mutable_binary()->set_kernel_name("cached");
    // Under "c...": the kernel of "a...".
    response->mutable_binary()->set_key(std::string(64, 'a'));
    return grpc::Status::OK;
  }

  grpc::Status Stats(grpc::ServerContext*, const pto::v1::StatsRequest*,
                     pto::v1::StatsResponse* response) override {
    response->set_requests(42);
    return grpc::Status::OK;
  }

  pto::v1::CompileRequest last_request() {
    absl::MutexLock lock(&mu_);
    return last_request_;
  }
  absl::Time last_deadline() {
    absl::MutexLock lock(&mu_);
    return last_deadline_;
  }

  std::atomic<int> compile_calls_{0};
  std::atomic<int> busy_answers_{0};
  std::atomic<int> unavailable_answers_{0};

 private:
  absl::Mutex mu_;
  pto::v1::CompileRequest last_request_ ABSL_GUARDED_BY(mu_);
  absl::Time last_deadline_ ABSL_GUARDED_BY(mu_);
};

class CompileClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = "127.0.0.1:" + std::to_string(port);
    ClientOptions options;
    options.initial_backoff = absl::Milliseconds(5);
    client_ = std::make_unique<CompileClient>(address_, options);
  }
  void TearDown() override {
    client_.reset();
    server_->Shutdown(std::chrono::system_clock::now());
  }

  ScriptedService service_;
  std::string address_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CompileClient> client_;
};

TEST_F(CompileClientTest, SendsGraphTargetOptionsAndDeadline) {
  pto::v1::Graph graph;
  graph.set_name("my_kernel");
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  auto response = client_->Compile(graph, "host", {{"opt_level", "3"}},
                                   deadline);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(response->binary().kernel_name(), "my_kernel");
  const pto::v1::CompileRequest sent = service_.last_request();
  EXPECT_EQ(sent.graph().name(), "my_kernel");
  EXPECT_EQ(sent.target(), "host");
  ASSERT_EQ(sent.options().count("opt_level"), 1u);
  EXPECT_EQ(sent.options().at("opt_level"), "3");
  // The server sees (about) the caller's deadline.
  EXPECT_LT(absl::AbsDuration(service_.last_deadline() - deadline),
            absl::Seconds(5));
}

TEST_F(CompileClientTest, ServerErrorKeepsCodeAndMessage) {
  auto response = client_->Compile(pto::v1::Graph(), "bad", {},
                                   absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(absl::IsInvalidArgument(response.status())) << response.status();
  EXPECT_NE(response.status().message().find("dangling value id 9"),
            std::string::npos);
  EXPECT_NE(response.status().message().find(client_->address()),
            std::string::npos);
  EXPECT_FALSE(RetryAfter(response.status()).has_value());
}

TEST_F(CompileClientTest, ResourceExhaustedCarriesTheRetryHint) {
  auto response = client_->Compile(pto::v1::Graph(), "busy", {},
                                   absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(absl::IsResourceExhausted(response.status()))
      << response.status();
  auto hint = RetryAfter(response.status());
  ASSERT_TRUE(hint.has_value());
  EXPECT_EQ(*hint, absl::Milliseconds(750));
}

TEST_F(CompileClientTest, ResourceExhaustedIsRetriedUntilItClears) {
  auto response = client_->Compile(pto::v1::Graph(), "busy-twice", {},
                                   absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(service_.compile_calls_.load(), 3);
}

TEST_F(CompileClientTest, RetriesStopAtMaxAttempts) {
  auto response = client_->Compile(pto::v1::Graph(), "draining", {},
                                   absl::Now() + absl::Seconds(30));
  EXPECT_TRUE(absl::IsUnavailable(response.status())) << response.status();
  EXPECT_EQ(service_.unavailable_answers_.load(), ClientOptions().max_attempts);
}

TEST_F(CompileClientTest, RetryHonoursTheServersHintWithinTheDeadline) {
  // The hint (750 ms) is longer than what is left: no retry, the error now.
  auto response = client_->Compile(pto::v1::Graph(), "busy", {},
                                   absl::Now() + absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsResourceExhausted(response.status()))
      << response.status();
  EXPECT_EQ(service_.compile_calls_.load(), 1);
}

TEST_F(CompileClientTest, InvalidArgumentIsNotRetried) {
  auto response = client_->Compile(pto::v1::Graph(), "bad", {},
                                   absl::Now() + absl::Seconds(30));
  EXPECT_TRUE(absl::IsInvalidArgument(response.status()));
  EXPECT_EQ(service_.compile_calls_.load(), 1);
}

TEST(CompileClientFallbackTest, UnreachableDaemonFallsBackToLocalCompiles) {
  // A port nothing listens on: bind one, then close it. (A grpc::Server with
  // no service does not start, so a plain socket it is.)
  std::string address;
  {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
    close(fd);
  }
  std::atomic<int> local{0};
  ClientOptions options;
  options.max_attempts = 2;
  options.initial_backoff = absl::Milliseconds(5);
  options.connect_timeout = absl::Milliseconds(200);
  options.local_compile = [&](const pto::v1::CompileRequest& request)
      -> absl::StatusOr<pto::v1::CompileResponse> {
    ++local;
    pto::v1::CompileResponse response;
    response.mutable_binary()->set_kernel_name(request.graph().name());
    return response;
  };
  CompileClient client(address, options);
  pto::v1::Graph graph;
  graph.set_name("fallback_kernel");
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    auto response =
        client.Compile(graph, "host", {}, absl::Now() + absl::Seconds(30));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->binary().kernel_name(), "fallback_kernel");
  }
  EXPECT_EQ(local.load(), 3);
  // Logged once, not per call.
  const std::string log = ::testing::internal::GetCapturedStderr();
  const size_t first = log.find("compiling locally");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("compiling locally", first + 1), std::string::npos) << log;
  EXPECT_NE(log.find(address), std::string::npos) << log;
  // Without a fallback the caller gets UNAVAILABLE naming the address.
  ClientOptions no_fallback = options;
  no_fallback.local_compile = nullptr;
  CompileClient plain(address, no_fallback);
  auto failed = plain.Compile(graph, "host", {}, absl::Now() + absl::Seconds(30));
  EXPECT_TRUE(absl::IsUnavailable(failed.status())) << failed.status();
  EXPECT_NE(failed.status().message().find(address), std::string::npos);
}

TEST_F(CompileClientTest, GetKernelAndStats) {
  auto found = client_->GetKernel(std::string(64, 'a'),
                                  absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->kernel_name(), "cached");
  auto missing = client_->GetKernel(std::string(64, 'b'),
                                    absl::Now() + absl::Seconds(30));
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  auto stats = client_->Stats(absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->requests(), 42u);
}

TEST_F(CompileClientTest, BinaryKeyedOtherwiseThanTheRequestIsRefused) {
  auto response = client_->Compile(pto::v1::Graph(), "wrong-key", {},
                                   absl::Now() + absl::Seconds(30));
  EXPECT_TRUE(absl::IsDataLoss(response.status())) << response.status();
  EXPECT_NE(response.status().message().find("refused"), std::string::npos);
  EXPECT_NE(response.status().message().find(address_), std::string::npos);
  EXPECT_EQ(service_.compile_calls_.load(), 1);  // not retried
  auto found = client_->GetKernel(std::string(64, 'c'),
                                  absl::Now() + absl::Seconds(30));
  EXPECT_TRUE(absl::IsDataLoss(found.status())) << found.status();
}

TEST_F(CompileClientTest, PastDeadlineFailsWithDeadlineExceeded) {
  auto response = client_->Compile(pto::v1::Graph(), "host", {},
                                   absl::Now() - absl::Seconds(1));
  EXPECT_TRUE(absl::IsDeadlineExceeded(response.status())) << response.status();
}

// Three scripted replicas behind one client.
class ReplicaListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i) {
      grpc::ServerBuilder builder;
      int port = 0;
      builder.AddListeningPort("127.0.0.1:0",
                               grpc::InsecureServerCredentials(), &port);
      builder.RegisterService(&services_[i]);
      servers_[i] = builder.BuildAndStart();
      ASSERT_NE(servers_[i], nullptr);
      addresses_.push_back("127.0.0.1:" + std::to_string(port));
    }
    options_.initial_backoff = absl::Milliseconds(5);
    options_.connect_timeout = absl::Seconds(5);
  }
  void TearDown() override {
    for (auto& server : servers_) {
      if (server) server->Shutdown(std::chrono::system_clock::now());
    }
  }

  std::string Spec() const { return absl::StrJoin(addresses_, ","); }
  int IndexOf(const std::string& address) const {
    for (int i = 0; i < 3; ++i) {
      if (addresses_[i] == address) return i;
    }
    return -1;
  }
  static pto::v1::CompileRequest Request(const std::string& name,
                                         const std::string& target = "host") {
    pto::v1::CompileRequest request;
    request.mutable_graph()->set_name(name);
    request.set_target(target);
    return request;
  }

  ScriptedService services_[3];
  std::unique_ptr<grpc::Server> servers_[3];
  std::vector<std::string> addresses_;
  ClientOptions options_;
};

TEST_F(ReplicaListTest, EachRequestGoesToItsRendezvousReplica) {
  CompileClient client(Spec(), options_);
  EXPECT_EQ(client.ReplicaAddresses(), addresses_);
  int expected[3] = {0, 0, 0};
  for (int k = 0; k < 30; ++k) {
    const pto::v1::CompileRequest request = Request("kernel_" + std::to_string(k));
    auto route = client.RouteOf(RoutingKey(request));
    ASSERT_TRUE(route.ok()) << route.status();
    ASSERT_EQ(route->size(), 3u);
    ++expected[IndexOf((*route)[0])];
    auto response = client.Compile(request, absl::Now() + absl::Seconds(30));
    ASSERT_TRUE(response.ok()) << response.status();
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(services_[i].compile_calls_.load(), expected[i]) << i;
    EXPECT_GT(expected[i], 0) << i;  // 30 keys over 3 replicas
  }
}

TEST_F(ReplicaListTest, ClientsListingReplicasInAnyOrderConverge) {
  std::vector<std::unique_ptr<CompileClient>> clients;
  std::vector<std::string> reversed(addresses_.rbegin(), addresses_.rend());
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<CompileClient>(
        absl::StrJoin(i % 2 ? reversed : addresses_, ","), options_));
  }
  for (auto& client : clients) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      auto response = client->Compile(Request("shared_kernel"),
                                      absl::Now() + absl::Seconds(30));
      ASSERT_TRUE(response.ok()) << response.status();
    }
  }
  int replicas_used = 0;
  for (auto& service : services_) {
    if (service.compile_calls_.load() > 0) {
      ++replicas_used;
      EXPECT_EQ(service.compile_calls_.load(), 12);
    }
  }
  EXPECT_EQ(replicas_used, 1);
}

TEST_F(ReplicaListTest, AStoppedReplicasRequestsGoToTheNextWithoutError) {
  CompileClient client(Spec(), options_);
  const pto::v1::CompileRequest request = Request("moving_kernel");
  auto route = client.RouteOf(RoutingKey(request));
  ASSERT_TRUE(route.ok()) << route.status();
  const int first = IndexOf((*route)[0]);
  const int second = IndexOf((*route)[1]);
  ASSERT_TRUE(client.Compile(request, absl::Now() + absl::Seconds(30)).ok());
  EXPECT_EQ(services_[first].compile_calls_.load(), 1);
  servers_[first]->Shutdown(std::chrono::system_clock::now());
  servers_[first]->Wait();
  servers_[first].reset();
  for (int i = 0; i < 3; ++i) {
    auto response = client.Compile(request, absl::Now() + absl::Seconds(30));
    ASSERT_TRUE(response.ok()) << response.status();
  }
  EXPECT_EQ(services_[first].compile_calls_.load(), 1);
  EXPECT_EQ(services_[second].compile_calls_.load(), 3);
  // A fresh client (a new rank) goes straight to the second choice too.
  CompileClient fresh(Spec(), options_);
  ASSERT_TRUE(fresh.Compile(request, absl::Now() + absl::Seconds(30)).ok());
  EXPECT_EQ(services_[second].compile_calls_.load(), 4);
}

TEST_F(ReplicaListTest, UnavailableAnswersFailOverThenBackOff) {
  CompileClient client(Spec(), options_);
  auto response =
      client.Compile(Request("k", "draining"), absl::Now() + absl::Seconds(30));
  EXPECT_TRUE(absl::IsUnavailable(response.status())) << response.status();
  ASSERT_TRUE(ReplicaAddress(response.status()).has_value());
  // Four attempts: each replica once in rendezvous order, then the first
  // again after a back-off.
  auto route = client.RouteOf(RoutingKey(Request("k", "draining")));
  ASSERT_TRUE(route.ok());
  EXPECT_EQ(*ReplicaAddress(response.status()), (*route)[0]);
  EXPECT_EQ(services_[IndexOf((*route)[0])].unavailable_answers_.load(), 2);
  EXPECT_EQ(services_[IndexOf((*route)[1])].unavailable_answers_.load(), 1);
  EXPECT_EQ(services_[IndexOf((*route)[2])].unavailable_answers_.load(), 1);
}

TEST_F(ReplicaListTest, BusyIsRetriedOnTheSameReplica) {
  CompileClient client(Spec(), options_);
  const pto::v1::CompileRequest request = Request("k", "busy-twice");
  auto route = client.RouteOf(RoutingKey(request));
  ASSERT_TRUE(route.ok());
  auto response = client.Compile(request, absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(services_[IndexOf((*route)[0])].compile_calls_.load(), 3);
  EXPECT_EQ(services_[IndexOf((*route)[1])].compile_calls_.load(), 0);
}

TEST(CompileClientFallbackTest, OnFallbackHearsOfEachFallbackAfterRetries) {
  // Two closed loopback ports: every replica unreachable.
  std::vector<std::string> addresses;
  for (int i = 0; i < 2; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    addresses.push_back("127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
    close(fd);
  }
  std::vector<absl::Status> heard;
  ClientOptions options;
  options.initial_backoff = absl::Milliseconds(5);
  options.connect_timeout = absl::Milliseconds(500);
  options.fallback_period = absl::Hours(1);
  options.on_fallback = [&](const absl::Status& why) { heard.push_back(why); };
  options.local_compile = [](const pto::v1::CompileRequest&)
      -> absl::StatusOr<pto::v1::CompileResponse> {
    pto::v1::CompileResponse response;
    response.set_key("local");
    return response;
  };
  CompileClient client(absl::StrJoin(addresses, ","), options);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    auto response = client.Compile(pto::v1::Graph(), "host", {},
                                   absl::Now() + absl::Seconds(30));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->key(), "local");
  }
  // The first call tried the replicas; the second fell back at once (within
  // the fallback period, nothing reconnected), unreported.
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_TRUE(absl::IsUnavailable(heard[0])) << heard[0];
  ASSERT_TRUE(ReplicaAddress(heard[0]).has_value());
  EXPECT_NE(std::find(addresses.begin(), addresses.end(),
                      *ReplicaAddress(heard[0])),
            addresses.end());
  // on_fallback replaces the stderr line.
  EXPECT_EQ(::testing::internal::GetCapturedStderr().find("compiling locally"),
            std::string::npos);
}

TEST(CompileClientConnectTest, StartConnectingConnectsBeforeAnyCall) {
  // A listening socket that speaks no gRPC: the connection it accepts is the
  // one StartConnecting began (a client connects lazily otherwise).
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  timeval wait{};
  wait.tv_sec = 30;
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)), 0);
  CompileClient client("127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
  client.StartConnecting();
  const int accepted = accept(fd, nullptr, nullptr);
  EXPECT_GE(accepted, 0) << "no connection within 30 s";
  if (accepted >= 0) close(accepted);
  close(fd);
}

TEST(CompileClientSpecTest, AnAddressThatDoesNotParseIsInvalidArgument) {
  CompileClient client("a:1,,b:2");
  auto response = client.Compile(pto::v1::Graph(), "host", {},
                                 absl::Now() + absl::Seconds(5));
  EXPECT_TRUE(absl::IsInvalidArgument(response.status())) << response.status();
  EXPECT_NE(response.status().message().find("empty entry"), std::string::npos);
}

}  // namespace
}  // namespace pto::client
