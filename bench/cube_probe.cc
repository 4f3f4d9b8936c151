// Times the host cube path on one thread: the instruction sequence a cube
// function runs (TLOAD GM->L1, TMOV L1->L0A/L0B, TMATMUL/TMATMUL_ACC, TSTORE)
// over every output tile of an f32 M x K x N matmul, as generated code for
// host-x86_64-v3 does, with the AVX2 (6 x 16) and, where the CPU has it,
// AVX-512 (8 x 32) micro-kernel. Times are the thread's CPU time (a loaded
// machine's other processes do not count), best of --reps.
//
//   bazel run //bench:cube_probe -- [M K N mL0 nL0 kL0 kL1 [reps [panels]]]
//   (defaults: 1024 1024 1024 128 128 64 256 5). Tiles of at most
//   pto_cube::kSmallM rows take the small-M path (no L0B) as generated code
//   does, unless the last argument is "panels" (the packed path, to compare).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define PTO_CUBE_FMA 1
#define PTO_CUBE_AVX512 1
namespace with_avx512 {
#include "compiler/targets/host/pto_cube.h"  // NOLINT(build/include)
}  // namespace with_avx512
#undef PTO_CUBE_H_
#undef PTO_CUBE_AVX512
#define PTO_CUBE_AVX512 0
namespace avx2_only {
#include "compiler/targets/host/pto_cube.h"  // NOLINT(build/include)
}  // namespace avx2_only
#pragma GCC pop_options

namespace {

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

struct Shape {
  int m, k, n, ml0, nl0, kl0, kl1;
};

// One pass over all output tiles; `pack` false skips the copies (TMOV to
// L0B) after the first tile, to time the micro-kernel alone.
#define PROBE_PASS(ns)                                                        \
  [&](const Shape& s, const float* A, const float* B, float* C, bool pack) { \
    std::vector<float> l1a(s.ml0 * s.kl1), l1b(s.kl1 * s.nl0);                \
    std::vector<float> l0b(ns::pto_cube::L0BElems(s.kl0, s.nl0));             \
    std::vector<float> l0c(s.ml0 * s.nl0);                                     \
    for (int i0 = 0; i0 < s.m; i0 += s.ml0) {                                  \
      const int m = std::min(s.ml0, s.m - i0);                                 \
      for (int j0 = 0; j0 < s.n; j0 += s.nl0) {                                \
        const int n = std::min(s.nl0, s.n - j0);                               \
        for (int k = 0; k < s.k; k += s.kl1) {                                 \
          const int kb = std::min(s.kl1, s.k - k);                             \
          int64_t lda1, ldb1, rs0, ps0;                                        \
          const float* a1 = ns::pto_cube::CubeLoadL1(                          \
              l1a.data(), A + int64_t{i0} * s.k + k, s.k, m, kb, &lda1);       \
          const float* b1 = ns::pto_cube::CubeLoadL1(                          \
              l1b.data(), B + int64_t{k} * s.n + j0, s.n, kb, n, &ldb1);       \
          for (int kk = 0; kk < kb; kk += s.kl0) {                             \
            const int kc = std::min(s.kl0, kb - kk);                           \
            const float* a0 =                                                  \
                ns::pto_cube::CubeMovL0A(a1, lda1, kk, false, &rs0, &ps0);     \
            if (m <= ns::pto_cube::kSmallM && !panels) {                       \
              if (k + kk == 0) {                                               \
                ns::pto_cube::CubeMatmulRows(l0c.data(), a0, rs0, ps0,         \
                                             b1 + kk * ldb1, ldb1, m, kc, n);  \
              } else {                                                         \
                ns::pto_cube::CubeMatmulRowsAcc(l0c.data(), a0, rs0, ps0,      \
                                                b1 + kk * ldb1, ldb1, m, kc, n); \
              }                                                                \
              continue;                                                        \
            }                                                                  \
            if (pack || (i0 == 0 && j0 == 0)) {                                \
              ns::pto_cube::CubeMovL0B(l0b.data(), b1, ldb1, kk, kc, n, false); \
            }                                                                  \
            if (k + kk == 0) {                                                 \
              ns::pto_cube::CubeMatmul(l0c.data(), a0, rs0, ps0, l0b.data(), m, kc, n); \
            } else {                                                           \
              ns::pto_cube::CubeMatmulAcc(l0c.data(), a0, rs0, ps0, l0b.data(), m, kc, n); \
            }                                                                  \
          }                                                                    \
        }                                                                      \
        ns::pto_cube::CubeStoreL0C(C + int64_t{i0} * s.n + j0, s.n, l0c.data(), m, n); \
      }                                                                        \
    }                                                                          \
  }

}  // namespace

int main(int argc, char** argv) {
  Shape s{1024, 1024, 1024, 128, 128, 64, 256};
  int reps = 5;
  if (argc >= 8) {
    s = {atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
         atoi(argv[5]), atoi(argv[6]), atoi(argv[7])};
  }
  if (argc >= 9) reps = std::max(1, atoi(argv[8]));
  const bool panels = argc >= 10 && std::string(argv[9]) == "panels";
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::printf("cube_probe: this CPU has no AVX2/FMA (host-x86_64-v3)\n");
    return 0;
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> A(int64_t{s.m} * s.k), B(int64_t{s.k} * s.n), C(int64_t{s.m} * s.n);
  for (float& x : A) x = dist(rng);
  for (float& x : B) x = dist(rng);
  const double flops = 2.0 * s.m * s.k * s.n;
  std::printf("f32 %dx%dx%d, tiles mL0=%d nL0=%d kL0=%d kL1=%d, one thread, best of %d "
              "(thread CPU time)\n", s.m, s.k, s.n, s.ml0, s.nl0, s.kl0, s.kl1, reps);
  auto time = [&](auto pass, bool pack) {
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      const double t0 = CpuSeconds();
      pass(s, A.data(), B.data(), C.data(), pack);
      best = std::min(best, CpuSeconds() - t0);
    }
    return best;
  };
  auto report = [&](const char* name, double whole, double kernel) {
    std::printf("  %-26s whole sequence %8.2f ms %6.1f GFLOP/s; micro-kernel alone %6.1f GFLOP/s\n",
                name, whole * 1e3, flops / whole / 1e9, flops / kernel / 1e9);
  };
  auto avx2 = PROBE_PASS(avx2_only);
  report("AVX2 6x16", time(avx2, true), time(avx2, false));
  if (__builtin_cpu_supports("avx512f")) {
    auto avx512 = PROBE_PASS(with_avx512);
    report("AVX-512 8x32", time(avx512, true), time(avx512, false));
  } else {
    std::printf("  AVX-512: not on this CPU\n");
  }
  return 0;
}
