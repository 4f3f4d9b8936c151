// pto_tile.h's softmax exp (for x - max(x): lanes <= 0 or NaN) over every
// such float: all 2^31 + 1 bit patterns from +0 through -0 .. -inf and
// every NaN, against glibc's double exp. Built for x86-64-v4 it checks
// Exp16Softmax, for x86-64-v3 Exp8Softmax. Reports the largest error in
// ulps (of the exact value's binade; subnormal results in units of the
// smallest subnormal) and the largest relative error of the normal results,
// how many results are not the correctly rounded one, and whether NaN ->
// NaN, -inf -> +0, +-0 -> 1 and results below half the smallest subnormal
// -> +0 hold. Alongside it measures variants, built here from the same
// steps, and checks that the chosen one gives pto_tile's bits for every
// input: at v4 the variants the choice was made from (one or two
// Cody-Waite steps for r, a degree 2 or 3 polynomial); at v3 the full form
// on every lane, which Exp8Softmax must equal where it takes the short one.
//
//   bazel test //compiler/targets/host/numerics:exp_softmax_check      # x86-64-v4
//   bazel test //compiler/targets/host/numerics:exp_softmax_check_v3   # x86-64-v3
//   bazel-bin/compiler/targets/host/numerics/exp_softmax_check [THREADS]
//
// A manual test (minutes of CPU). pto_tile_exp_test_v4 checks
// a sparse sweep and the special values in CI.
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
#error "exp_softmax_check is built with -march=x86-64-v4 or -march=x86-64-v3"
#endif

