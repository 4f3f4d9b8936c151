#include "bench/ceilings_kernels.h"

#include <immintrin.h>
#include <sched.h>
#include <sys/mman.h>

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
// round spinning up to kSpinSeconds after its last one, then sleeps, as the
// pypto executor's workers do (runtime/executor.h, spin_micros: 50 us). So a
// pass right after another finds its threads running, as a pypto call right
// after another finds its workers; a fresh thread per pass instead meets
// idle vCPUs after bench/kernels.py's pauses and runs far below its
// back-to-back rate.
//
// Each round runs one function, fixed for the pool's life, on every thread;
// the caller does not wait for the workers (the function's own state says
// when its work is done). So a pass ends when its work does, as a pypto run
// ends with its last task, not when the last worker has woken (waking a
// sleeping vCPU costs tens of microseconds on a VM, milliseconds behind
// other processes on a loaded machine, and a pass of a few megabytes is
// that short). A worker that wakes late, or is still in a round when the
// next starts, runs the function once more in the round current then.
class SpinPool {
 public:
  SpinPool(int threads, std::function<void(int)> fn) : fn_(std::move(fn)) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &mask)) cpus_.push_back(cpu);
      }
    }
    for (int t = 1; t < threads; ++t) threads_.emplace_back([this, t] { Loop(t); });
  }
  // Joins the workers (a worker inside fn finishes it first).
  ~SpinPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true, std::memory_order_release);
      generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // Starts a round: wakes the workers and runs fn(0) on the caller.
  void Round() {
    caller_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    cv_.notify_all();
    fn_(0);
  }

 private:
  static constexpr double kSpinSeconds = 50e-6;

  // Pins the calling worker to `cpu`, or to every CPU but it (cpu < 0: -1 - cpu).
  void Pin(int cpu) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (int c : cpus_) {
      if (cpu >= 0 ? c == cpu : c != -1 - cpu) CPU_SET(c, &mask);
    }
    if (CPU_COUNT(&mask) > 0) sched_setaffinity(0, sizeof(mask), &mask);
  }

  void Loop(int t) {
    // As pypto's executor: worker t on the process's CPU t (mod their number),
    // moved off the caller's CPU when it finds itself there (it could only
    // take turns with the caller), and not spinning there.
    const int home = cpus_.empty() ? -1 : cpus_[t % cpus_.size()];
    if (home >= 0) Pin(home);
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
      const int caller = caller_cpu_.load(std::memory_order_relaxed);
      const bool moved = home >= 0 && caller == home && cpus_.size() > 1;
      if (moved) Pin(-1 - caller);
      fn_(t);
      if (moved) Pin(home);
    }
  }

  const std::function<void(int)> fn_;
  std::vector<int> cpus_;  // the CPUs the process may use, in order
  std::atomic<int> caller_cpu_{-1};  // where the last Round's caller ran
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> generation_{0};  // bumped (under mu_) by each Round
  std::atomic<bool> stop_{false};
};

namespace {

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
  std::atomic<double> seconds{0};
};

// Thread t's own chunks: [first, first of t + 1) of `chunks`.
int64_t FirstChunk(int64_t chunks, int threads, int t) { return chunks * t / threads; }

// The chunks [front, back) of one share not yet claimed, in one word (each
// half 32 bits) on its own cache line: the owner claims from the front, a
// helper from the back, so a helper takes the chunks the owner would reach
// last and does not disturb its stream.
struct alignas(64) Chunks {
  std::atomic<uint64_t> range{0};
  std::atomic<bool> arrived{false};  // the owner has started this pass

