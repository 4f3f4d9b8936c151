// Machine ceilings for bench/kernels.py: streaming memory bandwidth and FP32
// FMA throughput, measured with a given number of threads.
//
//   bazel-bin/bench/ceilings --threads=2 --sizes_kib=12288,49152,393216
//
// Bandwidth is a STREAM-style triad (a[i] = b[i] + s * c[i]) over three
// arrays whose total size is each of --sizes_kib in turn: small sizes stay in
// the last-level cache, large ones measure DRAM. Bytes counted are those the
// program asks for (read b and c, write a: 12 bytes per element), not the
// extra read a write-allocate cache does, as STREAM counts them. A kernel
// that moves the same number of bytes compares with the triad of that size.
//
// FMA throughput: each thread runs independent chains of vector FMAs, using
// the widest vectors the CPU has (AVX-512, else AVX2+FMA, else scalar),
// with enough chains to cover the FMA latency on two ports. One FMA is two
// flops.
//
// Each measurement is the best of several repetitions (a ceiling: noise
// from other processes only makes a run slower). Output: one line per
// measurement for people, then one line "JSON {...}" for scripts.
#include <immintrin.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

double NowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Runs fn(thread_index) on `threads` threads (the caller is thread 0) and
// returns the wall time from the moment all have started until the last one
// finishes, so thread start-up is not measured.
double TimeParallel(int threads, const std::function<void(int)>& fn) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  auto body = [&](int t) {
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) {
    }
    fn(t);
  };
  for (int t = 1; t < threads; ++t) pool.emplace_back(body, t);
  while (ready.load() != threads - 1) {
  }
  const double start = NowSeconds();
  go.store(true, std::memory_order_release);
  fn(0);
  for (std::thread& th : pool) th.join();
  return NowSeconds() - start;
}

// [begin, end) of thread t's share of n items, in whole cache lines.
void Share(int64_t n, int threads, int t, int64_t* begin, int64_t* end) {
  const int64_t lines = (n + 15) / 16;
  *begin = std::min(n, lines * t / threads * 16);
  *end = std::min(n, lines * (t + 1) / threads * 16);
}

// Triad bandwidth in GB/s (1e9 bytes) for three arrays totalling `bytes`.
double TriadGBps(int64_t bytes, int threads, int reps) {
  const int64_t n = std::max<int64_t>(16, bytes / 12);
  auto alloc = [n] {
    return static_cast<float*>(std::aligned_alloc(64, ((n * 4 + 63) / 64) * 64));
  };
  float* a = alloc();
  float* b = alloc();
  float* c = alloc();
  // First touch by the thread that will stream the pages.
  TimeParallel(threads, [&](int t) {
    int64_t lo, hi;
    Share(n, threads, t, &lo, &hi);
    for (int64_t i = lo; i < hi; ++i) {
      a[i] = 0.0f;
      b[i] = 1.0f;
      c[i] = 2.0f;
    }
  });
  const float s = 3.0f;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    best = std::min(best, TimeParallel(threads, [&](int t) {
      int64_t lo, hi;
      Share(n, threads, t, &lo, &hi);
      float* __restrict pa = a;
      const float* __restrict pb = b;
      const float* __restrict pc = c;
      for (int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
    }));
  }
  // Keep the stores observable.
  volatile float sink = a[n / 2];
  (void)sink;
  std::free(a);
  std::free(b);
  std::free(c);
  return 12.0 * n / best / 1e9;
}

// Independent accumulators: more than FMA latency (4) x ports (2). The
// chains' results feed the returned sum, and without -ffast-math the
// compiler may not fold repeated FMAs, so every one executes.
constexpr int kChains = 16;

// GCC 12 warns that _mm512_reduce_add_ps's own _mm256_undefined_pd is used
// uninitialized (in avx512fintrin.h, not here).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
__attribute__((target("avx512f"))) double FmaLoopAvx512(int64_t iters) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(1.0f + k * 1e-3f);
  const __m512 m = _mm512_set1_ps(0.999999f);
  const __m512 add = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, add);
  }
  float sum = 0;
  for (int k = 0; k < kChains; ++k) sum += _mm512_reduce_add_ps(acc[k]);
  return 2.0 * 16 * kChains * iters + (sum == 12345.0f);  // sum: keep alive
}
#pragma GCC diagnostic pop

__attribute__((target("avx2,fma"))) double FmaLoopAvx2(int64_t iters) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(1.0f + k * 1e-3f);
  const __m256 m = _mm256_set1_ps(0.999999f);
  const __m256 add = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, add);
  }
  float lanes[8];
  float sum = 0;
  for (int k = 0; k < kChains; ++k) {
    _mm256_storeu_ps(lanes, acc[k]);
    for (float v : lanes) sum += v;
  }
  return 2.0 * 8 * kChains * iters + (sum == 12345.0f);
}

double FmaLoopScalar(int64_t iters) {
  float acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = 1.0f + k * 1e-3f;
  for (int64_t i = 0; i < iters; ++i) {
    for (int k = 0; k < kChains; ++k) acc[k] = __builtin_fmaf(acc[k], 0.999999f, 1e-7f);
  }
  float sum = 0;
  for (float v : acc) sum += v;
  return 2.0 * kChains * iters + (sum == 12345.0f);
}

const char* FmaIsa() {
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return "avx2";
  }
  return "scalar";
}

// FP32 GFLOP/s with `threads` threads.
double FmaGflops(int threads, int reps, const std::string& isa) {
  const int64_t iters = 20'000'000;
  std::vector<double> flops(threads);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    best = std::min(best, TimeParallel(threads, [&](int t) {
      flops[t] = isa == "avx512"  ? FmaLoopAvx512(iters)
                 : isa == "avx2" ? FmaLoopAvx2(iters)
                                 : FmaLoopScalar(iters);
    }));
  }
  double total = 0;
  for (double f : flops) total += static_cast<int64_t>(f);
  return total / best / 1e9;
}

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
  std::string json = "{\"threads\":" + std::to_string(threads) + ",\"fma_isa\":\"" +
                     isa + "\",\"fma_gflops\":" + std::to_string(gflops) +
                     ",\"triad_gbps\":{";
  for (size_t i = 0; i < sizes_kib.size(); ++i) {
    const double gbps = TriadGBps(sizes_kib[i] * 1024, threads, reps);
    std::printf("triad %lld KiB (%d threads): %.1f GB/s\n",
                static_cast<long long>(sizes_kib[i]), threads, gbps);
    json += (i ? ",\"" : "\"") + std::to_string(sizes_kib[i]) +
            "\":" + std::to_string(gbps);
  }
  json += "}}";
  std::printf("JSON %s\n", json.c_str());
  return 0;
}
