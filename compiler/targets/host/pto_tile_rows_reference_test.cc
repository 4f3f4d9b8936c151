// pto_tile.h's row instructions against a double-precision reference
// (testing/double_reference.h): row sums, max and min (static rows of every
// path: under 32 values one after another, ReduceRow's 16 lanes with and
// without a tail, in vector registers; SumLanes, the end of generated row
// sums; down columns), softmax's fused x - m, exp and sum
// (TSubExpSumRow, both exps), the register-resident softmax row of 32..256
// values (TSoftmaxRow with AVX-512F) and the rows it does not keep in
// registers, a whole tile's softmax, and the run-time-length forms
// (ReduceRowN, TSubExpSumRowN), on rows that reach each op's hard region:
// x - max down to -150 (exp underflowing through the subnormals to 0), rows
// whose weight sits in their last group of 16 or their tail, magnitudes
// from 1e-30 to 1e30, cancelling sums, -inf, inf and NaN.
//
// Built three ways: pto_tile_rows_reference_test for the baseline target
// (libmvec's exp, the exact reduction loops), _v3 for x86-64-v3 (Exp8,
// Exp8Softmax, 8-lane reductions) and _v4 for x86-64-v4 (Exp16,
// Exp16Softmax, 16-lane reductions, the register-resident softmax row);
// the v3 and v4 binaries skip, naming the missing feature, on a CPU
// without it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compiler/targets/host/pto_tile_elementwise.h"
#include "compiler/targets/host/pto_tile_reduce.h"
#include "compiler/targets/host/pto_tile_rows.h"
#include "compiler/targets/host/testing/double_reference.h"
#include "gtest/gtest.h"