  void Reset(int64_t front, int64_t back) {
    range.store(static_cast<uint64_t>(back) << 32 | static_cast<uint64_t>(front));
    arrived.store(false);
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

// The sum of b[lo, hi) in 128-float steps of eight independent vector
// accumulators (GCC's vector extensions, lowered to the target's widest
// vectors): a read stream with no dependency chain to wait on.
typedef float Floats16 __attribute__((vector_size(64)));
#define PTO_READ_LOOP                                        \
  Floats16 acc[8] = {};                                      \
  int64_t i = lo;                                            \
  for (; i + 128 <= hi; i += 128) {                          \
    for (int k = 0; k < 8; ++k) {                            \
      Floats16 v;                                            \
      __builtin_memcpy(&v, b + i + 16 * k, sizeof(v));       \
      acc[k] += v;                                           \
    }                                                        \
  }                                                          \
  float sum = 0;                                             \
  for (; i < hi; ++i) sum += b[i];                           \
  for (int k = 1; k < 8; ++k) acc[0] += acc[k];             \
  for (int k = 0; k < 16; ++k) sum += acc[0][k];             \
  return sum;

__attribute__((target("avx512f,prefer-vector-width=512"))) float ReadAvx512(
    const float* __restrict b, int64_t lo, int64_t hi) {
  PTO_READ_LOOP
}

__attribute__((target("avx2"))) float ReadAvx2(const float* __restrict b, int64_t lo,
                                               int64_t hi) {
  PTO_READ_LOOP
}

float ReadBaseline(const float* __restrict b, int64_t lo, int64_t hi) { PTO_READ_LOOP }
#undef PTO_READ_LOOP

// 64-byte aligned, and where numpy would ask for huge pages (an array of
// 4 MiB or more: its allocator's madvise(MADV_HUGEPAGE), numpy/core/src/
// multiarray/alloc.c) so does this, so that a pass and a row over numpy
// arrays of the same size walk the same kind of pages.
float* AllocFloats(int64_t n) {
  const size_t bytes = ((n * 4 + 63) / 64) * 64;
  void* p = std::aligned_alloc(64, bytes);
  constexpr size_t kHugePageFrom = size_t{1} << 22;
  if (p != nullptr && bytes >= kHugePageFrom) {
    const uintptr_t page = 4096;
    const uintptr_t start = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
    madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);  // a hint
  }
  return static_cast<float*>(p);
}

}  // namespace

// A pass's state, kept in the Triad (not on the caller's stack): a worker
// that wakes late may still read it after the pass has ended.
struct TriadPass {
  TriadPass(int threads, int64_t chunks)
      : chunks(chunks), sums(chunks), shares(threads), last_done(threads) {}
  void (*loop)(float*, const float*, const float*, float, int64_t, int64_t) = nullptr;
  float (*read)(const float*, int64_t, int64_t) = nullptr;  // kRead
  const int64_t chunks;
  std::vector<float> sums;           // kRead: each chunk's sum
  std::atomic<bool> touching{true};  // the first round touches the pages
  Counter touched;                   // threads done touching
  std::vector<Chunks> shares;        // each thread's chunks not yet claimed
  std::vector<Time> last_done;       // when each thread finished its last chunk
  Counter streamed;                  // chunks done in this pass
};

Triad::Triad(int64_t bytes, int threads, Kind kind)
    : kind_(kind),
      n_(std::max<int64_t>(16, bytes / (kind == Kind::kTriad ? 12 : 4))),
      threads_(std::max(1, threads)),
      a_(kind == Kind::kTriad ? AllocFloats(n_) : nullptr),
      b_(AllocFloats(n_)),
      c_(kind == Kind::kTriad ? AllocFloats(n_) : nullptr),
      pass_(std::make_unique<TriadPass>(threads_, (n_ + chunk_elements() - 1) / chunk_elements())) {
  const std::string isa = TriadIsa();
  pass_->loop = isa == "avx512" ? TriadAvx512 : isa == "avx2" ? TriadAvx2 : TriadBaseline;
  pass_->read = isa == "avx512" ? ReadAvx512 : isa == "avx2" ? ReadAvx2 : ReadBaseline;
  pool_ = std::make_unique<SpinPool>(threads_, [this](int t) { Work(t); });
  // First touch by the thread that will stream the pages (its own chunks):
  // the one round that waits for every thread.
  pool_->Round();
  while (pass_->touched.next.load(std::memory_order_acquire) != threads_) _mm_pause();
  pass_->touching.store(false, std::memory_order_release);
}

Triad::~Triad() {
  pool_.reset();  // no thread reads the arrays after this
  // Keep the stores observable.
  volatile float sink = kind_ == Kind::kTriad ? a_[n_ / 2] : pass_->sums[0];
  (void)sink;
  std::free(a_);
  std::free(b_);
  std::free(c_);
}

const char* TriadIsa() {
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2")) return "avx2";
  return "baseline";
}

