// pto_tile.h's f32 erf/erfc (Erf8/Erfc8, x86-64-v3; Erf16/Erfc16, v4) checked over all 2^32
// inputs against glibc's double erf/erfc (the bound is 1e-6 absolute), and
// timed against libmvec's erff/erfcf on one thread.
//
//   bazel test //compiler/targets/host/numerics:erf_check   # check, all 2^32 inputs (minutes)
//   bazel-bin/compiler/targets/host/numerics/erf_check check [THREADS]
//   bazel-bin/compiler/targets/host/numerics/erf_check time [ROUNDS]   # ns per value, interleaved rounds
//
// Built with -march=x86-64-v4 (:erf_check_v4) check measures the 16-lane
// Erf16/Erfc16 (what v4 kernels run), time times them too, and
//   erf_check_v4 same16 [THREADS]   # Erf16 == Erf8, Erfc16's tail == Erfc8's, all 2^32
// (:erf_same16_v4)
// checks the bits they share with the 8-lane forms.
//
// check prints the largest absolute error of each function, where it
// occurs, erfc's largest relative error for x > 2 (where the truth is a
// normal f32: erfc's tail keeps relative accuracy), and the count of special-value mismatches (NaN in -> NaN out,
// the sign of erf(+-0), erf(+-inf) = +-1, erfc(+-inf) = 0 / 2, results
// within [-1, 1] / [0, 2]); exits 1 if an error (absolute, or erfc's tail relative)
// exceeds 1e-6 or any
// special value is wrong.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "compiler/targets/host/pto_tile_erf.h"
#include "compiler/targets/host/pto_tile_exp.h"
#include "compiler/targets/host/pto_tile_mvec.h"

#if !PTO_TILE_FAST_ERF || !PTO_TILE_MVEC
#error "build with -march=x86-64-v3 on x86-64 glibc"
#endif

