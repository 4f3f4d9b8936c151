// libceilings.so: bench/ceilings' loops callable in process, one pass per
// call, so that bench/kernels.py times a ceiling in the same interleaved
// blocks as the kernel it compares with (bench/ceilings_lib.py wraps it with
// ctypes). Each call runs the loop on its threads and returns the loop's own
// wall time, as the binary measures it (bench/ceilings_kernels.h); a C
// interface, for ctypes.
#include <cstdint>
#include <string>

#include "bench/ceilings_kernels.h"

extern "C" {

// A triad over three arrays totalling `bytes`, run by `threads` threads, its
// arrays allocated and warmed now; null when bytes < 12 or threads < 1.
void* pto_ceilings_triad_new(int64_t bytes, int threads) {
  if (bytes < 12 || threads < 1) return nullptr;
  return new pto::bench::Triad(bytes, threads);
}

// The triad's reads alone (Triad::Kind::kRead): sums of one array of about
// `bytes`; null as pto_ceilings_triad_new.
void* pto_ceilings_read_new(int64_t bytes, int threads) {
  if (bytes < 4 || threads < 1) return nullptr;
  return new pto::bench::Triad(bytes, threads, pto::bench::Triad::Kind::kRead);
}

// Bytes one pass moves (12 per element: b and c read, a written; a read
// pass 4: b read).
int64_t pto_ceilings_triad_bytes(const void* triad) {
  return static_cast<const pto::bench::Triad*>(triad)->bytes();
}

// Elements of each array.
int64_t pto_ceilings_triad_elements(const void* triad) {
  return static_cast<const pto::bench::Triad*>(triad)->elements();
}

// Elements the passes so far have not written (Triad::Unwritten; tests).
int64_t pto_ceilings_triad_unwritten(const void* triad) {
  return static_cast<const pto::bench::Triad*>(triad)->Unwritten();
}

// Seconds of one pass.
double pto_ceilings_triad_pass(void* triad) {
  return static_cast<pto::bench::Triad*>(triad)->Pass();
}

void pto_ceilings_triad_free(void* triad) {
  delete static_cast<pto::bench::Triad*>(triad);
}

// Bytes a pass's unit of work moves, triad or read (Triad::kChunkBytes).
int64_t pto_ceilings_chunk_bytes() { return pto::bench::Triad::kChunkBytes; }

// "avx512", "avx2" or "baseline": the vectors the triad's loop uses.
const char* pto_ceilings_triad_isa() { return pto::bench::TriadIsa(); }

// "avx512", "avx2" or "scalar": the vectors the FMA loop uses.
const char* pto_ceilings_fma_isa() { return pto::bench::FmaIsa(); }

// Seconds for `threads` threads to run `iters` iterations each of the FMA
// chains; *flops gets the flops done. -1 when threads < 1 or iters < 1.
double pto_ceilings_fma_pass(int threads, int64_t iters, double* flops) {
  if (threads < 1 || iters < 1) return -1;
  return pto::bench::FmaPass(threads, iters, pto::bench::FmaIsa(), flops);
}

}  // extern "C"
