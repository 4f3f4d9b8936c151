#include "compiler/targets/host/pto_cube.h"

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
  std::vector<float> l0a(t.ml0 * t.kl0), l0b(t.kl0 * t.nl0), l0c(t.ml0 * t.nl0);
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
        pto_cube::CubeMovL0(l0a.data(), l1a.data(), t.a_trans ? ms : ks, 0, 0,
                            ms, ks, t.a_trans);
        pto_cube::CubeMovL0(l0b.data(), l1b.data(), t.b_trans ? ks : ns, 0, 0,
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

TEST(PtoCubeTest, MovL0ReadsABlockOfL1) {
  // L1 tile 3x4 = 0..11; the 2x2 block at (1, 2) and its transpose read.
  std::vector<float> l1(12);
  for (int i = 0; i < 12; ++i) l1[i] = static_cast<float>(i);
  std::vector<float> l0(4);
  pto_cube::CubeMovL0(l0.data(), l1.data(), 4, 1, 2, 2, 2, false);
  EXPECT_EQ(l0, (std::vector<float>{6, 7, 10, 11}));
  // Transposed: L1 holds [cols x rows]; block rows 0..1 of the result are
  // L1 columns 1..2, block columns are L1 rows 0..1 read from (c0=0, r0=1).
  pto_cube::CubeMovL0(l0.data(), l1.data(), 4, 1, 0, 2, 2, true);
  EXPECT_EQ(l0, (std::vector<float>{1, 5, 2, 6}));
}

}  // namespace