namespace {

using pto_tile_testing::ExpOfDifferenceBound;
using pto_tile_testing::ReferenceCheck;
using pto_tile_testing::SoftmaxBounds;
using pto_tile_testing::SumBound;

constexpr float kInf = std::numeric_limits<float>::infinity();
// Every exp form is within 2 ulps (Exp8 0.9, Exp8Softmax 1.14, Exp16Softmax
// 1.74, libmvec's double exp rounded 0.5+).
constexpr double kExpUlps = 2.0;

// A row and what it is meant to exercise.
struct Row {
  std::string name;
  std::vector<float> x;
};

// Rows of n values that reach softmax's and the sums' hard regions. `at`
// places the row's maximum: first, last group of 16, the tail past it.
std::vector<Row> EdgeRows(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<Row> rows;
  const int64_t last_group = n >= 32 ? (n / 16 - 1) * 16 : 0;
  const std::vector<int64_t> maxima = {0, last_group + (n >= 32 ? 5 : 0) % n, n - 1};
  for (int64_t at : maxima) {
    // x - max spread over [-150, 0]: exp from 1 through the subnormals
    // (below -87.3) to 0 (below -103.3).
    Row wide{"x - max in [-150, 0], max at " + std::to_string(at), std::vector<float>(n)};
    for (float& v : wide.x) v = 37.5f - 150.0f * unit(rng);
    wide.x[at] = 37.5f;
    rows.push_back(wide);
    // One value at the top and the rest 100 below (e = 3.7e-44, a
    // subnormal): the softmax is one-hot to within the subnormals.
    Row cliff{"one max, the rest 100 below, max at " + std::to_string(at),
              std::vector<float>(n, -62.5f)};
    cliff.x[at] = 37.5f;
    rows.push_back(cliff);
    // The weight in the last group of 16 and the tail: everything before
    // them far below.
    Row back{"the weight at the back, max at " + std::to_string(at), std::vector<float>(n)};
    for (int64_t k = 0; k < n; ++k) {
      back.x[k] = k >= last_group ? -4.0f * unit(rng) : -30.0f - 70.0f * unit(rng);
    }
    back.x[at] = 0.0f;
    rows.push_back(back);
  }
  Row narrow{"uniform in [-4, 4]", std::vector<float>(n)};
  for (float& v : narrow.x) v = -4.0f + 8.0f * unit(rng);
  rows.push_back(narrow);
  Row two_level{"half at the max, half 20 below", std::vector<float>(n)};
  for (int64_t k = 0; k < n; ++k) two_level.x[k] = k % 2 == 0 ? 3.0f : -17.0f;
  rows.push_back(two_level);
  Row large{"magnitudes 1e-30 to 1e30", std::vector<float>(n)};
  for (float& v : large.x) {
    const float mag = std::pow(10.0f, -30.0f + 60.0f * unit(rng));
    v = unit(rng) < 0.5f ? -mag : mag;
  }
  rows.push_back(large);
  Row offset{"x near 1000, x - max down to -120", std::vector<float>(n)};
  for (float& v : offset.x) v = 1000.0f - 120.0f * unit(rng);
  offset.x[n / 2] = 1000.0f;
  rows.push_back(offset);
  Row neg_inf{"-inf among finite values", std::vector<float>(n)};
  for (float& v : neg_inf.x) v = -8.0f * unit(rng);
  neg_inf.x[n / 3] = -kInf;
  neg_inf.x[n - 1] = -kInf;
  if (n > 1) rows.push_back(neg_inf);
  return rows;
}

// Rows for sums: besides EdgeRows, cancelling values (+a, -a pairs plus a
// small remainder) and values whose sum depends on every group.
std::vector<Row> SumRows(int64_t n, uint32_t seed) {
  std::vector<Row> rows = EdgeRows(n, seed);
  std::mt19937 rng(seed + 1);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  Row cancel{"cancelling pairs", std::vector<float>(n)};
  for (int64_t k = 0; k + 1 < n; k += 2) {
    cancel.x[k] = 1e4f * unit(rng);
    cancel.x[k + 1] = -cancel.x[k] + unit(rng);
  }
  cancel.x[n - 1] = 3.0f;
  rows.push_back(cancel);
  Row ramp{"k + 1", std::vector<float>(n)};
  for (int64_t k = 0; k < n; ++k) ramp.x[k] = static_cast<float>(k + 1);
  rows.push_back(ramp);
  return rows;
}

// Rows with specials for max/min and softmax: NaN, +inf, all -inf.
std::vector<Row> SpecialRows(int64_t n) {
  std::vector<Row> rows;
  Row nan{"a NaN", std::vector<float>(n, 1.0f)};
  nan.x[n - 1] = std::numeric_limits<float>::quiet_NaN();
  rows.push_back(nan);
  Row inf{"+inf", std::vector<float>(n, -2.0f)};
  inf.x[n / 2] = kInf;
  rows.push_back(inf);
  rows.push_back({"all -inf", std::vector<float>(n, -kInf)});
  return rows;
}

double ExactSum(const std::vector<float>& x, int64_t n, double* sum_abs) {
  double s = 0, a = 0;
  for (int64_t k = 0; k < n; ++k) {
    s += x[k];
    a += std::fabs(static_cast<double>(x[k]));
  }
  *sum_abs = a;
  return s;
}

// max/min as numpy computes them: NaN if any value is NaN.
double ExactMax(const std::vector<float>& x, int64_t n, bool max) {
  double m = max ? -INFINITY : INFINITY;
  for (int64_t k = 0; k < n; ++k) {
    if (std::isnan(x[k])) return NAN;
    m = max ? std::fmax(m, x[k]) : std::fmin(m, x[k]);
  }
  return m;
}

// The reference of softmax's middle: e_k = exp(x_k - m) and their bounds.
void ExpOfDifferences(const std::vector<float>& x, int64_t n, double m, std::vector<double>* e,
                      std::vector<double>* a) {
  e->resize(n);
  a->resize(n);
  for (int64_t k = 0; k < n; ++k) {
    const double d = static_cast<double>(x[k]) - m;
    (*e)[k] = std::exp(d);
    (*a)[k] = std::isnan(d) ? 0 : ExpOfDifferenceBound(d, kExpUlps);
  }
}

// The sum of the e'_k (each within a_k of e_k) in f32, any order.
void SumOfExps(const std::vector<double>& e, const std::vector<double>& a, double* want,
               double* bound) {
  double s = 0, sa = 0;
  for (size_t k = 0; k < e.size(); ++k) {
    s += e[k];
    sa += a[k];
  }
  *want = s;
  *bound = sa + SumBound(static_cast<int64_t>(e.size()), s + sa) + 1e-15 * s;
}

template <int64_t C>
void CheckStaticRowSums() {
  ReferenceCheck sums("TRedSum<1, 1, 1, " + std::to_string(C) + ", 3>");
  ReferenceCheck extrema("TRedMax/TRedMin of " + std::to_string(C));
  for (const Row& row : SumRows(C, C)) {
    float got[1];
    double sum_abs;
    const double want = ExactSum(row.x, C, &sum_abs);
    pto_tile::TRedSum<1, 1, 1, C, 3>(got, row.x.data());
    sums.Near(got[0], want, SumBound(C, sum_abs) + 1e-15 * sum_abs, [&] { return row.name; });
  }
  std::vector<Row> rows = EdgeRows(C, C + 1);
  for (Row& r : SpecialRows(C)) rows.push_back(r);
  for (const Row& row : rows) {
    float mx[1], mn[1];
    pto_tile::TRedMax<1, 1, 1, C, 3>(mx, row.x.data());
    pto_tile::TRedMin<1, 1, 1, C, 3>(mn, row.x.data());
    extrema.Near(mx[0], ExactMax(row.x, C, true), 0, [&] { return "max, " + row.name; });
    extrema.Near(mn[0], ExactMax(row.x, C, false), 0, [&] { return "min, " + row.name; });
  }
}

TEST(PtoTileRowsReferenceTest, StaticRowSumsMaxMin) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckStaticRowSums<1>();
  CheckStaticRowSums<16>();
  CheckStaticRowSums<31>();
  CheckStaticRowSums<32>();
  CheckStaticRowSums<37>();
  CheckStaticRowSums<48>();
  CheckStaticRowSums<64>();
  CheckStaticRowSums<256>();
  CheckStaticRowSums<272>();
  CheckStaticRowSums<1000>();
  CheckStaticRowSums<5000>();
}

