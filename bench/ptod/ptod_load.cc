// ptod_load: a load generator for ptod over loopback gRPC.
//
//   bazel run //bench/ptod:ptod_load -- --seconds=3 > /tmp/ptod.md
//   bazel run //bench/ptod:ptod_load -- --address=127.0.0.1:7070
//   bazel run //bench/ptod:ptod_load -- --ptod=      # ptod in this process
//
// By default it starts the ptod binary (--ptod, from the runfiles) as a
// separate process: real compiler, RocksDB in a temp directory, gRPC on a
// free loopback port, no tokens, no signing key unless --signing_key. It
// measures, each hit phase bounded by --seconds and --max_requests:
//   1. cold compiles of --cold_kernels distinct kernels: client latency and
//      the server's per-stage times;
//   2. hits of one warm kernel at concurrency 1, 8 and 64: latency p50, p99,
//      p99.9, hits/s, and the CPU each hit costs the server process and this
//      one. The calls go through gRPC's asynchronous (callback) client API
//      on one channel with `concurrency` calls in flight at all times, so
//      the generator needs no thread per call;
//   3. the same load against a server whose Compile handler does nothing but
//      answer a response of the hit's size (this binary with --serve_empty,
//      also a separate process): gRPC's own cost per unary call, the floor
//      under ptod's hit;
//   4. where the server's time on a hit goes: each step of the hit path
//      (request parsing, key computation, key memo, memory and RocksDB
//      lookups, signature check, payload copy, response serialization) timed
//      on its own in this process; what the round trip costs beyond them is
//      gRPC's (3.);
//   5. hits at concurrency 8 while a background thread keeps ptod compiling
//      new kernels: hits/s and p99;
//   6. a store of --restart_entries entries reopened: time to the first hit;
// and prints a Markdown report with ptod's speed targets marked met or not.
// Only loopback addresses are accepted: this is a benchmark, not a load test
// of someone's production daemon.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/ptod/bench_graph.h"
#include "client/cpp/compile_client.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/resource_quota.h"
#include "pto/v1/compile_service.grpc.pb.h"
#include "runtime/sha256.h"
#include "runtime/signature.h"
#include "server/kernel_store.h"
#include "server/key_memo.h"
#include "server/lru_cache.h"
#include "server/pto_compiler_backend.h"
#include "server/ptod_server.h"
#include "server/tenant_tokens.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, address, "",
          "ptod to measure (loopback only); empty: start one");
ABSL_FLAG(std::string, ptod, "server/ptod",
          "the ptod binary started as a separate process when --address is "
          "empty; empty: start ptod in this process instead");
ABSL_FLAG(std::string, signing_key, "",
          "signing key of the ptod started here (empty: unsigned)");
ABSL_FLAG(double, seconds, 3.0, "length of each hit phase");
ABSL_FLAG(int, max_requests, 200000, "request cap of each hit phase");
ABSL_FLAG(int, cold_kernels, 8, "distinct kernels compiled cold");
ABSL_FLAG(int, workers, 2, "compile workers of the ptod started here");
ABSL_FLAG(int64_t, key_memo_bytes, int64_t{16} << 20,
          "key memo bound of the ptod started here (0: off, for comparison)");
ABSL_FLAG(int, restart_entries, 50000,
          "entries in the store whose reopen is timed (0: skip)");
ABSL_FLAG(int, breakdown_iterations, 2000,
          "iterations of each step timed in the hit path breakdown");
ABSL_FLAG(bool, serve_empty, false,
          "internal: serve an empty Compile handler (the gRPC floor) and "
          "print its address");
ABSL_FLAG(int, empty_response_bytes, 0,
          "internal: response size of --serve_empty");
ABSL_FLAG(bool, empty_like_ptod, false,
          "internal: --serve_empty with ptod's other services (health "
          "checking, reflection, the synchronous methods) and resource quota");