namespace {


#if defined(__AVX512F__)
using pto_tile::ExpF16;
using pto_tile::ExpI16;
using Vec = ExpF16;
using pto_tile::ExpSplat;

// The variants: kSteps Cody-Waite steps for r, a polynomial of kDegree.
template <int kSteps, int kDegree>
ExpF16 Variant(ExpF16 x) {
  constexpr uint16_t kAll = 0xFFFF;
  x = __builtin_ia32_maxps512_mask(ExpSplat<ExpF16>(-104.0f), x, ExpF16{}, kAll, 4);
  const ExpF16 shift = ExpSplat<ExpF16>(0x1.8p18f);
  const ExpF16 kd = pto_tile::ExpFma(x, ExpSplat<ExpF16>(0x1.715476p+0f), shift);
  const ExpF16 m = kd - shift;
  ExpF16 r = pto_tile::ExpFma(m, ExpSplat<ExpF16>(-0x1.62e430p-1f), x);
  if constexpr (kSteps == 2) r = pto_tile::ExpFma(m, ExpSplat<ExpF16>(0x1.05c610p-29f), r);
  ExpF16 p;
  if constexpr (kDegree == 2) {
    p = pto_tile::ExpFma(ExpSplat<ExpF16>(0x1.000026p-1f), r, ExpSplat<ExpF16>(0x1.0000f6p+0f));
  } else {
    p = pto_tile::ExpFma(ExpSplat<ExpF16>(0x1.55548ep-3f), r, ExpSplat<ExpF16>(0x1.000088p-1f));
    p = pto_tile::ExpFma(p, r, ExpSplat<ExpF16>(1.0f));
  }
  const ExpF16 q = r * p;
  const ExpF16 t = __builtin_ia32_vpermt2varps512_mask(
      reinterpret_cast<ExpI16>(kd), pto_tile::kExp2Table32Lo, pto_tile::kExp2Table32Hi, kAll);
  const ExpF16 y = pto_tile::ExpFma(t, q, t);
  return __builtin_ia32_scalefps512_mask(y, m, ExpF16{}, kAll, 4);
}

constexpr int kVariants = 4;
constexpr ExpF16 (*kVariantFns[kVariants])(ExpF16) = {Variant<1, 2>, Variant<2, 2>, Variant<1, 3>,
                                                      Variant<2, 3>};
// The variant Exp16Softmax is.
constexpr int kLanded = 1;
const char* const kVariantNames[kVariants] = {"one step, degree 2", "two steps, degree 2",
                                              "one step, degree 3", "two steps, degree 3"};
constexpr Vec (*kLandedFn)(Vec) = pto_tile::Exp16Softmax;
constexpr const char* kLandedName = "Exp16Softmax";
#else
using Vec = pto_tile::ExpF8;
constexpr int kVariants = 1;
constexpr Vec (*kVariantFns[kVariants])(Vec) = {pto_tile::Exp8SoftmaxSteps<true>};
constexpr int kLanded = 0;
const char* const kVariantNames[kVariants] = {"full form, every lane"};
constexpr Vec (*kLandedFn)(Vec) = pto_tile::Exp8Softmax;
constexpr const char* kLandedName = "Exp8Softmax";
#endif
constexpr int kLanes = static_cast<int>(sizeof(Vec) / sizeof(float));

struct Stats {
  double worst_ulp = 0, worst_rel = 0;
  float worst_ulp_x = 0, worst_rel_x = 0;
  uint64_t inputs = 0, not_rounded = 0, special_wrong = 0;
};

struct Thread {
  Stats v[kVariants];
  Stats landed;
  uint64_t landed_mismatches = 0;
};

void Score(float x, float got, double want, Stats* s) {
  if (std::isnan(x)) {
    s->special_wrong += !std::isnan(got);
    return;
  }
  ++s->inputs;
  if (x == -INFINITY || want < 0x1p-150) s->special_wrong += !(got == 0.0f && !std::signbit(got));
  if (x == 0.0f) s->special_wrong += got != 1.0f;
  if (!(got >= 0.0f)) ++s->special_wrong;  // negative or NaN
  const int e = want < FLT_MIN ? -126 : std::ilogb(want);
  const double ulp = std::fabs(got - want) / std::ldexp(1.0, e - 23);
  if (ulp > s->worst_ulp) {
    s->worst_ulp = ulp;
    s->worst_ulp_x = x;
  }
  if (ulp > 0.5) ++s->not_rounded;
  if (want >= FLT_MIN) {
    const double rel = std::fabs(got - want) / want;
    if (rel > s->worst_rel) {
      s->worst_rel = rel;
      s->worst_rel_x = x;
    }
  }
}

// Bit patterns: i in [0, 2^31) is -0 .. -NaN (0x80000000 + i); i = 2^31 is
// +0; i in (2^31, 2^31 + 2^23) is the positive NaNs.
constexpr uint64_t kCount = (uint64_t{1} << 31) + (uint64_t{1} << 23);
uint32_t Pattern(uint64_t i) {
  if (i < (uint64_t{1} << 31)) return static_cast<uint32_t>(0x80000000u + i);
  return static_cast<uint32_t>(0x7F800000u + (i - (uint64_t{1} << 31)));  // +inf skipped below
}

void Check(int thread, int threads, Thread* t) {
  alignas(64) float in[1024];
  alignas(64) float out[kVariants + 1][1024];
  for (uint64_t base = uint64_t{1024} * thread; base < kCount; base += uint64_t{1024} * threads) {
    for (int i = 0; i < 1024; ++i) {
      uint32_t bits = Pattern(base + i);
      if (bits == 0x7F800000u) bits = 0;  // +0 in place of +inf (not an x - max(x))
      std::memcpy(&in[i], &bits, sizeof bits);
    }
    for (int i = 0; i < 1024; i += kLanes) {
      Vec v;
      std::memcpy(&v, in + i, sizeof v);
      for (int k = 0; k < kVariants; ++k) {
        const Vec y = kVariantFns[k](v);
        std::memcpy(out[k] + i, &y, sizeof y);
      }
      const Vec y = kLandedFn(v);
      std::memcpy(out[kVariants] + i, &y, sizeof y);
    }
    for (int i = 0; i < 1024; ++i) {
      const double want = std::exp(static_cast<double>(in[i]));
      for (int k = 0; k < kVariants; ++k) Score(in[i], out[k][i], want, &t->v[k]);
      Score(in[i], out[kVariants][i], want, &t->landed);
      t->landed_mismatches +=
          std::memcmp(&out[kVariants][i], &out[kLanded][i], 4) != 0 &&
          !(std::isnan(out[kVariants][i]) && std::isnan(out[kLanded][i]));
    }
  }
}

void Merge(const Stats& s, Stats* all) {
  if (s.worst_ulp > all->worst_ulp) {
    all->worst_ulp = s.worst_ulp;
    all->worst_ulp_x = s.worst_ulp_x;
  }
  if (s.worst_rel > all->worst_rel) {
    all->worst_rel = s.worst_rel;
    all->worst_rel_x = s.worst_rel_x;
  }
  all->inputs += s.inputs;
  all->not_rounded += s.not_rounded;
  all->special_wrong += s.special_wrong;
}

void Print(const char* name, const Stats& s) {
  std::printf("%-22s worst %.4f ulp at x = %a; worst relative %.3g (normal results) at x = %a; "
              "%.3f%% not correctly rounded; special values wrong: %llu\n",
              name, s.worst_ulp, s.worst_ulp_x, s.worst_rel, s.worst_rel_x,
              100.0 * s.not_rounded / s.inputs, static_cast<unsigned long long>(s.special_wrong));
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  if (threads < 1) return 2;
  std::vector<Thread> stats(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(Check, t, threads, &stats[t]);
  for (std::thread& t : pool) t.join();
  Thread all;
  for (const Thread& t : stats) {
    for (int k = 0; k < kVariants; ++k) Merge(t.v[k], &all.v[k]);
    Merge(t.landed, &all.landed);
    all.landed_mismatches += t.landed_mismatches;
  }
  std::printf("exp over %llu non-NaN floats in [-inf, 0] and +0, and every NaN:\n",
              static_cast<unsigned long long>(all.landed.inputs));
  for (int k = 0; k < kVariants; ++k) Print(kVariantNames[k], all.v[k]);
  Print(kLandedName, all.landed);
  std::printf("%s = %s: %llu mismatches\n", kLandedName, kVariantNames[kLanded],
              static_cast<unsigned long long>(all.landed_mismatches));
  return all.landed.worst_ulp <= 2.0 && all.landed.special_wrong == 0 &&
                 all.landed_mismatches == 0
             ? 0
             : 1;
}
