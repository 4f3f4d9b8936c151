// pto_tile.h's FP16 and BF16 paths against a double-precision reference
// (testing/double_reference.h): the conversion runs (HalvesToFloats,
// FloatsToHalves, RoundToHalves: 16 at a time with AVX-512F, 8 with F16C,
// one at a time elsewhere and in the tails; FloatsToBf16s, RoundToBf16s: 16
// at a time with AVX2, a group holding a NaN one at a time), the tile moves
// and run-time-length rows built on them, TCvt, and f16/bf16 arithmetic
// rounded through them, on values at the types' limits: 65504 and the
// midpoint to 65536 that rounds to inf, f16 subnormals and the ties between
// them, the bf16 maximum and the f32 subnormals bf16 keeps, NaNs whose
// payload lies only in the bits rounding drops, and exp's results across
// the f16 range (-18 to 11.1) and near f32's ends for bf16.
//
// Built three ways, as pto_tile_rows_reference_test is: baseline (scalar
// conversions), _v3 (F16C, 8 lanes; AVX2 bf16) and _v4 (16 lanes); the v3
// and v4 binaries skip, naming the missing feature, on a CPU without it.
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compiler/targets/host/pto_tile_convert.h"
#include "compiler/targets/host/pto_tile_elementwise.h"
#include "compiler/targets/host/pto_tile_moves.h"
#include "compiler/targets/host/pto_tile_rows.h"
#include "compiler/targets/host/testing/double_reference.h"
#include "gtest/gtest.h"

namespace {

using pto_tile::BitsFromFloat;
using pto_tile::FloatFromBits;
using pto_tile_testing::ExpBound;
using pto_tile_testing::F16Bits;
using pto_tile_testing::F16Value;
using pto_tile_testing::kF32Unit;
using pto_tile_testing::ReferenceCheck;
using pto_tile_testing::RoundToBf16;
using pto_tile_testing::RoundToF16;
using pto_tile_testing::StoredBounds;

std::string Hex(uint32_t bits) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%08x", bits);
  return s;
}