// A tile of R rows summed along its rows and down its columns (the column
// form adds in order: R - 1 additions per column).
TEST(PtoTileRowsReferenceTest, TileSumsAlongRowsAndColumns) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  constexpr int64_t R = 12, C = 100;
  std::vector<float> t;
  std::vector<Row> rows = SumRows(C, 9);
  ASSERT_GE(rows.size(), static_cast<size_t>(R));
  for (int64_t r = 0; r < R; ++r) t.insert(t.end(), rows[r].x.begin(), rows[r].x.end());
  float along[R], down[C];
  pto_tile::TRedSum<1, 1, R, C, 3>(along, t.data());
  pto_tile::TRedSum<1, 1, R, C, 2>(down, t.data());
  ReferenceCheck check("TRedSum over a 12 x 100 tile");
  for (int64_t r = 0; r < R; ++r) {
    double sum_abs;
    const double want = ExactSum(rows[r].x, C, &sum_abs);
    check.Near(along[r], want, SumBound(C, sum_abs) + 1e-15 * sum_abs,
               [&] { return "row " + std::to_string(r) + ", " + rows[r].name; });
  }
  for (int64_t j = 0; j < C; ++j) {
    double want = 0, sum_abs = 0;
    for (int64_t r = 0; r < R; ++r) {
      want += t[r * C + j];
      sum_abs += std::fabs(static_cast<double>(t[r * C + j]));
    }
    check.Near(down[j], want, SumBound(R, sum_abs), [&] { return "column " + std::to_string(j); });
  }
}

// SumLanes: the 16 partial sums of a row loop host codegen generates,
// combined (in registers with AVX).
TEST(PtoTileRowsReferenceTest, SumLanesOfGeneratedRowSums) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  ReferenceCheck check("SumLanes");
  int t = 0;
  for (const Row& row : SumRows(16, 11)) {
    float lane[16];
    std::copy(row.x.begin(), row.x.end(), lane);
    double sum_abs;
    const double want = ExactSum(row.x, 16, &sum_abs);
    check.Near(pto_tile::SumLanes(lane), want, SumBound(16, sum_abs),
               [&] { return row.name + " " + std::to_string(t); });
    ++t;
  }
}