namespace {

using pto_tile::ExpF8;

ExpF8 OneMinusErf8(ExpF8 x) { return 1.0f - pto_tile::Erf8(x); }

struct Worst {
  double err = 0;
  uint32_t bits = 0;
  uint64_t bad_special = 0;
  double rel = 0;  // erfc only: the largest relative error for x > 2
  uint32_t rel_bits = 0;
};

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// erf/erfc as TErf/TErfc compute them for this build: Erf16/Erfc16 with
// AVX-512F (-march=x86-64-v4), else Erf8/Erfc8.
void MapErf(float* d, const float* a, int64_t n) {
#if defined(__AVX512F__)
  pto_tile::Map16<pto_tile::Erf16>(d, a, n);
#else
  pto_tile::Map8<pto_tile::Erf8>(d, a, n);
#endif
}
void MapErfc(float* d, const float* a, int64_t n) {
#if defined(__AVX512F__)
  pto_tile::Map16<pto_tile::Erfc16>(d, a, n);
#else
  pto_tile::Map8<pto_tile::Erfc8>(d, a, n);
#endif
}

void Check(uint64_t begin, uint64_t end, Worst* erf_w, Worst* erfc_w) {
  constexpr int kChunk = 4096;
  std::vector<float> x(kChunk), e(kChunk), c(kChunk);
  for (uint64_t b = begin; b < end; b += kChunk) {
    for (int i = 0; i < kChunk; ++i) x[i] = FromBits(static_cast<uint32_t>(b + i));
    MapErf(e.data(), x.data(), kChunk);
    MapErfc(c.data(), x.data(), kChunk);
    for (int i = 0; i < kChunk; ++i) {
      const float xi = x[i];
      const uint32_t bits = static_cast<uint32_t>(b + i);
      if (std::isnan(xi)) {
        erf_w->bad_special += !std::isnan(e[i]);
        erfc_w->bad_special += !std::isnan(c[i]);
        continue;
      }
      const double want_e = std::erf(static_cast<double>(xi));
      const double want_c = std::erfc(static_cast<double>(xi));
      const double de = std::fabs(e[i] - want_e), dc = std::fabs(c[i] - want_c);
      if (!(de <= erf_w->err)) erf_w->err = de, erf_w->bits = bits;
      if (!(dc <= erfc_w->err)) erfc_w->err = dc, erfc_w->bits = bits;
      // The tail's relative error, where the truth is a normal f32 (below
      // FLT_MIN the spacing of subnormals bounds it, not the code).
      if (xi > 2.0f && want_c >= FLT_MIN) {
        const double rc = dc / want_c;
        if (!(rc <= erfc_w->rel)) erfc_w->rel = rc, erfc_w->rel_bits = bits;
      }
      erf_w->bad_special += !(e[i] >= -1.0f && e[i] <= 1.0f) ||
                            std::signbit(e[i]) != std::signbit(xi) ||
                            (std::isinf(xi) && e[i] != (xi > 0 ? 1.0f : -1.0f));
      erfc_w->bad_special += !(c[i] >= 0.0f && c[i] <= 2.0f) ||
                             (std::isinf(xi) && c[i] != (xi > 0 ? 0.0f : 2.0f)) ||
                             (xi == 0.0f && c[i] != 1.0f);
    }
  }
}

#if defined(__AVX512F__)
// Erf16 (AVX-512F) against Erf8 bit for bit over all 2^32 inputs (the
// same steps per lane), and Erfc16 against Erfc8 where both take the tail
// form (x > 2: the same steps) or x is NaN; Erfc16's own main path (x <= 2)
// is what check measures. Returns the number of chunks with a difference.
uint64_t Same16(uint64_t begin, uint64_t end) {
  constexpr int kChunk = 4096;
  std::vector<float> x(kChunk), e8(kChunk), c8(kChunk), e16(kChunk), c16(kChunk);
  uint64_t differ = 0;
  for (uint64_t b = begin; b < end; b += kChunk) {
    for (int i = 0; i < kChunk; ++i) x[i] = FromBits(static_cast<uint32_t>(b + i));
    pto_tile::Map8<pto_tile::Erf8>(e8.data(), x.data(), kChunk);
    pto_tile::Map8<pto_tile::Erfc8>(c8.data(), x.data(), kChunk);
    pto_tile::Map16<pto_tile::Erf16>(e16.data(), x.data(), kChunk);
    pto_tile::Map16<pto_tile::Erfc16>(c16.data(), x.data(), kChunk);
    bool same = std::memcmp(e8.data(), e16.data(), kChunk * 4) == 0;
    for (int i = 0; i < kChunk; ++i) {
      if (!(x[i] <= 2.0f)) same &= std::memcmp(&c8[i], &c16[i], 4) == 0;
    }
    differ += !same;
  }
  return differ;
}

int RunSame16(int threads) {
  std::vector<uint64_t> differ(threads);
  std::vector<std::thread> pool;
  constexpr uint64_t kAll = uint64_t{1} << 32;
  std::atomic<uint64_t> next{0};
  constexpr uint64_t kSlice = uint64_t{1} << 24;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (uint64_t s; (s = next.fetch_add(kSlice)) < kAll;) differ[t] += Same16(s, s + kSlice);
    });
  }
  for (auto& th : pool) th.join();
  uint64_t total = 0;
  for (uint64_t d : differ) total += d;
  std::printf("Erf16 vs Erf8, Erfc16 vs Erfc8 for x > 2 or NaN, over all 2^32 inputs: "
              "%llu chunks of 4096 differ\n",
              static_cast<unsigned long long>(total));
  return total == 0 ? 0 : 1;
}
#endif

int RunCheck(int threads) {
  std::vector<Worst> we(threads), wc(threads);
  std::vector<std::thread> pool;
  constexpr uint64_t kAll = uint64_t{1} << 32;
  std::atomic<uint64_t> next{0};
  constexpr uint64_t kSlice = uint64_t{1} << 24;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (uint64_t s; (s = next.fetch_add(kSlice)) < kAll;) Check(s, s + kSlice, &we[t], &wc[t]);
    });
  }
  for (auto& th : pool) th.join();
  Worst e, c;
  for (int t = 0; t < threads; ++t) {
    if (we[t].err > e.err) e.err = we[t].err, e.bits = we[t].bits;
    if (wc[t].err > c.err) c.err = wc[t].err, c.bits = wc[t].bits;
    if (wc[t].rel > c.rel) c.rel = wc[t].rel, c.rel_bits = wc[t].rel_bits;
    e.bad_special += we[t].bad_special;
    c.bad_special += wc[t].bad_special;
  }
  std::printf("erf : max abs error %.3g at x = %a (%.9g), %llu special-value mismatches\n", e.err,
              FromBits(e.bits), FromBits(e.bits), static_cast<unsigned long long>(e.bad_special));
  std::printf("erfc: max abs error %.3g at x = %a (%.9g), %llu special-value mismatches\n", c.err,
              FromBits(c.bits), FromBits(c.bits), static_cast<unsigned long long>(c.bad_special));
  std::printf("erfc: max rel error %.3g for x > 2 (results >= FLT_MIN) at x = %a (%.9g)\n", c.rel,
              FromBits(c.rel_bits), FromBits(c.rel_bits));
  return e.err <= 1e-6 && c.err <= 1e-6 && c.rel <= 1e-6 && e.bad_special == 0 &&
                 c.bad_special == 0
             ? 0
             : 1;
}

