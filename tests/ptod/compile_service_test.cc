// ptod end to end on loopback: a real gRPC server on a free port, a real
// RocksDB cache in a temp directory, the C++ client.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/barrier.h"
#include "absl/time/clock.h"
#include "client/cpp/compile_client.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "server/kernel_store.h"
#include "server/pto_compiler_backend.h"
#include "server/ptod_server.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

using pto::client::CompileClient;
using pto::server::PtodOptions;
using pto::server::PtodServer;

absl::Time In(absl::Duration d) { return absl::Now() + d; }

class PtodTest : public ::testing::Test {
 protected:
  // Starts ptod on a free port over `dir_`, compiling through a
  // CountingBackend (kept in backend_).
  void StartServer(int workers = 4, size_t queue_size = 64,
                   bool metrics = false,
                   size_t max_request_bytes = size_t{16} << 20) {
    auto backend = std::make_unique<CountingBackend>(MakeInnerBackend());
    backend_ = backend.get();
    PtodOptions options;
    options.address = "127.0.0.1:0";
    // Off unless asked for: stopping the HTTP endpoint takes ~2 s.
    if (metrics) options.metrics_address = "127.0.0.1:0";
    options.cache_dir = dir_.path();
    options.service.workers = workers;
    options.service.queue_size = queue_size;
    options.max_request_bytes = max_request_bytes;
    auto ptod = PtodServer::Start(options, std::move(backend));
    ASSERT_TRUE(ptod.ok()) << ptod.status();
    ptod_ = std::move(*ptod);
    // These tests look at what the server answers: no client retries.
    pto::client::ClientOptions client_options;
    client_options.max_attempts = 1;
    client_ = std::make_unique<CompileClient>(ptod_->address(), client_options);
  }

  void StopServer() {
    client_.reset();
    if (ptod_ != nullptr) ptod_->Shutdown(absl::Seconds(5));
    ptod_.reset();
    backend_ = nullptr;
  }

  void TearDown() override { StopServer(); }

  pto::v1::StatsResponse Stats() {
    auto stats = client_->Stats(In(absl::Seconds(10)));
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : pto::v1::StatsResponse();
  }

  TempDir dir_;
  CountingBackend* backend_ = nullptr;
  std::unique_ptr<PtodServer> ptod_;
  std::unique_ptr<CompileClient> client_;
};

TEST_F(PtodTest, SixtyFourIdenticalConcurrentRequestsCompileOnce) {
  StartServer();
  constexpr int kCallers = 64;
  const pto::v1::Graph graph = AddGraph();
  backend_->set_delay(absl::Milliseconds(200));  // keep the compile in flight
  absl::Barrier* start = new absl::Barrier(kCallers);
  std::vector<absl::StatusOr<pto::v1::CompileResponse>> responses(
      kCallers, absl::UnknownError("not run"));
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      if (start->Block()) delete start;
      responses[i] = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
    });
  }
  for (auto& t : callers) t.join();

  std::string key;
  int misses = 0;
  for (const auto& r : responses) {
    ASSERT_TRUE(r.ok()) << r.status();
    if (key.empty()) key = r->key();
    EXPECT_EQ(r->key(), key);
    EXPECT_EQ(r->binary().key(), key);
    EXPECT_EQ(r->binary().SerializeAsString(),
              responses[0]->binary().SerializeAsString());
    if (r->cache_status() == pto::v1::CACHE_STATUS_MISS) ++misses;
  }
  EXPECT_EQ(misses, 1);
  EXPECT_EQ(backend_->compiles(), 1);
  pto::v1::StatsResponse stats = Stats();
  EXPECT_EQ(stats.compiles(), 1u);
  EXPECT_EQ(stats.requests(), 64u);
  EXPECT_EQ(stats.hits() + stats.misses() + stats.coalesced(), 64u);
  EXPECT_EQ(stats.misses(), 1u);
  EXPECT_EQ(stats.errors(), 0u);
  EXPECT_EQ(stats.entries(), 1u);
  EXPECT_GT(stats.bytes(), 0u);
  EXPECT_GT(stats.compile_seconds_saved(), 0.0);
}

