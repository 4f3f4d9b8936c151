// pto_tile.h's fast row forms on x86-64-v3, built with that ISA level as
// kernels for the host-x86_64-v3 target are: f32 max/min rows through
// vmaxps/vminps with a NaN check per row (ReduceRow) and softmax's fused
// x - m, exp, sum (TSubExpSumRow) give the same bits as the exact forms they
// replace, for NaN anywhere in a row, -inf and inf rows, signed zeros, rows
// of one value and rows with a tail past the last group of 16. Built for
// x86-64-v4 too (pto_tile_rows_test_v4): the 16-lane forms, the same bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "compiler/targets/host/pto_tile_convert.h"
#include "compiler/targets/host/pto_tile_elementwise.h"
#include "compiler/targets/host/pto_tile_exp.h"
#include "compiler/targets/host/pto_tile_reduce.h"
#include "compiler/targets/host/pto_tile_rows.h"
#include "compiler/targets/host/testing/double_reference.h"
#include "gtest/gtest.h"

#if !defined(__AVX__) || !PTO_TILE_FAST_EXP
#error "pto_tile_rows_test is built with -march=x86-64-v3 or -v4 (AVX2 and FMA)"
#endif

namespace {

using pto_tile::BitsFromFloat;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Bit patterns of NaNs with different signs and payloads: which one a max
// returns is part of its result.
float NanWith(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Rows of L values worth checking: random, with NaNs (several payloads, at
// the start, in the middle, in the tail), -inf/inf, all -inf, signed zeros.
template <int64_t L>
std::vector<std::vector<float>> Rows(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-20.0f, 20.0f);
  std::vector<std::vector<float>> rows;
  auto random_row = [&] {
    std::vector<float> r(L);
    for (float& x : r) x = u(rng);
    return r;
  };
  for (int k = 0; k < 8; ++k) rows.push_back(random_row());
  for (int64_t at : {int64_t{0}, L / 2, L - 1}) {
    std::vector<float> r = random_row();
    r[at] = NanWith(0x7FC00001u);
    rows.push_back(r);
    r[(at + 5) % L] = NanWith(0xFFC00002u);  // a second NaN, another payload
    rows.push_back(r);
  }
  std::vector<float> r = random_row();
  r[L / 3] = -kInf;
  rows.push_back(r);
  r[L - 1] = kInf;
  rows.push_back(r);
  rows.push_back(std::vector<float>(L, -kInf));
  rows.push_back(std::vector<float>(L, kInf));
  std::vector<float> zeros(L);
  for (int64_t k = 0; k < L; ++k) zeros[k] = (k * 7) % 3 == 0 ? 0.0f : -0.0f;
  rows.push_back(zeros);
  for (float& x : zeros) x = -x;
  rows.push_back(zeros);
  // A zero maximum (minimum) whose first occurrence in lane 3 (k % 16 == 3)
  // is in the second group of 16 and a zero of the other sign later in the
  // first group of 64's pair: which zero a max keeps depends on the order,
  // so ReduceRow's four pairs of accumulators must give way to the exact
  // loop (without that, max gives +0 and min -0 here).
  if constexpr (L >= 128) {
    std::vector<float> neg(L, -1.0f), pos(L, 1.0f);
    neg[16 + 3] = -0.0f;
    neg[64 + 3] = 0.0f;
    pos[16 + 3] = 0.0f;
    pos[64 + 3] = -0.0f;
    rows.push_back(neg);
    rows.push_back(pos);
  }
  return rows;
}

template <int64_t L>
void CheckMaxMin() {
  for (const std::vector<float>& row : Rows<L>(static_cast<uint32_t>(L))) {
    float got_max, got_min;
    pto_tile::TRedMax<1, 1, 1, L, 3>(&got_max, row.data());
    pto_tile::TRedMin<1, 1, 1, L, 3>(&got_min, row.data());
    // The exact forms: ReduceRowExact for rows of 32 or more, else the
    // left-to-right loop TReduce runs for short rows.
    float want_max = pto_tile::MaxOp<float>::Init(), want_min = pto_tile::MinOp<float>::Init();
    if constexpr (L >= 2 * pto_tile::kReduceLanes) {
      want_max = pto_tile::ReduceRowExact<pto_tile::MaxOp<float>, L>(row.data());
      want_min = pto_tile::ReduceRowExact<pto_tile::MinOp<float>, L>(row.data());
    } else {
      for (float x : row) {
        want_max = pto_tile::MaxOp<float>::Apply(want_max, x);
        want_min = pto_tile::MinOp<float>::Apply(want_min, x);
      }
    }
    EXPECT_EQ(BitsFromFloat(got_max), BitsFromFloat(want_max)) << "L=" << L << " " << want_max;
    EXPECT_EQ(BitsFromFloat(got_min), BitsFromFloat(want_min)) << "L=" << L << " " << want_min;
    bool nan = false;
    for (float x : row) nan = nan || std::isnan(x);
    EXPECT_EQ(std::isnan(got_max), nan) << "L=" << L;
  }
}

TEST(PtoTileRowsTest, FastMaxMinKeepEveryBit) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckMaxMin<1>();
  CheckMaxMin<31>();
  CheckMaxMin<32>();
  CheckMaxMin<37>();    // a tail of 5 past two groups of 16
  CheckMaxMin<256>();
  CheckMaxMin<1000>();  // a tail of 8
  CheckMaxMin<1024>();
}

// A multi-row tile takes the same path per row.
TEST(PtoTileRowsTest, FastMaxOverRowsOfATile) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::vector<std::vector<float>> rows = Rows<48>(3);
  std::vector<float> tile;
  for (const std::vector<float>& r : rows) tile.insert(tile.end(), r.begin(), r.end());
  constexpr int64_t kRows = 20;
  ASSERT_EQ(rows.size(), static_cast<size_t>(kRows));  // rows of 48: no zero-order rows
  float got[kRows];
  pto_tile::TRedMax<1, 1, kRows, 48, 3>(got, tile.data());
  for (int64_t r = 0; r < kRows; ++r) {
    const float want = pto_tile::ReduceRowExact<pto_tile::MaxOp<float>, 48>(rows[r].data());
    EXPECT_EQ(BitsFromFloat(got[r]), BitsFromFloat(want)) << r;
  }
}

