#include "compiler/targets/host/pto_cube.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/targets/host/pto_tile_convert.h"
#include "compiler/targets/host/testing/double_reference.h"
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
// The same for a CPU with AVX2 and FMA but not AVX-512: the 8-lane kernels
// and no BF16 dot-product path.
#undef PTO_CUBE_H_
#undef PTO_CUBE_AVX512
#undef PTO_CUBE_BF16_DOT
#define PTO_CUBE_AVX512 0
#define PTO_CUBE_BF16_DOT 0
namespace avx2_only {
#include "compiler/targets/host/pto_cube.h"  // NOLINT(build/include)
}  // namespace avx2_only
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

// Operand values: uniform in [-4, 4] (kind 0), magnitudes 2^-40..2^40 of
// either sign (kind 1: products from 2^-80 to 2^80, sums dominated by a few
// terms), or 1e-20 beside values near 1 (kind 2: subnormal products).
void FillOperand(std::vector<float>& v, std::mt19937& rng, int kind) {
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::uniform_real_distribution<double> exponent(-40, 40);
  for (size_t i = 0; i < v.size(); ++i) {
    const float sign = rng() % 2 ? -1.0f : 1.0f;
    switch (kind) {
      case 0: v[i] = dist(rng); break;
      case 1: v[i] = sign * static_cast<float>(std::exp2(exponent(rng))); break;
      default: v[i] = i % 3 == 0 ? sign * 1e-20f : dist(rng); break;
    }
  }
}

// C = op(A) * op(B) the way a cube kernel does it: per output tile
// [ml0 x nl0], K in kl0 steps (TLOAD GM->L1, TMOV L1->L0A/L0B, TMATMUL then
// TMATMUL_ACC), TSTORE L0C->GM; compared with a double reference within
// DotBound (Gamma(k) of the sum of magnitudes: k multiply-adds in a chain).
template <typename Cube>
void RunCase(const Case& t, int kind) {
  std::mt19937 rng(t.m * 131 + t.k * 17 + t.n + t.a_trans * 7 + t.b_trans + kind * 1000);
  std::vector<float> a(t.m * t.k), b(t.k * t.n), c(t.m * t.n, NAN);
  FillOperand(a, rng, kind);
  FillOperand(b, rng, kind);
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
  pto_tile_testing::ReferenceCheck check("cube task " + std::to_string(t.m) + "x" +
                                        std::to_string(t.k) + "x" + std::to_string(t.n) +
                                        " a_trans " + std::to_string(t.a_trans) + " b_trans " +
                                        std::to_string(t.b_trans) + " kind " +
                                        std::to_string(kind));
  for (int i = 0; i < t.m; ++i) {
    for (int j = 0; j < t.n; ++j) {
      double want = 0, magnitude = 0;
      for (int p = 0; p < t.k; ++p) {
        const double x = t.a_trans ? a[p * lda + i] : a[i * lda + p];
        const double y = t.b_trans ? b[j * ldb + p] : b[p * ldb + j];
        want += x * y;
        magnitude += std::fabs(x * y);
      }
      check.Near(c[i * t.n + j], want, pto_tile_testing::DotBound(t.k, magnitude),
                 [&] { return "C[" + std::to_string(i) + ", " + std::to_string(j) + "]"; });
    }
  }
}

void RunCases(void (*run)(const Case&, int)) {
  for (int kind : {0, 1, 2}) {
    for (bool a_trans : {false, true}) {
      for (bool b_trans : {false, true}) {
        run({37, 45, 53, 16, 8, 32, a_trans, b_trans}, kind);   // tails everywhere
        run({64, 64, 64, 32, 16, 32, a_trans, b_trans}, kind);   // no tails
        run({1, 1, 1, 16, 16, 16, a_trans, b_trans}, kind);      // one element
        run({5, 300, 3, 4, 128, 16, a_trans, b_trans}, kind);    // long K
        run({70, 33, 100, 64, 32, 96, a_trans, b_trans}, kind);  // 32-wide blocks, edges
      }
    }
  }
}

TEST(PtoCubeTest, TilesWithTailsInMNK) { RunCases(RunCase<Baseline>); }

