// Times the BF16 cube task on VDPBF16PS (pto_cube.h, CubeMatmulBf16Store) on one
// thread, as generated code for host-x86_64-v4 runs it: for every output
// tile of a bf16 M x K x N matmul, the whole task over K (B packed into
// pairs, the micro-kernel) and the rounding TSTORE to bf16 (each register
// block of the last K block as it finishes). Then the parts alone: the packing of B (CubeMovL0BPairs) over every tile, and the
// TSTOREs; and, in turn with the tasks, the tasks with B packed once per
// column panel (what packing B once per call would save). Times are the
// thread's CPU time (a loaded machine's other processes do not count), best
// of reps (the whole task also the median pass); a few elements of C (of
// the tasks, and of the shared packing) are checked against a double
// reference. The peak beside them is bench/ceilings' BF16 dot-product loop
// on this thread, timed the same way.
//
//   bazel run //bench:cube_probe_bf16 -- [M K N mL0 nL0 [reps]]
//   (defaults: 1024 1024 1024 128 128 10)
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench/ceilings_kernels.h"
#include "compiler/targets/host/pto_cube.h"
#include "compiler/targets/host/pto_tile_convert.h"

namespace {

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

using Bf16Elem = pto_tile::Elem<pto_tile::bf16>;

}  // namespace

