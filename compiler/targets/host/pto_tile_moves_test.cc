// pto_tile.h's vector moves between GM and UB on x86-64-v3, built with that
// ISA level as kernels for the host-x86_64-v3 target are: a transposing
// TLoadStrided of f32 whose tile dims are multiples of 8 goes through 8 x 8
// in-register transposes (Transpose8Blocks) and must place every value where
// the element-by-element copy does (other shapes and strides keep that
// copy); a BF16 store and a BF16 rounding in place take 16 values at a time
// (FloatsToBf16s, RoundToBf16s) and an f32 -> INT8/16/32, UINT8 TCVT 8 at a
// time (vcvttps2dq), and must give the scalar forms' bits. Built for x86-64-v4 too
// (pto_tile_moves_test_v4).
#include <cstdint>
#include <vector>

#include "compiler/targets/host/pto_tile_convert.h"
#include "compiler/targets/host/pto_tile_moves.h"
#include "compiler/targets/host/testing/double_reference.h"
#include "gtest/gtest.h"

#if !defined(__AVX__)
#error "pto_tile_moves_test is built with -march=x86-64-v3 or -v4"
#endif

namespace {

// ub[(i1 * E2 + i2) * E3 + j] = gm[i1 * s1 + i2 * s2 + j * s3], checked for
// TLoadStrided<float, 1, E1, E2, E3> on distinct values.
template <int64_t E1, int64_t E2, int64_t E3>
void CheckTransposingLoad(int64_t s1, int64_t s2, int64_t s3) {
  const int64_t size = (E1 - 1) * s1 + (E2 - 1) * s2 + (E3 - 1) * s3 + 1;
  std::vector<float> gm(size);
  for (int64_t i = 0; i < size; ++i) gm[i] = static_cast<float>(i);
  std::vector<float> ub(E1 * E2 * E3, -1.0f);
  pto_tile::TLoadStrided<float, 1, E1, E2, E3>(ub.data(), gm.data(), 0, s1, s2, s3);
  for (int64_t i1 = 0; i1 < E1; ++i1) {
    for (int64_t i2 = 0; i2 < E2; ++i2) {
      for (int64_t j = 0; j < E3; ++j) {
        ASSERT_EQ(ub[(i1 * E2 + i2) * E3 + j], gm[i1 * s1 + i2 * s2 + j * s3])
            << "tile [" << E1 << "," << E2 << "," << E3 << "] at " << i1 << "," << i2 << ","
            << j;
      }
    }
  }
}

TEST(PtoTileMovesTest, TransposingLoadsPlaceEveryValue) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  // x.T of a 1024-wide x (8 x 8 blocks), a batch dim beside it.
  CheckTransposingLoad<1, 8, 8>(0, 1, 1024);
  CheckTransposingLoad<2, 16, 24>(40000, 1, 1024);
  CheckTransposingLoad<1, 32, 32>(0, 1, 33);
  CheckTransposingLoad<1, 128, 128>(0, 1, 1024);
  CheckTransposingLoad<3, 8, 64>(700, 1, 9);
  // Shapes and strides the blocks do not take: the element-by-element copy.
  CheckTransposingLoad<1, 12, 8>(0, 1, 100);
  CheckTransposingLoad<1, 8, 12>(0, 1, 100);
  CheckTransposingLoad<1, 16, 16>(0, 2, 100);
}

// Every 61st float bit pattern (70M), and groups of 16 with a NaN (quiet,
// signalling, either sign) at each position, ties to even both ways, the
// largest finite values (rounding to inf), infinities, zeros, subnormals:
// the bits FloatToBf16 gives, value by value, and rounding in place
// (RoundTile<bf16>, an FP16/BF16 chain's intermediate results) Round<bf16>'s.
TEST(PtoTileMovesTest, Bf16StoresRoundAsTheScalarForm) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  constexpr int64_t kBatch = 1 << 16;
  std::vector<float> src(kBatch);
  std::vector<uint16_t> got(kBatch);
  std::vector<float> rounded;
  int64_t filled = 0, checked = 0;
  auto check = [&]() {
    pto_tile::FloatsToBf16s(got.data(), src.data(), filled);
    rounded.assign(src.begin(), src.begin() + filled);
    pto_tile::RoundTile<pto_tile::bf16>(rounded.data(), filled);
    for (int64_t i = 0; i < filled; ++i) {
      ASSERT_EQ(got[i], pto_tile::FloatToBf16(src[i]))
          << "bits 0x" << std::hex << pto_tile::BitsFromFloat(src[i]);
      const float want = pto_tile::Round<pto_tile::bf16>::Apply(src[i]);
      ASSERT_EQ(pto_tile::BitsFromFloat(rounded[i]), pto_tile::BitsFromFloat(want))
          << "rounding in place, bits 0x" << std::hex << pto_tile::BitsFromFloat(src[i]);
    }
    checked += filled;
    filled = 0;
  };
  auto add = [&](uint32_t bits) {
    src[filled++] = pto_tile::FloatFromBits(bits);
    if (filled == kBatch) check();
  };
  for (uint64_t b = 0; b < (1ull << 32); b += 61) add(static_cast<uint32_t>(b));
  const uint32_t special[] = {0x7FC00000u, 0x7F800001u, 0xFFC00001u, 0xFF800123u,
                              0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7F8000u, 0x7F7E8000u,
                              0x3F808000u, 0x3F818000u, 0x3F807FFFu, 0x7F800000u,
                              0xFF800000u, 0x00000000u, 0x80000000u, 0x00000001u,
                              0x80008000u, 0x00018000u, 0x007FFFFFu};
  for (int nan = 0; nan < 4; ++nan) {
    for (int at = 0; at < 16; ++at) {
      for (int k = 0; k < 16; ++k) add(k == at ? special[nan] : 0x3F808000u + (k << 16));
    }
  }
  for (uint32_t bits : special) add(bits);
  while (filled % 16 != 0) add(0x40490FDBu);
  check();
  EXPECT_GT(checked, 70000000);
}

