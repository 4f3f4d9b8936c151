// The loops behind the machine ceilings: a STREAM-style triad, chains of
// FP32 FMAs and chains of BF16 dot products (VDPBF16PS), each run by a
// given number of threads. A triad pass runs on threads kept between passes
// (they spin 50 us after each, as pypto's executor workers do) and is timed
// from its start, wake-ups included, to the last chunk done, as a pypto call
// ends with its last task (a thread not awake by then is not waited for,
// its chunks streamed by the others); an FMA or BF16
// dot pass starts its threads and is timed from the moment all have started
// until the last one finishes. One copy, used by the bench/ceilings binary
// (best of several repetitions, printed) and by libceilings.so (one pass per
// call, timed by bench/kernels.py beside each row: bench/ceilings_lib.py).
//
// Built with -O3 so that the triad loop vectorizes; the FMA and dot loops
// use intrinsics under target attributes, chosen at run time from the CPU's
// features.
#ifndef PTO_BENCH_CEILINGS_KERNELS_H_
#define PTO_BENCH_CEILINGS_KERNELS_H_

#include <cstdint>
#include <memory>
#include <string>

namespace pto::bench {

// a[i] = b[i] + s * c[i] over three float arrays totalling about `bytes`
// (at least 16 elements each), or (kRead) the triad's reads alone: sums of
// b, one per chunk, over one array of about `bytes`, the ceiling of a
// kernel that reads far more than it writes (a row sum, a matrix-vector
// product), which a triad's writes would understate. The arrays are
// allocated and first touched by the threads that stream them when the
// Triad is made, so every Pass after the first finds them warm (in cache
// when they fit). Bytes counted are those the program asks for (read b and
// c, write a: 12 per element; kRead: 4, the chunks' sums not counted), not
// the extra read a write-allocate cache does, as STREAM counts them.
class SpinPool;
struct TriadPass;

class Triad {
 public:
  // A pass's unit of work, bytes moved: 16 KiB of each of a triad's arrays,
  // 48 KiB of a read pass's one. Small enough that a thread the scheduler
  // parks holds a pass up by little, large enough that claiming one (an
  // atomic add, a clock read) costs nothing next to streaming it; a whole
  // number of cache lines and pages of each array.
  static constexpr int64_t kChunkBytes = 48 << 10;

  enum class Kind { kTriad, kRead };

  Triad(int64_t bytes, int threads, Kind kind = Kind::kTriad);
  ~Triad();
  Triad(const Triad&) = delete;
  Triad& operator=(const Triad&) = delete;

  // One pass over the arrays; returns its wall time in seconds, from its
  // start to its last chunk done. The arrays are cut into chunks
  // (kChunkBytes moved each), one contiguous share of chunks per thread; a
  // thread that has streamed its own share helps with the others' remaining
  // chunks, so one the scheduler parks holds the pass up by one chunk, not
  // its whole share, and one not yet awake by nothing.
  double Pass();

  int64_t bytes() const { return (kind_ == Kind::kTriad ? 12 : 4) * n_; }  // moved by one Pass
  int64_t elements() const { return n_; }  // of each array
  // Elements of each array in a chunk (kChunkBytes).
  int64_t chunk_elements() const { return kChunkBytes / (kind_ == Kind::kTriad ? 12 : 4); }

  // How many elements of `a` are not b + s * c (kRead: of `b` in a chunk
  // whose sum is wrong); all of them before the first Pass, none after any:
  // tests check that a pass covers every chunk.
  int64_t Unwritten() const;
  int threads() const { return threads_; }

 private:
  void Work(int t);  // thread t's part of a pass (or of the first touch)

  Kind kind_;
  int64_t n_;
  int threads_;
  float* a_;  // null for kRead (and c_)
  float* b_;
  float* c_;
  std::unique_ptr<TriadPass> pass_;  // the current pass's state
  std::unique_ptr<SpinPool> pool_;   // the passes' threads, kept between passes
};

// The vectors the triad's loop uses: "avx512", "avx2" or "baseline" (SSE2).
const char* TriadIsa();

// Triad bandwidth in GB/s (1e9 bytes) for three arrays totalling `bytes`:
// the best of `reps` passes.
double TriadGBps(int64_t bytes, int threads, int reps);

// The widest FMA vectors this CPU has: "avx512", "avx2" or "scalar".
const char* FmaIsa();

// `threads` x `iters` iterations of independent FMA chains on `isa`'s
// vectors (FmaIsa()), claimed by `threads` threads in small chunks (a
// parked thread's share goes to the others); returns the wall time in
// seconds and sets *flops to the flops done (one FMA is two).
double FmaPass(int threads, int64_t iters, const std::string& isa, double* flops);

// FP32 GFLOP/s with `threads` threads: the best of `reps` passes.
double FmaGflops(int threads, int reps, const std::string& isa);

// The BF16 dot-product instruction this CPU has: "avx512bf16" (VDPBF16PS on
// 512-bit vectors) or "none".
const char* Bf16DotIsa();

// As FmaPass, for independent chains of VDPBF16PS (one is 64 flops: 16
// lanes, each adding two bf16 products); 0 seconds and flops where
// Bf16DotIsa() is "none".
double Bf16DotPass(int threads, int64_t iters, double* flops);

// BF16 dot-product GFLOP/s with `threads` threads, the best of `reps`
// passes: the ceiling of a BF16 matmul on VDPBF16PS; 0 where the CPU has
// none.
double Bf16DotGflops(int threads, int reps);

}  // namespace pto::bench

#endif  // PTO_BENCH_CEILINGS_KERNELS_H_