// Sums are the same bits, except which NaN a sum of two different NaNs
// keeps: addps returns its first operand's, and the C++ compiler may order
// an addition's operands either way (neither form fixes it; numpy and torch
// do not either).
bool SameSum(float got, float want) {
  return BitsFromFloat(got) == BitsFromFloat(want) || (std::isnan(got) && std::isnan(want));
}

template <int64_t C>
void CheckSubExpSum() {
  for (const std::vector<float>& row : Rows<C>(static_cast<uint32_t>(C) + 100)) {
    float m[1];
    pto_tile::TRedMax<1, 1, 1, C, 3>(m, row.data());
    // Also an m that is not the row's max (exp above 1, overflow to inf).
    for (float mv : {m[0], -3.5f, -100.0f}) {
      std::vector<float> d(C), want_e(C), got_e(C);
      float want_s, got_s;
      pto_tile::TSubRows<1, C, pto_tile::kFull, pto_tile::kRow>(d.data(), row.data(), &mv);
      pto_tile::TExp<C>(want_e.data(), d.data());
      pto_tile::TRedSum<1, 1, 1, C, 3>(&want_s, want_e.data());
      pto_tile::TSubExpSumRow<C>(got_e.data(), &got_s, row.data(), &mv);
      for (int64_t k = 0; k < C; ++k) {
        ASSERT_EQ(BitsFromFloat(got_e[k]), BitsFromFloat(want_e[k]))
            << "C=" << C << " k=" << k << " x=" << row[k] << " m=" << mv;
      }
      EXPECT_TRUE(SameSum(got_s, want_s)) << "C=" << C << " m=" << mv << ": " << got_s
                                          << " vs " << want_s;
      // In place, as generated code calls it: e over x, the sum over m,
      // prefetching a next row (here the row itself): the same bits.
      std::vector<float> inplace = row;
      float ms = mv;
      pto_tile::TSubExpSumRow<C>(inplace.data(), &ms, inplace.data(), &ms, row.data());
      EXPECT_EQ(std::memcmp(inplace.data(), want_e.data(), C * sizeof(float)), 0) << "C=" << C;
      EXPECT_TRUE(SameSum(ms, want_s)) << "C=" << C;
    }
    // m the row's max (kMaxOfX): every value takes softmax's exp, as the
    // whole-tile instruction TExpSoftmax gives it (Exp16Softmax with
    // AVX-512F, Exp8Softmax with AVX2, the tail and rows under 32 too;
    // without either TExp's).
    std::vector<float> d(C), want_e(C), got_e(C), each(C), general(C);
    float want_s, got_s;
    pto_tile::TSubRows<1, C, pto_tile::kFull, pto_tile::kRow>(d.data(), row.data(), m);
    pto_tile::TExpSoftmax<C>(want_e.data(), d.data());
    pto_tile::TExp<C>(general.data(), d.data());
#if defined(__AVX512F__)
    pto_tile::Map16<pto_tile::Exp16Softmax>(each.data(), d.data(), C);
#elif PTO_TILE_FAST_EXP
    pto_tile::Map8<pto_tile::Exp8Softmax>(each.data(), d.data(), C);
#else
    each = general;
#endif
    EXPECT_EQ(std::memcmp(want_e.data(), each.data(), C * sizeof(float)), 0) << "C=" << C;
    pto_tile::TRedSum<1, 1, 1, C, 3>(&want_s, want_e.data());
    pto_tile::TSubExpSumRow<C, true>(got_e.data(), &got_s, row.data(), m);
    EXPECT_EQ(std::memcmp(got_e.data(), want_e.data(), C * sizeof(float)), 0) << "C=" << C;
    EXPECT_TRUE(SameSum(got_s, want_s)) << "C=" << C << ": " << got_s << " vs " << want_s;
  }
}

