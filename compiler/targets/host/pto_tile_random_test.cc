// pto_tile.h's TPHILOX (pto_tile_random.h): Random123's known-answer vectors
// for Philox4x32-10, and TPhilox's tiles (at every offset modulo 4, of
// lengths that leave partial blocks and partial groups of four blocks, with
// counters that carry across words) word for word against the generator
// written here from its definition in 128-bit counter arithmetic. Built for
// the baseline (one block at a time), x86-64-v3 (four blocks per AVX2
// vector; skips on a CPU without AVX2) and x86-64-v4. TPhiloxNormal's
// tiles bit for bit against Box-Muller composed of TPhilox's words and the
// tile instructions pypto.normal's composition runs (TLog, TSqrt, TCos,
// TSin: libmvec's functions of the build's vector width).
#include <cstdint>
#include <vector>

#include "compiler/targets/host/pto_tile.h"
#include "compiler/targets/host/pto_tile_random.h"
#include "compiler/targets/host/testing/double_reference.h"
#include "gtest/gtest.h"

namespace {

constexpr uint64_t kMask = 0xFFFFFFFFu;

struct Kat {
  uint32_t counter[4];
  uint32_t key[2];
  uint32_t want[4];
};

// Random123's kat_vectors for philox4x32_10.
constexpr Kat kKats[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8}},
    {{0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF},
     {0xFFFFFFFF, 0xFFFFFFFF},
     {0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD}},
    {{0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344},
     {0xA4093822, 0x299F31D0},
     {0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1}},
};

// Word w of Philox4x32-10 at the 128-bit counter `ctr` + j under `key`.
uint32_t Word(unsigned __int128 ctr, uint64_t j, const uint32_t key[2], int w) {
  const unsigned __int128 c = ctr + j;
  uint64_t x[4];
  for (int i = 0; i < 4; ++i) x[i] = static_cast<uint64_t>(c >> (32 * i)) & kMask;
  uint64_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = x[0] * 0xD2511F53u, p1 = x[2] * 0xCD9E8D57u;
    const uint64_t y0 = (p1 >> 32) ^ x[1] ^ k0, y2 = (p0 >> 32) ^ x[3] ^ k1;
    x[0] = y0;
    x[1] = p1 & kMask;
    x[2] = y2;
    x[3] = p0 & kMask;
    k0 = (k0 + 0x9E3779B9u) & kMask;
    k1 = (k1 + 0xBB67AE85u) & kMask;
  }
  return static_cast<uint32_t>(x[w]);
}

unsigned __int128 Counter(const uint32_t c[4]) {
  unsigned __int128 v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 32) | c[i];
  return v;
}

// TPhilox over a tile of N elements at `base`.
template <int64_t N>
std::vector<int64_t> Tile(const uint32_t key[2], const uint32_t c[4], int64_t base) {
  std::vector<int64_t> d(N, -1);
  pto_tile::TPhilox<N, int64_t>(d.data(), key[0], key[1], c[0], c[1], c[2], c[3], base);
  return d;
}

TEST(TPhiloxTest, BlockGivesRandom123KnownAnswers) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  for (const Kat& k : kKats) {
    uint32_t x[4] = {k.counter[0], k.counter[1], k.counter[2], k.counter[3]};
    pto_tile::PhiloxBlock(x, k.key[0], k.key[1]);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(x[w], k.want[w]) << "word " << w;
    for (int w = 0; w < 4; ++w) EXPECT_EQ(Word(Counter(k.counter), 0, k.key, w), k.want[w]);
  }
}

TEST(TPhiloxTest, TileGivesRandom123KnownAnswers) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  // 32 elements: the known answer is block 0, its words the first four
  // (through the vector path where there is one), then seven blocks more.
  for (const Kat& k : kKats) {
    const std::vector<int64_t> d = Tile<32>(k.key, k.counter, 0);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(d[w], k.want[w]) << "word " << w;
  }
}

template <int64_t N>
void CheckTiles(const uint32_t key[2], const uint32_t c[4]) {
  const std::vector<int64_t> bases = {0, 1, 2, 3, 4, 5, 16, 31, 1000, (int64_t{1} << 34) + 3};
  for (int64_t base : bases) {
    const std::vector<int64_t> d = Tile<N>(key, c, base);
    int bad = 0;
    for (int64_t e = 0; e < N && bad < 5; ++e) {
      const uint64_t g = static_cast<uint64_t>(base + e);
      const int64_t want = Word(Counter(c), g / 4, key, static_cast<int>(g % 4));
      if (d[e] != want) {
        ++bad;
        ADD_FAILURE() << "N " << N << " base " << base << " element " << e << ": " << d[e]
                      << ", want " << want;
      }
    }
  }
}

TEST(TPhiloxTest, TilesAtEveryOffsetMatchTheGenerator) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  const uint32_t key[2] = {0x89ABCDEF, 0x01234567};
  const uint32_t c[4] = {7, 0, 3, 0};
  CheckTiles<1>(key, c);
  CheckTiles<3>(key, c);
  CheckTiles<16>(key, c);
  CheckTiles<37>(key, c);
  CheckTiles<2048>(key, c);
}