int main(int argc, char** argv) {
  int m = 1024, k = 1024, n = 1024, ml0 = 128, nl0 = 128, reps = 10;
  if (argc >= 6) {
    m = atoi(argv[1]);
    k = atoi(argv[2]);
    n = atoi(argv[3]);
    ml0 = atoi(argv[4]);
    nl0 = atoi(argv[5]);
  }
  if (argc >= 7) reps = std::max(1, atoi(argv[6]));
  if (m < 1 || k < 1 || n < 1 || ml0 < 1 || nl0 < 1) {
    std::fprintf(stderr, "cube_probe_bf16: M K N mL0 nL0 must be positive\n");
    return 2;
  }
  if (!pto_cube::CubeHasBf16Dot()) {
    std::printf("cube_probe_bf16: this CPU has no AVX512-BF16\n");
    return 0;
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<uint16_t> a(int64_t{m} * k), b(int64_t{k} * n);
  for (uint16_t& x : a) x = pto_tile::FloatToBf16(dist(rng));
  for (uint16_t& x : b) x = pto_tile::FloatToBf16(dist(rng));
  std::vector<pto_tile::bf16> c(int64_t{m} * n);
  std::vector<float> l0c(int64_t{ml0} * nl0);
  std::vector<uint16_t> l0b(pto_cube::Bf16L0BElems(k, nl0));

  // Which parts a pass runs.
  enum Part { kTask, kPack, kStore };
  auto pass = [&](Part part) {
    for (int i0 = 0; i0 < m; i0 += ml0) {
      const int mt = std::min(ml0, m - i0);
      for (int j0 = 0; j0 < n; j0 += nl0) {
        const int nt = std::min(nl0, n - j0);
        if (part == kTask) {
          pto_cube::CubeMatmulBf16Store<Bf16Elem>(c.data() + int64_t{i0} * n + j0, n, l0c.data(),
                                                  a.data() + int64_t{i0} * k, k, false,
                                                  b.data() + j0, n, false, mt, k, nt, nullptr,
                                                  l0b.data());
        } else if (part == kPack) {
          for (int k0 = 0; k0 < k; k0 += pto_cube::kBf16KBlock) {
            const int kc = std::min(pto_cube::kBf16KBlock, k - k0);
            pto_cube::CubeMovL0BPairs(l0b.data(), b.data() + int64_t{k0} * n + j0, n, false,
                                      kc, nt);
          }
        } else {
          pto_cube::CubeStoreL0C<Bf16Elem>(c.data() + int64_t{i0} * n + j0, n, l0c.data(), mt,
                                           nt);
        }
      }
    }
  };
  // Best of reps; *median, where given, the median pass.
  auto time = [&](Part part, double* median = nullptr) {
    std::vector<double> t(reps);
    for (int r = 0; r < reps; ++r) {
      const double t0 = CpuSeconds();
      pass(part);
      t[r] = CpuSeconds() - t0;
    }
    std::sort(t.begin(), t.end());
    if (median != nullptr) *median = t[reps / 2];
    return t[0];
  };
  const double flops = 2.0 * m * k * n;
  double task_median = 0;
  const double task = time(kTask, &task_median);
  // The worst error of a few elements of the last pass's C over the sum of
  // |a*b| (the dot product's rounding and bf16's: well within 1e-2).
  auto check = [&] {
    double worst = 0;
    for (int s = 0; s < 64; ++s) {
      const int i = (s * 131) % m, j = (s * 977) % n;
      double ref = 0, mag = 0;
      for (int p = 0; p < k; ++p) {
        const double x = pto_tile::Bf16ToFloat(a[int64_t{i} * k + p]) *
                         pto_tile::Bf16ToFloat(b[int64_t{p} * n + j]);
        ref += x;
        mag += std::fabs(x);
      }
      const double got = pto_tile::Bf16ToFloat(c[int64_t{i} * n + j].bits);
      worst = std::max(worst, std::fabs(got - ref) / std::max(mag, 1e-30));
    }
    return worst;
  };
  double worst = check();
  const double pack = time(kPack), store = time(kStore);
  // The same tasks with B packed once per column panel (all of K), shared
  // by the row tiles under it, as if a call packed B once; passes in turn
  // with the tasks as generated code runs them, medians.
  std::vector<uint16_t> l0b_all;
  for (int64_t k0 = 0; k0 < k; k0 += pto_cube::kBf16KBlock) {
    const int kc = static_cast<int>(std::min<int64_t>(pto_cube::kBf16KBlock, k - k0));
    l0b_all.resize(l0b_all.size() + pto_cube::Bf16L0BElems(kc, nl0));
  }
  auto shared_pass = [&] {
    for (int j0 = 0; j0 < n; j0 += nl0) {
      const int nt = std::min(nl0, n - j0);
      int64_t at = 0;
      for (int k0 = 0; k0 < k; k0 += pto_cube::kBf16KBlock) {
        const int kc = std::min(pto_cube::kBf16KBlock, k - k0);
        pto_cube::CubeMovL0BPairs(l0b_all.data() + at, b.data() + int64_t{k0} * n + j0, n,
                                  false, kc, nt);
        at += pto_cube::Bf16L0BElems(kc, nt);
      }
      for (int i0 = 0; i0 < m; i0 += ml0) {
        const int mt = std::min(ml0, m - i0);
        at = 0;
        // The last K block stores each register block as it finishes, as the
        // tasks do (CubeMatmulBf16Store).
        auto store = [&](int i, int j, int rows, int width) {
          for (int r = i; r < i + rows; ++r) {  // a row at a time: L0C's rows are nt apart
            pto_cube::CubeStoreL0C<Bf16Elem>(c.data() + int64_t{i0 + r} * n + j0 + j, n,
                                             l0c.data() + int64_t{r} * nt + j, 1, width);
          }
        };
        for (int k0 = 0; k0 < k; k0 += pto_cube::kBf16KBlock) {
          const int kc = std::min(pto_cube::kBf16KBlock, k - k0);
          const uint16_t* a0 = a.data() + int64_t{i0} * k + k0;
          if (k0 + kc < k) {
            pto_cube::CubeMatmulBf16Block(k0 > 0, l0c.data(), a0, k, l0b_all.data() + at, mt, kc,
                                          nt);
          } else {
            pto_cube::CubeMatmulBf16Block(k0 > 0, l0c.data(), a0, k, l0b_all.data() + at, mt, kc,
                                          nt, store);
          }
          at += pto_cube::Bf16L0BElems(kc, nt);
        }
      }
    }
  };
  std::vector<double> t_task(reps), t_shared(reps);
  for (int r = 0; r < reps; ++r) {
    double t0 = CpuSeconds();
    pass(kTask);
    t_task[r] = CpuSeconds() - t0;
    t0 = CpuSeconds();
    shared_pass();
    t_shared[r] = CpuSeconds() - t0;
  }
  std::sort(t_task.begin(), t_task.end());
  std::sort(t_shared.begin(), t_shared.end());
  std::fill(c.begin(), c.end(), pto_tile::bf16{});
  shared_pass();
  worst = std::max(worst, check());
  double peak = 0;
  for (int r = 0; r < reps; ++r) {
    double dot_flops = 0;
    const double t0 = CpuSeconds();
    pto::bench::Bf16DotPass(1, 1 << 20, &dot_flops);
    peak = std::max(peak, dot_flops / (CpuSeconds() - t0) / 1e9);
  }
  std::printf("bf16 %dx%dx%d, tiles %dx%d, one thread, best of %d (thread CPU time)\n", m, k, n,
              ml0, nl0, reps);
  std::printf("  task (pack B, VDPBF16PS, TSTORE) %8.3f ms %6.1f GFLOP/s, %.0f%% of the peak\n",
              task * 1e3, flops / task / 1e9, 100 * flops / task / 1e9 / peak);
  std::printf("  task, median pass                 %8.3f ms %6.1f GFLOP/s, %.0f%% of the peak\n",
              task_median * 1e3, flops / task_median / 1e9,
              100 * flops / task_median / 1e9 / peak);
  std::printf("  VDPBF16PS peak (bench/ceilings' loop, this thread) %6.1f GFLOP/s\n", peak);
  std::printf("  in turn, medians: tasks %.3f ms, B packed once per column panel %.3f ms (%.1f%% less)\n",
              t_task[reps / 2] * 1e3, t_shared[reps / 2] * 1e3,
              100 * (1 - t_shared[reps / 2] / t_task[reps / 2]));
  std::printf("  of it: packing B %.3f ms (%.1f%%), TSTORE %.3f ms (%.1f%%)\n", pack * 1e3,
              100 * pack / task, store * 1e3, 100 * store / task);
  std::printf("  worst error / sum |a*b| over 64 elements of both: %.2e%s\n", worst,
              worst < 1e-2 ? "" : "  WRONG");
  return worst < 1e-2 ? 0 : 1;
}
