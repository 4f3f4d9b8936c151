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

}  // namespace pto_tile

#endif  // PTO_TILE_RANDOM_H_