TEST(PtoTileRowsTest, SubExpSumMatchesThreeInstructions) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckSubExpSum<1>();
  CheckSubExpSum<7>();
  CheckSubExpSum<31>();
  CheckSubExpSum<32>();
  CheckSubExpSum<37>();
  CheckSubExpSum<256>();
  CheckSubExpSum<1000>();
  CheckSubExpSum<1024>();
}

// TSoftmaxRow (host codegen's one call for pypto's FP32 softmax row) gives
// the bits of the four instructions it replaces (the exp softmax's,
// TSubExpSumRow<C, true>), at lengths kept in
// registers (32..256 in groups of 16, with AVX-512F) and not, in place too
// (o over x). NaN rows: NaN wherever the sequence has one (which NaN, as in
// SameSum, is the C++ compiler's choice of operand order).
template <int64_t C>
void CheckSoftmaxRow() {
  for (const std::vector<float>& row : Rows<C>(static_cast<uint32_t>(C) + 300)) {
    float m[1], r[1];
    std::vector<float> e(C), want(C), got(C, 1.0f);
    pto_tile::TRedMax<1, 1, 1, C, 3>(m, row.data());
    pto_tile::TSubExpSumRow<C, true>(e.data(), m, row.data(), m);
    pto_tile::TRecip<1>(r, m);
    pto_tile::TMulRows<1, C, pto_tile::kFull, pto_tile::kRow>(want.data(), e.data(), r);
    pto_tile::TSoftmaxRow<C>(got.data(), row.data(), row.data());
    std::vector<float> inplace = row;
    pto_tile::TSoftmaxRow<C>(inplace.data(), inplace.data());
    for (int64_t k = 0; k < C; ++k) {
      ASSERT_TRUE(SameSum(got[k], want[k]))
          << "C=" << C << " k=" << k << " x=" << row[k] << ": " << got[k] << " vs " << want[k];
      ASSERT_TRUE(SameSum(inplace[k], want[k])) << "in place, C=" << C << " k=" << k;
    }
  }
}