TEST(PtoCubeTest, TilesWithTailsInMNKWithFma) {
  if (!HasFma()) GTEST_SKIP() << "this CPU lacks avx2/fma, which the FMA copy uses";
  RunCases(RunCase<WithFma>);
}

// Each multiply form on its own against the reference: the AVX2 6 x 16
// block (CubeMatmulVec8, which CubeMatmul does not pick on a CPU with
// AVX-512F), the AVX-512 8 x 32 block (CubeMatmul512) and the small-M rows
// form (CubeMatmulRows, B read from L1 rows), with C accumulated onto and
// not, over the operand kinds of FillOperand.
template <typename Multiply>
void CheckMultiply(const char* form, int m, int k, int n, bool acc, int kind,
                   const Multiply& multiply) {
  std::mt19937 rng(m * 7 + k * 3 + n + acc + kind * 100);
  std::vector<float> a(m * k), b(k * n), c0(m * n);
  FillOperand(a, rng, kind);
  FillOperand(b, rng, kind);
  FillOperand(c0, rng, 0);
  std::vector<float> c = c0;
  multiply(c.data(), a.data(), b.data(), m, k, n, acc);
  pto_tile_testing::ReferenceCheck check(std::string(form) + " " + std::to_string(m) + "x" +
                                         std::to_string(k) + "x" + std::to_string(n) + " acc " +
                                         std::to_string(acc) + " kind " + std::to_string(kind));
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double want = acc ? c0[i * n + j] : 0.0, magnitude = std::fabs(want);
      for (int p = 0; p < k; ++p) {
        want += static_cast<double>(a[i * k + p]) * b[p * n + j];
        magnitude += std::fabs(static_cast<double>(a[i * k + p]) * b[p * n + j]);
      }
      check.Near(c[i * n + j], want, pto_tile_testing::DotBound(k + acc, magnitude),
                 [&] { return "C[" + std::to_string(i) + ", " + std::to_string(j) + "]"; });
    }
  }
}

TEST(PtoCubeTest, EachMultiplyFormMatchesTheReference) {
  for (int kind : {0, 1, 2}) {
    for (bool acc : {false, true}) {
      for (int m : {1, 4, 6, 13}) {
        for (int n : {1, 9, 16, 40, 65}) {
          for (int k : {1, 37, 300}) {
            auto rows = [](float* c, const float* a, const float* b, int m, int k, int n,
                           bool acc) {
              if (acc) {
                pto_cube::CubeMatmulRowsAcc(c, a, k, 1, b, n, m, k, n);
              } else {
                pto_cube::CubeMatmulRows(c, a, k, 1, b, n, m, k, n);
              }
            };
            if (m <= pto_cube::kSmallM) CheckMultiply("CubeMatmulRows", m, k, n, acc, kind, rows);
            if (!HasFma()) continue;
            auto packed = [](auto matmul) {
              return [matmul](float* c, const float* a, const float* b, int m, int k, int n,
                              bool acc) {
                std::vector<float> l0b(with_fma::pto_cube::L0BElems(k, n));
                with_fma::pto_cube::CubeMovL0B(l0b.data(), b, n, 0, k, n, false);
                matmul(c, a, l0b.data(), m, k, n, acc);
              };
            };
            CheckMultiply("CubeMatmulVec8 (FMA)", m, k, n, acc, kind,
                          packed([](float* c, const float* a, const float* l0b, int m, int k,
                                    int n, bool acc) {
                            if (acc) {
                              with_fma::pto_cube::CubeMatmulVec8<true>(c, a, k, 1, l0b, m, k, n);
                            } else {
                              with_fma::pto_cube::CubeMatmulVec8<false>(c, a, k, 1, l0b, m, k, n);
                            }
                          }));
            if (!__builtin_cpu_supports("avx512f")) continue;
            CheckMultiply("CubeMatmul512", m, k, n, acc, kind,
                          packed([](float* c, const float* a, const float* l0b, int m, int k,
                                    int n, bool acc) {
                            if (acc) {
                              with_fma::pto_cube::CubeMatmul512<true>(c, a, k, 1, l0b, m, k, n);
                            } else {
                              with_fma::pto_cube::CubeMatmul512<false>(c, a, k, 1, l0b, m, k, n);
                            }
                          }));
          }
        }
      }
    }
  }
  if (!HasFma()) GTEST_SKIP() << "this CPU lacks avx2/fma: only the baseline rows form ran";
  if (!__builtin_cpu_supports("avx512f")) {
    GTEST_SKIP() << "this CPU lacks avx512f: CubeMatmul512 did not run";
  }
}

