// ptod_cluster_load: ptod replicas sharing a Redis Cluster, under client
// processes that route by rendezvous hashing.
//
//   bazel run //bench/ptod:ptod_cluster_load -- --clients=8 --kernels=16
//
// Starts a Redis Cluster on loopback (3 primaries, 3 replicas: the test
// fixture, tests/cluster/redis_cluster_fixture.h) and 3 in-process ptod
// replicas on it (the real compiler, RocksDB in temp directories, one signing
// key), then measures:
//   1. mix: --clients client processes (this binary again, with --client_of),
//      each sending --requests compiles of kernels drawn at random from
//      --kernels distinct ones through one CompileClient given the three
//      replicas: a kernel's first requests compile (or coalesce with that
//      compile), the rest hit. Compiles cluster-wide per distinct kernel
//      (the replicas' own Stats), latency by outcome, requests/s;
//   2. hits: the same processes again, every kernel warm: hits/s, p50/p99;
//   3. hit latency per tier: a fourth replica asks for each kernel once from
//      an empty RocksDB (Redis-tier hits), once more (memory-tier hits), and
//      once after a restart on its RocksDB (RocksDB-tier hits), --tier_rounds
//      times; each phase's tier is checked against the replica's
//      pto_cache_tier_hits_total.
// Prints a Markdown report; exits non-zero when a request fails or a phase's
// hits came from another tier than intended.
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/ptod/bench_graph.h"
#include "client/cpp/compile_client.h"
#include "prometheus/registry.h"
#include "server/pto_compiler_backend.h"
#include "server/ptod_server.h"
#include "spdlog/spdlog.h"
#include "tests/cluster/cluster_ptod.h"
#include "tests/cluster/redis_cluster_fixture.h"

ABSL_FLAG(int, clients, 8, "client processes");
ABSL_FLAG(int, kernels, 16, "distinct kernels");
ABSL_FLAG(int, requests, 40, "compiles per client process in the mix phase");
ABSL_FLAG(int, hit_requests, 400, "compiles per client process in the hit phase");
ABSL_FLAG(int, tier_rounds, 4, "rounds of the per-tier phase");
ABSL_FLAG(int, workers, 2, "compile workers per replica");
// Client mode (set by the parent): the replicas and the request stream.
ABSL_FLAG(std::string, client_of, "", "internal: run as a client of these replicas");
ABSL_FLAG(int, client_seed, 0, "internal: the client's random seed");

