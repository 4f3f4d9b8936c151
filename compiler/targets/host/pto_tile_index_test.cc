// pto_tile.h's MGather and MScatter against element-by-element loops over
// the padded 4-dim space: every indexed dim, a row of equal indices (the
// contiguous copy) beside rows of mixed ones, FP16 and INT32 buffers,
// reduce none/add/multiply with repeated indices, INT32 wrapping,
// indices outside [0, n) reading 0 and writing nothing, and the N forms (a
// tail's extents) touching only the elements inside them.
#include <cstdint>
#include <vector>

#include "compiler/targets/host/pto_tile_convert.h"
#include "compiler/targets/host/pto_tile_index.h"
#include "gtest/gtest.h"

namespace {

// A [2, 3, 4, 5] buffer of distinct values and its strides.
constexpr int64_t kShape[4] = {2, 3, 4, 5};
constexpr int64_t kStrides[4] = {60, 20, 5, 1};

int64_t At(const int64_t c[4]) {
  return c[0] * kStrides[0] + c[1] * kStrides[1] + c[2] * kStrides[2] + c[3];
}

// A tile [1, 2, 2, 3] at offsets (1, 1, 2, 1) of the buffer, indexed along K.
template <int K>
void CheckGather() {
  std::vector<float> gm(120);
  for (int i = 0; i < 120; ++i) gm[i] = static_cast<float>(i) + 0.5f;
  std::vector<int64_t> idx(12);
  for (int i = 0; i < 12; ++i) idx[i] = (i * 7 + 3) % (kShape[K] + 2) - 1;  // some out of range
  idx[3] = idx[4] = idx[5] = 1;  // one row of equal indices
  std::vector<float> ub(12, -7.0f);
  const int64_t o[4] = {1, 1, 2, 1};
  pto_tile::MGather<float, 1, 2, 2, 3, K>(ub.data(), gm.data(), idx.data(), o[0], o[1], o[2],
                                          o[3], kStrides[0], kStrides[1], kStrides[2],
                                          kShape[K]);
  for (int i1 = 0; i1 < 2; ++i1) {
    for (int i2 = 0; i2 < 2; ++i2) {
      for (int j = 0; j < 3; ++j) {
        const int e = (i1 * 2 + i2) * 3 + j;
        int64_t c[4] = {o[0], o[1] + i1, o[2] + i2, o[3] + j};
        c[K] = idx[e];
        const float want = idx[e] >= 0 && idx[e] < kShape[K] ? gm[At(c)] : 0.0f;
        EXPECT_EQ(ub[e], want) << "K=" << K << " element " << e;
      }
    }
  }
}

TEST(PtoTileIndexTest, GatherAlongEveryDim) {
  CheckGather<0>();
  CheckGather<1>();
  CheckGather<2>();
  CheckGather<3>();
}

TEST(PtoTileIndexTest, GatherConvertsHalfAndInt32) {
  std::vector<pto_tile::half> h(8);
  for (int i = 0; i < 8; ++i) h[i] = pto_tile::half{pto_tile::FloatToHalf(i * 0.25f - 1)};
  const int64_t idx[4] = {7, 7, 7, 7};
  float ub[4];
  // Buffer [8, 1] (padded [1, 1, 8, 1]), four rows of one element, each row 7.
  pto_tile::MGather<pto_tile::half, 1, 1, 4, 1, 2>(ub, h.data(), idx, 0, 0, 0, 0, 8, 8, 1, 8);
  for (float v : ub) EXPECT_EQ(v, 0.75f);
  const int32_t ints[3] = {-5, 2147483647, 9};
  const int64_t pick[3] = {1, 2, 0};
  int64_t out[3];
  pto_tile::MGather<int32_t, 1, 1, 1, 3, 3>(out, ints, pick, 0, 0, 0, 0, 3, 3, 3, 3);
  EXPECT_EQ(out[0], 2147483647);
  EXPECT_EQ(out[1], 9);
  EXPECT_EQ(out[2], -5);
}

TEST(PtoTileIndexTest, ScatterReplacesAddsAndMultipliesInRowMajorOrder) {
  // A [3, 4] buffer, a [2, 4] tile at offset (0, 0), indexed along dim 0
  // (K = 2 of the padded [1, 1, 3, 4]).
  const int64_t idx[8] = {2, 0, 2, -1, 2, 1, 3, 0};  // (0,0) and (1,0) both row 2
  const float src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int r = 0; r < 3; ++r) {
    std::vector<float> gm(12);
    for (int i = 0; i < 12; ++i) gm[i] = static_cast<float>(i + 1);
    std::vector<float> want = gm;
    for (int e = 0; e < 8; ++e) {
      if (idx[e] < 0 || idx[e] >= 3) continue;
      float& at = want[idx[e] * 4 + e % 4];
      at = r == 0 ? src[e] : r == 1 ? at + src[e] : at * src[e];
    }
    if (r == 0) {
      pto_tile::MScatter<float, 1, 1, 2, 4, 2, 0>(gm.data(), src, idx, 0, 0, 0, 0, 12, 12, 4, 3);
    } else if (r == 1) {
      pto_tile::MScatter<float, 1, 1, 2, 4, 2, 1>(gm.data(), src, idx, 0, 0, 0, 0, 12, 12, 4, 3);
    } else {
      pto_tile::MScatter<float, 1, 1, 2, 4, 2, 2>(gm.data(), src, idx, 0, 0, 0, 0, 12, 12, 4, 3);
    }
    EXPECT_EQ(gm, want) << "reduce " << r;
  }
}