namespace {

using pto::client::ClientOptions;
using pto::client::CompileClient;
using pto::bench::BenchGraph;

// The request CompileClient sends for `graph` on target "host".
pto::v1::CompileRequest BenchRequest(int rows) {
  pto::v1::CompileRequest request;
  *request.mutable_graph() = BenchGraph(rows);
  request.set_target("host");
  return request;
}

// User + system CPU seconds this process has used.
double ProcessCpuSeconds() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
         usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
}

// User + system CPU seconds process `pid` has used (from /proc); 0 when
// unknown.
double ChildCpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  // Fields after the command name, which is in parentheses and may hold
  // spaces: state is field 3, utime 14, stime 15.
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return 0;
  std::vector<std::string> fields =
      absl::StrSplit(text.substr(paren + 2), ' ');
  if (fields.size() < 13) return 0;
  double utime = 0, stime = 0;
  if (!absl::SimpleAtod(fields[11], &utime) ||
      !absl::SimpleAtod(fields[12], &stime)) {
    return 0;
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A server process started by this one: its pid, the address it printed on
// stdout ("... listening on ADDRESS"); killed (SIGTERM, then SIGKILL) and
// reaped on destruction.
class ChildServer {
 public:
  ChildServer(const std::string& path, const std::vector<std::string>& flags) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      std::vector<std::string> args = {path};
      args.insert(args.end(), flags.begin(), flags.end());
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(path.c_str(), argv.data());
      std::fprintf(stderr, "ptod_load: cannot run %s\n", path.c_str());
      _exit(127);
    }
    close(out[1]);
    if (pid_ < 0) {
      close(out[0]);
      return;
    }
    // Reads stdout until the listening line, at most a minute.
    std::string buffer;
    const absl::Time give_up = absl::Now() + absl::Minutes(1);
    while (absl::Now() < give_up) {
      struct pollfd p = {out[0], POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char chunk[512];
      const ssize_t n = read(out[0], chunk, sizeof(chunk));
      if (n <= 0) break;
      buffer.append(chunk, n);
      const size_t at = buffer.find("listening on ");
      const size_t end =
          at == std::string::npos ? at : buffer.find('\n', at);
      if (end != std::string::npos) {
        address_ = buffer.substr(at + 13, end - at - 13);
        break;
      }
    }
    // Keep the pipe open (the child may print more) but never read it.
    stdout_fd_ = out[0];
  }

  ~ChildServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 200 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
        absl::SleepFor(absl::Milliseconds(50));
      }
      if (waitpid(pid_, &status, WNOHANG) == 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
    }
    if (stdout_fd_ >= 0) close(stdout_fd_);
  }

  pid_t pid() const { return pid_; }
  // "" when the server did not come up.
  const std::string& address() const { return address_; }

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string address_;
};

struct Latencies {
  std::vector<double> seconds;  // sorted by the phase
  int errors = 0;
  std::string first_error;
  double wall = 0;
  double client_cpu = 0;  // this process's CPU seconds over the phase
  double server_cpu = -1;  // the server process's; -1: not known

  double Quantile(double q) const {
    if (seconds.empty()) return 0;
    const size_t i = std::min(seconds.size() - 1,
                              static_cast<size_t>(q * seconds.size()));
    return seconds[i];
  }
  double Rate() const { return wall > 0 ? seconds.size() / wall : 0; }
  std::string CpuPerCall(double cpu) const {
    if (cpu < 0 || seconds.empty()) return "-";
    return absl::StrFormat("%.0f us", cpu / seconds.size() * 1e6);
  }
};

std::string Ms(double s) { return absl::StrFormat("%.3f ms", s * 1e3); }

