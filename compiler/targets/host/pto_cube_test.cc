#include "compiler/targets/host/pto_cube.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"

// A second copy of the header as kernels built for x86-64-v3 get it (fused
// multiply-adds, and the AVX-512 path where the CPU has it); this test
// binary is built for the baseline target, so these functions carry the
// target attribute and only run where the CPU has AVX2 and FMA.
#undef PTO_CUBE_H_
#undef PTO_CUBE_FMA  // the first copy defined them for the baseline target
#undef PTO_CUBE_AVX512
#define PTO_CUBE_FMA 1
#define PTO_CUBE_AVX512 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace with_fma {
#include "compiler/targets/host/pto_cube.h"  // NOLINT(build/include)
}  // namespace with_fma
#pragma GCC pop_options

namespace {

bool HasFma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

// The instructions of one copy of the header.
struct Baseline {
  template <typename... A> static const float* LoadL1(A... a) { return pto_cube::CubeLoadL1(a...); }
  template <typename... A> static const float* MovL0A(A... a) { return pto_cube::CubeMovL0A(a...); }
  template <typename... A> static void MovL0B(A... a) { pto_cube::CubeMovL0B(a...); }
  template <typename... A> static void Matmul(A... a) { pto_cube::CubeMatmul(a...); }
  template <typename... A> static void MatmulAcc(A... a) { pto_cube::CubeMatmulAcc(a...); }
  template <typename... A> static void StoreL0C(A... a) { pto_cube::CubeStoreL0C(a...); }
};
struct WithFma {
  template <typename... A> static const float* LoadL1(A... a) {
    return with_fma::pto_cube::CubeLoadL1(a...);
  }
  template <typename... A> static const float* MovL0A(A... a) {
    return with_fma::pto_cube::CubeMovL0A(a...);
  }
  template <typename... A> static void MovL0B(A... a) { with_fma::pto_cube::CubeMovL0B(a...); }
  template <typename... A> static void Matmul(A... a) { with_fma::pto_cube::CubeMatmul(a...); }
  template <typename... A> static void MatmulAcc(A... a) {
    with_fma::pto_cube::CubeMatmulAcc(a...);
  }
  template <typename... A> static void StoreL0C(A... a) { with_fma::pto_cube::CubeStoreL0C(a...); }
};

struct Case {
  int m, k, n;
  int ml0, kl0, nl0;
  bool a_trans, b_trans;
};

// C = op(A) * op(B) the way a cube kernel does it: per output tile
// [ml0 x nl0], K in kl0 steps (TLOAD GM->L1, TMOV L1->L0A/L0B, TMATMUL then
// TMATMUL_ACC), TSTORE L0C->GM; compared with a double reference within
// 1e-5 of the sum of magnitudes.
template <typename Cube>
void RunCase(const Case& t) {
  std::mt19937 rng(t.m * 131 + t.k * 17 + t.n + t.a_trans * 7 + t.b_trans);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> a(t.m * t.k), b(t.k * t.n), c(t.m * t.n, NAN);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  // Stored shapes: a [m, k] or [k, m]; b [k, n] or [n, k].
  const int lda = t.a_trans ? t.m : t.k, ldb = t.b_trans ? t.k : t.n;
  std::vector<float> l1a(t.ml0 * t.kl0), l1b(t.kl0 * t.nl0);
  std::vector<float> l0b(pto_cube::L0BElems(t.kl0, t.nl0));
  std::vector<float> l0c(t.ml0 * t.nl0);
  for (int i0 = 0; i0 < t.m; i0 += t.ml0) {
    const int ms = std::min(t.ml0, t.m - i0);
    for (int j0 = 0; j0 < t.n; j0 += t.nl0) {
      const int ns = std::min(t.nl0, t.n - j0);
      for (int p0 = 0; p0 < t.k; p0 += t.kl0) {
        const int ks = std::min(t.kl0, t.k - p0);
        int64_t lda1, ldb1, rs0, ps0;
        const float* a1 =
            t.a_trans ? Cube::LoadL1(l1a.data(), a.data() + p0 * lda + i0, lda, ks, ms, &lda1)
                      : Cube::LoadL1(l1a.data(), a.data() + i0 * lda + p0, lda, ms, ks, &lda1);
        const float* b1 =
            t.b_trans ? Cube::LoadL1(l1b.data(), b.data() + j0 * ldb + p0, ldb, ns, ks, &ldb1)
                      : Cube::LoadL1(l1b.data(), b.data() + p0 * ldb + j0, ldb, ks, ns, &ldb1);
        const float* a0 = Cube::MovL0A(a1, lda1, 0, t.a_trans, &rs0, &ps0);
        Cube::MovL0B(l0b.data(), b1, ldb1, 0, ks, ns, t.b_trans);
        if (p0 == 0) {
          Cube::Matmul(l0c.data(), a0, rs0, ps0, l0b.data(), ms, ks, ns);
        } else {
          Cube::MatmulAcc(l0c.data(), a0, rs0, ps0, l0b.data(), ms, ks, ns);
        }
      }
      Cube::StoreL0C(c.data() + i0 * t.n + j0, t.n, l0c.data(), ms, ns);
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

void RunCases(void (*run)(const Case&)) {
  for (bool a_trans : {false, true}) {
    for (bool b_trans : {false, true}) {
      run({37, 45, 53, 16, 8, 32, a_trans, b_trans});   // tails everywhere
      run({64, 64, 64, 32, 16, 32, a_trans, b_trans});   // no tails
      run({1, 1, 1, 16, 16, 16, a_trans, b_trans});      // one element
      run({5, 300, 3, 4, 128, 16, a_trans, b_trans});    // long K
      run({70, 33, 100, 64, 32, 96, a_trans, b_trans});  // 32-wide blocks, edges
    }
  }
}

TEST(PtoCubeTest, TilesWithTailsInMNK) { RunCases(RunCase<Baseline>); }

TEST(PtoCubeTest, TilesWithTailsInMNKWithFma) {
  if (!HasFma()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  RunCases(RunCase<WithFma>);
}

// The AVX-512 block (8 x 32) and the AVX2 one (6 x 16) give the same bits:
// every element is the same chain of fused multiply-adds over k.
TEST(PtoCubeTest, Avx512AndAvx2PathsAgreeBitwise) {
  if (!HasFma() || !__builtin_cpu_supports("avx512f")) {
    GTEST_SKIP() << "no AVX-512F on this CPU";
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (int m : {1, 6, 13, 64}) {
    for (int n : {1, 16, 17, 40, 64, 128}) {
      const int k = 37;
      std::vector<float> a(m * k), b(with_fma::pto_cube::L0BElems(k, n)), c0(m * n), c1(m * n);
      for (float& x : a) x = dist(rng);
      for (float& x : b) x = dist(rng);
      for (float& x : c0) x = dist(rng);
      c1 = c0;
      with_fma::pto_cube::CubeMatmulVec8<true>(c0.data(), a.data(), k, 1, b.data(), m, k, n);
      with_fma::pto_cube::CubeMatmul512<true>(c1.data(), a.data(), k, 1, b.data(), m, k, n);
      ASSERT_EQ(0, std::memcmp(c0.data(), c1.data(), c0.size() * sizeof(float)))
          << "m=" << m << " n=" << n;
      with_fma::pto_cube::CubeMatmulVec8<false>(c0.data(), a.data(), k, 1, b.data(), m, k, n);
      with_fma::pto_cube::CubeMatmul512<false>(c1.data(), a.data(), k, 1, b.data(), m, k, n);
      ASSERT_EQ(0, std::memcmp(c0.data(), c1.data(), c0.size() * sizeof(float)))
          << "m=" << m << " n=" << n;
    }
  }
}

#define CHECK_ROWS_PATH(name, ns)                                                      \
  void name() {                                                                       \
    std::mt19937 rng(11);                                                             \
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);                          \
    for (int m = 1; m <= ns::kSmallM; ++m) {                                          \
      for (int n : {1, 7, 8, 9, 16, 63, 64, 65, 130}) {                               \
        for (bool a_trans : {false, true}) {                                          \
          const int k = 37, ldb = n + 3;                                              \
          std::vector<float> a(m * k), b(k * ldb), c0(m * n), c1(m * n);              \
          std::vector<float> l0b(ns::L0BElems(k, n));                                 \
          for (float& x : a) x = dist(rng);                                           \
          for (float& x : b) x = dist(rng);                                           \
          for (float& x : c0) x = dist(rng);                                          \
          const int64_t rs = a_trans ? 1 : k, ps = a_trans ? m : 1;                   \
          ns::CubeMovL0B(l0b.data(), b.data(), ldb, 0, k, n, false);                  \
          for (bool acc : {true, false}) {                                            \
            c1 = c0;                                                                  \
            if (acc) {                                                                \
              ns::CubeMatmulAcc(c0.data(), a.data(), rs, ps, l0b.data(), m, k, n);    \
              ns::CubeMatmulRowsAcc(c1.data(), a.data(), rs, ps, b.data(), ldb, m, k, \
                                    n);                                               \
            } else {                                                                  \
              ns::CubeMatmul(c0.data(), a.data(), rs, ps, l0b.data(), m, k, n);       \
              ns::CubeMatmulRows(c1.data(), a.data(), rs, ps, b.data(), ldb, m, k, n); \
            }                                                                         \
            ASSERT_EQ(0, std::memcmp(c0.data(), c1.data(), c0.size() * sizeof(float))) \
                << "m=" << m << " n=" << n << " a_trans=" << a_trans << " acc=" << acc; \
          }                                                                           \
        }                                                                             \
      }                                                                               \
    }                                                                                 \
  }
// The small-M multiply (B read from L1 rows, no L0B) gives the panel
// kernel's bits: the same steps per element, short columns zero-padded; A
// transposed or not, first step and accumulate, n across the edge cases.
CHECK_ROWS_PATH(CheckRowsPathBaseline, pto_cube)
CHECK_ROWS_PATH(CheckRowsPathFma, with_fma::pto_cube)

TEST(PtoCubeTest, SmallMRowsPathMatchesPanelsBitwise) {
  CheckRowsPathBaseline();
  if (HasFma()) CheckRowsPathFma();
}

TEST(PtoCubeTest, MovL0PacksPanels) {
  // L1 tile 3x4 = 0..11. L0A of rows 0..2, K columns 1..2: dense [3 x 2].
  std::vector<float> l1(12);
  for (int i = 0; i < 12; ++i) l1[i] = static_cast<float>(i);
  // A view of the L1 block (no copy): row-major, or column-major when L1
  // holds A^T.
  std::vector<float> l0a(8, -1.0f);
  int64_t ld = 0, rs = 0, ps = 0;
  const float* view = pto_cube::CubeMovL0A(l1.data(), 4, 1, false, &rs, &ps);
  EXPECT_EQ(view, l1.data() + 1);
  EXPECT_EQ(rs, 4);
  EXPECT_EQ(ps, 1);
  view = pto_cube::CubeMovL0A(l1.data(), 4, 1, true, &rs, &ps);
  EXPECT_EQ(view, l1.data() + 4);  // A^T row 1: A's K column 1
  EXPECT_EQ(rs, 1);
  EXPECT_EQ(ps, 4);
  // TLOAD of f32 is a view of GM; of another type, a converted copy.
  const float* gm_view = pto_cube::CubeLoadL1(l0a.data(), l1.data(), 4, 2, 2, &ld);
  EXPECT_EQ(gm_view, l1.data());
  EXPECT_EQ(ld, 4);
  struct FromInt {
    static float Load(int v) { return static_cast<float>(v) + 0.5f; }
  };
  const std::vector<int> ints = {1, 2, 3, 4, 5, 6};
  const float* loaded = pto_cube::CubeLoadL1<FromInt>(l0a.data(), ints.data() + 1, 3, 2, 2, &ld);
  EXPECT_EQ(loaded, l0a.data());
  EXPECT_EQ(ld, 2);
  EXPECT_EQ(std::vector<float>(l0a.begin(), l0a.begin() + 4), (std::vector<float>{2.5, 3.5, 5.5, 6.5}));
  struct IntRows {
    static void Row(float* d, const int* s, int n) {
      for (int c = 0; c < n; ++c) d[c] = static_cast<float>(s[c]) * 2.0f;
    }
  };
  const float* rows = pto_cube::CubeLoadL1Rows<IntRows>(l0a.data(), ints.data(), 3, 2, 3, &ld);
  EXPECT_EQ(rows, l0a.data());
  EXPECT_EQ(ld, 3);
  EXPECT_EQ(std::vector<float>(l0a.begin(), l0a.begin() + 6),
            (std::vector<float>{2, 4, 6, 8, 10, 12}));
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