// The AVX-512 block (8 x 32) and the AVX2 one (6 x 16) give the same bits:
// every element is the same chain of fused multiply-adds over k.
TEST(PtoCubeTest, Avx512AndAvx2PathsAgreeBitwise) {
  if (!HasFma() || !__builtin_cpu_supports("avx512f")) {
    GTEST_SKIP() << "this CPU lacks avx2/fma/avx512f, which CubeMatmul512 uses";
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

// bf16 bits of v rounded to nearest even (v finite).
uint16_t Bf16Bits(float v) {
  uint32_t w;
  std::memcpy(&w, &v, 4);
  return static_cast<uint16_t>((w + 0x7FFF + (w >> 16 & 1)) >> 16);
}

double Bf16Value(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
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
          /* bf16 B (read as bits, widened in registers): the bits of the */          \
          /* same multiply of its f32 values. */                                      \
          std::vector<uint16_t> bh(b.size());                                         \
          std::vector<float> bw(b.size());                                            \
          for (size_t i = 0; i < b.size(); ++i) {                                     \
            bh[i] = Bf16Bits(b[i]);                                                   \
            bw[i] = static_cast<float>(Bf16Value(bh[i]));                             \
          }                                                                           \
          for (bool acc : {true, false}) {                                            \
            std::vector<float> c2 = c0, c3 = c0;                                      \
            if (acc) {                                                                \
              ns::CubeMatmulRowsAcc(c2.data(), a.data(), rs, ps, bw.data(), ldb, m, k, n); \
              ns::CubeMatmulRowsAcc(c3.data(), a.data(), rs, ps, bh.data(), ldb, m, k, n); \
            } else {                                                                  \
              ns::CubeMatmulRows(c2.data(), a.data(), rs, ps, bw.data(), ldb, m, k, n); \
              ns::CubeMatmulRows(c3.data(), a.data(), rs, ps, bh.data(), ldb, m, k, n); \
            }                                                                         \
            ASSERT_EQ(0, std::memcmp(c2.data(), c3.data(), c2.size() * sizeof(float))) \
                << "bf16 B: m=" << m << " n=" << n << " a_trans=" << a_trans          \
                << " acc=" << acc;                                                    \
          }                                                                           \
        }                                                                             \
      }                                                                               \
    }                                                                                 \
  }
// The small-M multiply (B streamed from its rows, no L0B) gives the panel
// kernel's bits: the same steps per element, short columns zero-padded; A
// transposed or not, first step and accumulate, m across the row blocks
// (4, 2, 1) and n across the column blocks (64, 16, 8) and edges; and bf16
// B the bits of its values as f32.
CHECK_ROWS_PATH(CheckRowsPathBaseline, pto_cube)
CHECK_ROWS_PATH(CheckRowsPathFma, with_fma::pto_cube)
CHECK_ROWS_PATH(CheckRowsPathAvx2, avx2_only::pto_cube)

TEST(PtoCubeTest, SmallMRowsPathMatchesPanelsBitwise) {
  CheckRowsPathBaseline();
  if (HasFma()) {
    CheckRowsPathFma();  // AVX-512 streaming blocks where the CPU has AVX-512F
    CheckRowsPathAvx2();
  }
}

// ---------------------------------------------------------------------------
// BF16 pairs (VDPBF16PS)

// The flags /proc/cpuinfo lists for the first CPU (the kernel clears those
// the OS does not enable); empty when it cannot be read.
std::vector<std::string> CpuinfoFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::vector<std::string> flags;
    for (std::string w; words >> w;) flags.push_back(w);
    return flags;
  }
  return {};
}

