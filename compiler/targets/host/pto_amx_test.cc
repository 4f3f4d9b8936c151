// pto_amx.h's BF16 tile kernel on its own, built as kernels for
// host-x86_64-v3-amx are (-march=x86-64-v3 -mamx-tile -mamx-bf16): the K
// blocks of a cube task (AmxMovL0B, AmxMovL0ATrans, AmxMatmul, AmxStoreL0C)
// against a double-precision reference within rtol 1e-5 of the sum of
// magnitudes, over tails in every dim, both transposes and strided
// operands; and results independent of the K block. Skipped on a CPU (or
// OS) without AMX-BF16.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "compiler/targets/host/pto_cube.h"
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

Problem Make(int m, int k, int n, bool a_trans, bool b_trans, uint32_t seed) {
  Problem p{m, k, n, a_trans, b_trans, {}, {}, {}, {}, 0, 0};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4, 4);
  p.a.resize(static_cast<size_t>(m) * k);
  p.b.resize(static_cast<size_t>(k) * n);
  for (uint16_t& x : p.a) x = FloatToBf16(dist(rng));
  for (uint16_t& x : p.b) x = FloatToBf16(dist(rng));
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

void ExpectNearReference(const Problem& p, const std::vector<float>& c) {
  int bad = 0;
  for (int i = 0; i < p.m; ++i) {
    for (int j = 0; j < p.n; ++j) {
      double want = 0, mag = 0;
      for (int q = 0; q < p.k; ++q) {
        const double x = double{Bf16ToFloat(p.a[i * p.k + q])} * Bf16ToFloat(p.b[q * p.n + j]);
        want += x;
        mag += std::fabs(x);
      }
      const float got = c[static_cast<size_t>(i) * p.n + j];
      if (!(std::fabs(got - want) <= 1e-5 * mag) && bad++ < 5) {
        ADD_FAILURE() << p.m << "x" << p.k << "x" << p.n << " a_trans " << p.a_trans
                      << " b_trans " << p.b_trans << ": C[" << i << "," << j << "] = " << got
                      << ", want " << want << " (sum of magnitudes " << mag << ")";
      }
    }
  }
}

bool HaveAmx() { return pto::runtime::HostHasAmxBf16(); }

TEST(PtoAmxTest, MatchesReferenceWithTails) {
  if (!HaveAmx()) GTEST_SKIP() << "skipped: no AMX";
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
}

// K blocks of 32, 64, 96, 256 and all of K give the same bits: every
// block and tile step of K starts at a multiple of 32.
TEST(PtoAmxTest, KBlocksDoNotChangeBits) {
  if (!HaveAmx()) GTEST_SKIP() << "skipped: no AMX";
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