// f32 values at binary16's edges and a random sample of its range.
std::vector<float> HalfEdgeCases() {
  std::vector<float> v = {0.0f, 1.0f, 65504.0f, 65512.0f, 65519.996f, 65520.0f, 65536.0f,
                          70000.0f, 1e30f, FLT_MAX, INFINITY, 0x1p-24f, 0x1p-25f,
                          0x1.000002p-25f, 3 * 0x1p-25f, 5 * 0x1p-25f, 0x1p-14f,
                          0x1p-14f - 0x1p-25f, 0x1p-14f - 0x1p-24f, 1e-8f, FLT_TRUE_MIN,
                          FLT_MIN, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 2047.0f, 2049.0f,
                          4097.0f};
  const size_t named = v.size();
  for (size_t i = 0; i < named; ++i) v.push_back(-v[i]);
  for (uint32_t nan : {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0xFF800001u, 0x7FFFE000u,
                       0x7F801FFFu}) {
    v.push_back(FloatFromBits(nan));
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {  // exponents 2^-27 .. 2^22
    const uint32_t exp = 100 + rng() % 50;
    v.push_back(FloatFromBits((rng() & 0x80000000u) | (exp << 23) | (rng() & 0x7FFFFFu)));
  }
  return v;
}

// f32 values at bfloat16's edges and a random sample of every binade.
std::vector<float> Bf16EdgeCases() {
  std::vector<uint32_t> bits = {
      0x00000000u, 0x3F800000u, 0x7F7F0000u /* bf16 max */, 0x7F7F7FFFu /* -> max */,
      0x7F7F8000u /* tie, odd -> inf */, 0x7F7FFFFFu /* FLT_MAX -> inf */,
      0x7F7E8000u /* tie, even -> stays */, 0x7F800000u, 0x00000001u, 0x00008000u,
      0x00018000u, 0x00007FFFu, 0x007FFFFFu, 0x00400000u, 0x00808000u, 0x3F808000u,
      0x3F818000u, 0x3F80FFFFu};
  const size_t named = bits.size();
  for (size_t i = 0; i < named; ++i) bits.push_back(bits[i] | 0x80000000u);
  std::mt19937 rng(6);
  for (int i = 0; i < 2000; ++i) {
    uint32_t w = rng();
    if ((w & 0x7F800000u) == 0x7F800000u) w &= 0xBFFFFFFFu;  // no NaN here
    bits.push_back(w);
  }
  std::vector<float> v;
  for (uint32_t w : bits) v.push_back(FloatFromBits(w));
  return v;
}

// NaNs for bf16: with a payload only in the low 16 bits (rounding must not
// make them inf) and in the high ones.
const uint32_t kBf16Nans[] = {0x7F800001u, 0xFF800001u, 0x7FC00000u, 0x7FFFFFFFu, 0xFF80FFFFu};

// The binary16 bits FloatsToHalves must give f: f correctly rounded, a NaN
// the quiet NaN of its sign (FloatToHalf's rule).
uint16_t WantHalf(float f) {
  if (std::isnan(f)) return std::signbit(f) ? 0xFE00 : 0x7E00;
  return F16Bits(RoundToF16(f));
}

// The bfloat16 bits FloatsToBf16s must give a non-NaN f.
uint16_t WantBf16(float f) {
  return static_cast<uint16_t>(BitsFromFloat(static_cast<float>(RoundToBf16(f))) >> 16);
}

// Runs over `v` from each start 0..16 and at each length 1..40 from start 3,
// so every value passes through the 16-lane, 8-lane and scalar parts.
template <typename Run>
void ForEachRun(size_t size, const Run& run) {
  for (size_t start = 0; start <= 16; ++start) run(start, size - start);
  for (size_t n = 1; n <= 40; ++n) run(3, n);
}

TEST(PtoTileStorageReferenceTest, HalvesToFloatsIsExactForEveryHalf) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::vector<uint16_t> all(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = static_cast<uint16_t>(h);
  ReferenceCheck check("HalvesToFloats");
  ForEachRun(all.size(), [&](size_t start, size_t n) {
    std::vector<float> got(n);
    pto_tile::HalvesToFloats(got.data(), all.data() + start, static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      const uint16_t h = all[start + i];
      check.Exact(got[i], F16Value(h), [&] { return "half " + Hex(h); });
      if (std::isnan(got[i]) && std::signbit(got[i]) != ((h & 0x8000) != 0)) {
        ADD_FAILURE() << "NaN half " << Hex(h) << " lost its sign";
      }
    }
  });
}

// FloatsToHalves (TStore's and TStoreRowN's f16 run), RoundToHalves (f16
// results rounded in place: RoundTile<half>) and TCvt to FP16 give each
// value correctly rounded, overflow to inf from 65520, ties to even in the
// subnormals, NaN -> the quiet NaN of its sign.
TEST(PtoTileStorageReferenceTest, FloatsToHalvesRoundCorrectlyAtTheLimits) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  const std::vector<float> v = HalfEdgeCases();
  ReferenceCheck stores("FloatsToHalves"), rounded("RoundToHalves");
  ForEachRun(v.size(), [&](size_t start, size_t n) {
    std::vector<uint16_t> got(n);
    std::vector<float> inplace(v.begin() + start, v.begin() + start + n);
    pto_tile::FloatsToHalves(got.data(), v.data() + start, static_cast<int64_t>(n));
    pto_tile::RoundToHalves(inplace.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      const float f = v[start + i];
      const uint16_t want = WantHalf(f);
      auto where = [&] { return "f32 " + Hex(BitsFromFloat(f)) + " at " + std::to_string(i); };
      stores.Exact(F16Value(got[i]), F16Value(want), where);
      rounded.Exact(inplace[i], F16Value(want), where);
      if (std::isnan(f) && got[i] != want) {
        ADD_FAILURE() << where() << ": NaN stored as " << Hex(got[i]) << ", want " << Hex(want);
      }
    }
  });
  constexpr int64_t N = 53;
  float cvt[N];
  pto_tile::TCvt<N, pto_tile::half, float, float>(cvt, v.data() + 7);
  ReferenceCheck tcvt("TCvt<FP16>");
  for (int64_t i = 0; i < N; ++i) {
    tcvt.Exact(cvt[i], F16Value(WantHalf(v[7 + i])), [&] { return std::to_string(i); });
  }
}