// The dispatch decision follows what the CPU reports: the dot-product path
// exactly where the kernel lists avx512f, avx512bw and avx512_bf16.
TEST(PtoCubeTest, Bf16DotChosenWhereTheCpuReportsIt) {
  const std::vector<std::string> flags = CpuinfoFlags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags to compare with";
  auto has = [&](const char* f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
  EXPECT_EQ(pto_cube::CubeHasBf16Dot(), has("avx512f") && has("avx512bw") && has("avx512_bf16"));
  EXPECT_EQ(with_fma::pto_cube::CubeHasBf16Dot(), pto_cube::CubeHasBf16Dot());
}

// L0B in pairs: element (k, c) at panel c / 16, pair row k / 2, lane c % 16,
// half k % 2, zero past K (odd) and n; the same from B^T.
TEST(PtoCubeTest, MovL0BPairsPacksPairsOfK) {
  if (!pto_cube::CubeHasBf16Dot()) GTEST_SKIP() << "this CPU lacks avx512bw/avx512_bf16";
  for (int kc : {1, 2, 5}) {
    for (int n : {3, 16, 32, 45, 64}) {
      for (bool trans : {false, true}) {
        const int ld = trans ? kc + 2 : n + 3;  // stored B [kc x n] or B^T [n x kc]
        std::vector<uint16_t> b(static_cast<size_t>(trans ? n : kc) * ld);
        for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint16_t>(i + 1);
        std::vector<uint16_t> l0b(pto_cube::Bf16L0BElems(kc, n), 0xFFFF);
        pto_cube::CubeMovL0BPairs(l0b.data(), b.data(), ld, trans, kc, n);
        const int pairs = (kc + 1) / 2, panels = (n + 15) / 16;
        ASSERT_EQ(l0b.size(), static_cast<size_t>(panels * pairs * 32));
        for (int j = 0; j < panels; ++j) {
          for (int q = 0; q < pairs; ++q) {
            for (int lane = 0; lane < 16; ++lane) {
              for (int half = 0; half < 2; ++half) {
                const int k = 2 * q + half, c = 16 * j + lane;
                const uint16_t want =
                    k < kc && c < n ? b[trans ? c * ld + k : k * ld + c] : 0;
                ASSERT_EQ(l0b[((j * pairs + q) * 16 + lane) * 2 + half], want)
                    << "kc=" << kc << " n=" << n << " trans=" << trans << " k=" << k
                    << " c=" << c;
              }
            }
          }
        }
      }
    }
  }
}

// CubeMatmulBf16 (a whole task over K) against a double reference of the
// bf16 operands: Gamma(k) of the sum of magnitudes (each product exact, one
// rounded addition per k), plus a flushed subnormal (< 2^-126) per step.
// Odd K (the pair-wise product's lone last element), an odd number of pairs
// (the last pair past the full blocks' steps of two), K over several blocks,
// row and column tails, A and B transposed or not, and C's rows past a
// block's (leading dimension n) untouched by neighbours.
template <typename Matmul>
void CheckBf16Task(const char* what, Matmul matmul) {
  for (int kind : {0, 1, 2}) {
    for (bool a_trans : {false, true}) {
      for (bool b_trans : {false, true}) {
        for (int m : {1, 7, 8, 13, 33}) {
          for (int n : {1, 15, 16, 17, 33, 100}) {
            for (int k : {1, 2, 3, 7, 10, 37, 256, 257, 600}) {
              if (kind != 0 && (m > 8 || n > 33)) continue;  // the value kinds on small tasks
              // (kind 2 with a single k: only flushed products, which any
              // bound covering the flush would accept as zero)
              if (kind == 2 && k < 3) continue;
              std::mt19937 rng(m * 7919 + n * 131 + k * 3 + a_trans * 2 + b_trans + kind * 17);
              std::vector<float> af(static_cast<size_t>(m) * k), bf(static_cast<size_t>(k) * n);
              FillOperand(af, rng, kind);
              FillOperand(bf, rng, kind);
              // Stored A [m x k] or A^T [k x m], B [k x n] or B^T [n x k],
              // with leading dimensions past the row.
              const int lda = (a_trans ? m : k) + 3, ldb = (b_trans ? k : n) + 5;
              std::vector<uint16_t> a(static_cast<size_t>(a_trans ? k : m) * lda, 0x7FC0);
              std::vector<uint16_t> b(static_cast<size_t>(b_trans ? n : k) * ldb, 0x7FC0);
              for (int i = 0; i < m; ++i) {
                for (int p = 0; p < k; ++p) {
                  a[a_trans ? p * lda + i : i * lda + p] = Bf16Bits(af[i * k + p]);
                }
              }
              for (int p = 0; p < k; ++p) {
                for (int j = 0; j < n; ++j) {
                  b[b_trans ? j * ldb + p : p * ldb + j] = Bf16Bits(bf[p * n + j]);
                }
              }
              std::vector<float> c(static_cast<size_t>(m) * n, NAN);
              matmul(c.data(), a.data(), lda, a_trans, b.data(), ldb, b_trans, m, k, n);
              pto_tile_testing::ReferenceCheck check(
                  std::string(what) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                  std::to_string(n) + " a_trans " + std::to_string(a_trans) + " b_trans " +
                  std::to_string(b_trans) + " kind " + std::to_string(kind));
              for (int i = 0; i < m; ++i) {
                for (int j = 0; j < n; ++j) {
                  double want = 0, magnitude = 0;
                  for (int p = 0; p < k; ++p) {
                    const double x = Bf16Value(a[a_trans ? p * lda + i : i * lda + p]);
                    const double y = Bf16Value(b[b_trans ? j * ldb + p : p * ldb + j]);
                    want += x * y;
                    magnitude += std::fabs(x * y);
                  }
                  check.Near(c[i * n + j], want,
                             pto_tile_testing::DotBound(k, magnitude) + k * 0x1p-126,
                             [&] { return "C[" + std::to_string(i) + ", " + std::to_string(j) + "]"; });
                }
              }
            }
          }
        }
      }
    }
  }
}

// CubeMatmulBf16 of one copy of the header, with its scratch tiles.
#define BF16_TASK(ns)                                                                       \
  [](float* c, const uint16_t* a, int64_t lda, bool a_trans, const uint16_t* b, int64_t ldb, \
     bool b_trans, int m, int k, int n) {                                                   \
    std::vector<uint16_t> l0b(ns::Bf16L0BElems(k, n)), l0a(ns::Bf16L0AElems(m, k));         \
    ns::CubeMatmulBf16(c, a, lda, a_trans, b, ldb, b_trans, m, k, n,                         \
                       a_trans ? l0a.data() : nullptr, l0b.data());                         \
  }

TEST(PtoCubeTest, Bf16DotTaskMatchesTheReference) {
  if (!pto_cube::CubeHasBf16Dot()) GTEST_SKIP() << "this CPU lacks avx512bw/avx512_bf16";
  CheckBf16Task("CubeMatmulBf16", BF16_TASK(pto_cube));
  CheckBf16Task("CubeMatmulBf16 (x86-64-v3 copy)", BF16_TASK(with_fma::pto_cube));
}

// CubeMatmulBf16Store (the task with its TSTORE, each register block of the
// last K block stored as it finishes) gives the bits of CubeMatmulBf16 and
// then CubeStoreL0C, to bf16, f16 and f32 C with a leading dimension past n
// (the elements between rows untouched): K of zero, one block and several,
// odd K, row and column tails, A and B transposed or not.
template <typename T>
void CheckBf16StoreMatchesTaskThenStore(const char* what) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (bool a_trans : {false, true}) {
    for (bool b_trans : {false, true}) {
      for (int m : {1, 4, 13, 33}) {
        for (int n : {1, 17, 64, 100, 128}) {
          for (int k : {0, 3, 256, 600}) {
            const int lda = (a_trans ? m : k) + 3, ldb = (b_trans ? k : n) + 5, ldc = n + 7;
            std::vector<uint16_t> a(static_cast<size_t>(a_trans ? k : m) * lda + 1);
            std::vector<uint16_t> b(static_cast<size_t>(b_trans ? n : k) * ldb + 1);
            for (uint16_t& x : a) x = Bf16Bits(dist(rng));
            for (uint16_t& x : b) x = Bf16Bits(dist(rng));
            std::vector<uint16_t> l0b(pto_cube::Bf16L0BElems(k, n)), l0a(pto_cube::Bf16L0AElems(m, k));
            std::vector<float> l0c(static_cast<size_t>(m) * n);
            std::vector<T> want(static_cast<size_t>(m) * ldc), got(want.size());
            std::memset(want.data(), 0x5A, want.size() * sizeof(T));
            std::memset(got.data(), 0x5A, got.size() * sizeof(T));
            uint16_t* const qa = a_trans ? l0a.data() : nullptr;
            pto_cube::CubeMatmulBf16(l0c.data(), a.data(), lda, a_trans, b.data(), ldb, b_trans,
                                     m, k, n, qa, l0b.data());
            pto_cube::CubeStoreL0C<pto_tile::Elem<T>>(want.data(), ldc, l0c.data(), m, n);
            std::fill(l0c.begin(), l0c.end(), NAN);
            pto_cube::CubeMatmulBf16Store<pto_tile::Elem<T>>(got.data(), ldc, l0c.data(),
                                                             a.data(), lda, a_trans, b.data(),
                                                             ldb, b_trans, m, k, n, qa,
                                                             l0b.data());
            ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(T)), 0)
                << what << " " << m << "x" << k << "x" << n << " a_trans " << a_trans
                << " b_trans " << b_trans;
          }
        }
      }
    }
  }
}

