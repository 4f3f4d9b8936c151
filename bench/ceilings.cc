// Machine ceilings for bench/kernels.py: streaming memory bandwidth, FP32
// FMA throughput and BF16 dot-product throughput, measured with a given
// number of threads.
//
//   bazel-bin/bench/ceilings --threads=2 --sizes_kib=12288,49152,393216
//
// Bandwidth is a STREAM-style triad (a[i] = b[i] + s * c[i]) over three
// arrays whose total size is each of --sizes_kib in turn: small sizes stay in
// the last-level cache, large ones measure DRAM. The loop runs on the widest
// vectors the CPU has, in chunks a thread that has finished its own share
// takes over from a thread that makes no progress (parked by the scheduler
// on a shared machine). Bytes counted are those the
// program asks for (read b and c, write a: 12 bytes per element), not the
// extra read a write-allocate cache does, as STREAM counts them. A kernel
// that moves the same number of bytes compares with the triad of that size.
//
// FMA throughput: each thread runs independent chains of vector FMAs, using
// the widest vectors the CPU has (AVX-512, else AVX2+FMA, else scalar),
// with enough chains to cover the FMA latency on two ports. One FMA is two
// flops.
//
// BF16 dot-product throughput (where the CPU has AVX512-BF16): the same,
// with chains of VDPBF16PS, each lane adding two bf16 products (four flops
// a lane): the ceiling of a BF16 matmul on that instruction. "none" and 0
// elsewhere.
//
// Each measurement is the best of several repetitions (a ceiling: noise
// from other processes only makes a run slower). The loops are
// bench/ceilings_kernels.h's, which libceilings.so also runs (one pass per
// call, beside each of bench/kernels.py's rows). Output: one line per
// measurement for people, then one line "JSON {...}" for scripts.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/ceilings_kernels.h"

namespace {

using pto::bench::Bf16DotGflops;
using pto::bench::Bf16DotIsa;
using pto::bench::FmaGflops;
using pto::bench::FmaIsa;
using pto::bench::TriadGBps;
using pto::bench::TriadIsa;

bool ParseFlag(const char* arg, const char* name, std::string* value) {
  const size_t len = std::strlen(name);
  if (std::strncmp(arg, name, len) != 0 || arg[len] != '=') return false;
  *value = arg + len + 1;
  return true;
}

// A whole decimal integer in [lo, hi], or false.
bool ParseInt(const std::string& text, long long lo, long long hi,
              long long* value) {
  char* end = nullptr;
  *value = std::strtoll(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && *value >= lo && *value <= hi;
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "ceilings: %s\nusage: ceilings [--threads=N] "
               "[--sizes_kib=K1,K2,...] [--reps=R]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int reps = 10;
  std::vector<int64_t> sizes_kib = {12 * 1024, 384 * 1024};
  for (int i = 1; i < argc; ++i) {
    std::string v;
    long long n = 0;
    if (ParseFlag(argv[i], "--threads", &v)) {
      if (!ParseInt(v, 1, 1024, &n)) return Usage("--threads must be 1..1024");
      threads = static_cast<int>(n);
    } else if (ParseFlag(argv[i], "--reps", &v)) {
      if (!ParseInt(v, 1, 1000000, &n)) return Usage("--reps must be 1..1000000");
      reps = static_cast<int>(n);
    } else if (ParseFlag(argv[i], "--sizes_kib", &v)) {
      sizes_kib.clear();
      size_t pos = 0;
      while (pos <= v.size()) {
        const size_t comma = std::min(v.find(',', pos), v.size());
        const std::string item = v.substr(pos, comma - pos);
        long long kib = 0;
        if (!ParseInt(item, 1, 64ll << 20, &kib)) {
          return Usage(("bad size in --sizes_kib: '" + item +
                        "' (want KiB, 1..67108864)").c_str());
        }
        sizes_kib.push_back(kib);
        pos = comma + 1;
      }
    } else {
      return Usage((std::string("unknown argument '") + argv[i] + "'").c_str());
    }
  }
  const std::string isa = FmaIsa();
  const double gflops = FmaGflops(threads, 5, isa);
  std::printf("fp32 fma (%s, %d threads): %.1f GFLOP/s\n", isa.c_str(), threads,
              gflops);
  const std::string dot_isa = Bf16DotIsa();
  const double dot_gflops = Bf16DotGflops(threads, 5);
  if (dot_isa == "none") {
    std::printf("bf16 dot: none on this CPU (no AVX512-BF16)\n");
  } else {
    std::printf("bf16 dot (%s, %d threads): %.1f GFLOP/s\n", dot_isa.c_str(), threads,
                dot_gflops);
  }
  std::string json = "{\"threads\":" + std::to_string(threads) + ",\"fma_isa\":\"" +
                     isa + "\",\"fma_gflops\":" + std::to_string(gflops) +
                     ",\"bf16_dot_isa\":\"" + dot_isa +
                     "\",\"bf16_dot_gflops\":" + std::to_string(dot_gflops) +
                     ",\"triad_isa\":\"" + TriadIsa() + "\",\"triad_gbps\":{";
  for (size_t i = 0; i < sizes_kib.size(); ++i) {
    const double gbps = TriadGBps(sizes_kib[i] * 1024, threads, reps);
    std::printf("triad %lld KiB (%s, %d threads): %.1f GB/s\n",
                static_cast<long long>(sizes_kib[i]), TriadIsa(), threads, gbps);
    json += (i ? ",\"" : "\"") + std::to_string(sizes_kib[i]) +
            "\":" + std::to_string(gbps);
  }
  json += "}}";
  std::printf("JSON %s\n", json.c_str());
  return 0;
}
