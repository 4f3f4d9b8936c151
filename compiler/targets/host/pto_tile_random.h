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
// With AVX2 (x86-64-v3 and v4 kernels) four blocks run at once, one per
// 64-bit lane: VPMULUDQ (_mm256_mul_epu32) gives the four 32x32 -> 64-bit
// products of a multiply, and a 4 x 4 transpose lays the words out block
// after block. Elsewhere, and for the blocks a tile cuts at its ends, one
// block at a time in scalar code. Both give the same words (the generator
// is integer arithmetic).
#ifndef PTO_TILE_RANDOM_H_
#define PTO_TILE_RANDOM_H_

#include <stdint.h>

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

// Blocks j0 .. j0 + 3, their 16 words written to d[0..16) block after
// block. Only each lane's low 32 bits are words: the multiplies read only
// those, so the high bits a XOR leaves are masked once at the end.
inline void Philox4Blocks(int64_t* __restrict d, const uint32_t c[4], uint64_t j0,
                          const uint32_t k0[kPhiloxRounds], const uint32_t k1[kPhiloxRounds]) {
  PhiloxU4 x[4];
  for (int b = 0; b < 4; ++b) {
    uint32_t w[4];
    PhiloxCounter(c, j0 + b, w);
    for (int k = 0; k < 4; ++k) x[k][b] = w[k];
  }
  const PhiloxU4 m0 = {kPhiloxM0, kPhiloxM0, kPhiloxM0, kPhiloxM0};
  const PhiloxU4 m1 = {kPhiloxM1, kPhiloxM1, kPhiloxM1, kPhiloxM1};
  for (int r = 0; r < kPhiloxRounds; ++r) {
    const PhiloxU4 p0 = PhiloxMulLow(x[0], m0);
    const PhiloxU4 p1 = PhiloxMulLow(x[2], m1);
    const PhiloxU4 y0 = (p1 >> 32) ^ x[1] ^ static_cast<uint64_t>(k0[r]);
    const PhiloxU4 y2 = (p0 >> 32) ^ x[3] ^ static_cast<uint64_t>(k1[r]);
    x[0] = y0;
    x[1] = p1;
    x[2] = y2;
    x[3] = p0;
  }
  for (int k = 0; k < 4; ++k) x[k] &= 0xFFFFFFFFu;
  // Transpose: lane b of x[k] is word k of block b; d holds block 0's four
  // words, then block 1's, ...
  const PhiloxI4 lo = {0, 4, 2, 6}, hi = {1, 5, 3, 7};
  const PhiloxU4 a0 = __builtin_shuffle(x[0], x[1], lo);  // b0w0 b0w1 b2w0 b2w1
  const PhiloxU4 a1 = __builtin_shuffle(x[0], x[1], hi);  // b1w0 b1w1 b3w0 b3w1
  const PhiloxU4 a2 = __builtin_shuffle(x[2], x[3], lo);  // b0w2 b0w3 b2w2 b2w3
  const PhiloxU4 a3 = __builtin_shuffle(x[2], x[3], hi);  // b1w2 b1w3 b3w2 b3w3
  const PhiloxI4 first = {0, 1, 4, 5}, second = {2, 3, 6, 7};
  const PhiloxU4 out[4] = {__builtin_shuffle(a0, a2, first), __builtin_shuffle(a1, a3, first),
                           __builtin_shuffle(a0, a2, second), __builtin_shuffle(a1, a3, second)};
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
  for (; e + 16 <= N; e += 16) {
    int64_t words[16];
    Philox4Blocks(words, c, static_cast<uint64_t>(base + e) >> 2, rk0, rk1);
    for (int k = 0; k < 16; ++k) d[e + k] = static_cast<DS>(words[k]);
  }
#endif
  scalar_until(N);
}

}  // namespace pto_tile

#endif  // PTO_TILE_RANDOM_H_