TEST_F(PtodTest, MixedConcurrentRequestsCompileEachKernelOnce) {
  StartServer(/*workers=*/2);
  constexpr int kKernels = 6;
  constexpr int kCallersPerKernel = 6;
  std::vector<std::thread> callers;
  std::vector<std::string> keys(kKernels * kCallersPerKernel);
  std::atomic<int> failures{0};
  for (int i = 0; i < kKernels * kCallersPerKernel; ++i) {
    callers.emplace_back([&, i] {
      const int kernel = i % kKernels;
      auto r = client_->Compile(AddGraph({16 * (kernel + 1)}, {16}), "host", {},
                                In(absl::Seconds(240)));
      if (!r.ok()) {
        ++failures;
        ADD_FAILURE() << r.status();
        return;
      }
      keys[i] = r->key();
    });
  }
  for (auto& t : callers) t.join();
  ASSERT_EQ(failures.load(), 0);
  for (int i = 0; i < kKernels * kCallersPerKernel; ++i) {
    EXPECT_EQ(keys[i], keys[i % kKernels]) << i;  // same graph, same key
    if (i < kKernels) {
      for (int j = 0; j < i; ++j) EXPECT_NE(keys[i], keys[j]);
    }
  }
  EXPECT_EQ(backend_->compiles(), kKernels);
  pto::v1::StatsResponse stats = Stats();
  EXPECT_EQ(stats.compiles(), static_cast<uint64_t>(kKernels));
  EXPECT_EQ(stats.misses(), static_cast<uint64_t>(kKernels));
  EXPECT_EQ(stats.hits() + stats.coalesced(),
            static_cast<uint64_t>(kKernels * (kCallersPerKernel - 1)));
  EXPECT_EQ(stats.entries(), static_cast<uint64_t>(kKernels));
}

TEST_F(PtodTest, RestartOnSameDirectoryIsAHitWithoutCompiling) {
  StartServer();
  const pto::v1::Graph graph = AddGraph({100, 30}, {32, 16});
  auto first = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_GT(first->compile_seconds(), 0.0);
  StopServer();

  StartServer();
  auto second = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->cache_status(), pto::v1::CACHE_STATUS_HIT);
  EXPECT_EQ(second->key(), first->key());
  EXPECT_EQ(second->binary().SerializeAsString(),
            first->binary().SerializeAsString());
  // A hit reports the original compile's time and stages.
  EXPECT_DOUBLE_EQ(second->compile_seconds(), first->compile_seconds());
  EXPECT_EQ(second->stages_size(), first->stages_size());
  EXPECT_EQ(backend_->compiles(), 0);
  pto::v1::StatsResponse stats = Stats();
  EXPECT_EQ(stats.compiles(), 0u);
  EXPECT_EQ(stats.hits(), 1u);
  EXPECT_EQ(stats.entries(), 1u);
}

TEST_F(PtodTest, MalformedGraphIsInvalidArgumentWithTheVerifiersMessage) {
  StartServer();
  pto::v1::Graph graph = AddGraph();
  graph.mutable_ops(0)->set_kind("frobnicate");
  // What the verifier says, asked directly.
  pto::v1::CompileRequest request;
  *request.mutable_graph() = graph;
  request.set_target("host");
  absl::Status verifier = MakeInnerBackend()->Key(request).status();
  ASSERT_TRUE(absl::IsInvalidArgument(verifier)) << verifier;

  auto response = client_->Compile(graph, "host", {}, In(absl::Seconds(30)));
  ASSERT_TRUE(absl::IsInvalidArgument(response.status())) << response.status();
  EXPECT_NE(response.status().message().find(verifier.message()),
            std::string::npos)
      << response.status();
  EXPECT_NE(response.status().message().find("frobnicate"), std::string::npos);
  EXPECT_EQ(backend_->compiles(), 0);
  pto::v1::StatsResponse stats = Stats();
  EXPECT_EQ(stats.errors(), 1u);
  EXPECT_EQ(stats.entries(), 0u);
}