// `concurrency` calls of `request` kept in flight on `channel` through the
// callback client API until the phase's time or request budget is spent.
// A call counts when it succeeds with cache status `want` (any, for
// CACHE_STATUS_UNSPECIFIED). `server_pid` > 0: its CPU is measured too.
Latencies AsyncPhase(const std::shared_ptr<grpc::Channel>& channel,
                     const pto::v1::CompileRequest& request, int concurrency,
                     pto::v1::CacheStatus want, pid_t server_pid) {
  auto stub = pto::v1::CompileService::NewStub(channel);
  const absl::Duration length = absl::Seconds(absl::GetFlag(FLAGS_seconds));
  struct Slot {
    std::unique_ptr<grpc::ClientContext> context;
    pto::v1::CompileResponse response;
    absl::Time sent;
  };
  std::vector<Slot> slots(concurrency);
  absl::Mutex mu;
  int budget = absl::GetFlag(FLAGS_max_requests);
  int active = 0;
  Latencies result;
  result.seconds.reserve(std::min(budget, 1 << 20));
  absl::Time end;

  // Starts a call in slot `i` (mu held by the caller or not yet shared).
  std::function<void(int)> start_call = [&](int i) {
    Slot& slot = slots[i];
    slot.context = std::make_unique<grpc::ClientContext>();
    slot.context->set_deadline(absl::ToChronoTime(absl::Now() +
                                                  absl::Seconds(30)));
    slot.response.Clear();
    slot.sent = absl::Now();
    stub->async()->Compile(
        slot.context.get(), &request, &slot.response,
        [&, i](grpc::Status status) {
          const absl::Time now = absl::Now();
          Slot& done = slots[i];
          absl::MutexLock lock(&mu);
          if (status.ok() && (want == pto::v1::CACHE_STATUS_UNSPECIFIED ||
                              done.response.cache_status() == want)) {
            result.seconds.push_back(absl::ToDoubleSeconds(now - done.sent));
          } else {
            if (result.errors++ == 0) {
              result.first_error =
                  status.ok() ? absl::StrCat("cache status ",
                                             pto::v1::CacheStatus_Name(
                                                 done.response.cache_status()))
                              : status.error_message();
            }
          }
          if (now < end && budget > 0) {
            --budget;
            start_call(i);
          } else {
            --active;
          }
        });
  };

  const double client_cpu = ProcessCpuSeconds();
  const double server_cpu = server_pid > 0 ? ChildCpuSeconds(server_pid) : 0;
  const absl::Time start = absl::Now();
  end = start + length;
  {
    absl::MutexLock lock(&mu);
    for (int i = 0; i < concurrency && budget > 0; ++i) {
      --budget;
      ++active;
      start_call(i);
    }
    mu.Await(absl::Condition(
        +[](int* n) { return *n == 0; }, &active));
  }
  result.wall = absl::ToDoubleSeconds(absl::Now() - start);
  result.client_cpu = ProcessCpuSeconds() - client_cpu;
  if (server_pid > 0) {
    result.server_cpu = ChildCpuSeconds(server_pid) - server_cpu;
  }
  std::sort(result.seconds.begin(), result.seconds.end());
  return result;
}

std::shared_ptr<grpc::Channel> LoopbackChannel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                   args);
}

bool IsLoopback(const std::string& address) {
  return absl::StartsWith(address, "127.") ||
         absl::StartsWith(address, "localhost:") ||
         absl::StartsWith(address, "[::1]:");
}

// --serve_empty: a Compile handler that answers a fixed response of
// --empty_response_bytes at once, with ptod's channel settings, on the
// callback API. Prints "empty server listening on ADDRESS" and serves until
// killed.
class EmptyService final
    : public pto::v1::CompileService::WithRawCallbackMethod_Compile<
          pto::v1::CompileService::Service> {
 public:
  explicit EmptyService(int response_bytes) {
    pto::v1::CompileResponse response;
    response.mutable_binary()->set_native_payload(
        std::string(std::max(0, response_bytes), 'x'));
    response.set_cache_status(pto::v1::CACHE_STATUS_HIT);
    response_ = response.SerializeAsString();
  }

  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* /*request*/,
                                    grpc::ByteBuffer* response) override {
    grpc::Slice slice(response_.data(), response_.size(),
                      grpc::Slice::STATIC_SLICE);
    *response = grpc::ByteBuffer(&slice, 1);
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  std::string response_;
};