// A softmax computed a whole tile of R rows at a time, as host codegen
// emits it where the row forms do not apply (TRedMax, TSubRows,
// TExpSoftmax, TRedSum, TRecip, TMulRows over the tile), gives each row
// TSoftmaxRow's bits.
template <int64_t R, int64_t C>
void CheckWholeTileSoftmax() {
  const std::vector<std::vector<float>> rows = Rows<C>(static_cast<uint32_t>(C) + 400);
  for (size_t first = 0; first < rows.size(); first += R) {
    std::vector<float> x(R * C), d(R * C), e(R * C), y(R * C);
    for (int64_t r = 0; r < R; ++r) {
      const std::vector<float>& row = rows[std::min(first + r, rows.size() - 1)];
      std::copy(row.begin(), row.end(), x.begin() + r * C);
    }
    float m[R], s[R], inv[R];
    pto_tile::TRedMax<1, 1, R, C, 3>(m, x.data());
    pto_tile::TSubRows<R, C, pto_tile::kFull, pto_tile::kRow>(d.data(), x.data(), m);
    pto_tile::TExpSoftmax<R * C>(e.data(), d.data());
    pto_tile::TRedSum<1, 1, R, C, 3>(s, e.data());
    pto_tile::TRecip<R>(inv, s);
    pto_tile::TMulRows<R, C, pto_tile::kFull, pto_tile::kRow>(y.data(), e.data(), inv);
    for (int64_t r = 0; r < R; ++r) {
      std::vector<float> want(C);
      pto_tile::TSoftmaxRow<C>(want.data(), x.data() + r * C);
      for (int64_t k = 0; k < C; ++k) {
        ASSERT_TRUE(SameSum(y[r * C + k], want[k]))
            << "C=" << C << " row " << first + r << " k=" << k << ": " << y[r * C + k] << " vs "
            << want[k];
      }
    }
  }
}

TEST(PtoTileRowsTest, WholeTileSoftmaxIsTheRowsSoftmax) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckWholeTileSoftmax<3, 8>();
  CheckWholeTileSoftmax<4, 24>();
  CheckWholeTileSoftmax<2, 40>();
  CheckWholeTileSoftmax<4, 256>();
  CheckWholeTileSoftmax<2, 1000>();
}

TEST(PtoTileRowsTest, SoftmaxRowMatchesFourInstructions) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckSoftmaxRow<1>();
  CheckSoftmaxRow<16>();
  CheckSoftmaxRow<32>();
  CheckSoftmaxRow<40>();
  CheckSoftmaxRow<48>();
  CheckSoftmaxRow<128>();
  CheckSoftmaxRow<256>();
  CheckSoftmaxRow<272>();
  CheckSoftmaxRow<1024>();
}