// Thread t's part of a round. Each thread streams its own chunks front to
// back (the ones it touched first, and on a quiet machine the ones in its
// caches), then helps with the other shares' remaining chunks from their
// backs: at once where the owner has not started this pass, after
// kPatienceSeconds without progress where it has. So a thread the scheduler
// parks on a shared machine holds the pass up by one chunk, not by its
// whole share, and one that wakes late by nothing: the pass measures the
// bandwidth the threads that ran got, as a runtime that hands out tiles
// dynamically gets it, not the slowest thread's luck.
void Triad::Work(int t) {
  TriadPass& p = *pass_;
  const int64_t chunks = p.chunks;
  if (p.touching.load(std::memory_order_acquire)) {
    const int64_t lo = FirstChunk(chunks, threads_, t) * chunk_elements();
    const int64_t hi = std::min(n_, FirstChunk(chunks, threads_, t + 1) * chunk_elements());
    for (int64_t i = lo; i < hi; ++i) b_[i] = 1.0f;
    if (kind_ == Kind::kTriad) {
      for (int64_t i = lo; i < hi; ++i) {
        a_[i] = 0.0f;
        c_[i] = 2.0f;
      }
    }
    p.touched.next.fetch_add(1, std::memory_order_release);
    return;
  }
  const float s = 3.0f;  // Unwritten's too
  auto run = [&](int64_t chunk) {
    const int64_t lo = chunk * chunk_elements();
    const int64_t hi = std::min(n_, lo + chunk_elements());
    if (kind_ == Kind::kTriad) {
      p.loop(a_, b_, c_, s, lo, hi);
    } else {
      p.sums[chunk] = p.read(b_, lo, hi);
    }
    p.last_done[t].seconds.store(NowSeconds(), std::memory_order_relaxed);
    p.streamed.next.fetch_add(1, std::memory_order_release);
  };
  p.shares[t].arrived.store(true, std::memory_order_relaxed);
  int64_t chunk;
  while (p.shares[t].Claim(/*from_back=*/false, &chunk)) run(chunk);
  for (int k = 1; k < threads_; ++k) {
    Chunks& share = p.shares[(t + k) % threads_];
    uint64_t seen = share.range.load(std::memory_order_relaxed);
    double since = NowSeconds();
    for (;;) {
      const uint64_t v = share.range.load(std::memory_order_relaxed);
      if (Chunks::Front(v) >= Chunks::Back(v)) break;
      const double now = NowSeconds();
      if (Chunks::Front(v) != Chunks::Front(seen)) {  // the owner moved on
        seen = v;
        since = now;
      } else if (!share.arrived.load(std::memory_order_relaxed) ||
                 now - since >= kPatienceSeconds) {
        if (!share.Claim(/*from_back=*/true, &chunk)) break;
        run(chunk);
        continue;
      }
      _mm_pause();
    }
  }
}

double Triad::Pass() {
  TriadPass& p = *pass_;
  const double started = NowSeconds();  // a pypto call's time includes its wake-ups too
  // A thread still in the last pass may claim from the shares as soon as
  // they are reset: the count and the times are reset first.
  p.streamed.next.store(0, std::memory_order_relaxed);
  for (Time& done : p.last_done) done.seconds.store(0, std::memory_order_relaxed);
  for (int t = 0; t < threads_; ++t) {
    p.shares[t].Reset(FirstChunk(p.chunks, threads_, t), FirstChunk(p.chunks, threads_, t + 1));
  }
  pool_->Round();
  while (p.streamed.next.load(std::memory_order_acquire) != p.chunks) _mm_pause();
  double end = started;
  for (const Time& done : p.last_done) {
    end = std::max(end, done.seconds.load(std::memory_order_relaxed));
  }
  return end - started;
}

int64_t Triad::Unwritten() const {
  int64_t count = 0;
  if (kind_ == Kind::kRead) {
    for (int64_t chunk = 0; chunk < pass_->chunks; ++chunk) {
      const int64_t lo = chunk * chunk_elements(), hi = std::min(n_, lo + chunk_elements());
      if (pass_->sums[chunk] != static_cast<float>(hi - lo)) count += hi - lo;  // b is all 1
    }
    return count;
  }
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
  for (const Time& d : last_done) end = std::max(end, d.seconds.load());
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