// TLoad/TStore of f16 tiles (rows of E3 through the conversion runs) and
// the run-time-length rows (TLoadRowN pads to whole chunks with zeros;
// TStoreRowN writes exactly c halves).
template <int64_t E3>
void CheckHalfTileMoves(const std::vector<float>& v, ReferenceCheck& check) {
  constexpr int64_t R = 3, kLd = E3 + 5;
  std::vector<uint16_t> gm(R * kLd, 0xABCD);
  std::vector<float> src(R * E3), back(R * E3);
  for (int64_t i = 0; i < R * E3; ++i) src[i] = v[(i * 7) % v.size()];
  pto_tile::TStore<pto_tile::half, 1, 1, R, E3>(reinterpret_cast<pto_tile::half*>(gm.data()),
                                                src.data(), 0, 0, kLd);
  pto_tile::TLoad<pto_tile::half, 1, 1, R, E3>(back.data(),
                                               reinterpret_cast<pto_tile::half*>(gm.data()), 0, 0,
                                               kLd);
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t j = 0; j < kLd; ++j) {
      auto where = [&] { return "E3=" + std::to_string(E3) + " r=" + std::to_string(r) +
                                " j=" + std::to_string(j); };
      if (j >= E3) {
        check.Exact(gm[r * kLd + j], 0xABCD, where);  // not written
        continue;
      }
      const uint16_t want = WantHalf(src[r * E3 + j]);
      check.Exact(F16Value(gm[r * kLd + j]), F16Value(want), where);
      check.Exact(back[r * E3 + j], F16Value(want), where);
    }
  }
}

TEST(PtoTileStorageReferenceTest, HalfTileMovesAndRunTimeRows) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  const std::vector<float> v = HalfEdgeCases();
  ReferenceCheck tiles("TLoad/TStore of f16 tiles");
  CheckHalfTileMoves<5>(v, tiles);
  CheckHalfTileMoves<16>(v, tiles);
  CheckHalfTileMoves<24>(v, tiles);
  CheckHalfTileMoves<33>(v, tiles);
  ReferenceCheck rows("TLoadRowN/TStoreRowN of f16 rows");
  using pto_tile::kRowChunk;
  for (int64_t c : {1, 7, 8, 9, 16, 17, 31, 33, 64, 65, 100}) {
    for (int64_t s3 : {1, 2}) {
      const int64_t end = (c + kRowChunk - 1) / kRowChunk * kRowChunk;
      std::vector<uint16_t> gm(c * s3 + 8, 0x3C00);
      for (int64_t j = 0; j < c; ++j) gm[j * s3] = WantHalf(v[(j * 5 + s3) % v.size()]);
      std::vector<float> row(end + 8, 9.0f);
      pto_tile::TLoadRowN<pto_tile::half>(row.data(),
                                          reinterpret_cast<pto_tile::half*>(gm.data()), s3, c);
      for (int64_t j = 0; j < end; ++j) {
        rows.Exact(row[j], j < c ? F16Value(gm[j * s3]) : 0.0,
                   [&] { return "load c=" + std::to_string(c) + " j=" + std::to_string(j); });
      }
      std::vector<uint16_t> out(c + 8, 0x1234);
      std::vector<float> f(end);
      for (int64_t j = 0; j < c; ++j) f[j] = v[(j * 3 + 1) % v.size()];
      pto_tile::TStoreRowN<pto_tile::half>(reinterpret_cast<pto_tile::half*>(out.data()), f.data(),
                                           c);
      for (int64_t j = 0; j < c + 8; ++j) {
        auto where = [&] { return "store c=" + std::to_string(c) + " j=" + std::to_string(j); };
        if (j < c) {
          rows.Exact(F16Value(out[j]), F16Value(WantHalf(f[j])), where);
        } else {
          rows.Exact(out[j], 0x1234, where);
        }
      }
    }
  }
}