TEST(PtoTileIndexTest, ScatterAddWrapsInt32AndSkipsOutOfRange) {
  int32_t gm[2] = {2147483647, 5};
  const int64_t idx[3] = {0, 2, -3};
  const int64_t src[3] = {1, 100, 100};
  pto_tile::MScatter<int32_t, 1, 1, 1, 3, 3, 1>(gm, src, idx, 0, 0, 0, 0, 2, 2, 2, 2);
  EXPECT_EQ(gm[0], -2147483647 - 1);
  EXPECT_EQ(gm[1], 5);
}

// The N forms over the extents (1, 1, 2, 3) of a [1, 1, 3, 4] tile: the
// elements inside are gathered (scattered) as the whole-tile form would;
// the tile's other elements keep their values and the buffer elements the
// others would address (the zero-padded index 0) are not written.
TEST(PtoTileIndexTest, TheNFormsTouchOnlyTheTasksExtents) {
  // A [3, 4] buffer, indexed along dim 1 (K = 3 of the padded [1, 1, 3, 4]).
  std::vector<float> gm(12);
  for (int i = 0; i < 12; ++i) gm[i] = static_cast<float>(i + 1);
  int64_t idx[12] = {};  // the tail's zero padding: index 0
  const int64_t valid[6] = {3, 1, 2, 0, 3, 3};
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 3; ++j) idx[r * 4 + j] = valid[r * 3 + j];
  }
  std::vector<float> ub(12, -7.0f);
  pto_tile::MGatherN<float, 1, 1, 3, 4, 3>(ub.data(), gm.data(), idx, 0, 0, 0, 0, 12, 12, 4, 4,
                                           1, 1, 2, 3);
  for (int e = 0; e < 12; ++e) {
    const int r = e / 4, j = e % 4;
    const float want = r < 2 && j < 3 ? gm[r * 4 + idx[e]] : -7.0f;
    EXPECT_EQ(ub[e], want) << "element " << e;
  }
  std::vector<float> src(12, 100.0f);
  std::vector<float> want = gm;
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 3; ++j) want[r * 4 + idx[r * 4 + j]] += 100.0f;
  }
  pto_tile::MScatterN<float, 1, 1, 3, 4, 3, 1>(gm.data(), src.data(), idx, 0, 0, 0, 0, 12, 12,
                                               4, 4, 1, 1, 2, 3);
  EXPECT_EQ(gm, want);  // row 2 and column 3 of the tile add nothing at index 0
}

}  // namespace