int ServeEmpty() {
  EmptyService service(absl::GetFlag(FLAGS_empty_response_bytes));
  grpc::ServerBuilder builder;
  grpc::ResourceQuota quota("empty");
  if (absl::GetFlag(FLAGS_empty_like_ptod)) {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    quota.SetMaxThreads(256);
    quota.Resize(size_t{4} << 30);
    builder.SetResourceQuota(quota);
  }
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 100);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return 1;
  std::printf("empty server listening on 127.0.0.1:%d\n", port);
  std::fflush(stdout);
  server->Wait();
  return 0;
}

// Seconds per call of `step`: the best of 5 batches of a fifth of
// --breakdown_iterations calls each (after a batch untimed), so that a
// batch the scheduler interrupted on a shared machine does not count.
double TimeStep(const std::function<void()>& step) {
  const int n = std::max(5, absl::GetFlag(FLAGS_breakdown_iterations) / 5);
  for (int i = 0; i < n; ++i) step();
  double best = 1e9;
  for (int batch = 0; batch < 5; ++batch) {
    const absl::Time start = absl::Now();
    for (int i = 0; i < n; ++i) step();
    best = std::min(best, absl::ToDoubleSeconds(absl::Now() - start) / n);
  }
  return best;
}

std::string Us(double s) { return absl::StrFormat("%.2f us", s * 1e6); }