// FloatsToBf16s (TStore of bf16 tiles), RoundToBf16s (bf16 results rounded
// in place: RoundTile<bf16>) and TCvt to BF16: each value correctly rounded
// (ties to even, FLT_MAX and the tie above the bf16 maximum to inf, f32
// subnormals kept), NaN stays NaN of its sign and quiet, whether a group of
// 16 holds one (the scalar form) or not.
TEST(PtoTileStorageReferenceTest, Bf16RoundsCorrectlyAtTheLimits) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::vector<float> v = Bf16EdgeCases();
  for (size_t i = 0; i < 5; ++i) v.insert(v.begin() + 40 + 37 * i, FloatFromBits(kBf16Nans[i]));
  ReferenceCheck stores("FloatsToBf16s"), rounded("RoundToBf16s"), tcvt("TCvt<BF16>");
  ForEachRun(v.size(), [&](size_t start, size_t n) {
    std::vector<pto_tile::bf16> got(n);
    std::vector<float> inplace(v.begin() + start, v.begin() + start + n);
    pto_tile::FloatsToBf16s(reinterpret_cast<uint16_t*>(got.data()), v.data() + start,
                            static_cast<int64_t>(n));
    pto_tile::RoundTile<pto_tile::bf16>(inplace.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      const float f = v[start + i];
      const uint16_t g = got[i].bits;
      auto where = [&] { return "f32 " + Hex(BitsFromFloat(f)) + " at " + std::to_string(i); };
      if (std::isnan(f)) {
        const uint32_t fw = BitsFromFloat(f);
        for (uint32_t w : {static_cast<uint32_t>(g) << 16, BitsFromFloat(inplace[i])}) {
          if ((w & 0x7FC00000u) != 0x7FC00000u || (w >> 31) != (fw >> 31)) {
            ADD_FAILURE() << where() << ": NaN rounded to " << Hex(w) << ", not a quiet NaN of its sign";
          }
        }
        continue;
      }
      const uint16_t want = WantBf16(f);
      stores.Exact(pto_tile::Bf16ToFloat(g), pto_tile::Bf16ToFloat(want), where);
      rounded.Exact(inplace[i], pto_tile::Bf16ToFloat(want), where);
    }
  });
  constexpr int64_t N = 45;
  float cvt[N];
  pto_tile::TCvt<N, pto_tile::bf16, float, float>(cvt, v.data() + 2);
  for (int64_t i = 0; i < N; ++i) {
    const float f = v[2 + i];
    if (std::isnan(f)) continue;
    tcvt.Exact(cvt[i], pto_tile::Bf16ToFloat(WantBf16(f)), [&] { return std::to_string(i); });
  }
}

// f16 / bf16 arithmetic: computed in f32 (one rounding, or exp within 2
// ulps) and rounded to the destination type, so each stored value lies
// between the roundings of the f32 result's interval's ends.
template <typename D, typename Round>
void CheckArithmetic(const char* type, const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& x, Round round) {
  constexpr int64_t N = 203;
  ASSERT_GE(a.size(), static_cast<size_t>(N));
  ASSERT_GE(x.size(), static_cast<size_t>(N));
  ReferenceCheck add(std::string("TAdd<") + type + ">"), mul(std::string("TMul<") + type + ">"),
      div(std::string("TDiv<") + type + ">"), exp(std::string("TExp<") + type + ">");
  for (size_t first = 0; first + N <= a.size(); first += N) {
    float s[N], p[N], q[N];
    pto_tile::TAdd<N, D>(s, a.data() + first, b.data() + first);
    pto_tile::TMul<N, D>(p, a.data() + first, b.data() + first);
    pto_tile::TDiv<N, D>(q, a.data() + first, b.data() + first);
    for (int64_t i = 0; i < N; ++i) {
      const double x0 = a[first + i], y0 = b[first + i];
      auto where = [&] { return std::to_string(x0) + ", " + std::to_string(y0); };
      const double ws = x0 + y0, wp = x0 * y0, wq = x0 / y0;
      add.Between(s[i], ws, StoredBounds(ws, kF32Unit * std::fabs(ws), round), where);
      mul.Between(p[i], wp, StoredBounds(wp, kF32Unit * std::fabs(wp), round), where);
      div.Between(q[i], wq, StoredBounds(wq, kF32Unit * std::fabs(wq), round), where);
    }
  }
  for (size_t first = 0; first + N <= x.size(); first += N) {
    float e[N];
    pto_tile::TExp<N, D>(e, x.data() + first);
    for (int64_t i = 0; i < N; ++i) {
      const double x0 = x[first + i], want = std::exp(x0);
      exp.Between(e[i], want, StoredBounds(want, ExpBound(x0, 2.0), round),
                  [&] { return "exp(" + std::to_string(x0) + ")"; });
    }
  }
}

