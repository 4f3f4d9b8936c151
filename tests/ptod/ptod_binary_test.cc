// The real ptod binary as a subprocess: starts on free ports, serves,
// stops cleanly on SIGTERM and SIGINT (exit 0), and its cache survives.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/cpp/compile_client.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc_reflection_v1alpha.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "runtime/kernel.h"
#include "server/kernel_store.h"
#include "tests/ptod/ptod_process.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

class PtodBinaryTest : public ::testing::Test {
 protected:
  std::vector<std::string> Flags() {
    return {"--address=127.0.0.1:0", "--metrics_address=127.0.0.1:0",
            "--cache_dir=" + cache_.path(), "--workers=2"};
  }
  std::string StderrPath(const std::string& name) {
    return logs_.path() + "/" + name;
  }

  TempDir cache_;
  TempDir logs_;
};

TEST_F(PtodBinaryTest, ServesThenStopsCleanlyAndTheCacheSurvives) {
  const pto::v1::Graph graph = AddGraph({40, 24}, {16, 16});
  std::string key;
  {
    PtodProcess ptod(Flags(), StderrPath("first.log"));
    ASSERT_TRUE(ptod.spawned()) << PtodPath();
    const std::string address = ptod.WaitUntilListening();
    ASSERT_FALSE(address.empty()) << ReadWholeFile(StderrPath("first.log"));
    EXPECT_TRUE(absl::StartsWith(address, "127.0.0.1:"));
    EXPECT_NE(address, "127.0.0.1:0");

    auto health = HealthCheck(address);
    ASSERT_TRUE(health.ok()) << health.status();
    EXPECT_EQ(*health, "SERVING");

    auto client = std::make_unique<pto::client::CompileClient>(address);
    auto compiled = client->Compile(graph, "host", {},
                                    absl::Now() + absl::Seconds(120));
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_EQ(compiled->cache_status(), pto::v1::CACHE_STATUS_MISS);
    key = compiled->key();

    const int metrics_port = ptod.metrics_port();
    ASSERT_GT(metrics_port, 0);
    auto page = HttpGet(metrics_port, "/metrics");
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_NE(page->find("pto_requests_total{result=\"miss\",tenant=\"\"} 1"),
              std::string::npos) << *page;

    client.reset();
    const int status = ptod.StopWith(SIGTERM, absl::Seconds(60));
    ASSERT_NE(status, -1) << "ptod did not exit after SIGTERM";
    ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
    const std::string log = ReadWholeFile(StderrPath("first.log"));
    EXPECT_NE(log.find("SIGTERM"), std::string::npos) << log;
    EXPECT_NE(log.find("ptod stopped"), std::string::npos) << log;
  }
  {
    PtodProcess ptod(Flags(), StderrPath("second.log"));
    const std::string address = ptod.WaitUntilListening();
    ASSERT_FALSE(address.empty()) << ReadWholeFile(StderrPath("second.log"));
    const std::string log = ReadWholeFile(StderrPath("second.log"));
    EXPECT_NE(log.find("with 1 kernels"), std::string::npos) << log;

    pto::client::CompileClient client(address);
    auto again = client.Compile(graph, "host", {},
                                absl::Now() + absl::Seconds(120));
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->cache_status(), pto::v1::CACHE_STATUS_HIT);
    EXPECT_EQ(again->key(), key);
    auto stats = client.Stats(absl::Now() + absl::Seconds(10));
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->compiles(), 0u);
    EXPECT_EQ(stats->entries(), 1u);

    const int status = ptod.StopWith(SIGINT, absl::Seconds(60));
    ASSERT_NE(status, -1) << "ptod did not exit after SIGINT";
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
}