namespace {

using pto::bench::BenchGraph;
using pto::client::CompileClient;
using pto::server::PtodServer;

constexpr char kSigningKey[] = "ptod-cluster-load-signing-key-0123456789";
constexpr int kReplicas = 3;

pto::v1::Graph Kernel(int k) { return BenchGraph(32 + 8 * k); }

double UnixSeconds() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

// Client mode: --requests compiles (--hit_requests for the hit phase's
// seeds, 1000 and up) of kernels drawn with --client_seed; prints one line
// per request, "R kernel status seconds" ("E kernel error" for a failure),
// then "T first_sent last_done" (Unix seconds).
int RunClient() {
  const int seed = absl::GetFlag(FLAGS_client_seed);
  const bool hits = seed >= 1000;  // the hit phase's seeds
  const int requests = hits ? absl::GetFlag(FLAGS_hit_requests)
                            : absl::GetFlag(FLAGS_requests);
  const int kernels = absl::GetFlag(FLAGS_kernels);
  CompileClient client(absl::GetFlag(FLAGS_client_of));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, kernels - 1);
  std::vector<pto::v1::Graph> graphs;
  for (int k = 0; k < kernels; ++k) graphs.push_back(Kernel(k));
  std::string out;
  const double first = UnixSeconds();
  for (int i = 0; i < requests; ++i) {
    const int k = pick(rng);
    const absl::Time sent = absl::Now();
    auto r = client.Compile(graphs[k], "host", {}, sent + absl::Seconds(300));
    const double seconds = absl::ToDoubleSeconds(absl::Now() - sent);
    if (!r.ok()) {
      absl::StrAppend(&out, "E ", k, " ", r.status().ToString(), "\n");
      continue;
    }
    const char* status = "OTHER";
    switch (r->cache_status()) {
      case pto::v1::CACHE_STATUS_HIT: status = "HIT"; break;
      case pto::v1::CACHE_STATUS_MISS: status = "MISS"; break;
      case pto::v1::CACHE_STATUS_COALESCED: status = "COALESCED"; break;
      default: break;
    }
    absl::StrAppend(&out, "R ", k, " ", status, " ", absl::StrFormat("%.9f", seconds), "\n");
  }
  absl::StrAppend(&out, "T ", absl::StrFormat("%.6f %.6f", first, UnixSeconds()), "\n");
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

struct Samples {
  std::vector<double> seconds;
  double Quantile(double q) {
    if (seconds.empty()) return 0;
    std::sort(seconds.begin(), seconds.end());
    const size_t i = std::min(seconds.size() - 1,
                              static_cast<size_t>(q * seconds.size()));
    return seconds[i];
  }
};

std::string Ms(double s) { return absl::StrFormat("%.2f ms", s * 1e3); }

struct ClientsResult {
  std::map<std::string, Samples> by_status;  // HIT, MISS, COALESCED
  std::vector<std::string> errors;
  int requests = 0;
  double wall = 0;  // first request sent to last answer, over all clients
  std::map<int, int> kernels;  // kernel -> requests
};

// Runs `clients` client processes (seeds seed0, seed0 + 1, ...) at once.
ClientsResult RunClients(const std::string& exe, const std::string& replicas,
                         int clients, int seed0) {
  std::vector<std::string> outputs(clients);
  std::vector<std::thread> readers;
  for (int c = 0; c < clients; ++c) {
    const std::string command = absl::StrCat(
        "'", exe, "' --client_of=", replicas, " --client_seed=", seed0 + c,
        " --kernels=", absl::GetFlag(FLAGS_kernels),
        " --requests=", absl::GetFlag(FLAGS_requests),
        " --hit_requests=", absl::GetFlag(FLAGS_hit_requests));
    readers.emplace_back([command, &out = outputs[c]] {
      FILE* pipe = popen(command.c_str(), "r");
      if (pipe == nullptr) return;
      char buffer[4096];
      size_t n;
      while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
      pclose(pipe);
    });
  }
  for (std::thread& t : readers) t.join();
  ClientsResult result;
  double first = 1e300, last = 0;
  for (int c = 0; c < clients; ++c) {
    bool timed = false;
    for (absl::string_view line : absl::StrSplit(outputs[c], '\n', absl::SkipEmpty())) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      if (f[0] == "R" && f.size() == 4) {
        ++result.requests;
        ++result.kernels[std::stoi(f[1])];
        result.by_status[f[2]].seconds.push_back(std::stod(f[3]));
      } else if (f[0] == "T" && f.size() == 3) {
        first = std::min(first, std::stod(f[1]));
        last = std::max(last, std::stod(f[2]));
        timed = true;
      } else if (f[0] == "E") {
        result.errors.push_back(std::string(line));
      }
    }
    if (!timed) result.errors.push_back(absl::StrCat("client ", c, " did not finish"));
  }
  result.wall = last > first ? last - first : 0;
  return result;
}

// pto_cache_tier_hits_total{tier} of `server`.
std::map<std::string, double> TierHits(PtodServer& server) {
  std::map<std::string, double> hits;
  for (const auto& family : server.metrics().registry().Collect()) {
    if (family.name != "pto_cache_tier_hits_total") continue;
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) {
        if (label.name == "tier") hits[label.value] = metric.counter.value;
      }
    }
  }
  return hits;
}