TEST_F(PtodTest, MemoryHitSendsTheStoredResponseAndIsCounted) {
  StartServer(4, 64, /*metrics=*/true);
  const pto::v1::Graph graph = AddGraph();
  auto miss = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(miss.ok()) << miss.status();
  ASSERT_EQ(miss->cache_status(), pto::v1::CACHE_STATUS_MISS);
  for (int i = 0; i < 2; ++i) {
    auto hit = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
    ASSERT_TRUE(hit.ok()) << hit.status();
    EXPECT_EQ(hit->cache_status(), pto::v1::CACHE_STATUS_HIT);
    EXPECT_EQ(hit->key(), miss->key());
    EXPECT_EQ(hit->binary().SerializeAsString(),
              miss->binary().SerializeAsString());
    EXPECT_EQ(hit->compile_seconds(), miss->compile_seconds());
    ASSERT_EQ(hit->stages_size(), miss->stages_size());
    for (int s = 0; s < hit->stages_size(); ++s) {
      EXPECT_EQ(hit->stages(s).stage(), miss->stages(s).stage());
      EXPECT_EQ(hit->stages(s).seconds(), miss->stages(s).seconds());
    }
    EXPECT_GE(hit->server_seconds(), 0.0);
    EXPECT_LT(hit->server_seconds(), 60.0);
  }
  pto::v1::StatsResponse stats = Stats();
  EXPECT_EQ(stats.requests(), 3u);
  EXPECT_EQ(stats.hits(), 2u);
  EXPECT_DOUBLE_EQ(stats.compile_seconds_saved(), 2 * miss->compile_seconds());
  auto page = HttpGet(ptod_->metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find("pto_requests_total{result=\"hit\",tenant=\"\"} 2"),
            std::string::npos) << *page;
  EXPECT_NE(page->find("pto_cache_tier_hits_total{tier=\"memory\"} 2"),
            std::string::npos) << *page;

  // After a restart the first hit comes from RocksDB, the next from memory.
  StopServer();
  StartServer(4, 64, /*metrics=*/true);
  for (int i = 0; i < 2; ++i) {
    auto hit = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
    ASSERT_TRUE(hit.ok()) << hit.status();
    EXPECT_EQ(hit->cache_status(), pto::v1::CACHE_STATUS_HIT);
    EXPECT_EQ(hit->binary().SerializeAsString(),
              miss->binary().SerializeAsString());
  }
  EXPECT_EQ(backend_->compiles(), 0);
  page = HttpGet(ptod_->metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find("pto_cache_tier_hits_total{tier=\"rocksdb\"} 1"),
            std::string::npos) << *page;
  EXPECT_NE(page->find("pto_cache_tier_hits_total{tier=\"memory\"} 1"),
            std::string::npos) << *page;
}

TEST_F(PtodTest, HitsAreServedWhileEveryRequestThreadWaits) {
  // max_rpc_threads is at least 4: 4 request threads.
  auto backend = std::make_unique<CountingBackend>(MakeInnerBackend());
  backend_ = backend.get();
  PtodOptions options;
  options.address = "127.0.0.1:0";
  options.cache_dir = dir_.path();
  options.max_rpc_threads = 4;
  auto ptod = PtodServer::Start(options, std::move(backend));
  ASSERT_TRUE(ptod.ok()) << ptod.status();
  ptod_ = std::move(*ptod);
  pto::client::ClientOptions client_options;
  client_options.max_attempts = 1;
  client_ = std::make_unique<CompileClient>(ptod_->address(), client_options);

  const pto::v1::Graph warm = AddGraph();
  ASSERT_TRUE(client_->Compile(warm, "host", {}, In(absl::Seconds(120))).ok());
  backend_->Hold();
  constexpr int kWaiting = 4;  // one on each request thread
  std::vector<absl::StatusOr<pto::v1::CompileResponse>> waiting(
      kWaiting, absl::UnknownError("not run"));
  std::vector<std::thread> callers;
  for (int i = 0; i < kWaiting; ++i) {
    callers.emplace_back([&, i] {
      waiting[i] = client_->Compile(AddGraph({8 * (i + 2)}, {8}), "host", {},
                                    In(absl::Seconds(240)));
    });
  }
  while (backend_->compiles() < 1 + kWaiting) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  // Every request thread waits for a held compile: a memory hit is still
  // answered, and one more compile is refused.
  auto hit = client_->Compile(warm, "host", {}, In(absl::Seconds(30)));
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->cache_status(), pto::v1::CACHE_STATUS_HIT);
  auto refused = client_->Compile(AddGraph({8 * 100}, {8}), "host", {},
                                  In(absl::Seconds(30)));
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("request_threads"),
            std::string::npos)
      << refused.status();
  EXPECT_TRUE(pto::client::RetryAfter(refused.status()).has_value());
  backend_->Release();
  for (auto& t : callers) t.join();
  for (const auto& r : waiting) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->cache_status(), pto::v1::CACHE_STATUS_MISS);
  }
  EXPECT_EQ(backend_->compiles(), 1 + kWaiting);
}