TEST(PtoCubeTest, Bf16DotTaskWithItsStoreGivesTheSameBits) {
  if (!pto_cube::CubeHasBf16Dot()) GTEST_SKIP() << "this CPU lacks avx512bw/avx512_bf16";
  CheckBf16StoreMatchesTaskThenStore<pto_tile::bf16>("bf16");
  CheckBf16StoreMatchesTaskThenStore<pto_tile::half>("f16");
  CheckBf16StoreMatchesTaskThenStore<float>("f32");
}

// A conversion whose row run differs from its element form, to see which
// TSTORE takes.
struct PlusOneRun {
  static float Store(float v) { return v; }
  static void StoreRun(float* d, const float* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i] + 1.0f;
  }
};

TEST(PtoCubeTest, StoreL0CTakesTheRowRunWhereConvHasOne) {
  const std::vector<float> l0c = {1, 2, 3, 4, 5, 6};
  std::vector<float> run(8, 0.0f), one(8, 0.0f);
  pto_cube::CubeStoreL0C<PlusOneRun>(run.data(), 4, l0c.data(), 2, 3);
  pto_cube::CubeStoreL0C(one.data(), 4, l0c.data(), 2, 3);  // F32: element by element
  EXPECT_EQ(run, (std::vector<float>{2, 3, 4, 0, 5, 6, 7, 0}));
  EXPECT_EQ(one, (std::vector<float>{1, 2, 3, 0, 4, 5, 6, 0}));
}

