// pto_amx.h's BF16 tile kernel on its own, built as kernels for
// host-x86_64-v3-amx are (-march=x86-64-v3 -mamx-tile -mamx-bf16): the K
// blocks of a cube task (AmxMovL0B, AmxMovL0ATrans, AmxMatmul, AmxStoreL0C)
// against a double-precision reference within DotBound (k rounded f32
// additions of exact products: Gamma(k) of the sum of magnitudes), over
// tails in every dim, both transposes, strided operands and magnitudes from
// 2^-30 to 2^30; and results independent of the K block. Those skip on a
// CPU (or OS) without AMX-BF16: pto_amx.h has no emulation of the tile
// instructions. Its packing (AmxMovL0B, AmxMovL0ATrans, ATile) is plain
// C++ and is checked on any x86-64-v3 CPU: the product read from the packed
// operands in the layout TDPBF16PS reads is the reference product.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compiler/targets/host/pto_cube.h"
#include "compiler/targets/host/testing/double_reference.h"
#include "gtest/gtest.h"
#include "runtime/host_target.h"

#ifndef PTO_AMX
#error "pto_amx_test must be built with -mamx-tile -mamx-bf16"
#endif

namespace {

float Bf16ToFloat(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t FloatToBf16(float f) {  // nearest even; no NaNs here
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

struct F32 {
  static float Store(float v) { return v; }
};

struct Problem {
  int m, k, n;
  bool a_trans, b_trans;
  std::vector<uint16_t> a, b;  // logical A [m x k], B [k x n]
  std::vector<uint16_t> as, bs;  // as stored (transposed or not), padded rows
  int64_t lda, ldb;
};

// Values uniform in [-4, 4], or (wide) of magnitude 2^-30..2^30 and either
// sign: products 2^-60..2^60, normal in f32 (TDPBF16PS flushes subnormals).
Problem Make(int m, int k, int n, bool a_trans, bool b_trans, uint32_t seed, bool wide = false) {
  Problem p{m, k, n, a_trans, b_trans, {}, {}, {}, {}, 0, 0};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::uniform_real_distribution<float> exponent(-30, 30);
  auto value = [&] {
    if (!wide) return FloatToBf16(dist(rng));
    return FloatToBf16((rng() % 2 ? -1.0f : 1.0f) * std::exp2(exponent(rng)));
  };
  p.a.resize(static_cast<size_t>(m) * k);
  p.b.resize(static_cast<size_t>(k) * n);
  for (uint16_t& x : p.a) x = value();
  for (uint16_t& x : p.b) x = value();
  // Stored with 3 (A) and 2 (B) columns more than used, filled with NaN:
  // anything read past the operand shows up in the result.
  p.lda = (a_trans ? m : k) + 3;
  p.ldb = (b_trans ? k : n) + 2;
  p.as.assign(static_cast<size_t>(a_trans ? k : m) * p.lda, 0x7fc0);
  p.bs.assign(static_cast<size_t>(b_trans ? n : k) * p.ldb, 0x7fc0);
  for (int i = 0; i < m; ++i) {
    for (int q = 0; q < k; ++q) {
      (a_trans ? p.as[q * p.lda + i] : p.as[i * p.lda + q]) = p.a[i * k + q];
    }
  }
  for (int q = 0; q < k; ++q) {
    for (int j = 0; j < n; ++j) {
      (b_trans ? p.bs[j * p.ldb + q] : p.bs[q * p.ldb + j]) = p.b[q * n + j];
    }
  }
  return p;
}

// One cube task's K loop, as amx_codegen.cc emits it, in K blocks of
// `kblock` (pto_amx::KBlock(K) in generated code).
std::vector<float> RunTask(const Problem& p, int64_t kblock) {
  std::vector<uint16_t> l0b(pto_amx::L0BElems(kblock, p.n));
  std::vector<uint16_t> l0a(pto_amx::L0AElems(p.m, kblock));
  std::vector<float> l0c(pto_amx::L0CElems(p.m, p.n));
  std::vector<float> c(static_cast<size_t>(p.m) * p.n);
  pto_amx::AmxBegin();
  for (int64_t k = 0; k < p.k; k += kblock) {
    const int kb = static_cast<int>(p.k - k < kblock ? p.k - k : kblock);
    pto_amx::AmxMovL0B(l0b.data(), p.bs.data() + (p.b_trans ? k : k * p.ldb), p.ldb,
                       p.b_trans, kb, p.n);
    const void* a = p.as.data() + k;
    int64_t lda = p.lda;
    int m = p.m, kk = kb;
    if (p.a_trans) {
      lda = pto_amx::AmxMovL0ATrans(l0a.data(), p.as.data() + k * p.lda, p.lda, p.m, kb);
      a = l0a.data();
      m = static_cast<int>(pto_amx::RoundUp(p.m, 16));
      kk = static_cast<int>(pto_amx::RoundUp(kb, 32));
    }
    if (k == 0) {
      pto_amx::AmxMatmul<false>(l0c.data(), a, lda, l0b.data(), m, kk, p.n);
    } else {
      pto_amx::AmxMatmul<true>(l0c.data(), a, lda, l0b.data(), m, kk, p.n);
    }
  }
  pto_amx::AmxEnd();
  pto_amx::AmxStoreL0C<F32>(c.data(), p.n, l0c.data(), p.m, p.n);
  return c;
}

// C = op(A) * op(B) in double; `bound(k, magnitude)` the allowed error.
template <typename Bound>
void ExpectNearReference(const Problem& p, const std::vector<float>& c, const char* form,
                         const Bound& bound) {
  pto_tile_testing::ReferenceCheck check(std::string(form) + " " + std::to_string(p.m) + "x" +
                                         std::to_string(p.k) + "x" + std::to_string(p.n) +
                                         " a_trans " + std::to_string(p.a_trans) + " b_trans " +
                                         std::to_string(p.b_trans));
  for (int i = 0; i < p.m; ++i) {
    for (int j = 0; j < p.n; ++j) {
      double want = 0, mag = 0;
      for (int q = 0; q < p.k; ++q) {
        const double x = double{Bf16ToFloat(p.a[i * p.k + q])} * Bf16ToFloat(p.b[q * p.n + j]);
        want += x;
        mag += std::fabs(x);
      }
      check.Near(c[static_cast<size_t>(i) * p.n + j], want, bound(p.k, mag),
                 [&] { return "C[" + std::to_string(i) + ", " + std::to_string(j) + "]"; });
    }
  }
}

void ExpectNearReference(const Problem& p, const std::vector<float>& c) {
  ExpectNearReference(p, c, "AMX task", [](int k, double mag) {
    return pto_tile_testing::DotBound(k, mag);
  });
}

bool HaveAmx() { return pto::runtime::HostHasAmxBf16(); }
constexpr char kNoAmx[] =
    "this CPU (or OS) lacks AMX-BF16 (amx_tile, amx_bf16): TDPBF16PS, which has no emulation, "
    "did not run";

TEST(PtoAmxTest, MatchesReferenceWithTails) {
  if (!HaveAmx()) GTEST_SKIP() << kNoAmx;
  uint32_t seed = 1;
  for (int m : {1, 15, 16, 17, 33, 50}) {
    for (int n : {1, 16, 17, 35, 64}) {
      for (int k : {1, 2, 31, 33, 70}) {
        for (int t = 0; t < 4; ++t) {
          const Problem p = Make(m, k, n, t & 1, t & 2, seed++);
          ExpectNearReference(p, RunTask(p, pto_amx::KBlock(k)));
        }
      }
    }
  }
  for (int t = 0; t < 4; ++t) {
    const Problem p = Make(37, 301, 45, t & 1, t & 2, 100 + t, /*wide=*/true);
    ExpectNearReference(p, RunTask(p, pto_amx::KBlock(p.k)));
  }
}

// op(A) and op(B) as the tile loads read them from one K block: L0B in
// pairs of K (element (k, j) at l0b[((k / 2) * np + j) * 2 + k % 2]), A
// through ATile in 16 x 32 tiles (a tile reaching past kb from the
// zero-padded edge copy), or AmxMovL0ATrans's row-major copy of A^T. Plain
// C++: no tile instruction runs.
struct Unpacked {
  std::vector<double> a;  // [mp x kp]
  std::vector<double> b;  // [kp x np]
  int mp, kp, np;
};

Unpacked UnpackBlock(const Problem& p, int k0, int kb) {
  Unpacked u;
  u.kp = static_cast<int>(pto_amx::RoundUp(kb, pto_amx::kTileK));
  u.np = static_cast<int>(pto_amx::RoundUp(p.n, pto_amx::kTileCols));
  std::vector<uint16_t> l0b(pto_amx::L0BElems(kb, p.n), 0x7fc0);
  pto_amx::AmxMovL0B(l0b.data(), p.bs.data() + (p.b_trans ? k0 : k0 * p.ldb), p.ldb, p.b_trans,
                     kb, p.n);
  u.b.resize(static_cast<size_t>(u.kp) * u.np);
  for (int q = 0; q < u.kp; ++q) {
    for (int j = 0; j < u.np; ++j) {
      u.b[static_cast<size_t>(q) * u.np + j] =
          Bf16ToFloat(l0b[(static_cast<size_t>(q / 2) * u.np + j) * 2 + q % 2]);
    }
  }
  if (p.a_trans) {
    u.mp = static_cast<int>(pto_amx::RoundUp(p.m, pto_amx::kTileRows));
    std::vector<uint16_t> l0a(pto_amx::L0AElems(p.m, kb), 0x7fc0);
    const int64_t ld = pto_amx::AmxMovL0ATrans(l0a.data(), p.as.data() + k0 * p.lda, p.lda, p.m,
                                               kb);
    u.a.resize(static_cast<size_t>(u.mp) * u.kp);
    for (int i = 0; i < u.mp; ++i) {
      for (int q = 0; q < u.kp; ++q) u.a[i * u.kp + q] = Bf16ToFloat(l0a[i * ld + q]);
    }
    return u;
  }
  // Whole 16-row tiles of A read in place (rows past them go through
  // AmxMatmul's tail copy, which only runs with AMX).
  u.mp = p.m / pto_amx::kTileRows * pto_amx::kTileRows;
  u.a.resize(static_cast<size_t>(u.mp) * u.kp);
  const pto_amx::ASource src = {p.as.data() + k0, p.lda, u.mp, kb, nullptr, 0};
  alignas(64) uint16_t edge[pto_amx::kTileRows * pto_amx::kTileK];
  for (int i = 0; i < u.mp; i += pto_amx::kTileRows) {
    for (int q = 0; q < kb; q += pto_amx::kTileK) {
      int64_t stride;
      const uint16_t* tile = pto_amx::ATile(src, i, q, edge, &stride);
      for (int r = 0; r < pto_amx::kTileRows; ++r) {
        for (int c = 0; c < pto_amx::kTileK; ++c) {
          u.a[(i + r) * u.kp + q + c] = Bf16ToFloat(tile[r * (stride / 2) + c]);
        }
      }
    }
  }
  return u;
}

TEST(PtoAmxTest, PackedOperandsHoldTheProductWithoutAmx) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  uint32_t seed = 50;
  for (int m : {1, 16, 17, 33, 50}) {
    for (int n : {1, 16, 17, 35, 64}) {
      for (int k : {1, 2, 31, 33, 70, 301}) {
        for (int t = 0; t < 4; ++t) {
          const Problem p = Make(m, k, n, t & 1, t & 2, seed++, /*wide=*/t == 3);
          const int64_t kblock = k > 64 ? 64 : pto_amx::KBlock(k);
          std::vector<float> c(static_cast<size_t>(p.m) * p.n, 0.0f);
          int rows = p.m;
          for (int k0 = 0; k0 < p.k; k0 += static_cast<int>(kblock)) {
            const int kb = static_cast<int>(p.k - k0 < kblock ? p.k - k0 : kblock);
            const Unpacked u = UnpackBlock(p, k0, kb);
            rows = std::min(p.m, u.mp);
            for (int i = 0; i < u.mp; ++i) {
              for (int j = 0; j < u.np; ++j) {
                double sum = 0;  // products exact, the sum within 2^-47 of the magnitudes
                for (int q = 0; q < u.kp; ++q) sum += u.a[i * u.kp + q] * u.b[q * u.np + j];
                if (i < p.m && j < p.n) {
                  c[static_cast<size_t>(i) * p.n + j] += static_cast<float>(sum);
                } else if (sum != 0) {
                  ADD_FAILURE() << "padding of the packed block is not zero at (" << i << ", "
                                << j << ")";
                }
              }
            }
          }
          if (rows == 0) continue;  // A's rows all in AmxMatmul's tail copy
          Problem whole_tiles = p;  // the rows ATile reads in place
          whole_tiles.m = rows;
          c.resize(static_cast<size_t>(rows) * p.n);
          ExpectNearReference(whole_tiles, c, "packed operands", [](int k, double mag) {
            return pto_tile_testing::DotBound(k, mag);
          });
        }
      }
    }
  }
}

// K blocks of 32, 64, 96, 256 and all of K give the same bits: every
// block and tile step of K starts at a multiple of 32.
TEST(PtoAmxTest, KBlocksDoNotChangeBits) {
  if (!HaveAmx()) GTEST_SKIP() << kNoAmx;
  EXPECT_EQ(pto_amx::KBlock(301), 320);
  EXPECT_EQ(pto_amx::KBlock(5000), pto_amx::kMaxKBlock);
  for (int t = 0; t < 4; ++t) {
    const Problem p = Make(40, 301, 50, t & 1, t & 2, 7 + t);
    const std::vector<float> one = RunTask(p, pto_amx::KBlock(p.k));
    ExpectNearReference(p, one);
    for (int kblock : {32, 64, 96, 256}) {
      EXPECT_EQ(RunTask(p, kblock), one) << "K block " << kblock << " a_trans " << (t & 1)
                                         << " b_trans " << (t & 2);
    }
  }
}

}  // namespace
