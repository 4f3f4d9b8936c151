// ptod_load: a load generator for ptod over loopback gRPC.
//
//   bazel run //bench/ptod:ptod_load -- --seconds=3 > /tmp/ptod.md
//   bazel run //bench/ptod:ptod_load -- --address=127.0.0.1:7070
//
// Without --address it starts ptod in-process (real compiler, RocksDB in a
// temp directory, gRPC on a free loopback port) and talks to it through the
// C++ client like any other process would. It measures, each phase bounded
// by --seconds and --max_requests:
//   1. cold compiles of --cold_kernels distinct kernels: client latency and
//      the server's per-stage times;
//   2. hits of one warm kernel at concurrency 1, 8 and 64: latency p50, p99,
//      p99.9, requests/s and CPU per hit (the process's user + system time
//      over the phase divided by the hits: client and in-process server
//      together; unlike requests/s it hardly moves when others load the
//      machine, but it counts the client's share too);
//   3. hits at concurrency 8 while a background thread keeps ptod compiling
//      new kernels: requests/s and p99.
// and prints a Markdown report with ptod's speed targets marked met or not.
// Only loopback addresses are accepted: this is a benchmark, not a load test
// of someone's production daemon.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <sys/resource.h>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/ptod/bench_graph.h"
#include "client/cpp/compile_client.h"
#include "runtime/sha256.h"
#include "server/kernel_store.h"
#include "server/pto_compiler_backend.h"
#include "server/ptod_server.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, address, "",
          "ptod to measure (loopback only); empty: start one in-process");
ABSL_FLAG(double, seconds, 3.0, "length of each hit phase");
ABSL_FLAG(int, max_requests, 200000, "request cap of each hit phase");
ABSL_FLAG(int, cold_kernels, 8, "distinct kernels compiled cold");
ABSL_FLAG(int, workers, 2, "compile workers of the in-process ptod");
ABSL_FLAG(int64_t, key_memo_bytes, int64_t{16} << 20,
          "key memo bound of the in-process ptod (0: off, for comparison)");
ABSL_FLAG(int, restart_entries, 50000,
          "entries in the store whose reopen is timed (0: skip)");

namespace {

using pto::client::ClientOptions;
using pto::client::CompileClient;
using pto::bench::BenchGraph;

// User + system CPU seconds this process has used.
double ProcessCpuSeconds() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
         usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
}

struct Latencies {
  std::vector<double> seconds;  // sorted by Summarize
  int errors = 0;
  double wall = 0;
  double cpu = 0;  // process CPU seconds over the phase

  double Quantile(double q) const {
    if (seconds.empty()) return 0;
    const size_t i = std::min(seconds.size() - 1,
                              static_cast<size_t>(q * seconds.size()));
    return seconds[i];
  }
  double Rate() const { return wall > 0 ? seconds.size() / wall : 0; }
  double CpuPerRequest() const {
    return seconds.empty() ? 0 : cpu / seconds.size();
  }
};

std::string Ms(double s) { return absl::StrFormat("%.3f ms", s * 1e3); }

// `threads` callers each compiling `graph` (a warm kernel) until the phase's
// time or request budget is spent.
Latencies HitPhase(CompileClient& client, const pto::v1::Graph& graph,
                   int threads) {
  const absl::Duration length =
      absl::Seconds(absl::GetFlag(FLAGS_seconds));
  std::atomic<int> budget{absl::GetFlag(FLAGS_max_requests)};
  std::vector<std::vector<double>> per_thread(threads);
  std::atomic<int> errors{0};
  const double cpu_start = ProcessCpuSeconds();
  const absl::Time start = absl::Now();
  const absl::Time end = start + length;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::vector<double>& mine = per_thread[t];
      mine.reserve(1 << 16);
      while (absl::Now() < end && budget.fetch_sub(1) > 0) {
        const absl::Time sent = absl::Now();
        auto r = client.Compile(graph, "host", {}, sent + absl::Seconds(30));
        const double took = absl::ToDoubleSeconds(absl::Now() - sent);
        if (!r.ok() || r->cache_status() != pto::v1::CACHE_STATUS_HIT) {
          ++errors;
          continue;
        }
        mine.push_back(took);
      }
    });
  }
  for (auto& w : workers) w.join();
  Latencies result;
  result.wall = absl::ToDoubleSeconds(absl::Now() - start);
  result.cpu = ProcessCpuSeconds() - cpu_start;
  for (auto& v : per_thread) {
    result.seconds.insert(result.seconds.end(), v.begin(), v.end());
  }
  std::sort(result.seconds.begin(), result.seconds.end());
  result.errors = errors.load();
  return result;
}

