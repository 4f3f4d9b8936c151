#include "bench/ceilings_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pto::bench {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Runs fn(thread_index) on `threads` threads (the caller is thread 0) and
// returns the wall time from the moment all have started until the last one
// finishes, so thread start-up is not measured; *started (if given) gets
// that moment (NowSeconds).
double TimeParallel(int threads, const std::function<void(int)>& fn,
                    double* started = nullptr) {
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
  if (started) *started = start;
  go.store(true, std::memory_order_release);
  fn(0);
  for (std::thread& th : pool) th.join();
  return NowSeconds() - start;
}

}  // namespace

// The triad's threads, kept from pass to pass: thread t (1..n-1) waits for a
// pass spinning up to kSpinSeconds after its last one, then sleeps, as the
// pypto executor's workers do (runtime/executor.h, spin_micros: 50 us). So a
// pass right after another finds its threads running, as a pypto call right
// after another finds its workers; a fresh thread per pass instead meets
// idle vCPUs after bench/kernels.py's pauses and runs far below its
// back-to-back rate.
class SpinPool {
 public:
  explicit SpinPool(int threads) {
    for (int t = 1; t < threads; ++t) threads_.emplace_back([this, t] { Loop(t); });
  }
  ~SpinPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true, std::memory_order_release);
      generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // Runs fn(t) on every thread (the caller is thread 0); returns when all
  // have finished.
  void Run(const std::function<void(int)>& fn) {
    fn_ = &fn;
    remaining_.store(static_cast<int>(threads_.size()), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    cv_.notify_all();
    fn(0);
    while (remaining_.load(std::memory_order_acquire) != 0) _mm_pause();
  }

 private:
  static constexpr double kSpinSeconds = 50e-6;

  void Loop(int t) {
    uint64_t seen = 0;
    for (;;) {
      const double deadline = NowSeconds() + kSpinSeconds;
      while (generation_.load(std::memory_order_acquire) == seen && NowSeconds() < deadline) {
        _mm_pause();
      }
      if (generation_.load(std::memory_order_acquire) == seen) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_acquire)) return;
      (*fn_)(t);
      remaining_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};  // bumped (under mu_) by each Run
  std::atomic<int> remaining_{0};        // workers still in this Run
  std::atomic<bool> stop_{false};
  const std::function<void(int)>* fn_ = nullptr;  // written before the bump
};

namespace {

// The triad's unit of work: 16 KiB of each array (48 KiB moved). Small
// enough that a thread the scheduler parks holds a pass up by little, large
// enough that claiming one (an atomic add) costs nothing next to streaming
// it; a whole number of cache lines and pages.
constexpr int64_t kTriadChunk = 4096;

// The FMA loops' unit of work: iterations per claim (65536 FMAs, about 13 us
// on AVX-512 at 2.5 GHz; the chains' set-up and sum are a few dozen
// instructions).
constexpr int64_t kFmaChunk = 4096;

// How long a thread that has finished its own share watches another share
// make no progress before it takes that share's chunks: a few chunks' time
// when a thread streams slowly (48 KiB at 5 GB/s is 10 us), far less than
// the scheduler parks a thread for (milliseconds). A helper that took
// chunks from a running owner would slow the pass instead: on a quiet
// machine each share is in its owner's cache, and reading it from another
// core's is slower than leaving it to the owner.
constexpr double kPatienceSeconds = 20e-6;

// A claim counter and a time, each on its own cache line.
struct alignas(64) Counter {
  std::atomic<int64_t> next{0};
};
struct alignas(64) Time {
  double seconds = 0;
};

// Thread t's own chunks: [first, first of t + 1) of `chunks`.
int64_t FirstChunk(int64_t chunks, int threads, int t) { return chunks * t / threads; }

// The chunks [front, back) of one share not yet claimed, in one word (each
// half 32 bits) on its own cache line: the owner claims from the front, a
// helper from the back, so a helper takes the chunks the owner would reach
// last and does not disturb its stream.
struct alignas(64) Chunks {
  std::atomic<uint64_t> range{0};

  void Reset(int64_t front, int64_t back) {
    range.store(static_cast<uint64_t>(back) << 32 | static_cast<uint64_t>(front));
  }

  static uint64_t Front(uint64_t v) { return v & 0xffffffffu; }
  static uint64_t Back(uint64_t v) { return v >> 32; }

  // Claims the front (or back) chunk into *chunk; false when none is left.
  bool Claim(bool from_back, int64_t* chunk) {
    uint64_t v = range.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t front = Front(v), back = Back(v);
      if (front >= back) return false;
      const uint64_t claimed = from_back ? (back - 1) << 32 | front : back << 32 | (front + 1);
      if (range.compare_exchange_weak(v, claimed, std::memory_order_relaxed)) {
        *chunk = static_cast<int64_t>(from_back ? back - 1 : front);
        return true;
      }
    }
  }
};