// Prints the time of each step of a hit, each step run alone on this thread
// over the kernel `hit` returned for `request`.
void PrintBreakdown(const pto::v1::CompileRequest& request,
                    const pto::v1::CompileResponse& hit) {
  const std::string request_bytes = request.SerializeAsString();
  std::unique_ptr<pto::server::CompilerBackend> backend =
      pto::server::NewPtoCompilerBackend();
  pto::server::CompiledKernel kernel;
  kernel.binary = hit.binary();
  kernel.compile_seconds = hit.compile_seconds();
  kernel.stages.assign(hit.stages().begin(), hit.stages().end());
  const std::string signing_key(32, 'k');
  kernel.binary.set_signature(
      pto::runtime::SignKernelBinary(kernel.binary, signing_key));
  auto shared = std::make_shared<const pto::server::CompiledKernel>(kernel);

  struct Row {
    std::string step;
    double seconds;
    std::string note;
  };
  std::vector<Row> rows;
  rows.push_back({"request parsing (CompileRequest from its bytes)",
                  TimeStep([&] {
                    pto::v1::CompileRequest parsed;
                    parsed.ParseFromString(request_bytes);
                  }),
                  absl::StrCat(request_bytes.size(), " bytes")});
  rows.push_back({"key computation (graph import, verification, canonical "
                  "encoding, SHA-256)",
                  TimeStep([&] { backend->Key(request).IgnoreError(); }),
                  "skipped by the key memo on a repeated request"});
  pto::server::KeyMemo memo(size_t{16} << 20, size_t{256} << 10);
  memo.Key(*backend, "", request).IgnoreError();
  rows.push_back({"key memo hit, from a parsed request (deterministic "
                  "re-serialization + lookup)",
                  TimeStep([&] { memo.Key(*backend, "", request).IgnoreError(); }),
                  ""});
  memo.KeyOfBytes("", request_bytes);
  rows.push_back({"key memo hit, from the request's bytes (lookup only)",
                  TimeStep([&] { memo.KeyOfBytes("", request_bytes); }),
                  "what the hit path does"});
  auto tokens = pto::server::TenantTokens::Parse(
      "bench 0123456789abcdef0123456789abcdef\n", "bench");
  if (tokens.ok()) {
    rows.push_back({"bearer token check (SHA-256 + lookup)",
                    TimeStep([&] {
                      tokens->Lookup("0123456789abcdef0123456789abcdef")
                          .IgnoreError();
                    }),
                    "only with --tokens_file"});
  }
  pto::server::LruCache<pto::server::CompiledKernel> memory(
      size_t{256} << 20,
      [](const pto::server::CompiledKernel& k) {
        return pto::server::KernelMemoryBytes(k);
      });
  memory.Insert(hit.key(), shared);
  rows.push_back({"memory tier lookup (LRU)",
                  TimeStep([&] { memory.Get(hit.key()); }), ""});
  const std::string dir = (std::filesystem::temp_directory_path() /
                           absl::StrCat("ptod_load_breakdown_", getpid()))
                              .string();
  {
    auto store = pto::server::KernelStore::Open(dir);
    if (store.ok() && (*store)->Put(hit.key(), kernel).ok()) {
      rows.push_back({"RocksDB tier lookup (read, seal and digest checks, "
                      "parse)",
                      TimeStep([&] { (*store)->Get(hit.key()).IgnoreError(); }),
                      "only when the memory tier misses"});
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  rows.push_back({"signature check (HMAC-SHA256 over the binary)",
                  TimeStep([&] {
                    pto::runtime::CheckKernelSignature(kernel.binary,
                                                       signing_key)
                        .IgnoreError();
                  }),
                  "RocksDB/Redis reads only; memory entries were checked "
                  "when they entered"});
  rows.push_back({"signing (HMAC-SHA256 over the binary)",
                  TimeStep([&] {
                    pto::runtime::SignKernelBinary(kernel.binary, signing_key);
                  }),
                  "once per compile"});
  rows.push_back({"payload copy into a response message",
                  TimeStep([&] {
                    pto::v1::CompileResponse response;
                    *response.mutable_binary() = shared->binary;
                  }),
                  absl::StrCat(kernel.binary.native_payload().size(),
                               "-byte payload; the hit path sends the stored "
                               "serialized response instead")});
  pto::v1::CompileResponse response = hit;
  rows.push_back({"response serialization",
                  TimeStep([&] { response.SerializeAsString(); }),
                  absl::StrCat(response.ByteSizeLong(), " bytes")});
  std::printf(
      "## Where a hit's server time goes\n\n"
      "Each step alone on one thread of this process (%d calls, the best of "
      "5 batches' means):\n\n"
      "| step | time | |\n|---|---|---|\n",
      absl::GetFlag(FLAGS_breakdown_iterations));
  for (const Row& row : rows) {
    std::printf("| %s | %s | %s |\n", row.step.c_str(), Us(row.seconds).c_str(),
                row.note.c_str());
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("load generator for ptod (loopback only)");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_serve_empty)) return ServeEmpty();
  // absl::Mutex checks lock order on every acquisition unless built with
  // NDEBUG (we build -O2 without it): a debugging aid that costs a few
  // percent of a hit; tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  spdlog::set_level(spdlog::level::warn);

  std::string address = absl::GetFlag(FLAGS_address);
  std::unique_ptr<pto::server::PtodServer> ptod;
  std::unique_ptr<ChildServer> child;
  std::string cache_dir;
  std::string mode = "external";
  if (address.empty()) {
    cache_dir = (std::filesystem::temp_directory_path() /
                 absl::StrCat("ptod_load_", getpid()))
                    .string();
    const std::string signing_key = absl::GetFlag(FLAGS_signing_key);
    if (!absl::GetFlag(FLAGS_ptod).empty()) {
      std::vector<std::string> flags = {
          "--address=127.0.0.1:0",
          "--metrics_address=127.0.0.1:0",
          absl::StrCat("--cache_dir=", cache_dir),
          absl::StrCat("--workers=", absl::GetFlag(FLAGS_workers)),
          absl::StrCat("--key_memo_bytes=", absl::GetFlag(FLAGS_key_memo_bytes)),
          "--log_level=warn"};
      if (!signing_key.empty()) {
        const std::string key_file = cache_dir + ".key";
        std::ofstream(key_file) << signing_key;
        chmod(key_file.c_str(), 0600);
        flags.push_back(absl::StrCat("--signing_key_file=", key_file));
      }
      child = std::make_unique<ChildServer>(absl::GetFlag(FLAGS_ptod), flags);
      if (child->address().empty()) {
        std::fprintf(stderr, "ptod_load: %s did not start\n",
                     absl::GetFlag(FLAGS_ptod).c_str());
        return 1;
      }
      address = child->address();
      mode = absl::StrCat("separate ptod process (pid ", child->pid(), ")");
    } else {
      pto::server::PtodOptions options;
      options.address = "127.0.0.1:0";
      options.cache_dir = cache_dir;
      options.service.workers = absl::GetFlag(FLAGS_workers);
      options.service.key_memo_bytes = static_cast<size_t>(
          std::max<int64_t>(0, absl::GetFlag(FLAGS_key_memo_bytes)));
      options.service.signing_key = signing_key;
      auto started = pto::server::PtodServer::Start(
          options, pto::server::NewPtoCompilerBackend());
      if (!started.ok()) {
        std::fprintf(stderr, "ptod_load: %s\n",
                     std::string(started.status().message()).c_str());
        return 1;
      }
      ptod = std::move(*started);
      address = ptod->address();
      mode = "ptod in this process";
    }
  } else if (!IsLoopback(address)) {
    std::fprintf(stderr, "ptod_load: --address must be a loopback address\n");
    return 1;
  }
  const pid_t server_pid = child != nullptr ? child->pid() : 0;
  ClientOptions client_options;
  client_options.max_attempts = 1;  // measure ptod, not the retry policy
  CompileClient client(address, client_options);

  std::printf("# ptod load benchmark\n\n");
  std::printf(
      "`bazel run //bench/ptod:ptod_load -- --seconds=%g --max_requests=%d "
      "--cold_kernels=%d` (%s at %s, %u hardware threads; client, server and "
      "compiler share them)\n\n",
      absl::GetFlag(FLAGS_seconds), absl::GetFlag(FLAGS_max_requests),
      absl::GetFlag(FLAGS_cold_kernels), mode.c_str(), address.c_str(),
      std::thread::hardware_concurrency());

  // 1. Cold compiles.
  std::vector<double> cold;
  std::map<std::string, std::vector<double>> stages;
  std::vector<std::string> stage_order;
  const int cold_kernels = std::max(1, absl::GetFlag(FLAGS_cold_kernels));
  pto::v1::CompileResponse warm_response;
  for (int i = 0; i < cold_kernels; ++i) {
    const absl::Time sent = absl::Now();
    auto r = client.Compile(BenchGraph(64 + 16 * i), "host", {},
                            sent + absl::Seconds(300));
    if (!r.ok()) {
      std::fprintf(stderr, "ptod_load: cold compile: %s\n",
                   r.status().ToString().c_str());
      return 1;
    }
    if (i == 0) warm_response = *r;
    if (r->cache_status() != pto::v1::CACHE_STATUS_MISS) continue;
    cold.push_back(absl::ToDoubleSeconds(absl::Now() - sent));
    for (const pto::v1::StageTiming& s : r->stages()) {
      if (!stages.count(s.stage())) stage_order.push_back(s.stage());
      stages[s.stage()].push_back(s.seconds());
    }
  }
  if (cold.empty()) {
    std::fprintf(stderr, "ptod_load: every kernel was already cached\n");
    return 1;
  }
  std::sort(cold.begin(), cold.end());
  const double cold_median = cold[cold.size() / 2];
  std::printf("## Cold compile (%zu distinct kernels, 4 ops each)\n\n",
              cold.size());
  std::printf("| stage | median |\n|---|---|\n");
  for (const std::string& stage : stage_order) {
    std::vector<double>& v = stages[stage];
    std::sort(v.begin(), v.end());
    std::printf("| %s | %s |\n", stage.c_str(), Ms(v[v.size() / 2]).c_str());
  }
  std::printf("| **client latency** | **%s** (min %s, max %s) |\n\n",
              Ms(cold_median).c_str(), Ms(cold.front()).c_str(),
              Ms(cold.back()).c_str());

  // 2. Hits.
  const pto::v1::CompileRequest warm = BenchRequest(64);
  std::shared_ptr<grpc::Channel> channel = LoopbackChannel(address);
  const std::string header =
      "| concurrency | hits | p50 | p99 | p99.9 | hits/s | server CPU/hit | "
      "client CPU/hit | errors |\n|---|---|---|---|---|---|---|---|---|\n";
  auto print_row = [](int c, const Latencies& h) {
    std::printf("| %d | %zu | %s | %s | %s | %.0f | %s | %s | %d%s%s |\n", c,
                h.seconds.size(), Ms(h.Quantile(0.5)).c_str(),
                Ms(h.Quantile(0.99)).c_str(), Ms(h.Quantile(0.999)).c_str(),
                h.Rate(), h.CpuPerCall(h.server_cpu).c_str(),
                h.CpuPerCall(h.client_cpu).c_str(), h.errors,
                h.errors > 0 ? ": " : "", h.first_error.c_str());
  };
  std::printf(
      "## Hits (one warm kernel, %zu-byte response)\n\n"
      "Callback client API, one channel, `concurrency` calls in flight.\n\n%s",
      warm_response.ByteSizeLong(), header.c_str());
  std::map<int, Latencies> hits;
  for (int c : {1, 8, 64}) {
    hits[c] = AsyncPhase(channel, warm, c, pto::v1::CACHE_STATUS_HIT,
                         server_pid);
    print_row(c, hits[c]);
  }

  // 3. The gRPC floor: the same calls against an empty handler.
  {
    for (bool like_ptod : {false, true}) {
      ChildServer empty(
          "/proc/self/exe",
          {"--serve_empty",
           absl::StrCat("--empty_response_bytes=",
                        warm_response.binary().ByteSizeLong()),
           absl::StrCat("--empty_like_ptod=", like_ptod)});
      if (empty.address().empty()) continue;
      std::shared_ptr<grpc::Channel> empty_channel =
          LoopbackChannel(empty.address());
      std::printf(
          "\n## gRPC alone (an empty Compile handler answering a response "
          "of the hit's size, separate process%s)\n\n%s",
          like_ptod ? "; with ptod's health checking, reflection and resource "
                      "quota"
                    : "",
          header.c_str());
      for (int c : like_ptod ? std::vector<int>{8} : std::vector<int>{1, 8, 64}) {
        print_row(c, AsyncPhase(empty_channel, warm, c,
                                pto::v1::CACHE_STATUS_UNSPECIFIED,
                                empty.pid()));
      }
    }
    std::printf("\n");
  }

  // 4. The hit path, step by step.
  PrintBreakdown(warm, warm_response);

  // 5. Hits while compiles run.
  std::atomic<bool> stop{false};
  std::atomic<int> background_compiles{0};
  std::thread compiler([&] {
    for (int i = 0; !stop.load(); ++i) {
      auto r = client.Compile(BenchGraph(1024 + 16 * i), "host", {},
                              absl::Now() + absl::Seconds(300));
      if (r.ok()) ++background_compiles;
    }
  });
  // Let the first background compile start.
  absl::SleepFor(absl::Milliseconds(50));
  const Latencies busy =
      AsyncPhase(channel, warm, 8, pto::v1::CACHE_STATUS_HIT, server_pid);
  stop = true;
  compiler.join();
  std::printf(
      "## Hits at concurrency 8 while compiles run\n\n"
      "| hits | p50 | p99 | hits/s | compiles finished meanwhile |\n"
      "|---|---|---|---|---|\n| %zu | %s | %s | %.0f | %d |\n\n",
      busy.seconds.size(), Ms(busy.Quantile(0.5)).c_str(),
      Ms(busy.Quantile(0.99)).c_str(), busy.Rate(),
      background_compiles.load());

  // 6. Restart: open a store holding many entries and serve one.
  double first_get_seconds = -1;
  const int restart_entries = absl::GetFlag(FLAGS_restart_entries);
  if (restart_entries > 0) {
    const std::string dir = (std::filesystem::temp_directory_path() /
                             absl::StrCat("ptod_load_restart_", getpid()))
                                .string();
    std::string last_key;
    {
      auto store = pto::server::KernelStore::Open(dir);
      if (!store.ok()) {
        std::fprintf(stderr, "ptod_load: %s\n",
                     store.status().ToString().c_str());
        return 1;
      }
      for (int i = 0; i < restart_entries; ++i) {
        pto::server::CompiledKernel kernel;
        last_key = pto::server::Sha256Hex(absl::StrCat("kernel ", i));
        kernel.binary.set_key(last_key);
        kernel.binary.set_native_payload(
            absl::StrCat(std::string(2048, 'x'), i));
        kernel.binary.set_payload_sha256(
            pto::runtime::Sha256(kernel.binary.native_payload()));
        kernel.compile_seconds = 0.1;
        absl::Status put = (*store)->Put(last_key, kernel);
        if (!put.ok()) {
          std::fprintf(stderr, "ptod_load: %s\n", put.ToString().c_str());
          return 1;
        }
      }
    }
    const absl::Time start = absl::Now();
    auto store = pto::server::KernelStore::Open(dir);
    const double open_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    const bool found = store.ok() && (*store)->Get(last_key).ok();
    first_get_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    const uint64_t entries = store.ok() ? (*store)->GetStats().entries : 0;
    store = absl::UnavailableError("closed");
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    std::printf(
        "## Restart\n\n| entries | open | open + first hit |\n|---|---|---|\n"
        "| %llu | %s | %s%s |\n\n",
        static_cast<unsigned long long>(entries), Ms(open_seconds).c_str(),
        Ms(first_get_seconds).c_str(), found ? "" : " (not found!)");
  }

  // Targets.
  const Latencies& c8 = hits[8];
  const double ratio = cold_median / std::max(hits[1].Quantile(0.5), 1e-9);
  auto mark = [](bool met) { return met ? "met" : "**not met**"; };
  std::printf("## Targets\n\n| target | measured | |\n|---|---|---|\n");
  std::printf("| >= 20,000 hits/s at concurrency 8 | %.0f/s | %s |\n",
              c8.Rate(), mark(c8.Rate() >= 20000));
  std::printf("| p99 hit latency < 2 ms at concurrency 8 | %s | %s |\n",
              Ms(c8.Quantile(0.99)).c_str(), mark(c8.Quantile(0.99) < 2e-3));
  std::printf("| p50 hit latency < 1 ms at concurrency 8 | %s | %s |\n",
              Ms(c8.Quantile(0.5)).c_str(), mark(c8.Quantile(0.5) < 1e-3));
  std::printf(
      "| hit >= 100x faster than a cold compile (p50 at concurrency 1) | "
      "%.0fx | %s |\n",
      ratio, mark(ratio >= 100));
  if (first_get_seconds >= 0) {
    std::printf("| restart ready to serve hits in well under 1 s | %s | %s |\n",
                Ms(first_get_seconds).c_str(), mark(first_get_seconds < 0.5));
  }

  child.reset();
  ptod.reset();
  if (!cache_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(cache_dir, ec);
    std::filesystem::remove(cache_dir + ".key", ec);
  }
  return 0;
}