// kill -9 in the middle of a burst of writes, then a restart: every entry
// that survived is whole and right (its binary is the one for its key and
// passes the runtime's checks), none is found corrupt, and the rest compile.
TEST_F(PtodBinaryTest, KillNineDuringABurstOfWritesLeavesNoTornEntry) {
  constexpr int kKernels = 24;
  std::vector<pto::v1::Graph> graphs;
  for (int i = 0; i < kKernels; ++i) {
    graphs.push_back(AddGraph({8 * (i + 1), 16}, {8, 16}));
  }
  std::vector<std::string> flags = Flags();
  flags[1] = "--metrics_address=";
  {
    PtodProcess ptod(flags, StderrPath("killed.log"));
    const std::string address = ptod.WaitUntilListening();
    ASSERT_FALSE(address.empty()) << ReadWholeFile(StderrPath("killed.log"));
    pto::client::CompileClient client(address);
    std::vector<std::thread> callers;
    for (int i = 0; i < kKernels; ++i) {
      callers.emplace_back([&, i] {
        // Fails with UNAVAILABLE once ptod is killed; that is expected.
        (void)client.Compile(graphs[i], "host", {},
                             absl::Now() + absl::Seconds(120));
      });
    }
    // Kill once some kernels are stored and others are being written.
    for (int polls = 0; polls < 6000; ++polls) {
      auto stats = client.Stats(absl::Now() + absl::Seconds(10));
      if (stats.ok() && stats->entries() >= 4) break;
      absl::SleepFor(absl::Milliseconds(10));
    }
    ASSERT_NE(ptod.StopWith(SIGKILL, absl::Seconds(30)), -1);
    for (auto& t : callers) t.join();
  }
  PtodProcess ptod(flags, StderrPath("restarted.log"));
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(StderrPath("restarted.log"));
  pto::client::CompileClient client(address);
  auto before = client.Stats(absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GE(before->entries(), 4u);
  int hits = 0;
  for (int i = 0; i < kKernels; ++i) {
    auto r = client.Compile(graphs[i], "host", {},
                            absl::Now() + absl::Seconds(120));
    ASSERT_TRUE(r.ok()) << i << ": " << r.status();
    EXPECT_EQ(r->binary().key(), r->key()) << i;
    EXPECT_TRUE(pto::runtime::VerifyBinary(r->binary()).ok()) << i;
    if (r->cache_status() == pto::v1::CACHE_STATUS_HIT) ++hits;
  }
  auto after = client.Stats(absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(after.ok()) << after.status();
  // What the counters said survived is exactly what was served as hits.
  EXPECT_EQ(static_cast<uint64_t>(hits), before->entries());
  EXPECT_EQ(after->corrupt_entries(), 0u);
  EXPECT_EQ(after->entries(), static_cast<uint64_t>(kKernels));
  EXPECT_EQ(after->compiles(), static_cast<uint64_t>(kKernels - hits));
}

// A payload corrupted on disk while ptod was down: detected on read,
// counted, logged and recompiled by the real daemon.
TEST_F(PtodBinaryTest, CorruptedStoredPayloadIsDetectedCountedAndRecompiled) {
  const pto::v1::Graph graph = AddGraph({24, 24}, {8, 8});
  std::string payload_key;
  {
    PtodProcess ptod(Flags(), StderrPath("first.log"));
    const std::string address = ptod.WaitUntilListening();
    ASSERT_FALSE(address.empty()) << ReadWholeFile(StderrPath("first.log"));
    pto::client::CompileClient client(address);
    auto r = client.Compile(graph, "host", {}, absl::Now() + absl::Seconds(120));
    ASSERT_TRUE(r.ok()) << r.status();
    payload_key = "p/" + pto::server::Sha256Hex(r->binary().native_payload());
    ASSERT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
  }
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), cache_.path(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string bytes;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), payload_key, &bytes).ok());
    bytes[bytes.size() / 2] ^= 0x10;
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), payload_key, bytes).ok());
    ASSERT_TRUE(db->Close().ok());
  }
  PtodProcess ptod(Flags(), StderrPath("second.log"));
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(StderrPath("second.log"));
  pto::client::CompileClient client(address);
  auto r = client.Compile(graph, "host", {}, absl::Now() + absl::Seconds(120));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_TRUE(pto::runtime::VerifyBinary(r->binary()).ok());
  auto stats = client.Stats(absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->corrupt_entries(), 1u);
  EXPECT_EQ(stats->entries(), 1u);
  auto page = HttpGet(ptod.metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find("pto_cache_corrupt_entries_total 1"), std::string::npos)
      << *page;
  ASSERT_NE(ptod.StopWith(SIGTERM, absl::Seconds(60)), -1);
  EXPECT_NE(ReadWholeFile(StderrPath("second.log")).find("payload digest mismatch"),
            std::string::npos);
}

TEST_F(PtodBinaryTest, SecondDaemonOnTheSameCacheFailsClearly) {
  std::vector<std::string> flags = Flags();
  flags[1] = "--metrics_address=";
  PtodProcess first(flags, StderrPath("first.log"));
  ASSERT_FALSE(first.WaitUntilListening().empty());
  PtodProcess second(flags, StderrPath("second.log"));
  const int status = second.Wait(absl::Seconds(60));
  ASSERT_NE(status, -1) << "second ptod did not exit";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  const std::string log = ReadWholeFile(StderrPath("second.log"));
  EXPECT_NE(log.find(cache_.path()), std::string::npos) << log;
  EXPECT_NE(first.StopWith(SIGTERM, absl::Seconds(60)), -1);
}

TEST_F(PtodBinaryTest, BusyPortFailsInsteadOfSharingIt) {
  std::vector<std::string> flags = Flags();
  flags[1] = "--metrics_address=";
  PtodProcess first(flags, StderrPath("first.log"));
  const std::string address = first.WaitUntilListening();
  ASSERT_FALSE(address.empty());
  TempDir other_cache;
  PtodProcess second({"--address=" + address, "--metrics_address=",
                      "--cache_dir=" + other_cache.path()},
                     StderrPath("second.log"));
  const int status = second.Wait(absl::Seconds(60));
  ASSERT_NE(status, -1) << "second ptod did not exit";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  const std::string log = ReadWholeFile(StderrPath("second.log"));
  EXPECT_NE(log.find("cannot listen on " + address), std::string::npos) << log;
  EXPECT_NE(first.StopWith(SIGTERM, absl::Seconds(60)), -1);
}