// a[i] = b[i] + s * c[i] for i in [lo, hi), vectorized by the compiler (-O3)
// for the widest vectors the CPU has: a kernel's generated code uses them,
// and on data in L2 128-bit vectors reach about half the bandwidth of 256-
// or 512-bit ones (in L3 and DRAM they are the same within noise).
#define PTO_TRIAD_LOOP                                                   \
  for (int64_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];

__attribute__((target("avx512f,prefer-vector-width=512"))) void TriadAvx512(
    float* __restrict a, const float* __restrict b, const float* __restrict c,
    float s, int64_t lo, int64_t hi) {
  PTO_TRIAD_LOOP
}

__attribute__((target("avx2"))) void TriadAvx2(float* __restrict a,
                                               const float* __restrict b,
                                               const float* __restrict c, float s,
                                               int64_t lo, int64_t hi) {
  PTO_TRIAD_LOOP
}

void TriadBaseline(float* __restrict a, const float* __restrict b,
                   const float* __restrict c, float s, int64_t lo, int64_t hi) {
  PTO_TRIAD_LOOP
}
#undef PTO_TRIAD_LOOP

float* AllocFloats(int64_t n) {
  return static_cast<float*>(std::aligned_alloc(64, ((n * 4 + 63) / 64) * 64));
}

}  // namespace

Triad::Triad(int64_t bytes, int threads)
    : n_(std::max<int64_t>(16, bytes / 12)),
      threads_(std::max(1, threads)),
      pool_(std::make_unique<SpinPool>(threads_)),
      a_(AllocFloats(n_)),
      b_(AllocFloats(n_)),
      c_(AllocFloats(n_)) {
  // First touch by the thread that will stream the pages (its own chunks).
  const int64_t chunks = (n_ + kTriadChunk - 1) / kTriadChunk;
  pool_->Run([&](int t) {
    const int64_t lo = FirstChunk(chunks, threads_, t) * kTriadChunk;
    const int64_t hi = std::min(n_, FirstChunk(chunks, threads_, t + 1) * kTriadChunk);
    for (int64_t i = lo; i < hi; ++i) {
      a_[i] = 0.0f;
      b_[i] = 1.0f;
      c_[i] = 2.0f;
    }
  });
}

Triad::~Triad() {
  // Keep the stores observable.
  volatile float sink = a_[n_ / 2];
  (void)sink;
  std::free(a_);
  std::free(b_);
  std::free(c_);
}

// Each thread streams its own chunks front to back (the ones it touched
// first, and on a quiet machine the ones in its caches), then helps with the
// other shares' remaining chunks from their backs.
// So a thread the scheduler parks on a shared machine holds the pass up by
// one chunk, not by its whole share: the pass measures the bandwidth the
// threads that ran got, as a runtime that hands out tiles dynamically gets
// it, not the slowest thread's luck.
const char* TriadIsa() {
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2")) return "avx2";
  return "baseline";
}

double Triad::Pass() {
  const float s = 3.0f;  // Unwritten's too
  const std::string isa = TriadIsa();
  auto* loop = isa == "avx512" ? TriadAvx512 : isa == "avx2" ? TriadAvx2 : TriadBaseline;
  const int64_t chunks = (n_ + kTriadChunk - 1) / kTriadChunk;
  std::vector<Chunks> shares(threads_);
  for (int t = 0; t < threads_; ++t) {
    shares[t].Reset(FirstChunk(chunks, threads_, t), FirstChunk(chunks, threads_, t + 1));
  }
  std::vector<Time> last_done(threads_);  // when each thread finished its last chunk
  const double started = NowSeconds();  // a pypto call's time includes its wake-ups too
  pool_->Run(
      [&](int t) {
        auto run = [&](int64_t chunk) {
          const int64_t lo = chunk * kTriadChunk;
          loop(a_, b_, c_, s, lo, std::min(n_, lo + kTriadChunk));
          last_done[t].seconds = NowSeconds();
        };
        int64_t chunk;
        while (shares[t].Claim(/*from_back=*/false, &chunk)) run(chunk);
        // Help the shares whose owners make no progress (parked).
        for (int k = 1; k < threads_; ++k) {
          Chunks& share = shares[(t + k) % threads_];
          uint64_t seen = share.range.load(std::memory_order_relaxed);
          double since = NowSeconds();
          for (;;) {
            const uint64_t v = share.range.load(std::memory_order_relaxed);
            if (Chunks::Front(v) >= Chunks::Back(v)) break;
            const double now = NowSeconds();
            if (Chunks::Front(v) != Chunks::Front(seen)) {  // the owner moved on
              seen = v;
              since = now;
            } else if (now - since >= kPatienceSeconds) {
              if (!share.Claim(/*from_back=*/true, &chunk)) break;
              run(chunk);
              continue;
            }
            _mm_pause();
          }
        }
      });
  double end = started;
  for (const Time& done : last_done) end = std::max(end, done.seconds);
  return end - started;
}