// The run-time-length forms (rows over a symbolic last dim) give the bits
// of the static forms at the same length, so dynamic and static kernels
// agree: ReduceRowN against ReduceRow (TRedMax/TRedMin/TRedSum, whose f32
// sums run in vector registers: also against ReduceRowExact), and
// TSubExpSumRowN against TSubExpSumRow, whose e it pads with zeros to whole
// chunks of kRowChunk.
template <int64_t C>
void CheckRunTimeLength() {
  using pto_tile::kRowChunk;
  constexpr int64_t kEnd = (C + kRowChunk - 1) / kRowChunk * kRowChunk;
  for (const std::vector<float>& row : Rows<C>(static_cast<uint32_t>(C) + 200)) {
    float want[3], got[3];
    pto_tile::TRedMax<1, 1, 1, C, 3>(&want[0], row.data());
    pto_tile::TRedMin<1, 1, 1, C, 3>(&want[1], row.data());
    pto_tile::TRedSum<1, 1, 1, C, 3>(&want[2], row.data());
    pto_tile::TRedMaxRowN(&got[0], row.data(), C);
    pto_tile::TRedMinRowN(&got[1], row.data(), C);
    pto_tile::TRedSumRowN(&got[2], row.data(), C);
    EXPECT_EQ(BitsFromFloat(got[0]), BitsFromFloat(want[0])) << "max C=" << C;
    EXPECT_EQ(BitsFromFloat(got[1]), BitsFromFloat(want[1])) << "min C=" << C;
    EXPECT_TRUE(SameSum(got[2], want[2])) << "sum C=" << C << ": " << got[2] << " vs " << want[2];
    if constexpr (C >= 2 * pto_tile::kReduceLanes) {  // sums in vector registers, exact order
      const float exact = pto_tile::ReduceRowExact<pto_tile::SumOp<float>, C>(row.data());
      EXPECT_TRUE(SameSum(want[2], exact)) << "sum C=" << C << ": " << want[2] << " vs " << exact;
    }
    for (float mv : {want[0], -3.5f}) {
      std::vector<float> want_e(C), got_e(kEnd, 1.0f);
      float want_s, got_s;
      pto_tile::TSubExpSumRow<C>(want_e.data(), &want_s, row.data(), &mv);
      pto_tile::TSubExpSumRowN(got_e.data(), &got_s, row.data(), &mv, C);
      EXPECT_EQ(std::memcmp(got_e.data(), want_e.data(), C * sizeof(float)), 0) << "C=" << C;
      for (int64_t k = C; k < kEnd; ++k) EXPECT_EQ(BitsFromFloat(got_e[k]), 0u) << k;
      EXPECT_TRUE(SameSum(got_s, want_s)) << "C=" << C << " m=" << mv;
    }
    std::vector<float> want_e(C), got_e(kEnd, 1.0f);  // softmax's exp (m the row's max)
    float want_s, got_s;
    pto_tile::TSubExpSumRow<C, true>(want_e.data(), &want_s, row.data(), &want[0]);
    pto_tile::TSubExpSumRowN<true>(got_e.data(), &got_s, row.data(), &want[0], C);
    EXPECT_EQ(std::memcmp(got_e.data(), want_e.data(), C * sizeof(float)), 0) << "C=" << C;
    for (int64_t k = C; k < kEnd; ++k) EXPECT_EQ(BitsFromFloat(got_e[k]), 0u) << k;
    EXPECT_TRUE(SameSum(got_s, want_s)) << "C=" << C;
  }
}

TEST(PtoTileRowsTest, RunTimeLengthFormsGiveTheStaticBits) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckRunTimeLength<1>();
  CheckRunTimeLength<31>();
  CheckRunTimeLength<32>();
  CheckRunTimeLength<37>();
  CheckRunTimeLength<256>();
  CheckRunTimeLength<1000>();
}

// SumLanes (the end of host codegen's fused row sums) adds the same pairs in
// the same order as the scalar loop it replaced.
TEST(PtoTileRowsTest, SumLanesIsThePairwiseLoop) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1e4f, 1e4f);
  for (int t = 0; t < 200; ++t) {
    float lane[16], want[16];
    for (float& x : lane) x = u(rng) * (t % 3 == 0 ? 1e-6f : 1.0f);
    if (t % 7 == 1) lane[t % 16] = -0.0f;
    if (t % 11 == 2) lane[(t * 5) % 16] = kInf;
    std::memcpy(want, lane, sizeof lane);
    for (int w = 8; w >= 1; w /= 2) {
      for (int j = 0; j < w; ++j) want[j] = want[j] + want[j + w];
    }
    EXPECT_TRUE(SameSum(pto_tile::SumLanes(lane), want[0])) << t;
  }
  float zeros[16];
  for (float& x : zeros) x = -0.0f;
  EXPECT_EQ(BitsFromFloat(pto_tile::SumLanes(zeros)), BitsFromFloat(-0.0f));
}

