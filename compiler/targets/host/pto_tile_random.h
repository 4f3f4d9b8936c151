// PTO tile instructions (pto_tile.h): TPHILOX, this compiler's own
// instruction for counter-based random numbers (pypto.uniform and
// pypto.normal; PTO-ISA has no counterpart).
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11) with the Random123 reference constants: a block of four 32-bit
// counter words (c0, c1, c2, c3), low first, under a key (k0, k1) goes
// through ten rounds of
//
//   p0 = c0 * M0, p1 = c2 * M1 (64-bit products)
//   (c0, c1, c2, c3) = (hi(p1) ^ c1 ^ k0, lo(p1), hi(p0) ^ c3 ^ k1, lo(p0))
//   (k0, k1) += (W0, W1) (mod 2**32)
//
// TPHILOX writes the words of consecutive blocks, four elements per block:
// element e of the rank-1 tile at offset `base` in its tensor holds word
// (base + e) % 4 of Philox4x32-10(counter + (base + e) / 4, key), the
// counter sum in 128 bits. The words are int64 values in [0, 2**32).
//
// With AVX2 (x86-64-v3 and v4 kernels) four blocks run in one vector, one
// per 64-bit lane: VPMULUDQ (_mm256_mul_epu32) gives the four 32x32 -> 64-bit
// products of a multiply, and a 4 x 4 transpose lays the words out block
// after block; four such vectors go through the rounds together (16 blocks,
// then single vectors for the rest). Elsewhere, and for the blocks a tile
// cuts at its ends, one block at a time in scalar code. Both give the same
// words (the generator is integer arithmetic).
#ifndef PTO_TILE_RANDOM_H_
#define PTO_TILE_RANDOM_H_

#include <stdint.h>

#include "pto_tile_mvec.h"