// Server reflection (for grpc_cli and friends): ptod lists its services and
// describes CompileService from the descriptors it was built with; an unknown
// symbol is a NOT_FOUND answer on the stream, not a broken stream.
TEST_F(PtodBinaryTest, ReflectionListsServicesAndDescribesCompileService) {
  namespace refl = grpc::reflection::v1alpha;
  PtodProcess ptod(Flags(), StderrPath("reflection.log"));
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(StderrPath("reflection.log"));

  auto stub = refl::ServerReflection::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  auto stream = stub->ServerReflectionInfo(&context);
  refl::ServerReflectionResponse answer;

  refl::ServerReflectionRequest list;
  list.set_list_services("*");
  ASSERT_TRUE(stream->Write(list));
  ASSERT_TRUE(stream->Read(&answer));
  ASSERT_TRUE(answer.has_list_services_response()) << answer.DebugString();
  std::vector<std::string> services;
  for (const auto& s : answer.list_services_response().service()) {
    services.push_back(s.name());
  }
  EXPECT_NE(std::find(services.begin(), services.end(),
                      "pto.v1.CompileService"), services.end())
      << answer.DebugString();
  EXPECT_NE(std::find(services.begin(), services.end(),
                      "grpc.health.v1.Health"), services.end())
      << answer.DebugString();

  refl::ServerReflectionRequest symbol;
  symbol.set_file_containing_symbol("pto.v1.CompileService");
  ASSERT_TRUE(stream->Write(symbol));
  ASSERT_TRUE(stream->Read(&answer));
  ASSERT_TRUE(answer.has_file_descriptor_response()) << answer.DebugString();
  bool described = false;
  for (const std::string& bytes :
       answer.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto file;
    ASSERT_TRUE(file.ParseFromString(bytes));
    for (const auto& service : file.service()) {
      if (file.package() != "pto.v1" || service.name() != "CompileService") {
        continue;
      }
      std::vector<std::string> methods;
      for (const auto& m : service.method()) methods.push_back(m.name());
      EXPECT_NE(std::find(methods.begin(), methods.end(), "Compile"),
                methods.end());
      EXPECT_NE(std::find(methods.begin(), methods.end(), "Stats"),
                methods.end());
      described = true;
    }
  }
  EXPECT_TRUE(described) << "no FileDescriptorProto defines "
                            "pto.v1.CompileService";

  refl::ServerReflectionRequest unknown;
  unknown.set_file_containing_symbol("no.such.Service");
  ASSERT_TRUE(stream->Write(unknown));
  ASSERT_TRUE(stream->Read(&answer));
  ASSERT_TRUE(answer.has_error_response()) << answer.DebugString();
  EXPECT_EQ(answer.error_response().error_code(),
            static_cast<int>(grpc::StatusCode::NOT_FOUND));

  stream->WritesDone();
  grpc::Status finished = stream->Finish();
  EXPECT_TRUE(finished.ok()) << finished.error_message();
  EXPECT_EQ(WEXITSTATUS(ptod.StopWith(SIGTERM, absl::Seconds(60))), 0);
}

TEST_F(PtodBinaryTest, BadFlagIsRefusedWithItsName) {
  std::vector<std::string> flags = Flags();
  flags.push_back("--log_level=loud");
  PtodProcess ptod(flags, StderrPath("bad.log"));
  const int status = ptod.Wait(absl::Seconds(60));
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  const std::string log = ReadWholeFile(StderrPath("bad.log"));
  EXPECT_NE(log.find("--log_level"), std::string::npos) << log;
}

// Security files that are missing, unsafe or too weak stop ptod at start
// with the flag and the file named.
TEST_F(PtodBinaryTest, BadSecurityFilesAreRefusedNamingThem) {
  const std::string open_tokens = logs_.path() + "/tokens";
  std::ofstream(open_tokens) << "alpha tok-alpha-0123456789abcdef\n";
  chmod(open_tokens.c_str(), 0644);
  const std::string short_key = logs_.path() + "/key";
  std::ofstream(short_key) << "short\n";
  struct Case {
    std::string flag;
    std::string expected;
  };
  for (const Case& c : {
           Case{"--tokens_file=" + logs_.path() + "/none", "--tokens_file"},
           Case{"--tokens_file=" + open_tokens, "chmod 600"},
           Case{"--signing_key_file=" + short_key, "at least 32"},
           Case{"--tls_cert_file=" + logs_.path() + "/none.pem",
                "--tls_cert_file"},
       }) {
    SCOPED_TRACE(c.flag);
    std::vector<std::string> flags = Flags();
    flags.push_back(c.flag);
    PtodProcess ptod(flags, StderrPath("security.log"));
    const int status = ptod.Wait(absl::Seconds(60));
    ASSERT_NE(status, -1);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    const std::string log = ReadWholeFile(StderrPath("security.log"));
    EXPECT_NE(log.find(c.expected), std::string::npos) << log;
  }
}

}  // namespace
}  // namespace pto::testing
