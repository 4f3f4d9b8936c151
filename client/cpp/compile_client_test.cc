// CompileClient against a scripted in-process CompileService: what goes on
// the wire (request fields, deadline) and how answers and errors come back.
#include "client/cpp/compile_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "absl/synchronization/mutex.h"
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

}  // namespace
}  // namespace pto::client