template <typename F>
double NsPerValue(F f, float* d, const float* a, int64_t n, int reps) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) {
    f(d, a, n);
    asm volatile("" ::: "memory");
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (double(n) * reps);
}

int RunTime(int rounds) {
  // 8192 values (64 KiB in and out: L2), uniform in [-2, 2] as bench/kernels.py's
  // erfc row, and in [-5, 5].
  constexpr int64_t kN = 8192;
  std::vector<float> a(kN), d(kN);
  for (double lo : {2.0, 5.0}) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-lo, lo);
    for (auto& v : a) v = u(rng);
    const char* names[7] = {"libmvec erfcf", "Erfc8", "libmvec erff", "Erf8", "1 - Erf8",
                            "Erfc16", "Erf16"};
    std::vector<double> t[7];
    int functions = 5;
    auto mvec_erfc = [](float* d, const float* a, int64_t n) {
      pto_tile::MvecMap<pto_tile::PTO_TILE_MVEC_FN(erfcf)>(d, a, n);
    };
    auto mvec_erf = [](float* d, const float* a, int64_t n) {
      pto_tile::MvecMap<pto_tile::PTO_TILE_MVEC_FN(erff)>(d, a, n);
    };
    auto own_erfc = [](float* d, const float* a, int64_t n) {
      pto_tile::Map8<pto_tile::Erfc8>(d, a, n);
    };
    auto own_erf = [](float* d, const float* a, int64_t n) {
      pto_tile::Map8<pto_tile::Erf8>(d, a, n);
    };
    // Erfc8 before its tail (absolute accuracy only): what the tail test costs.
    auto one_minus_erf = [](float* d, const float* a, int64_t n) {
      pto_tile::Map8<OneMinusErf8>(d, a, n);
    };
    for (int r = 0; r < rounds; ++r) {
      t[0].push_back(NsPerValue(mvec_erfc, d.data(), a.data(), kN, 20));
      t[1].push_back(NsPerValue(own_erfc, d.data(), a.data(), kN, 20));
      t[2].push_back(NsPerValue(mvec_erf, d.data(), a.data(), kN, 20));
      t[3].push_back(NsPerValue(own_erf, d.data(), a.data(), kN, 20));
      t[4].push_back(NsPerValue(one_minus_erf, d.data(), a.data(), kN, 20));
#if defined(__AVX512F__)
      functions = 7;
      t[5].push_back(NsPerValue([](float* d, const float* a, int64_t n) {
        pto_tile::Map16<pto_tile::Erfc16>(d, a, n);
      }, d.data(), a.data(), kN, 20));
      t[6].push_back(NsPerValue([](float* d, const float* a, int64_t n) {
        pto_tile::Map16<pto_tile::Erf16>(d, a, n);
      }, d.data(), a.data(), kN, 20));
#endif
    }
    std::printf("x uniform in [-%g, %g], %lld values, %d interleaved rounds (ns per value):\n", lo,
                lo, static_cast<long long>(kN), rounds);
    for (int f = 0; f < functions; ++f) {
      std::sort(t[f].begin(), t[f].end());
      std::printf("  %-14s best %.3f  median %.3f\n", names[f], t[f][0], t[f][t[f].size() / 2]);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "check") return RunCheck(argc > 2 ? std::atoi(argv[2]) : 2);
#if defined(__AVX512F__)
  if (mode == "same16") return RunSame16(argc > 2 ? std::atoi(argv[2]) : 2);
#endif
  if (mode == "time") return RunTime(argc > 2 ? std::atoi(argv[2]) : 30);
  std::fprintf(stderr, "usage: erf_probe check [THREADS] | time [ROUNDS]\n");
  return 2;
}