// TSubExpSumRow: e = exp(x - m), s = sum e, with m the row's max (kMaxOfX:
// softmax's exp) and with other m (exp above 1, overflow to inf).
template <int64_t C>
void CheckSubExpSum() {
  ReferenceCheck e_check("TSubExpSumRow<" + std::to_string(C) + "> e");
  ReferenceCheck s_check("TSubExpSumRow<" + std::to_string(C) + "> s");
  std::vector<Row> rows = EdgeRows(C, C + 2);
  for (Row& r : SpecialRows(C)) rows.push_back(r);
  for (const Row& row : rows) {
    float m[1];
    pto_tile::TRedMax<1, 1, 1, C, 3>(m, row.x.data());
    for (int variant = 0; variant < 4; ++variant) {
      // The max with softmax's exp, the max with the general exp, m 5 below
      // the max (values above 1) and 100 below it (inf past 88.7).
      const float mv = variant == 2 ? m[0] - 5.0f : variant == 3 ? m[0] - 100.0f : m[0];
      std::vector<float> e(C);
      float s[1];
      if (variant == 0) {
        pto_tile::TSubExpSumRow<C, true>(e.data(), s, row.x.data(), &mv);
      } else {
        pto_tile::TSubExpSumRow<C, false>(e.data(), s, row.x.data(), &mv);
      }
      std::vector<double> want, bound;
      ExpOfDifferences(row.x, C, mv, &want, &bound);
      auto where = [&](int64_t k) {
        return [&, k] { return row.name + ", form " + std::to_string(variant) + ", k=" +
                               std::to_string(k) + ", x=" + std::to_string(row.x[k]); };
      };
      for (int64_t k = 0; k < C; ++k) e_check.Near(e[k], want[k], bound[k], where(k));
      double want_s, bound_s;
      SumOfExps(want, bound, &want_s, &bound_s);
      s_check.Near(s[0], want_s, bound_s, [&] { return row.name + ", form " + std::to_string(variant); });
    }
  }
}

TEST(PtoTileRowsReferenceTest, SubExpSumRow) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckSubExpSum<1>();
  CheckSubExpSum<7>();
  CheckSubExpSum<31>();
  CheckSubExpSum<32>();
  CheckSubExpSum<37>();
  CheckSubExpSum<256>();
  CheckSubExpSum<1000>();
  CheckSubExpSum<5000>();
}

void CheckSoftmaxOutputs(ReferenceCheck& check, const Row& row, const float* got, int64_t n,
                         const std::string& form) {
  const double m = ExactMax(row.x, n, true);
  std::vector<double> e, a, want, bound;
  ExpOfDifferences(row.x, n, m, &e, &a);
  SoftmaxBounds(e, a, &want, &bound);
  for (int64_t k = 0; k < n; ++k) {
    check.Near(got[k], want[k], bound[k], [&] {
      return form + ", " + row.name + ", k=" + std::to_string(k) + ", x=" + std::to_string(row.x[k]);
    });
  }
}

// TSoftmaxRow, host codegen's one call for an FP32 softmax row: rows of
// 32..256 values in whole groups of 16 stay in registers with AVX-512F,
// the others (and every row elsewhere) take the four-instruction sequence.
template <int64_t C>
void CheckSoftmaxRow() {
  ReferenceCheck check("TSoftmaxRow<" + std::to_string(C) + ">");
  std::vector<Row> rows = EdgeRows(C, C + 3);
  for (Row& r : SpecialRows(C)) rows.push_back(r);
  for (const Row& row : rows) {
    std::vector<float> got(C);
    pto_tile::TSoftmaxRow<C>(got.data(), row.x.data());
    CheckSoftmaxOutputs(check, row, got.data(), C, "out of place");
    std::vector<float> inplace = row.x;
    pto_tile::TSoftmaxRow<C>(inplace.data(), inplace.data(), row.x.data());
    CheckSoftmaxOutputs(check, row, inplace.data(), C, "in place");
  }
}

TEST(PtoTileRowsReferenceTest, SoftmaxRowInAndOutOfRegisters) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckSoftmaxRow<1>();
  CheckSoftmaxRow<16>();
  CheckSoftmaxRow<32>();   // in registers (AVX-512F): 2 groups
  CheckSoftmaxRow<48>();   // 3 groups
  CheckSoftmaxRow<128>();
  CheckSoftmaxRow<240>();
  CheckSoftmaxRow<256>();  // 16 groups, the most kept in registers
  CheckSoftmaxRow<37>();   // a tail: the sequence
  CheckSoftmaxRow<272>();  // past the register limit
  CheckSoftmaxRow<1000>();
  CheckSoftmaxRow<1024>();
  CheckSoftmaxRow<5000>();
}