// Softmax's special rows through the fused form, as numpy computes them: a
// NaN or an inf makes the whole row NaN (inf - inf), an all -inf row is NaN
// (-inf - -inf), and -inf beside finite values gives exact zeros there.
TEST(PtoTileRowsTest, SoftmaxSpecialRows) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  constexpr int64_t C = 40;
  auto softmax = [](std::vector<float> x) {
    float m, s;
    std::vector<float> e(C), out(C);
    pto_tile::TRedMax<1, 1, 1, C, 3>(&m, x.data());
    pto_tile::TSubExpSumRow<C>(e.data(), &s, x.data(), &m);
    pto_tile::TDivRows<1, C, pto_tile::kFull, pto_tile::kRow>(out.data(), e.data(), &s);
    return out;
  };
  std::vector<float> x(C);
  for (int64_t k = 0; k < C; ++k) x[k] = static_cast<float>(k % 9) - 4.0f;
  x[3] = x[35] = -kInf;
  double total = 0;
  const std::vector<float> out = softmax(x);
  for (int64_t k = 0; k < C; ++k) {
    total += out[k];
    if (k == 3 || k == 35) {
      EXPECT_EQ(BitsFromFloat(out[k]), 0u) << k;
    }
  }
  EXPECT_NEAR(total, 1.0, 1e-6);
  for (float special : {std::nanf(""), kInf}) {
    x[33] = special;
    for (float v : softmax(x)) EXPECT_TRUE(std::isnan(v)) << special;
  }
  for (float v : softmax(std::vector<float>(C, -kInf))) EXPECT_TRUE(std::isnan(v));
}

// argmax/argmin's partial step: the first position holding the row's
// maximum (a NaN matches a NaN; -0 and +0 match each other), at every
// position of a row with a tail past the last 8, with ties after it, and
// down a column (the scalar scan), plus the tile's offset.
TEST(PtoTileRowsTest, ArgFirstFindsTheFirstMatch) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  constexpr int64_t C = 37;
  for (int64_t at = 0; at < C; ++at) {
    float row[C], m[1];
    int64_t got[1];
    for (int64_t k = 0; k < C; ++k) row[k] = -1.0f - static_cast<float>(k % 5);
    row[at] = 3.0f;
    if (at + 9 < C) row[at + 9] = 3.0f;  // a later tie
    pto_tile::TRedMax<1, 1, 1, C, 3>(m, row);
    pto_tile::TArgFirst<1, 1, 1, C, 3>(got, row, m, 100);
    EXPECT_EQ(got[0], 100 + at);
    row[C - 1] = std::numeric_limits<float>::quiet_NaN();
    if (at < C - 1) {
      row[at + 1 < C - 1 ? at + 1 : C - 1] = std::numeric_limits<float>::quiet_NaN();
    }
    pto_tile::TRedMax<1, 1, 1, C, 3>(m, row);
    pto_tile::TArgFirst<1, 1, 1, C, 3>(got, row, m, 0);
    EXPECT_EQ(got[0], at + 1 < C - 1 ? at + 1 : C - 1) << at;
  }
  float zeros[16] = {-1.0f, -0.0f, 0.0f};
  for (int k = 3; k < 16; ++k) zeros[k] = -2.0f;
  const float plus_zero[1] = {0.0f};
  int64_t got[1];
  pto_tile::TArgFirst<1, 1, 1, 16, 3>(got, zeros, plus_zero, 0);
  EXPECT_EQ(got[0], 1);
  // Down columns: [6, 3] reduced over dim 2 (stride 3).
  float col[18];
  for (int k = 0; k < 18; ++k) col[k] = static_cast<float>(k % 7);
  float cm[3];
  int64_t ci[3];
  pto_tile::TRedMax<1, 1, 6, 3, 2>(cm, col);
  pto_tile::TArgFirst<1, 1, 6, 3, 2>(ci, col, cm, 0);
  for (int j = 0; j < 3; ++j) {
    int64_t want = 0;
    for (int k = 5; k >= 0; --k) {
      if (col[k * 3 + j] == cm[j]) want = k;
    }
    EXPECT_EQ(ci[j], want) << j;
  }
}

}  // namespace