std::string MachineLine() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  double load = 0;
  std::ifstream("/proc/loadavg") >> load;
  return absl::StrFormat("%s, %u hardware threads, load average %.1f at the start",
                         model, std::thread::hardware_concurrency(), load);
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "ptod_cluster_load: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("ptod replicas on a Redis Cluster under client processes");
  absl::ParseCommandLine(argc, argv);
  spdlog::set_level(spdlog::level::warn);
  if (!absl::GetFlag(FLAGS_client_of).empty()) return RunClient();
  const int clients = std::max(1, absl::GetFlag(FLAGS_clients));
  const int kernels = std::max(1, absl::GetFlag(FLAGS_kernels));
  const std::string machine = MachineLine();

  std::string why;
  if (!pto::testing::RedisCluster::Available(&why)) return Fail(why);
  const std::string dir =
      (std::filesystem::temp_directory_path() / absl::StrCat("ptod_cluster_load_", getpid()))
          .string();
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cleanup{dir};
  std::filesystem::create_directories(dir + "/redis");
  auto cluster = pto::testing::RedisCluster::Start(dir + "/redis");
  if (!cluster.ok()) return Fail(cluster.status().ToString());

  auto start_replica = [&](const std::string& name) {
    pto::server::PtodOptions options =
        pto::testing::ClusterPtodOptions(**cluster, dir + "/" + name, kSigningKey);
    options.service.workers = absl::GetFlag(FLAGS_workers);
    return PtodServer::Start(options, pto::server::NewPtoCompilerBackend());
  };
  std::vector<std::unique_ptr<PtodServer>> replicas;
  std::vector<std::string> addresses;
  for (int i = 0; i < kReplicas; ++i) {
    auto server = start_replica(absl::StrCat("replica", i));
    if (!server.ok()) return Fail(server.status().ToString());
    addresses.push_back((*server)->address());
    replicas.push_back(*std::move(server));
  }
  const std::string spec = absl::StrJoin(addresses, ",");
  char exe[4096] = {};
  if (readlink("/proc/self/exe", exe, sizeof(exe) - 1) <= 0) return Fail("no /proc/self/exe");

  std::printf("# ptod cluster load\n\n");
  std::printf(
      "`bazel run //bench/ptod:ptod_cluster_load -- --clients=%d --kernels=%d --requests=%d "
      "--hit_requests=%d --tier_rounds=%d --workers=%d`: 3 in-process ptod replicas on a Redis "
      "Cluster of 3 primaries and 3 replicas (loopback), %d client processes routing by "
      "rendezvous hashing. Machine: %s; Redis, ptod, the compiler and the clients share it.\n\n",
      clients, kernels, absl::GetFlag(FLAGS_requests), absl::GetFlag(FLAGS_hit_requests),
      absl::GetFlag(FLAGS_tier_rounds), absl::GetFlag(FLAGS_workers), clients, machine.c_str());

  // 1. The mix: new kernels and hits.
  ClientsResult mix = RunClients(exe, spec, clients, 1);
  if (!mix.errors.empty()) return Fail("mix: " + mix.errors.front());
  uint64_t compiles = 0;
  std::vector<std::string> per_replica;
  for (int i = 0; i < kReplicas; ++i) {
    CompileClient one(addresses[i]);
    auto stats = one.Stats(absl::Now() + absl::Seconds(30));
    if (!stats.ok()) return Fail(stats.status().ToString());
    compiles += stats->compiles();
    per_replica.push_back(absl::StrCat(stats->requests(), " requests, ", stats->compiles(),
                                       " compiles"));
  }
  const int distinct = static_cast<int>(mix.kernels.size());
  std::printf("## Mix: new kernels and hits\n\n");
  std::printf("%d requests for %d distinct kernels from %d processes in %.2f s (%.1f requests/s). "
              "**Compiles cluster-wide: %llu, %.2f per distinct kernel.** Per replica: %s.\n\n",
              mix.requests, distinct, clients, mix.wall, mix.wall > 0 ? mix.requests / mix.wall : 0,
              static_cast<unsigned long long>(compiles),
              distinct ? static_cast<double>(compiles) / distinct : 0,
              absl::StrJoin(per_replica, "; ").c_str());
  std::printf("| outcome | requests | p50 | p99 |\n|---|---|---|---|\n");
  for (auto& [status, samples] : mix.by_status) {
    std::printf("| %s | %zu | %s | %s |\n", status.c_str(), samples.seconds.size(),
                Ms(samples.Quantile(0.5)).c_str(), Ms(samples.Quantile(0.99)).c_str());
  }

  // 2. Hits only.
  ClientsResult hits = RunClients(exe, spec, clients, 1000);
  if (!hits.errors.empty()) return Fail("hits: " + hits.errors.front());
  Samples& hit = hits.by_status["HIT"];
  std::printf("\n## Hits (every kernel warm)\n\n");
  std::printf("%d processes x %d requests: %zu hits (%d requests) in %.2f s: **%.0f hits/s**, "
              "p50 %s, p99 %s (memory tier of the routed replica; client process, gRPC and "
              "ptod).\n\n",
              clients, absl::GetFlag(FLAGS_hit_requests), hit.seconds.size(), hits.requests,
              hits.wall, hits.wall > 0 ? hit.seconds.size() / hits.wall : 0,
              Ms(hit.Quantile(0.5)).c_str(), Ms(hit.Quantile(0.99)).c_str());

  // 3. Hit latency per tier, on a fourth replica.
  std::map<std::string, Samples> tiers;
  const std::vector<std::string> order = {"memory", "rocksdb", "redis"};
  for (int round = 0; round < std::max(1, absl::GetFlag(FLAGS_tier_rounds)); ++round) {
    const std::string name = absl::StrCat("probe", round);
    std::unique_ptr<PtodServer> probe;
    // Each phase asks for every kernel once and checks which tier served.
    auto phase = [&](const std::string& tier) -> bool {
      CompileClient client(probe->address());
      const std::map<std::string, double> before = TierHits(*probe);
      for (int k = 0; k < kernels; ++k) {
        const absl::Time sent = absl::Now();
        auto r = client.Compile(Kernel(k), "host", {}, sent + absl::Seconds(300));
        const double seconds = absl::ToDoubleSeconds(absl::Now() - sent);
        if (!r.ok() || r->cache_status() != pto::v1::CACHE_STATUS_HIT) {
          Fail(absl::StrCat(tier, " phase: kernel ", k, ": ",
                            r.ok() ? "not a hit" : r.status().ToString()));
          return false;
        }
        tiers[tier].seconds.push_back(seconds);
      }
      std::map<std::string, double> after = TierHits(*probe);
      if (after[tier] - before.at(tier) != kernels) {
        Fail(absl::StrCat(tier, " phase: ", after[tier] - before.at(tier), " of ", kernels,
                          " hits from that tier"));
        return false;
      }
      return true;
    };
    auto started = start_replica(name);  // an empty RocksDB
    if (!started.ok()) return Fail(started.status().ToString());
    probe = *std::move(started);
    if (!phase("redis") || !phase("memory")) return 1;
    probe->Shutdown(absl::Seconds(5));
    probe.reset();
    started = start_replica(name);  // the same RocksDB, an empty memory tier
    if (!started.ok()) return Fail(started.status().ToString());
    probe = *std::move(started);
    if (!phase("rocksdb")) return 1;
    probe->Shutdown(absl::Seconds(5));
  }
  std::printf("## Hit latency per tier\n\n");
  std::printf("One client (this process) asking one replica, no other requests, %d kernels x %d rounds "
              "per tier; each hit verified by the replica (signature) before it is served.\n\n",
              kernels, absl::GetFlag(FLAGS_tier_rounds));
  std::printf("| tier | hits | p50 | p99 |\n|---|---|---|---|\n");
  for (const std::string& tier : order) {
    Samples& s = tiers[tier];
    std::printf("| %s | %zu | %s | %s |\n", tier.c_str(), s.seconds.size(),
                Ms(s.Quantile(0.5)).c_str(), Ms(s.Quantile(0.99)).c_str());
  }
  double load = 0;
  std::ifstream("/proc/loadavg") >> load;
  std::printf("\nLoad average at the end: %.1f.\n", load);
  for (auto& replica : replicas) replica->Shutdown(absl::Seconds(5));
  return 0;
}
