#include "compiler/targets/host/pto_cube.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace {

struct Case {
  int m, k, n;
  int ml0, kl0, nl0;
  bool a_trans, b_trans;
};

// C = op(A) * op(B) the way a cube kernel does it: per output tile
// [ml0 x nl0], K in kl0 steps (TLOAD GM->L1, TMOV L1->L0A/L0B, TMATMUL then
// TMATMUL_ACC), TSTORE L0C->GM; compared with a double reference within
// 1e-5 of the sum of magnitudes.
void RunCase(const Case& t) {
  std::mt19937 rng(t.m * 131 + t.k * 17 + t.n + t.a_trans * 7 + t.b_trans);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> a(t.m * t.k), b(t.k * t.n), c(t.m * t.n, NAN);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  // Stored shapes: a [m, k] or [k, m]; b [k, n] or [n, k].
  const int lda = t.a_trans ? t.m : t.k, ldb = t.b_trans ? t.k : t.n;
  std::vector<float> l1a(t.ml0 * t.kl0), l1b(t.kl0 * t.nl0);
  std::vector<float> l0a(pto_cube::L0AElems(t.ml0, t.kl0));
  std::vector<float> l0b(pto_cube::L0BElems(t.kl0, t.nl0));
  std::vector<float> l0c(t.ml0 * t.nl0);
  for (int i0 = 0; i0 < t.m; i0 += t.ml0) {
    const int ms = std::min(t.ml0, t.m - i0);
    for (int j0 = 0; j0 < t.n; j0 += t.nl0) {
      const int ns = std::min(t.nl0, t.n - j0);
      for (int p0 = 0; p0 < t.k; p0 += t.kl0) {
        const int ks = std::min(t.kl0, t.k - p0);
        if (t.a_trans) {
          pto_cube::CubeLoadL1(l1a.data(), a.data() + p0 * lda + i0, lda, ks, ms);
        } else {
          pto_cube::CubeLoadL1(l1a.data(), a.data() + i0 * lda + p0, lda, ms, ks);
        }
        if (t.b_trans) {
          pto_cube::CubeLoadL1(l1b.data(), b.data() + j0 * ldb + p0, ldb, ns, ks);
        } else {
          pto_cube::CubeLoadL1(l1b.data(), b.data() + p0 * ldb + j0, ldb, ks, ns);
        }
        pto_cube::CubeMovL0A(l0a.data(), l1a.data(), t.a_trans ? ms : ks, 0,
                             ms, ks, t.a_trans);
        pto_cube::CubeMovL0B(l0b.data(), l1b.data(), t.b_trans ? ks : ns, 0,
                             ks, ns, t.b_trans);
        if (p0 == 0) {
          pto_cube::CubeMatmul(l0c.data(), l0a.data(), l0b.data(), ms, ks, ns);
        } else {
          pto_cube::CubeMatmulAcc(l0c.data(), l0a.data(), l0b.data(), ms, ks, ns);
        }
      }
      pto_cube::CubeStoreL0C(c.data() + i0 * t.n + j0, t.n, l0c.data(), ms, ns);
    }
  }
  for (int i = 0; i < t.m; ++i) {
    for (int j = 0; j < t.n; ++j) {
      double want = 0, magnitude = 0;
      for (int p = 0; p < t.k; ++p) {
        const double x = t.a_trans ? a[p * lda + i] : a[i * lda + p];
        const double y = t.b_trans ? b[j * ldb + p] : b[p * ldb + j];
        want += x * y;
        magnitude += std::fabs(x * y);
      }
      ASSERT_NEAR(c[i * t.n + j], want, 1e-5 * magnitude + 1e-30)
          << "m=" << t.m << " k=" << t.k << " n=" << t.n << " at (" << i
          << ", " << j << ") a_trans=" << t.a_trans << " b_trans=" << t.b_trans;
    }
  }
}

TEST(PtoCubeTest, TilesWithTailsInMNK) {
  for (bool a_trans : {false, true}) {
    for (bool b_trans : {false, true}) {
      RunCase({37, 45, 53, 16, 8, 32, a_trans, b_trans});  // tails everywhere
      RunCase({64, 64, 64, 32, 16, 32, a_trans, b_trans});  // no tails
      RunCase({1, 1, 1, 16, 16, 16, a_trans, b_trans});     // one element
      RunCase({5, 300, 3, 4, 128, 16, a_trans, b_trans});   // long K
    }
  }
}

TEST(PtoCubeTest, MovL0PacksPanels) {
  // L1 tile 3x4 = 0..11. L0A of rows 0..2, K columns 1..2: one 6-row panel
  // [k][6], rows 3..5 zero.
  std::vector<float> l1(12);
  for (int i = 0; i < 12; ++i) l1[i] = static_cast<float>(i);
  std::vector<float> l0a(pto_cube::L0AElems(3, 2), -1.0f);
  ASSERT_EQ(l0a.size(), 12u);
  pto_cube::CubeMovL0A(l0a.data(), l1.data(), 4, 1, 3, 2, false);
  EXPECT_EQ(l0a, (std::vector<float>{1, 5, 9, 0, 0, 0, 2, 6, 10, 0, 0, 0}));
  // Transposed: L1 holds A^T [K x m] = [3 x 4]; m = 4 rows, K rows 1..2.
  pto_cube::CubeMovL0A(l0a.data(), l1.data(), 4, 1, 4, 2, true);
  EXPECT_EQ(l0a, (std::vector<float>{4, 5, 6, 7, 0, 0, 8, 9, 10, 11, 0, 0}));
  // L0B of K rows 1..2 and columns 0..3: one 16-column panel [k][16].
  std::vector<float> l0b(pto_cube::L0BElems(2, 4), -1.0f);
  ASSERT_EQ(l0b.size(), 32u);
  pto_cube::CubeMovL0B(l0b.data(), l1.data(), 4, 1, 2, 4, false);
  std::vector<float> want(32, 0.0f);
  for (int c = 0; c < 4; ++c) {
    want[c] = static_cast<float>(4 + c);
    want[16 + c] = static_cast<float>(8 + c);
  }
  EXPECT_EQ(l0b, want);
  // Transposed: L1 holds B^T [n x K] = [3 x 4]; K rows 1..2, n = 3.
  pto_cube::CubeMovL0B(l0b.data(), l1.data(), 4, 1, 2, 3, true);
  std::fill(want.begin(), want.end(), 0.0f);
  for (int c = 0; c < 3; ++c) {
    want[c] = static_cast<float>(c * 4 + 1);
    want[16 + c] = static_cast<float>(c * 4 + 2);
  }
  EXPECT_EQ(l0b, want);
}

}  // namespace
