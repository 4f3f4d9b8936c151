// pto_tile.h's f32 exp on x86-64-v3 over every float: ExpMap (the 8-lane
// form generated kernels call) on all 2^32 bit patterns against glibc's
// double exp, reporting the largest error in ulps (of the exact value's
// binade; subnormal results in units of the smallest subnormal), how many
// results are not the correctly rounded one, and whether the one-float form
// ExpF32 gives the same bits (one input in 64). Inputs outside [-104, 89]
// are clamped to give 0, inf or NaN (pto_tile_exp_test checks those).
//
//   bazel test //compiler/targets/host/numerics:exp_check
//   bazel-bin/compiler/targets/host/numerics/exp_check [THREADS]
//
// A manual test (minutes of CPU). pto_tile_exp_test checks a dense
// sweep in CI; this is the exhaustive check behind pto_tile.h's comment.
//
// Built for x86-64-v4 (:exp_check_v4), ExpMap runs the 16-lane Exp16,
// and every input is also compared with the 8-lane Exp8 (all 2^32, NaN and
// clamped inputs included): the same bits.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "compiler/targets/host/pto_tile_exp.h"

#if !PTO_TILE_FAST_EXP
#error "exp_check is built with -march=x86-64-v3 (AVX2 and FMA)"
#endif

namespace {

double UlpError(float x, float got) {
  const double want = std::exp(static_cast<double>(x));
  if (std::isinf(got) && got > 0 && want > FLT_MAX) return 0.0;
  const double g = std::isinf(got) ? std::ldexp(1.0, 128) : got;
  const int e = want < FLT_MIN ? -126 : std::ilogb(want);
  return std::fabs(g - want) / std::ldexp(1.0, e - 23);
}

struct Stats {
  double worst = 0;
  float worst_x = 0;
  uint64_t inputs = 0, not_rounded = 0, form_mismatches = 0, lane_mismatches = 0;
};

void Check(int thread, int threads, Stats* s) {
  float in[1024], out[1024];
  for (uint64_t base = uint64_t{1024} * thread; base < (uint64_t{1} << 32);
       base += uint64_t{1024} * threads) {
    for (int i = 0; i < 1024; ++i) {
      const uint32_t bits = static_cast<uint32_t>(base + i);
      std::memcpy(&in[i], &bits, sizeof bits);
    }
    pto_tile::ExpMap(out, in, 1024);
#if defined(__AVX512F__)
    float out8[1024];
    pto_tile::Map8<pto_tile::Exp8>(out8, in, 1024);
    for (int i = 0; i < 1024; ++i) {
      s->lane_mismatches += std::memcmp(&out8[i], &out[i], sizeof(float)) != 0;
    }
#endif
    for (int i = 0; i < 1024; ++i) {
      const float x = in[i];
      if (!(x >= -104.0f && x <= 89.0f)) continue;
      ++s->inputs;
      const double err = UlpError(x, out[i]);
      if (err > s->worst) {
        s->worst = err;
        s->worst_x = x;
      }
      if (err > 0.5) ++s->not_rounded;
      if (i % 64 == 0) {
        const float one = pto_tile::ExpF32(x);
        if (std::memcmp(&one, &out[i], sizeof one) != 0) ++s->form_mismatches;
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  if (threads < 1) return 2;
  std::vector<Stats> stats(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(Check, t, threads, &stats[t]);
  for (std::thread& t : pool) t.join();
  Stats all;
  for (const Stats& s : stats) {
    if (s.worst > all.worst) {
      all.worst = s.worst;
      all.worst_x = s.worst_x;
    }
    all.inputs += s.inputs;
    all.not_rounded += s.not_rounded;
    all.form_mismatches += s.form_mismatches;
    all.lane_mismatches += s.lane_mismatches;
  }
  std::printf("exp over %llu floats in [-104, 89]: worst %.4f ulp at x = %a; %.3f%% not correctly "
              "rounded; vector vs one-float mismatches (1 input in 64): %llu\n",
              static_cast<unsigned long long>(all.inputs), all.worst, all.worst_x,
              100.0 * all.not_rounded / all.inputs,
              static_cast<unsigned long long>(all.form_mismatches));
#if defined(__AVX512F__)
  std::printf("16-lane vs 8-lane mismatches over all 2^32 inputs: %llu\n",
              static_cast<unsigned long long>(all.lane_mismatches));
#endif
  return all.worst <= 1.0 && all.form_mismatches == 0 && all.lane_mismatches == 0 ? 0 : 1;
}