TEST(WireBytesTest, OneSliceIsReferencedAndSeveralAreJoined) {
  const std::string text = "a request's bytes";
  grpc::Slice whole(text);
  grpc::ByteBuffer one(&whole, 1);
  grpc::Slice single;
  std::string joined;
  absl::string_view bytes = pto::server::WireBytes(one, &single, &joined);
  EXPECT_EQ(bytes, text);
  EXPECT_TRUE(joined.empty());  // referenced, not copied
  EXPECT_EQ(bytes.data(), reinterpret_cast<const char*>(single.begin()));

  // Slices too large for gRPC to merge into one inline slice.
  const std::string a(200, 'a'), b(300, 'b'), c(100, 'c');
  grpc::Slice parts[3] = {grpc::Slice(a), grpc::Slice(b), grpc::Slice(c)};
  grpc::ByteBuffer three(parts, 3);
  grpc::Slice unused;
  std::string copy;
  EXPECT_EQ(pto::server::WireBytes(three, &unused, &copy), a + b + c);
  EXPECT_EQ(copy, a + b + c);
}

TEST_F(PtodTest, BytesThatAreNotARequestAreInvalidArgument) {
  StartServer();
  auto channel = grpc::CreateChannel(ptod_->address(),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  // Field 1 (the graph) as a length-delimited field longer than the message.
  const std::string garbage("\x0a\xff\x01not a graph", 14);
  grpc::Slice slice(garbage);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(In(absl::Seconds(30))));
  absl::Notification done;
  grpc::Status status;
  stub.UnaryCall(&context, "/pto.v1.CompileService/Compile", grpc::StubOptions(),
                 &request, &response, [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message();
  EXPECT_NE(status.error_message().find("not a pto.v1.CompileRequest"),
            std::string::npos)
      << status.error_message();
  EXPECT_EQ(backend_->compiles(), 0);
  EXPECT_EQ(Stats().errors(), 1u);
  // The server is fine afterwards.
  EXPECT_TRUE(
      client_->Compile(AddGraph(), "host", {}, In(absl::Seconds(120))).ok());
}

TEST_F(PtodTest, HealthIsServing) {
  StartServer();
  auto health = HealthCheck(ptod_->address());
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, "SERVING");
  health = HealthCheck(ptod_->address(), "pto.v1.CompileService");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, "SERVING");
  health = HealthCheck(ptod_->address(), "no.such.Service");
  EXPECT_TRUE(absl::IsNotFound(health.status())) << health.status();
}

