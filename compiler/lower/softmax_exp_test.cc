// Which exps the lowering proves are softmax's (IsSoftmaxExp, TEXPSOFTMAX):
// exp(x - amax(x, dim, keepdim)) in FP32, and no other exp.
#include "compiler/lower/softmax_exp.h"

#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/import.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using pto::v1::DT_FP16;
using pto::v1::DT_FP32;
using testing::GraphBuilder;

const std::vector<int64_t> kTile = {2, 16};

// IsSoftmaxExp of the graph's exp (the one op of that kind).
bool SoftmaxExp(const std::function<void(GraphBuilder&)>& build) {
  GraphBuilder b("g");
  build(b);
  absl::StatusOr<TensorGraph> g = testing::VerifyAndImport(b.Build());
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return false;
  int exp = -1;
  for (int i = 0; i < static_cast<int>(g->ops.size()); ++i) {
    if (g->ops[i].info->kind == "exp") exp = i;
  }
  EXPECT_GE(exp, 0);
  return exp >= 0 && IsSoftmaxExp(*g, exp);
}

// exp(a - amax(x)) over `dim` of x [3, 5, 16] (a: x unless given).
void MaxDifference(GraphBuilder& b, pto::v1::DataType dt, int64_t dim, bool keepdim,
                   const char* reduce = "amax", bool swapped = false, bool other_x = false) {
  const std::vector<int64_t> tile = {2, 2, 16};
  const uint32_t x = b.Input("x", dt, {3, 5, 16});
  const uint32_t y = other_x ? b.Input("y", dt, {3, 5, 16}) : x;
  const uint32_t m = b.Op(reduce, {y}, tile, dim, keepdim);
  const uint32_t d = swapped ? b.Op("sub", {m, x}, tile) : b.Op("sub", {x, m}, tile);
  b.Output("out", b.Op("exp", {d}, tile));
}

TEST(SoftmaxExpTest, ExpOfXMinusItsMaximum) {
  for (int64_t dim : {-1, 0, 1}) {
    EXPECT_TRUE(SoftmaxExp([&](GraphBuilder& b) { MaxDifference(b, DT_FP32, dim, true); }))
        << "dim " << dim;
  }
  // pypto's FP16 softmax: x cast to FP32 first.
  EXPECT_TRUE(SoftmaxExp([](GraphBuilder& b) {
    const uint32_t x = b.Cast(b.Input("x", DT_FP16, {4, 32}), DT_FP32, kTile);
    const uint32_t m = b.Op("amax", {x}, kTile);
    b.Output("out", b.Op("exp", {b.Op("sub", {x, m}, kTile)}, kTile));
  }));
}

TEST(SoftmaxExpTest, NoOtherExp) {
  // A minimum, m - x, the maximum of another tensor: inputs above 0.
  EXPECT_FALSE(SoftmaxExp([](GraphBuilder& b) { MaxDifference(b, DT_FP32, -1, true, "amin"); }));
  EXPECT_FALSE(
      SoftmaxExp([](GraphBuilder& b) { MaxDifference(b, DT_FP32, -1, true, "amax", true); }));
  EXPECT_FALSE(SoftmaxExp(
      [](GraphBuilder& b) { MaxDifference(b, DT_FP32, -1, true, "amax", false, true); }));
  // Without keepdim m broadcasts along other dims of x ([16] against the
  // last dim of [16, 16]).
  EXPECT_FALSE(SoftmaxExp([](GraphBuilder& b) {
    const uint32_t x = b.Input("x", DT_FP32, {16, 16});
    const uint32_t m = b.Op("amax", {x}, {16, 16}, 0, false);
    b.Output("out", b.Op("exp", {b.Op("sub", {x, m}, {16, 16})}, {16, 16}));
  }));
  // FP16 arithmetic: the host's softmax exp is an f32 one.
  EXPECT_FALSE(SoftmaxExp([](GraphBuilder& b) { MaxDifference(b, DT_FP16, -1, true); }));
  // A plain exp, and one of x - max(x) + 1.
  EXPECT_FALSE(SoftmaxExp([](GraphBuilder& b) {
    b.Output("out", b.Op("exp", {b.Input("x", DT_FP32, {4, 32})}, kTile));
  }));
  EXPECT_FALSE(SoftmaxExp([](GraphBuilder& b) {
    const uint32_t x = b.Input("x", DT_FP32, {4, 32});
    const uint32_t d = b.Op("sub", {x, b.Op("amax", {x}, kTile)}, kTile);
    b.Output("out", b.Op("exp", {b.Op("adds", {d}, kTile, 1.0)}, kTile));
  }));
}

// The lowering emits it in every form: a row group, and without row
// widening (partial maxima combined, then x - m and exp per tile).
TEST(SoftmaxExpTest, LoweredAsTexpsoftmax) {
  GraphBuilder b("softmax");
  const uint32_t x = b.Input("x", DT_FP32, {3, 40});
  const uint32_t m = b.Op("amax", {x}, kTile);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, kTile)}, kTile);
  b.Output("out", b.Op("div", {e, b.Op("sum", {e}, kTile)}, kTile));
  b.Output("e2", b.Op("exp", {e}, kTile));  // a general exp
  absl::StatusOr<TensorGraph> g = testing::VerifyAndImport(b.Build());
  ASSERT_TRUE(g.ok()) << g.status();
  for (bool widen : {true, false}) {
    ExpandOptions options;
    options.widen_rows = widen;
    absl::StatusOr<TileGraph> tiles = ExpandToTiles(*g, options);
    ASSERT_TRUE(tiles.ok()) << tiles.status();
    int softmax = 0, general = 0;
    for (const TileGroup& grp : tiles->groups) {
      for (const TileInstr& in : grp.body) {
        softmax += in.op == PtoOpcode::kTExpSoftmax;
        general += in.op == PtoOpcode::kTExp;
      }
    }
    EXPECT_EQ(softmax, 1) << "widen " << widen;
    EXPECT_EQ(general, 1) << "widen " << widen;
  }
}

}  // namespace
}  // namespace pto::compiler