TEST(PtoTileStorageReferenceTest, HalfArithmeticAtTheLimits) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::vector<float> a, b, x;
  // Sums and products that reach 65504, the tie at 65520 and past it, and
  // the subnormals (2^-12 * 2^-13 = 2^-25, a tie to 0).
  const float pairs[][2] = {{65504, 16},     {65504, 8},       {65504, 15.99f}, {60000, 6000},
                            {-65504, -16},   {256, 256},       {255.875f, 256}, {0x1p-12f, 0x1p-13f},
                            {0x1p-12f, 3 * 0x1p-13f}, {0x1p-14f, 0.5f}, {0x1p-24f, 0.5f},
                            {65504, 0.5f},   {1, 0x1p-24f},    {3, 7},          {65504, -65504}};
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> mag(-26, 15.9);
  for (int i = 0; i < 203 * 5; ++i) {
    const size_t k = static_cast<size_t>(i) % (sizeof pairs / sizeof pairs[0]);
    if (i % 3 == 0) {
      a.push_back(pairs[k][0]);
      b.push_back(pairs[k][1]);
    } else {
      a.push_back(static_cast<float>(RoundToF16((rng() % 2 ? -1 : 1) * std::exp2(mag(rng)))));
      b.push_back(static_cast<float>(RoundToF16((rng() % 2 ? -1 : 1) * std::exp2(mag(rng)))));
    }
  }
  // exp from -18 (below half the smallest subnormal) to 11.2 (past 65504
  // at 11.0898) in f16 steps.
  for (double t = -18.0; t <= 11.2; t += 0.0078125) x.push_back(static_cast<float>(RoundToF16(t)));
  for (float& y : b) y = y == 0 ? 1.0f : y;
  CheckArithmetic<pto_tile::half>("FP16", a, b, x, RoundToF16);
}

TEST(PtoTileStorageReferenceTest, Bf16ArithmeticAtTheLimits) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::vector<float> a, b, x;
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> mag(-140, 127);
  for (int i = 0; i < 203 * 5; ++i) {
    a.push_back(static_cast<float>(RoundToBf16((rng() % 2 ? -1 : 1) * std::exp2(mag(rng)))));
    b.push_back(static_cast<float>(RoundToBf16((rng() % 2 ? -1 : 1) * std::exp2(mag(rng)))));
  }
  a[0] = b[0] = 0x1.fep127f;  // max + max: inf
  a[3] = 0x1.fep127f;
  b[3] = 0x1p-133f;  // tiny against max
  // exp from -104 (0 in bf16 below 2^-134) to 89 (inf past 88.72) in bf16
  // steps, densest where it overflows and underflows.
  for (double t = -104.0; t <= 89.0; t += 0.0625) x.push_back(static_cast<float>(RoundToBf16(t)));
  for (double t = 88.0; t <= 89.0; t += 1.0 / 256) x.push_back(static_cast<float>(RoundToBf16(t)));
  for (float& y : b) y = y == 0 ? 1.0f : y;
  CheckArithmetic<pto_tile::bf16>("BF16", a, b, x, RoundToBf16);
}

}  // namespace