TEST_F(PtodTest, MetricsEndpointServesTheCounters) {
  StartServer(4, 64, /*metrics=*/true);
  ASSERT_GT(ptod_->metrics_port(), 0);
  const pto::v1::Graph graph = AddGraph();
  ASSERT_TRUE(client_->Compile(graph, "host", {}, In(absl::Seconds(120))).ok());
  ASSERT_TRUE(client_->Compile(graph, "host", {}, In(absl::Seconds(120))).ok());
  pto::v1::Graph bad = graph;
  bad.set_schema_version(pto::v1::SCHEMA_VERSION_UNSPECIFIED);
  ASSERT_FALSE(client_->Compile(bad, "host", {}, In(absl::Seconds(30))).ok());

  auto page = HttpGet(ptod_->metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find("200 OK"), std::string::npos) << *page;
  EXPECT_NE(page->find("pto_requests_total{result=\"hit\",tenant=\"\"} 1"),
            std::string::npos) << *page;
  EXPECT_NE(page->find("pto_requests_total{result=\"miss\",tenant=\"\"} 1"),
            std::string::npos) << *page;
  EXPECT_NE(page->find("pto_requests_total{result=\"error\",tenant=\"\"} 1"),
            std::string::npos) << *page;
  EXPECT_NE(page->find("pto_requests_total{result=\"coalesced\",tenant=\"\"} 0"),
            std::string::npos) << *page;
  EXPECT_NE(page->find("pto_compile_duration_seconds_count 1"),
            std::string::npos) << *page;
  EXPECT_NE(page->find("pto_compile_duration_seconds_bucket{le=\"0.001\"}"),
            std::string::npos) << *page;
  EXPECT_NE(page->find("pto_compile_duration_seconds_bucket{le=\"10000\"}"),
            std::string::npos) << *page;
  EXPECT_NE(page->find("pto_compiles_in_flight 0"), std::string::npos);
  EXPECT_NE(page->find("pto_cache_entries 1"), std::string::npos) << *page;
  EXPECT_NE(page->find("pto_cache_bytes "), std::string::npos);
  EXPECT_NE(page->find("pto_compile_seconds_saved_total "), std::string::npos);
}