// f16 and bf16 TSTOREs (the vectorized row runs) give Elem::Store's bits
// for every element, at widths around the 8- and 16-lane groups, for
// rounding ties, NaN, infinities, subnormals and overflow.
TEST(PtoCubeTest, StoreL0CRoundsHalfAndBf16AsElementByElement) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, 1e-40f, -1e-42f, 0.0f, -0.0f,
                            1.00390625f /* a bf16 tie */, 1.0009765625f /* an f16 tie */,
                            65520.0f, 3.4e38f};
  for (int n : {1, 7, 8, 9, 15, 16, 17, 33, 40}) {
    const int m = 3, ld = n + 5;
    std::vector<float> l0c(m * n);
    for (int i = 0; i < m * n; ++i) {
      l0c[i] = i % 3 == 0 ? specials[(i / 3) % 12] : dist(rng) * (i % 2 ? 1e-3f : 1.0f);
    }
    std::vector<pto_tile::bf16> b(m * ld, pto_tile::bf16{0x1234});
    std::vector<pto_tile::half> h(m * ld, pto_tile::half{0x1234});
    pto_cube::CubeStoreL0C<pto_tile::Elem<pto_tile::bf16>>(b.data(), ld, l0c.data(), m, n);
    pto_cube::CubeStoreL0C<pto_tile::Elem<pto_tile::half>>(h.data(), ld, l0c.data(), m, n);
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < ld; ++c) {
        const uint16_t want_b =
            c < n ? pto_tile::Elem<pto_tile::bf16>::Store(l0c[r * n + c]).bits : 0x1234;
        const uint16_t want_h =
            c < n ? pto_tile::Elem<pto_tile::half>::Store(l0c[r * n + c]).bits : 0x1234;
        ASSERT_EQ(b[r * ld + c].bits, want_b) << "bf16 n=" << n << " at " << r << "," << c;
        ASSERT_EQ(h[r * ld + c].bits, want_h) << "f16 n=" << n << " at " << r << "," << c;
      }
    }
  }
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
