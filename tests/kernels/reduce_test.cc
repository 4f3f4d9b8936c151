// End to end: reductions over one dim (sum amax amin prod argmax argmin),
// negative dims, keepdim, reduced dims spanning many tiles (partial results
// and a combine step) or one, and reductions feeding broadcasting ops
// (softmax), checked against the double-precision reference evaluator.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/compile.h"
#include "compiler/ir/import.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/ops/infer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "tests/kernels/typed_builder.h"

namespace pto {
namespace {

using pto::v1::DataType;
using ::testing::HasSubstr;

using Builder = testing::TypedBuilder;
constexpr int kSeeds = 3;

struct Case {
  std::vector<int64_t> shape, tile;
  int64_t dim;
};

// Reduced dim over 3 tiles (with a tail), over 1 tile, dim 0, negative
// dims, rank 1 and rank 3.
const Case kCases[] = {
    {{37, 70}, {16, 32}, -1}, {{37, 70}, {16, 32}, 0}, {{37, 70}, {16, 128}, 1},
    {{3, 17, 45}, {2, 8, 16}, -2}, {{300}, {64}, 0}, {{2, 3, 9, 33}, {1, 2, 4, 8}, 3},
};

TEST(ReduceTest, EveryKindDimAndKeepdim) {
  for (const char* kind : {"sum", "amax", "amin", "prod", "argmax", "argmin"}) {
    for (const Case& c : kCases) {
      for (bool keepdim : {true, false}) {
        if (!keepdim && c.shape.size() == 1) continue;  // rank 0 results: no
        Builder b(absl::StrCat(kind, "_", absl::StrJoin(c.shape, "x"), "_dim",
                               c.dim, keepdim ? "_keep" : ""));
        const uint32_t x = b.Input("x", pto::v1::DT_FP32, c.shape);
        // prod over up to 300 elements of [-4, 4] overflows: reduce
        // 1 + x/64 instead (within [0.93, 1.07]).
        const uint32_t in =
            std::string(kind) == "prod"
                ? b.Op("adds", {b.Op("divs", {x}, c.tile, {{"scalar", 64}})}, c.tile, {{"scalar", 1}})
                : x;
        b.Output("out", b.Op(kind, {in}, c.tile, c.dim, keepdim));
        testing::CompileRunAndCheck(b.graph(), kSeeds);
      }
    }
  }
}

TEST(ReduceTest, Fp16InputsReduceInFp32) {
  for (const char* kind : {"amax", "argmin", "sum"}) {
    Builder b(absl::StrCat(kind, "_f16"));
    const uint32_t x = b.Input("x", pto::v1::DT_FP16, {20, 70});
    b.Output("out", b.Op(kind, {x}, {8, 16}, -1, false));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// softmax(x, -1) = exp(x - amax) / sum(exp(x - amax)): reductions feeding
// broadcasting ops and back, each across several tiles.
TEST(ReduceTest, SoftmaxChain) {
  Builder b("softmax");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {33, 100});
  const uint32_t m = b.Op("amax", {x}, {8, 32}, -1, true);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, {8, 32})}, {8, 32});
  const uint32_t s = b.Op("sum", {e}, {8, 32}, -1, true);
  b.Output("out", b.Op("div", {e, s}, {8, 32}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

TEST(ReduceTest, PartialAndCombineAreVisibleInTheTileGraph) {
  Builder b("sum_tiles");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {37, 70});
  b.Output("out", b.Op("sum", {x}, {16, 32}, -1, false));
  auto tensors = compiler::ImportGraph(b.graph());
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  auto tiles = compiler::ExpandToTiles(*tensors);
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  const std::string printed = compiler::PrintTileGraph(*tiles);
  ASSERT_EQ(tiles->groups.size(), 2u) << printed;
  EXPECT_THAT(printed, HasSubstr("TREDSUM"));
  EXPECT_THAT(printed, HasSubstr("ws#2:gm[a0, a1/32]"));  // one slot per tile
  EXPECT_THAT(printed, HasSubstr("space=[37,3] tile=[16,3]"));  // combine
}

TEST(ReduceTest, BadDimNamesTheOpAndTheValidRange) {
  Builder b("bad_dim");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {4, 8});
  b.Output("out", b.Op("sum", {x}, {4, 8}, 1, true));
  pto::v1::Graph g = b.graph();
  (*g.mutable_ops(0)->mutable_attrs())["dim"].set_i(2);
  auto compiled = compiler::Compile(g, "host", {});
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("op #0 \"sum\""));
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("dim 2 is out of range for rank 2 (valid: -2..1)"));
}

// The combine step holds all partial results of a row in one tile: too many
// partial results for UB is an error naming the op, the tile and both sizes.
TEST(ReduceTest, TooManyPartialResultsForUbIsAnError) {
  Builder b("ub");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {64, 1 << 20});
  b.Output("out", b.Op("sum", {x}, {64, 16}, -1, true));
  auto compiled = compiler::Compile(b.graph(), "host", {});
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("op #0 \"sum\": tile [64,65536]"));
  EXPECT_THAT(compiled.status().message(), HasSubstr("bytes of UB; a block may use"));
}

}  // namespace
}  // namespace pto