// A whole tile's softmax as host codegen emits it where the row call does
// not apply: TRedMax, TSubRows, TExpSoftmax, TRedSum, TRecip, TMulRows.
template <int64_t R, int64_t C>
void CheckWholeTileSoftmax() {
  ReferenceCheck check("whole-tile softmax " + std::to_string(R) + " x " + std::to_string(C));
  std::vector<Row> rows = EdgeRows(C, C + 4);
  for (Row& r : SpecialRows(C)) rows.push_back(r);
  for (size_t first = 0; first < rows.size(); first += R) {
    std::vector<float> x(R * C), d(R * C), e(R * C), y(R * C);
    for (int64_t r = 0; r < R; ++r) {
      const Row& row = rows[std::min(first + r, rows.size() - 1)];
      std::copy(row.x.begin(), row.x.end(), x.begin() + r * C);
    }
    float m[R], s[R], inv[R];
    pto_tile::TRedMax<1, 1, R, C, 3>(m, x.data());
    pto_tile::TSubRows<R, C, pto_tile::kFull, pto_tile::kRow>(d.data(), x.data(), m);
    pto_tile::TExpSoftmax<R * C>(e.data(), d.data());
    pto_tile::TRedSum<1, 1, R, C, 3>(s, e.data());
    pto_tile::TRecip<R>(inv, s);
    pto_tile::TMulRows<R, C, pto_tile::kFull, pto_tile::kRow>(y.data(), e.data(), inv);
    for (int64_t r = 0; r < R; ++r) {
      CheckSoftmaxOutputs(check, rows[std::min(first + r, rows.size() - 1)], y.data() + r * C, C,
                          "row " + std::to_string(r));
    }
  }
}

TEST(PtoTileRowsReferenceTest, WholeTileSoftmax) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckWholeTileSoftmax<3, 8>();
  CheckWholeTileSoftmax<4, 40>();
  CheckWholeTileSoftmax<2, 256>();
  CheckWholeTileSoftmax<2, 1000>();
}

// The run-time-length forms at lengths c: sums, max and min of exactly c
// values (whatever lies past c: here 1e6, which must not be read) and
// softmax's middle with e zero from c to the end of its chunk.
TEST(PtoTileRowsReferenceTest, RunTimeLengthRows) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  ReferenceCheck sums("TRedSumRowN"), extrema("TRedMaxRowN/TRedMinRowN");
  ReferenceCheck e_check("TSubExpSumRowN e"), s_check("TSubExpSumRowN s");
  using pto_tile::kRowChunk;
  for (int64_t c : {1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 100, 257, 1000, 1024, 5000}) {
    const int64_t end = (c + kRowChunk - 1) / kRowChunk * kRowChunk;
    std::vector<Row> rows = SumRows(c, static_cast<uint32_t>(c) + 5);
    for (Row& r : SpecialRows(c)) rows.push_back(r);
    for (const Row& row : rows) {
      std::vector<float> x(end + kRowChunk, 1e6f);
      std::copy(row.x.begin(), row.x.end(), x.begin());
      auto where = [&] { return row.name + ", c=" + std::to_string(c); };
      const bool special = row.name == "a NaN" || row.name == "+inf" || row.name == "all -inf";
      float got[1];
      if (!special) {
        double sum_abs;
        const double want = ExactSum(row.x, c, &sum_abs);
        pto_tile::TRedSumRowN(got, x.data(), c);
        sums.Near(got[0], want, SumBound(c, sum_abs) + 1e-15 * sum_abs, where);
      }
      pto_tile::TRedMaxRowN(got, x.data(), c);
      const double mx = ExactMax(row.x, c, true);
      extrema.Near(got[0], mx, 0, where);
      pto_tile::TRedMinRowN(got, x.data(), c);
      extrema.Near(got[0], ExactMax(row.x, c, false), 0, where);
      if (row.name == "magnitudes 1e-30 to 1e30" || row.name.rfind("cancel", 0) == 0 ||
          row.name == "k + 1") {
        continue;  // sums only
      }
      for (bool max_of_x : {true, false}) {
        const float m = static_cast<float>(mx);
        std::vector<float> e(end, 5.0f);
        float s[1];
        if (max_of_x) {
          pto_tile::TSubExpSumRowN<true>(e.data(), s, x.data(), &m, c);
        } else {
          pto_tile::TSubExpSumRowN<false>(e.data(), s, x.data(), &m, c);
        }
        std::vector<double> want, bound;
        ExpOfDifferences(row.x, c, m, &want, &bound);
        for (int64_t k = 0; k < c; ++k) {
          e_check.Near(e[k], want[k], bound[k], [&] { return where() + ", k=" + std::to_string(k); });
        }
        for (int64_t k = c; k < end; ++k) {
          e_check.Exact(e[k], 0.0, [&] { return where() + ", padding k=" + std::to_string(k); });
        }
        double want_s, bound_s;
        SumOfExps(want, bound, &want_s, &bound_s);
        s_check.Near(s[0], want_s, bound_s, where);
      }
    }
  }
}

}  // namespace