// f32 -> INT8, INT16, INT32, UINT8 casts: every 97th float pattern (44M: NaN,
// infinities, values past int32, fractions of both signs, -0) converted 8
// at a time (N = 4099 leaves a scalar tail) give what CvtTo gives value by
// value (torch's rules: truncation, INT32_MIN for NaN and out-of-range
// values, then wrapped to the width).
template <typename D>
void CheckFloatToIntCast() {
  constexpr int64_t N = 4099;
  using DS = typename pto_tile::Elem<D>::S;
  std::vector<float> src(N);
  std::vector<DS> got(N);
  int64_t filled = 0;
  auto check = [&]() {
    pto_tile::TCvt<N, D>(got.data(), src.data());
    for (int64_t i = 0; i < N; ++i) {
      ASSERT_EQ(got[i], pto_tile::CvtTo<D>::Apply(src[i]))
          << sizeof(D) << "-byte int from bits 0x" << std::hex
          << pto_tile::BitsFromFloat(src[i]);
    }
    filled = 0;
  };
  for (uint64_t b = 0; b < (1ull << 32); b += 97) {
    src[filled++] = pto_tile::FloatFromBits(static_cast<uint32_t>(b));
    if (filled == N) check();
  }
  const float special[] = {0x1p31f, -0x1p31f, 0x1.fffffep30f, -0x1.fffffep30f, 127.9f, -128.9f,
                           128.0f, -129.0f, 32767.5f, -32768.5f, 65535.0f, -0.0f, -0.99f};
  for (float v : special) src[filled++] = v;
  while (filled < N) src[filled++] = 1.5f;
  check();
}

TEST(PtoTileMovesTest, FloatToIntCastsMatchTheScalarForm) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  CheckFloatToIntCast<int8_t>();
  CheckFloatToIntCast<int16_t>();
  CheckFloatToIntCast<int32_t>();
  CheckFloatToIntCast<uint8_t>();
}

}  // namespace

// TReshape reads each value's GM bits as another type of the same size, and
// back: the integer of an f32 is its bit pattern (negative where the sign is
// set), an FP16/BF16 tile's value goes through its own 16 bits, and INT16
// bits give the FP16 and BF16 values they encode.
TEST(PtoTileMovesTest, TReshapeReinterpretsTheBitsOfEachValue) {
  const float f[4] = {1.0f, -2.5f, 0x1p-149f, -0.0f};
  int64_t bits[4];
  pto_tile::TReshape<4, int32_t, float>(bits, f);
  EXPECT_EQ(bits[0], 0x3F800000);
  EXPECT_EQ(bits[1], static_cast<int32_t>(0xC0200000u));
  EXPECT_EQ(bits[2], 1);
  EXPECT_EQ(bits[3], static_cast<int32_t>(0x80000000u));
  float back[4];
  pto_tile::TReshape<4, float, int32_t>(back, bits);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(pto_tile::BitsFromFloat(back[i]), pto_tile::BitsFromFloat(f[i])) << i;
  }

  const float h[3] = {1.0f, -0x1p-24f, 65504.0f};  // FP16 values held as f32
  float h_bits[3];
  pto_tile::TReshape<3, int16_t, pto_tile::half>(h_bits, h);
  EXPECT_EQ(h_bits[0], 0x3C00);
  EXPECT_EQ(h_bits[1], static_cast<int16_t>(0x8001));
  EXPECT_EQ(h_bits[2], 0x7BFF);
  float as_bf16[3];
  pto_tile::TReshape<3, pto_tile::bf16, int16_t>(as_bf16, h_bits);
  EXPECT_EQ(as_bf16[0], pto_tile::Bf16ToFloat(0x3C00));
  EXPECT_EQ(pto_tile::BitsFromFloat(as_bf16[1]), 0x80010000u);
  const float nan = __builtin_nanf("");
  float nan_bits;
  pto_tile::TReshape<1, int16_t, pto_tile::half>(&nan_bits, &nan);
  EXPECT_EQ(nan_bits, 0x7E00);  // the quiet NaN every FP16 store gives

  const double d[2] = {1.0, -0.0};
  int64_t d_bits[2];
  pto_tile::TReshape<2, int64_t, double>(d_bits, d);
  EXPECT_EQ(d_bits[0], 0x3FF0000000000000LL);
  EXPECT_EQ(d_bits[1], INT64_MIN);
}