bool IsLoopback(const std::string& address) {
  return absl::StartsWith(address, "127.") ||
         absl::StartsWith(address, "localhost:") ||
         absl::StartsWith(address, "[::1]:");
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("load generator for ptod (loopback only)");
  absl::ParseCommandLine(argc, argv);
  // absl::Mutex checks lock order on every acquisition unless built with
  // NDEBUG (we build -O2 without it): a debugging aid that costs a few
  // percent of a hit; tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  spdlog::set_level(spdlog::level::warn);

  std::string address = absl::GetFlag(FLAGS_address);
  std::unique_ptr<pto::server::PtodServer> ptod;
  std::string cache_dir;
  if (address.empty()) {
    cache_dir = (std::filesystem::temp_directory_path() /
                 absl::StrCat("ptod_load_", getpid()))
                    .string();
    pto::server::PtodOptions options;
    options.address = "127.0.0.1:0";
    options.cache_dir = cache_dir;
    options.service.workers = absl::GetFlag(FLAGS_workers);
    options.service.key_memo_bytes =
        static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_key_memo_bytes)));
    auto started = pto::server::PtodServer::Start(
        options, pto::server::NewPtoCompilerBackend());
    if (!started.ok()) {
      std::fprintf(stderr, "ptod_load: %s\n",
                   std::string(started.status().message()).c_str());
      return 1;
    }
    ptod = std::move(*started);
    address = ptod->address();
  } else if (!IsLoopback(address)) {
    std::fprintf(stderr, "ptod_load: --address must be a loopback address\n");
    return 1;
  }
  ClientOptions client_options;
  client_options.max_attempts = 1;  // measure ptod, not the retry policy
  CompileClient client(address, client_options);

  std::printf("# ptod load benchmark\n\n");
  std::printf(
      "`bazel run //bench/ptod:ptod_load -- --seconds=%g --max_requests=%d "
      "--cold_kernels=%d` (%s ptod at %s, %u hardware threads; client, "
      "server and compiler share them)\n\n",
      absl::GetFlag(FLAGS_seconds), absl::GetFlag(FLAGS_max_requests),
      absl::GetFlag(FLAGS_cold_kernels),
      ptod != nullptr ? "in-process" : "external", address.c_str(),
      std::thread::hardware_concurrency());

  // 1. Cold compiles.
  std::vector<double> cold;
  std::map<std::string, std::vector<double>> stages;
  std::vector<std::string> stage_order;
  const int cold_kernels = std::max(1, absl::GetFlag(FLAGS_cold_kernels));
  for (int i = 0; i < cold_kernels; ++i) {
    const absl::Time sent = absl::Now();
    auto r = client.Compile(BenchGraph(64 + 16 * i), "host", {},
                            sent + absl::Seconds(300));
    if (!r.ok()) {
      std::fprintf(stderr, "ptod_load: cold compile: %s\n",
                   r.status().ToString().c_str());
      return 1;
    }
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
  const pto::v1::Graph warm = BenchGraph(64);
  std::printf("## Hits (one warm kernel)\n\n");
  std::printf(
      "| concurrency | requests | p50 | p99 | p99.9 | requests/s | CPU/hit | "
      "errors |\n|---|---|---|---|---|---|---|---|\n");
  std::map<int, Latencies> hits;
  for (int c : {1, 8, 64}) {
    hits[c] = HitPhase(client, warm, c);
    const Latencies& h = hits[c];
    std::printf("| %d | %zu | %s | %s | %s | %.0f | %.0f us | %d |\n", c,
                h.seconds.size(), Ms(h.Quantile(0.5)).c_str(),
                Ms(h.Quantile(0.99)).c_str(), Ms(h.Quantile(0.999)).c_str(),
                h.Rate(), h.CpuPerRequest() * 1e6, h.errors);
  }

  // 3. Hits while compiles run.
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
  const Latencies busy = HitPhase(client, warm, 8);
  stop = true;
  compiler.join();
  std::printf(
      "\n## Hits at concurrency 8 while compiles run\n\n"
      "| requests | p50 | p99 | requests/s | compiles finished meanwhile |\n"
      "|---|---|---|---|---|\n| %zu | %s | %s | %.0f | %d |\n\n",
      busy.seconds.size(), Ms(busy.Quantile(0.5)).c_str(),
      Ms(busy.Quantile(0.99)).c_str(), busy.Rate(),
      background_compiles.load());

  // 4. Restart: open a store holding many entries and serve one.
  double open_seconds = -1, first_get_seconds = -1;
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
    open_seconds = absl::ToDoubleSeconds(absl::Now() - start);
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
  const double best_rate =
      std::max({hits[1].Rate(), hits[8].Rate(), hits[64].Rate()});
  const double ratio = cold_median / std::max(hits[1].Quantile(0.5), 1e-9);
  auto mark = [](bool met) { return met ? "met" : "**not met**"; };
  std::printf("## Targets\n\n| target | measured | |\n|---|---|---|\n");
  std::printf("| p50 hit latency < 1 ms at concurrency 8 | %s | %s |\n",
              Ms(c8.Quantile(0.5)).c_str(), mark(c8.Quantile(0.5) < 1e-3));
  std::printf("| p99 hit latency < 5 ms at concurrency 8 | %s | %s |\n",
              Ms(c8.Quantile(0.99)).c_str(), mark(c8.Quantile(0.99) < 5e-3));
  std::printf("| >= 5,000 hits/s (best concurrency) | %.0f/s | %s |\n",
              best_rate, mark(best_rate >= 5000));
  std::printf(
      "| hit >= 100x faster than a cold compile (p50 at concurrency 1) | "
      "%.0fx | %s |\n",
      ratio, mark(ratio >= 100));
  if (first_get_seconds >= 0) {
    std::printf("| restart ready to serve hits in well under 1 s | %s | %s |\n",
                Ms(first_get_seconds).c_str(), mark(first_get_seconds < 0.5));
  }

  ptod.reset();
  if (!cache_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(cache_dir, ec);
  }
  return 0;
}