TEST(TPhiloxTest, CountersCarryAcrossWords) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  const uint32_t key[2] = {1, 2};
  // counter + j crosses 2**32, 2**64 and 2**96 inside the tile; the top
  // word wraps (the counter is 128 bits).
  const uint32_t low[4] = {0xFFFFFFFD, 5, 0, 0};
  const uint32_t all[4] = {0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF};
  const uint32_t mid[4] = {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 9};
  CheckTiles<64>(key, low);
  CheckTiles<64>(key, all);
  CheckTiles<64>(key, mid);
  // Block index j's high word carries too (an offset past 2**34 elements).
  const uint32_t high[4] = {0, 0xFFFFFFFF, 0, 0};
  CheckTiles<64>(key, high);
}

TEST(TPhiloxTest, WordsAreBelowTwoToThe32) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  const uint32_t key[2] = {0xFFFFFFFF, 0xFFFFFFFF};
  const uint32_t c[4] = {0, 0, 0, 0};
  const std::vector<int64_t> d = Tile<4096>(key, c, 0);
  int64_t high_bits = 0;
  for (int64_t v : d) {
    ASSERT_GE(v, 0);
    ASSERT_LE(v, static_cast<int64_t>(kMask));
    high_bits |= v >> 31;
  }
  EXPECT_EQ(high_bits, 1);  // (and bit 31 is used)
}

// pypto.normal's composition, element for element: TPhilox's words of the
// blocks under the tile, Box-Muller through the tile instructions.
template <int64_t N>
std::vector<float> ComposedNormal(const uint32_t key[2], const uint32_t c[4], int64_t base) {
  constexpr int64_t kPairs = N / 2 + 4;
  const int64_t first = base / 4 * 4;  // the tile's first block, from its first word
  std::vector<int64_t> w = Tile<2 * kPairs>(key, c, first);
  std::vector<float> u1(kPairs), t(kPairs), lg(kPairs), r(kPairs), cs(kPairs), sn(kPairs);
  for (int64_t p = 0; p < kPairs; ++p) {
    u1[p] = static_cast<float>(w[2 * p] >> 8) * 0x1p-24f + 0x1p-24f;
    t[p] = static_cast<float>(w[2 * p + 1] >> 8) * 0x1p-24f * static_cast<float>(6.283185307179586);
  }
  pto_tile::TLog<kPairs>(lg.data(), u1.data());
  for (float& v : lg) v *= -2.0f;
  pto_tile::TSqrt<kPairs>(r.data(), lg.data());
  pto_tile::TCos<kPairs>(cs.data(), t.data());
  pto_tile::TSin<kPairs>(sn.data(), t.data());
  std::vector<float> z(N);
  for (int64_t e = 0; e < N; ++e) {
    const int64_t g = base + e - first, p = g / 2;
    z[e] = r[p] * (g % 2 == 0 ? cs[p] : sn[p]);
  }
  return z;
}

template <int64_t N>
void CheckNormalTiles(const uint32_t key[2], const uint32_t c[4]) {
  for (int64_t base : {0, 1, 2, 3, 4, 61, 1 << 20}) {
    std::vector<float> d(N, -1.0f);
    pto_tile::TPhiloxNormal<N, float>(d.data(), key[0], key[1], c[0], c[1], c[2], c[3], base);
    const std::vector<float> want = ComposedNormal<N>(key, c, base);
    for (int64_t e = 0; e < N; ++e) {
      if (__builtin_memcmp(&d[e], &want[e], sizeof(float)) != 0) {
        ADD_FAILURE() << "N " << N << " base " << base << " element " << e << ": " << d[e]
                      << ", want " << want[e];
        return;
      }
    }
  }
}

TEST(TPhiloxNormalTest, MatchesTheComposedBoxMullerBitForBit) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  const uint32_t key[2] = {0x89ABCDEF, 0x01234567};
  const uint32_t c[4] = {7, 0, 3, 0};
  CheckNormalTiles<1>(key, c);
  CheckNormalTiles<3>(key, c);
  CheckNormalTiles<66>(key, c);
  CheckNormalTiles<2048>(key, c);
  // The counter's low word carries inside a group of blocks.
  const uint32_t carry[4] = {0xFFFFFFF9, 0xFFFFFFFF, 2, 0};
  CheckNormalTiles<256>(key, carry);
}

TEST(TPhiloxNormalTest, ValuesLookNormal) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  const uint32_t key[2] = {2024, 0};
  const uint32_t c[4] = {0, 0, 0, 0};
  std::vector<float> d(1 << 16);
  pto_tile::TPhiloxNormal<(1 << 16), float>(d.data(), key[0], key[1], c[0], c[1], c[2], c[3], 0);
  double sum = 0, sum2 = 0;
  for (float v : d) {
    ASSERT_TRUE(v == v && v > -7 && v < 7) << v;
    sum += v;
    sum2 += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(d.size());
  EXPECT_LT(sum / n, 0.02);
  EXPECT_GT(sum / n, -0.02);
  EXPECT_NEAR(sum2 / n, 1.0, 0.03);
}

}  // namespace