namespace pto_tile {

constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;

// Block j's counter: the 128-bit sum of the four words `c` (low first) and
// j (j < 2**63).
inline void PhiloxCounter(const uint32_t c[4], uint64_t j, uint32_t out[4]) {
  uint64_t s = static_cast<uint64_t>(c[0]) + (j & 0xFFFFFFFFu);
  out[0] = static_cast<uint32_t>(s);
  s = (s >> 32) + c[1] + (j >> 32);
  out[1] = static_cast<uint32_t>(s);
  s = (s >> 32) + c[2];
  out[2] = static_cast<uint32_t>(s);
  out[3] = static_cast<uint32_t>((s >> 32) + c[3]);
}

// Philox4x32-10 of the block `x` (four counter words, low first) under the
// key (k0, k1), in place.
inline void PhiloxBlock(uint32_t x[4], uint32_t k0, uint32_t k1) {
  for (int r = 0; r < kPhiloxRounds; ++r) {
    const uint64_t p0 = static_cast<uint64_t>(x[0]) * kPhiloxM0;
    const uint64_t p1 = static_cast<uint64_t>(x[2]) * kPhiloxM1;
    const uint32_t y0 = static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ k0;
    const uint32_t y2 = static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ k1;
    x[0] = y0;
    x[1] = static_cast<uint32_t>(p1);
    x[2] = y2;
    x[3] = static_cast<uint32_t>(p0);
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
}

#if defined(__AVX2__)
typedef uint64_t PhiloxU4 __attribute__((vector_size(32)));
typedef int64_t PhiloxI4 __attribute__((vector_size(32)));
typedef int32_t PhiloxI8 __attribute__((vector_size(32)));

// The 64-bit products of the low 32 bits of each lane (VPMULUDQ).
inline PhiloxU4 PhiloxMulLow(PhiloxU4 a, PhiloxU4 b) {
  return reinterpret_cast<PhiloxU4>(__builtin_ia32_pmuludq256(reinterpret_cast<PhiloxI8>(a),
                                                              reinterpret_cast<PhiloxI8>(b)));
}

// Blocks j0 .. j0 + 4G - 1, their 16G words written to d[0 .. 16G) block
// after block: G groups of four blocks, one block per 64-bit lane, their
// rounds interleaved (a round's multiply waits on the last one's). Only
// each lane's low 32 bits are words: the multiplies read only those, so the
// high bits a XOR leaves are masked once at the end.
template <int G>
inline void PhiloxBlocks(void* __restrict d, const uint32_t c[4], uint64_t j0,
                         const uint32_t k0[kPhiloxRounds], const uint32_t k1[kPhiloxRounds]) {
  constexpr uint64_t kLow = 0xFFFFFFFFu;
  PhiloxU4 x[G][4];
  for (int g = 0; g < G; ++g) {  // the counters, as PhiloxCounter in each lane
    const PhiloxU4 j = PhiloxU4{0, 1, 2, 3} + (j0 + 4 * static_cast<uint64_t>(g));
    PhiloxU4 s = (j & kLow) + static_cast<uint64_t>(c[0]);
    x[g][0] = s;
    s = (s >> 32) + (j >> 32) + static_cast<uint64_t>(c[1]);
    x[g][1] = s;
    s = (s >> 32) + static_cast<uint64_t>(c[2]);
    x[g][2] = s;
    x[g][3] = (s >> 32) + static_cast<uint64_t>(c[3]);
  }
  const PhiloxU4 m0 = {kPhiloxM0, kPhiloxM0, kPhiloxM0, kPhiloxM0};
  const PhiloxU4 m1 = {kPhiloxM1, kPhiloxM1, kPhiloxM1, kPhiloxM1};
  for (int r = 0; r < kPhiloxRounds; ++r) {
    for (int g = 0; g < G; ++g) {
      const PhiloxU4 p0 = PhiloxMulLow(x[g][0], m0);
      const PhiloxU4 p1 = PhiloxMulLow(x[g][2], m1);
      const PhiloxU4 y0 = (p1 >> 32) ^ x[g][1] ^ static_cast<uint64_t>(k0[r]);
      const PhiloxU4 y2 = (p0 >> 32) ^ x[g][3] ^ static_cast<uint64_t>(k1[r]);
      x[g][0] = y0;
      x[g][1] = p1;
      x[g][2] = y2;
      x[g][3] = p0;
    }
  }
  // Transpose: lane b of x[g][k] is word k of block 4g + b; d holds block
  // 0's four words, then block 1's, ...
  const PhiloxI4 lo = {0, 4, 2, 6}, hi = {1, 5, 3, 7};
  const PhiloxI4 first = {0, 1, 4, 5}, second = {2, 3, 6, 7};
  PhiloxU4 out[G][4];
  for (int g = 0; g < G; ++g) {
    for (int k = 0; k < 4; ++k) x[g][k] &= kLow;
    const PhiloxU4 a0 = __builtin_shuffle(x[g][0], x[g][1], lo);  // b0w0 b0w1 b2w0 b2w1
    const PhiloxU4 a1 = __builtin_shuffle(x[g][0], x[g][1], hi);  // b1w0 b1w1 b3w0 b3w1
    const PhiloxU4 a2 = __builtin_shuffle(x[g][2], x[g][3], lo);  // b0w2 b0w3 b2w2 b2w3
    const PhiloxU4 a3 = __builtin_shuffle(x[g][2], x[g][3], hi);  // b1w2 b1w3 b3w2 b3w3
    out[g][0] = __builtin_shuffle(a0, a2, first);
    out[g][1] = __builtin_shuffle(a1, a3, first);
    out[g][2] = __builtin_shuffle(a0, a2, second);
    out[g][3] = __builtin_shuffle(a1, a3, second);
  }
  __builtin_memcpy(d, out, sizeof out);
}
#endif

// dst[e] = word (base + e) % 4 of Philox4x32-10(counter + (base + e) / 4,
// key) (TPHILOX): key (k0, k1) and counter (c0, c1, c2, c3) are 32-bit
// words given as doubles (the instruction's immediates), base the tile's
// offset in its rank-1 tensor.
template <int64_t N, typename D, typename DS>
inline void TPhilox(DS* __restrict d, double k0, double k1, double c0, double c1, double c2,
                    double c3, int64_t base) {
  static_assert(sizeof(DS) == 8, "TPHILOX writes int64 tiles");
  const uint32_t key0 = static_cast<uint32_t>(k0), key1 = static_cast<uint32_t>(k1);
  const uint32_t c[4] = {static_cast<uint32_t>(c0), static_cast<uint32_t>(c1),
                         static_cast<uint32_t>(c2), static_cast<uint32_t>(c3)};
  int64_t e = 0;
  // One block at a time: the words of a block the tile starts inside, and
  // (below) those of the blocks after the last whole group.
  auto scalar_until = [&](int64_t end) {
    while (e < end) {
      const uint64_t g = static_cast<uint64_t>(base + e);
      uint32_t x[4];
      PhiloxCounter(c, g >> 2, x);
      PhiloxBlock(x, key0, key1);
      for (int64_t w = static_cast<int64_t>(g & 3); w < 4 && e < end; ++w, ++e) {
        d[e] = static_cast<DS>(x[w]);
      }
    }
  };
#if defined(__AVX2__)
  uint32_t rk0[kPhiloxRounds], rk1[kPhiloxRounds];
  for (int r = 0; r < kPhiloxRounds; ++r) {
    rk0[r] = key0 + static_cast<uint32_t>(r) * kPhiloxW0;
    rk1[r] = key1 + static_cast<uint32_t>(r) * kPhiloxW1;
  }
  const int64_t head = (4 - (base & 3)) & 3;
  scalar_until(head < N ? head : N);
  for (; e + 64 <= N; e += 64) {
    PhiloxBlocks<4>(d + e, c, static_cast<uint64_t>(base + e) >> 2, rk0, rk1);
  }
  for (; e + 16 <= N; e += 16) {
    PhiloxBlocks<1>(d + e, c, static_cast<uint64_t>(base + e) >> 2, rk0, rk1);
  }
#endif
  scalar_until(N);
}

// TPHILOXNORMAL: normal variates straight from the counter, Box-Muller on
// the words of each block in pairs (w0, w1) and (w2, w3):
//
//   u1 = (w0 >> 8) * 2**-24 + 2**-24, t = ((w1 >> 8) * 2**-24) * f32(2 pi),
//   r = sqrt(log(u1) * -2), (z0, z1) = (r * cos(t), r * sin(t)),
//
// each step one f32 operation (the same log, sin and cos as TLOG, TSIN and
// TCOS: libmvec's, or the scalar builtins without it), so element e holds
// the value pypto.normal's composition of TPHILOX, TSHR, TCVT, TMULS,
// TADDS, TLOG, TSQRT, TCOS, TSIN and TMUL gives it, bit for bit. Element e
// of the rank-1 tile at `base` is z(e % 4) of block (base + e) / 4 (z0, z1
// from (w0, w1), then z2, z3 from (w2, w3)).
//
// A group of kNormalLanes blocks runs at once, one block per 32-bit lane:
// with AVX2 or AVX-512F each Philox multiply is two VPMULUDQs (the even and
// the odd lanes), the words never leave registers, and the four results a
// lane holds are interleaved into block order by two rounds of shuffles.
// Elsewhere the words come from PhiloxBlock, a block at a time.
#if PTO_TILE_MVEC
typedef MvecF NormalF;
#else
typedef float NormalF __attribute__((vector_size(16)));
#endif
constexpr int kNormalLanes = static_cast<int>(sizeof(NormalF) / sizeof(float));
typedef uint32_t NormalU __attribute__((vector_size(sizeof(NormalF))));
typedef int32_t NormalI __attribute__((vector_size(sizeof(NormalF))));
typedef uint64_t NormalU2 __attribute__((vector_size(sizeof(NormalF))));

#if PTO_TILE_MVEC
inline NormalF NormalLog(NormalF v) { return PTO_TILE_MVEC_FN(logf)(v); }
inline NormalF NormalSin(NormalF v) { return PTO_TILE_MVEC_FN(sinf)(v); }
inline NormalF NormalCos(NormalF v) { return PTO_TILE_MVEC_FN(cosf)(v); }
#else
inline NormalF NormalLog(NormalF v) {
  for (int l = 0; l < kNormalLanes; ++l) v[l] = __builtin_logf(v[l]);
  return v;
}
inline NormalF NormalSin(NormalF v) {
  for (int l = 0; l < kNormalLanes; ++l) v[l] = __builtin_sinf(v[l]);
  return v;
}
inline NormalF NormalCos(NormalF v) {
  for (int l = 0; l < kNormalLanes; ++l) v[l] = __builtin_cosf(v[l]);
  return v;
}
#endif

// sqrt of each lane, correctly rounded (TSQRT's __builtin_sqrtf).
inline NormalF NormalSqrt(NormalF v) {
#if defined(__AVX512F__) && PTO_TILE_MVEC
  typedef float F16 __attribute__((vector_size(64)));
  return __builtin_ia32_sqrtps512_mask(v, F16{}, static_cast<uint16_t>(0xFFFF), 4);
#elif defined(__AVX2__) && PTO_TILE_MVEC
  return __builtin_ia32_sqrtps256(v);
#else
  for (int l = 0; l < kNormalLanes; ++l) v[l] = __builtin_sqrtf(v[l]);
  return v;
#endif
}

#if PTO_TILE_MVEC && (defined(__AVX512F__) || defined(__AVX2__))
#define PTO_TILE_NORMAL_VECTOR_WORDS 1
// The 64-bit products of the low 32 bits of each 64-bit lane (VPMULUDQ).
inline NormalU2 NormalMulLow(NormalU2 a, NormalU2 b) {
#if defined(__AVX512F__)
  typedef int32_t I16 __attribute__((vector_size(64)));
  typedef long long L8 __attribute__((vector_size(64)));
  return reinterpret_cast<NormalU2>(__builtin_ia32_pmuludq512_mask(
      reinterpret_cast<I16>(a), reinterpret_cast<I16>(b), L8{}, static_cast<uint8_t>(0xFF)));
#else
  return reinterpret_cast<NormalU2>(__builtin_ia32_pmuludq256(reinterpret_cast<PhiloxI8>(a),
                                                              reinterpret_cast<PhiloxI8>(b)));
#endif
}

// hi and lo of the 32 x 32 -> 64-bit product x * m in every 32-bit lane.
inline void NormalMul(NormalU x, NormalU2 m, NormalU* hi, NormalU* lo) {
  constexpr uint64_t kLow = 0xFFFFFFFFu;
  const NormalU2 even = NormalMulLow(reinterpret_cast<NormalU2>(x), m);
  const NormalU2 odd = NormalMulLow(reinterpret_cast<NormalU2>(x) >> 32, m);
  *lo = reinterpret_cast<NormalU>((even & kLow) | (odd << 32));
  *hi = reinterpret_cast<NormalU>((even >> 32) | (odd & ~kLow));
}
#else
#define PTO_TILE_NORMAL_VECTOR_WORDS 0
#endif

// Shuffle masks: the first and second halves of two vectors' lanes zipped,
// and of their lane pairs zipped.
#if PTO_TILE_MVEC && defined(__AVX512F__)
constexpr NormalI kNormalZipLo = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
constexpr NormalI kNormalZipHi = {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
constexpr NormalI kNormalPairLo = {0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23};
constexpr NormalI kNormalPairHi = {8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31};
#elif PTO_TILE_MVEC && defined(__AVX2__)
constexpr NormalI kNormalZipLo = {0, 8, 1, 9, 2, 10, 3, 11};
constexpr NormalI kNormalZipHi = {4, 12, 5, 13, 6, 14, 7, 15};
constexpr NormalI kNormalPairLo = {0, 1, 8, 9, 2, 3, 10, 11};
constexpr NormalI kNormalPairHi = {4, 5, 12, 13, 6, 7, 14, 15};
#else
constexpr NormalI kNormalZipLo = {0, 4, 1, 5};
constexpr NormalI kNormalZipHi = {2, 6, 3, 7};
constexpr NormalI kNormalPairLo = {0, 1, 4, 5};
constexpr NormalI kNormalPairHi = {2, 3, 6, 7};
#endif

// Blocks j0 .. j0 + kNormalLanes - 1: their 4 * kNormalLanes normals to z,
// block after block. rk0/rk1: the key's words of each round.
inline void PhiloxNormalGroup(float* __restrict z, const uint32_t c[4], uint64_t j0,
                              const uint32_t rk0[kPhiloxRounds],
                              const uint32_t rk1[kPhiloxRounds]) {
  constexpr int L = kNormalLanes;
  NormalU x[4];
#if PTO_TILE_NORMAL_VECTOR_WORDS
  uint32_t first[4];
  PhiloxCounter(c, j0, first);
  if (first[0] <= 0xFFFFFFFFu - (L - 1)) {  // no carry out of word 0 inside the group
    NormalU lane;
    for (int l = 0; l < L; ++l) lane[l] = static_cast<uint32_t>(l);
    x[0] = lane + first[0];
    for (int k = 1; k < 4; ++k) x[k] = NormalU{} + first[k];
  } else {
    for (int l = 0; l < L; ++l) {
      uint32_t b[4];
      PhiloxCounter(c, j0 + static_cast<uint64_t>(l), b);
      for (int k = 0; k < 4; ++k) x[k][l] = b[k];
    }
  }
  const NormalU2 m0 = NormalU2{} + static_cast<uint64_t>(kPhiloxM0);
  const NormalU2 m1 = NormalU2{} + static_cast<uint64_t>(kPhiloxM1);
  for (int r = 0; r < kPhiloxRounds; ++r) {
    NormalU hi0, lo0, hi1, lo1;
    NormalMul(x[0], m0, &hi0, &lo0);
    NormalMul(x[2], m1, &hi1, &lo1);
    x[0] = hi1 ^ x[1] ^ rk0[r];
    x[1] = lo1;
    x[2] = hi0 ^ x[3] ^ rk1[r];
    x[3] = lo0;
  }
#else
  for (int l = 0; l < L; ++l) {
    uint32_t b[4];
    PhiloxCounter(c, j0 + static_cast<uint64_t>(l), b);
    PhiloxBlock(b, rk0[0], rk1[0]);
    for (int k = 0; k < 4; ++k) x[k][l] = b[k];
  }
#endif
  const NormalF unit = NormalF{} + 0x1p-24f;
  const float two_pi = static_cast<float>(6.283185307179586);
  NormalF zs[4];
  for (int h = 0; h < 2; ++h) {  // (w0, w1), then (w2, w3)
    const NormalF u1 =
        __builtin_convertvector(reinterpret_cast<NormalI>(x[2 * h] >> 8), NormalF) * unit + unit;
    const NormalF u2 = __builtin_convertvector(reinterpret_cast<NormalI>(x[2 * h + 1] >> 8),
                                               NormalF) * unit;
    const NormalF t = u2 * two_pi;
    const NormalF r = NormalSqrt(NormalLog(u1) * -2.0f);
    zs[2 * h] = r * NormalCos(t);
    zs[2 * h + 1] = r * NormalSin(t);
  }
  const NormalF a_lo = __builtin_shuffle(zs[0], zs[1], kNormalZipLo);
  const NormalF a_hi = __builtin_shuffle(zs[0], zs[1], kNormalZipHi);
  const NormalF b_lo = __builtin_shuffle(zs[2], zs[3], kNormalZipLo);
  const NormalF b_hi = __builtin_shuffle(zs[2], zs[3], kNormalZipHi);
  const NormalF out[4] = {__builtin_shuffle(a_lo, b_lo, kNormalPairLo),
                          __builtin_shuffle(a_lo, b_lo, kNormalPairHi),
                          __builtin_shuffle(a_hi, b_hi, kNormalPairLo),
                          __builtin_shuffle(a_hi, b_hi, kNormalPairHi)};
  __builtin_memcpy(z, out, sizeof out);
}

// dst[e] = z((base + e) % 4) of block (base + e) / 4 (TPHILOXNORMAL; the
// immediates and `base` as TPhilox's).
template <int64_t N, typename D, typename DS>
inline void TPhiloxNormal(DS* __restrict d, double k0, double k1, double c0, double c1,
                          double c2, double c3, int64_t base) {
  static_assert(sizeof(DS) == 4, "TPHILOXNORMAL writes f32 tiles");
  constexpr int64_t kGroup = 4 * kNormalLanes;
  const uint32_t key0 = static_cast<uint32_t>(k0), key1 = static_cast<uint32_t>(k1);
  const uint32_t c[4] = {static_cast<uint32_t>(c0), static_cast<uint32_t>(c1),
                         static_cast<uint32_t>(c2), static_cast<uint32_t>(c3)};
  uint32_t rk0[kPhiloxRounds], rk1[kPhiloxRounds];
  for (int r = 0; r < kPhiloxRounds; ++r) {
    rk0[r] = key0 + static_cast<uint32_t>(r) * kPhiloxW0;
    rk1[r] = key1 + static_cast<uint32_t>(r) * kPhiloxW1;
  }
  float* f = reinterpret_cast<float*>(d);
  int64_t e = 0;
  while (e < N) {
    const uint64_t g = static_cast<uint64_t>(base + e);
    const int64_t w = static_cast<int64_t>(g & 3);
    if (w == 0 && e + kGroup <= N) {
      PhiloxNormalGroup(f + e, c, g >> 2, rk0, rk1);
      e += kGroup;
      continue;
    }
    // A group the tile starts inside or ends inside: its needed part.
    float z[kGroup];
    PhiloxNormalGroup(z, c, g >> 2, rk0, rk1);
    const int64_t take = kGroup - w < N - e ? kGroup - w : N - e;
    __builtin_memcpy(f + e, z + w, take * sizeof(float));
    e += take;
  }
}

}  // namespace pto_tile

#endif  // PTO_TILE_RANDOM_H_