TEST_F(PtodTest, GetKernelByKey) {
  StartServer();
  auto compiled =
      client_->Compile(AddGraph(), "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto binary = client_->GetKernel(compiled->key(), In(absl::Seconds(10)));
  ASSERT_TRUE(binary.ok()) << binary.status();
  EXPECT_EQ(binary->SerializeAsString(),
            compiled->binary().SerializeAsString());

  auto missing = client_->GetKernel(std::string(64, '0'), In(absl::Seconds(10)));
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  auto malformed = client_->GetKernel("../etc/passwd", In(absl::Seconds(10)));
  EXPECT_TRUE(absl::IsInvalidArgument(malformed.status()))
      << malformed.status();
  EXPECT_NE(malformed.status().message().find("64 lowercase hex"),
            std::string::npos);
}

TEST_F(PtodTest, FullQueueIsResourceExhaustedWithARetryHint) {
  StartServer(/*workers=*/1, /*queue_size=*/1);
  backend_->Hold();
  // A occupies the only worker ...
  std::thread a([&] {
    EXPECT_TRUE(client_->Compile(AddGraph({8}, {8}), "host", {},
                                 In(absl::Seconds(120))).ok());
  });
  backend_->first_compile_started().WaitForNotification();
  // ... so of B and C (different kernels) one is queued and one refused.
  absl::StatusOr<pto::v1::CompileResponse> b = absl::UnknownError(""),
                                           c = absl::UnknownError("");
  std::thread tb([&] {
    b = client_->Compile(AddGraph({16}, {8}), "host", {}, In(absl::Seconds(120)));
  });
  std::thread tc([&] {
    c = client_->Compile(AddGraph({24}, {8}), "host", {}, In(absl::Seconds(120)));
  });
  // The refusal is immediate; wait for it before letting the queue drain.
  while (Stats().errors() == 0) absl::SleepFor(absl::Milliseconds(10));
  backend_->Release();
  a.join();
  tb.join();
  tc.join();
  const absl::Status& refused = b.ok() ? c.status() : b.status();
  EXPECT_TRUE(b.ok() != c.ok()) << b.status() << " / " << c.status();
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_NE(refused.message().find("retry after"), std::string::npos);
  auto hint = pto::client::RetryAfter(refused);
  ASSERT_TRUE(hint.has_value());
  EXPECT_GT(*hint, absl::ZeroDuration());
}

TEST_F(PtodTest, FirstCallerCancellingLeavesTheCompileToTheOthers) {
  StartServer();
  constexpr int kOthers = 63;
  const pto::v1::Graph graph = AddGraph({48, 40}, {16, 8});
  backend_->Hold();
  // The first caller, on a raw stub so that it can cancel mid-call.
  auto stub = pto::v1::CompileService::NewStub(grpc::CreateChannel(
      ptod_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext first_context;
  grpc::Status first_status;
  std::thread first([&] {
    pto::v1::CompileRequest request;
    *request.mutable_graph() = graph;
    request.set_target("host");
    pto::v1::CompileResponse response;
    first_status = stub->Compile(&first_context, request, &response);
  });
  backend_->first_compile_started().WaitForNotification();
  std::vector<absl::StatusOr<pto::v1::CompileResponse>> responses(
      kOthers, absl::UnknownError("not run"));
  std::vector<std::thread> others;
  for (int i = 0; i < kOthers; ++i) {
    others.emplace_back([&, i] {
      responses[i] = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
    });
  }
  // Everyone has arrived (the counter is bumped on entry), then the first
  // caller gives up while the compile is still held.
  while (Stats().requests() < kOthers + 1) absl::SleepFor(absl::Milliseconds(5));
  first_context.TryCancel();
  first.join();
  EXPECT_EQ(first_status.error_code(), grpc::StatusCode::CANCELLED)
      << first_status.error_message();
  backend_->Release();
  for (auto& t : others) t.join();
  for (const auto& r : responses) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NE(r->cache_status(), pto::v1::CACHE_STATUS_MISS);
    EXPECT_EQ(r->binary().key(), responses[0]->key());
  }
  EXPECT_EQ(backend_->compiles(), 1);
  EXPECT_EQ(Stats().compiles(), 1u);
  EXPECT_EQ(Stats().entries(), 1u);
}

TEST_F(PtodTest, QueueOfTwoUnderFiftyDistinctRequestsRefusesSomeAndRecovers) {
  StartServer(/*workers=*/1, /*queue_size=*/2);
  backend_->set_delay(absl::Milliseconds(50));
  constexpr int kRequests = 50;
  std::vector<absl::Status> results(kRequests);
  std::vector<std::thread> callers;
  absl::Barrier* start = new absl::Barrier(kRequests);
  for (int i = 0; i < kRequests; ++i) {
    callers.emplace_back([&, i] {
      if (start->Block()) delete start;
      results[i] = client_->Compile(AddGraph({8 * (i + 1)}, {8}), "host", {},
                                    In(absl::Seconds(240)))
                       .status();
    });
  }
  for (auto& t : callers) t.join();
  int ok = 0, refused = 0;
  for (const absl::Status& r : results) {
    if (r.ok()) {
      ++ok;
    } else {
      EXPECT_TRUE(absl::IsResourceExhausted(r)) << r;
      EXPECT_TRUE(pto::client::RetryAfter(r).has_value()) << r;
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(ok, 0);
  EXPECT_EQ(backend_->compiles(), ok);
  // Nothing is left running or queued, and the server still serves.
  pto::v1::StatsResponse stats = Stats();
  EXPECT_EQ(stats.errors(), static_cast<uint64_t>(refused));
  EXPECT_EQ(stats.entries(), static_cast<uint64_t>(ok));
  auto again = client_->Compile(AddGraph({8}, {8}), "host", {},
                                In(absl::Seconds(120)));
  ASSERT_TRUE(again.ok()) << again.status();
}

// A native compiler that hangs (and spawns a child that would outlive it) is
// killed with its child at the timeout; the request is DEADLINE_EXCEEDED and
// nothing is cached.
TEST(PtodCompilerTimeoutTest, HangingCompilerIsKilledWithItsChildren) {
  if (!InnerBackendIsReal()) GTEST_SKIP() << "needs the real compiler";
  TempDir dir;
  const std::string pid_file = dir.path() + "/child.pid";
  const std::string hang = dir.path() + "/hanging-c++";
  std::ofstream(hang) << "#!/bin/sh\nsleep 3600 &\necho $! > '" << pid_file
                      << "'\nwait\n";
  std::filesystem::permissions(hang, std::filesystem::perms::owner_all);
  pto::compiler::CompileSettings settings;
  settings.cxx = hang;
  settings.native_compile_timeout = absl::Seconds(1);
  PtodOptions options;
  options.address = "127.0.0.1:0";
  options.cache_dir = dir.path() + "/cache";
  auto ptod = PtodServer::Start(
      options, pto::server::NewPtoCompilerBackend(settings));
  ASSERT_TRUE(ptod.ok()) << ptod.status();
  CompileClient client((*ptod)->address());
  auto r = client.Compile(AddGraph(), "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("timed out after 1s (killed)"),
            std::string::npos)
      << r.status();
  EXPECT_EQ((*ptod)->store_stats().entries, 0u);
  // The compiler's own child is gone too (a zombie awaiting its new parent
  // counts as gone).
  std::string pid;
  std::ifstream(pid_file) >> pid;
  ASSERT_FALSE(pid.empty());
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string line;
    std::getline(stat, line);
    gone = !stat || line.find(") Z") != std::string::npos;
    if (!gone) absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(gone) << "process " << pid << " survived the timeout";
}

// Through the service: a byte budget keeps the cache bounded while a kernel
// in use stays cached.
TEST(PtodEvictionTest, BudgetHoldsAndTheHotKernelStays) {
  TempDir dir;
  absl::Time now = absl::FromUnixSeconds(2'000'000);
  PtodOptions options;
  options.address = "127.0.0.1:0";
  options.cache_dir = dir.path();
  options.store.max_bytes = 6 * 17'000;  // about six 16 KB kernels
  options.store.min_age = absl::Seconds(30);
  options.store.access_granularity = absl::Seconds(1);
  options.store.clock = [&now] { return now; };
  // A small memory cache so that hits reach the store and record their use.
  options.service.memory_cache_bytes = 0;
  auto backend = std::make_unique<CountingBackend>(MakeInnerBackend());
  CountingBackend* counting = backend.get();
  auto ptod = PtodServer::Start(options, std::move(backend));
  ASSERT_TRUE(ptod.ok()) << ptod.status();
  pto::client::ClientOptions client_options;
  client_options.max_attempts = 1;
  CompileClient client((*ptod)->address(), client_options);
  const pto::v1::Graph hot = AddGraph({8, 8}, {8, 8});
  ASSERT_TRUE(client.Compile(hot, "host", {}, In(absl::Seconds(120))).ok());
  for (int i = 1; i <= 12; ++i) {
    now += absl::Minutes(1);
    auto hit = client.Compile(hot, "host", {}, In(absl::Seconds(120)));
    ASSERT_TRUE(hit.ok()) << hit.status();
    EXPECT_EQ(hit->cache_status(), pto::v1::CACHE_STATUS_HIT) << i;
    // Distinct tile widths: distinct native code (same-tile kernels share it).
    auto cold = client.Compile(AddGraph({8, 8 * (i + 1)}, {8, 8 * (i + 1)}),
                               "host", {}, In(absl::Seconds(120)));
    ASSERT_TRUE(cold.ok()) << cold.status();
    auto stats = client.Stats(In(absl::Seconds(10)));
    ASSERT_TRUE(stats.ok());
    EXPECT_LE(stats->bytes(), options.store.max_bytes) << i;
  }
  auto stats = client.Stats(In(absl::Seconds(10)));
  ASSERT_TRUE(stats.ok());
  EXPECT_GT(stats->evictions(), 0u) << stats->DebugString();
  EXPECT_LT(stats->entries(), 13u);
  EXPECT_EQ(stats->max_bytes(), options.store.max_bytes);
  // Only the 13 distinct kernels were ever compiled: the hot one never again.
  EXPECT_EQ(counting->compiles(), 13);
}

TEST_F(PtodTest, CompileFailureIsReportedAndNotCached) {
  StartServer();
  backend_->FailNext(1);
  const pto::v1::Graph graph = AddGraph();
  auto failed = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(absl::IsInternal(failed.status())) << failed.status();
  EXPECT_NE(failed.status().message().find("injected compiler failure"),
            std::string::npos);
  auto retried = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_EQ(retried->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(backend_->compiles(), 2);
}

TEST_F(PtodTest, DeadlinePassesWhileCompilingButTheCompileCompletes) {
  StartServer();
  backend_->Hold();
  const pto::v1::Graph graph = AddGraph();
  auto late = client_->Compile(graph, "host", {}, In(absl::Milliseconds(300)));
  EXPECT_TRUE(absl::IsDeadlineExceeded(late.status())) << late.status();
  backend_->Release();
  auto next = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_NE(next->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(backend_->compiles(), 1);
}

TEST_F(PtodTest, CorruptCacheEntryIsDeletedCountedAndRecompiled) {
  StartServer();
  const pto::v1::Graph graph = AddGraph();
  auto first = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(first.ok()) << first.status();
  StopServer();

  // Flip a byte of the stored native payload.
  {
    const std::string payload_key =
        "p/" + pto::server::Sha256Hex(first->binary().native_payload());
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_.path(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string bytes;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), payload_key, &bytes).ok());
    bytes[bytes.size() / 3] ^= 0x20;
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), payload_key, bytes).ok());
    ASSERT_TRUE(db->Close().ok());
  }

  StartServer(4, 64, /*metrics=*/true);
  auto again = client_->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(backend_->compiles(), 1);
  EXPECT_EQ(ptod_->store_stats().corrupt_entries, 1u);
  EXPECT_EQ(Stats().entries(), 1u);  // deleted, then stored afresh
  auto page = HttpGet(ptod_->metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find("pto_cache_corrupt_entries_total 1"), std::string::npos)
      << *page;
}

TEST_F(PtodTest, OversizedRequestIsRefused) {
  StartServer(4, 64, false, /*max_request_bytes=*/4096);
  pto::v1::Graph graph = AddGraph();
  graph.set_name(std::string(8192, 'n'));
  auto response = client_->Compile(graph, "host", {}, In(absl::Seconds(30)));
  EXPECT_TRUE(absl::IsResourceExhausted(response.status()))
      << response.status();
  EXPECT_EQ(backend_->compiles(), 0);
  // The server is fine afterwards.
  EXPECT_TRUE(
      client_->Compile(AddGraph(), "host", {}, In(absl::Seconds(120))).ok());
}

TEST_F(PtodTest, ShutdownFinishesRunningCompilesAndDropsQueuedOnes) {
  StartServer(/*workers=*/1, /*queue_size=*/4);
  backend_->Hold();
  std::vector<std::thread> callers;
  for (int64_t n : {8, 16}) {
    callers.emplace_back([this, n] {
      // Cancelled by the shutdown; the outcome does not matter here.
      client_->Compile(AddGraph({n}, {8}), "host", {}, In(absl::Seconds(120)))
          .IgnoreError();
    });
  }
  backend_->first_compile_started().WaitForNotification();  // one runs ...
  while (Stats().requests() < 2) absl::SleepFor(absl::Milliseconds(5));
  absl::SleepFor(absl::Milliseconds(50));  // ... the other is queued
  std::thread stopper([this] { ptod_->Shutdown(absl::Milliseconds(100)); });
  while (!ptod_->service().draining()) absl::SleepFor(absl::Milliseconds(5));
  backend_->Release();
  stopper.join();
  for (auto& t : callers) t.join();
  EXPECT_EQ(backend_->compiles(), 1);  // the queued one never started

  auto store = pto::server::KernelStore::Open(dir_.path());
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->GetStats().entries, 1u);  // the running one was stored
}

}  // namespace
}  // namespace pto::testing