int64_t Triad::Unwritten() const {
  int64_t count = 0;
  for (int64_t i = 0; i < n_; ++i) count += a_[i] != b_[i] + 3.0f * c_[i];
  return count;
}

double TriadGBps(int64_t bytes, int threads, int reps) {
  Triad triad(bytes, threads);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) best = std::min(best, triad.Pass());
  return triad.bytes() / best / 1e9;
}

namespace {

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

// VDPBF16PS: each lane of an accumulator adds the products of a pair of
// bf16 (one instruction is 16 lanes x 2 products x 2 flops = 64 flops).
// More chains than the FMA loop's: the instruction's latency is longer
// than an FMA's on some CPUs, and 24 accumulators plus the two operands
// still fit the 32 vector registers.
constexpr int kBf16Chains = 24;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
__attribute__((target("avx512f,avx512bf16"))) double Bf16DotLoop(int64_t iters) {
  __m512 acc[kBf16Chains];
  for (int k = 0; k < kBf16Chains; ++k) acc[k] = _mm512_set1_ps(1.0f + k * 1e-3f);
  // Pairs (2^-10, 2^-10) by (1, 1): each step adds 2^-9 to every lane, so
  // the sums stay finite and normal.
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3A80);
  const __m512bh b = (__m512bh)_mm512_set1_epi16(0x3F80);
  for (int64_t i = 0; i < iters; ++i) {
    // Unrolled, so the accumulators stay in registers (GCC would otherwise
    // interchange the loops and keep them in memory).
#pragma GCC unroll 24
    for (int k = 0; k < kBf16Chains; ++k) acc[k] = _mm512_dpbf16_ps(acc[k], a, b);
  }
  float sum = 0;
  for (int k = 0; k < kBf16Chains; ++k) sum += _mm512_reduce_add_ps(acc[k]);
  return 4.0 * 16 * kBf16Chains * iters + (sum == 12345.0f);  // sum: keep alive
}
#pragma GCC diagnostic pop

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

}  // namespace

const char* FmaIsa() {
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return "avx2";
  }
  return "scalar";
}

namespace {

// threads x iters iterations of `loop` in chunks of kFmaChunk, claimed from
// one counter: a thread the scheduler parks holds the pass up by one chunk
// (see Triad::Pass).
double ChainsPass(int threads, int64_t iters, double (*loop)(int64_t), double* flops) {
  threads = std::max(1, threads);
  const int64_t total_iters = iters * threads;
  Counter next;
  std::vector<double> done(threads);
  std::vector<Time> last_done(threads);
  double started = 0;
  TimeParallel(
      threads,
      [&](int t) {
        double sum = 0;
        for (;;) {
          const int64_t first = next.next.fetch_add(kFmaChunk, std::memory_order_relaxed);
          if (first >= total_iters) break;
          const int64_t n = std::min(kFmaChunk, total_iters - first);
          sum += static_cast<int64_t>(loop(n));  // drop the keep-alive bit
          last_done[t].seconds = NowSeconds();
        }
        done[t] = sum;
      },
      &started);
  double total = 0, end = started;
  for (double f : done) total += f;
  for (const Time& d : last_done) end = std::max(end, d.seconds);
  *flops = total;
  return end - started;
}

}  // namespace

double FmaPass(int threads, int64_t iters, const std::string& isa, double* flops) {
  double (*loop)(int64_t) = isa == "avx512" ? FmaLoopAvx512
                            : isa == "avx2" ? FmaLoopAvx2
                                            : FmaLoopScalar;
  return ChainsPass(threads, iters, loop, flops);
}

double FmaGflops(int threads, int reps, const std::string& isa) {
  const int64_t iters = 20'000'000;
  double flops = 0;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) best = std::min(best, FmaPass(threads, iters, isa, &flops));
  return flops / best / 1e9;
}

const char* Bf16DotIsa() {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16")) {
    return "avx512bf16";
  }
  return "none";
}

double Bf16DotPass(int threads, int64_t iters, double* flops) {
  if (std::string(Bf16DotIsa()) == "none") {
    *flops = 0;
    return 0;
  }
  return ChainsPass(threads, iters, Bf16DotLoop, flops);
}

double Bf16DotGflops(int threads, int reps) {
  if (std::string(Bf16DotIsa()) == "none") return 0;
  const int64_t iters = 10'000'000;
  double flops = 0;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) best = std::min(best, Bf16DotPass(threads, iters, &flops));
  return flops / best / 1e9;
}

}  // namespace pto::bench
