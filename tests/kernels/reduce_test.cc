// End to end: reductions over one dim (sum amax amin prod argmax argmin) on
// every dtype, negative dims, keepdim, reduced dims spanning many tiles
// (partial results and a combine step) or one, and reductions feeding
// broadcasting ops (softmax), checked against the double-precision
// reference evaluator.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "compiler/ir/import.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/ops/infer.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto {
namespace {

using pto::v1::DataType;
using ::testing::HasSubstr;
using ::testing::Not;

using Builder = compiler::testing::GraphBuilder;
using compiler::testing::RmsNormOps;
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

// Rank-0 results: a rank-1 tensor reduced without keepdim is a one-element
// tensor of shape [] (as torch); it is a parameter, broadcasts against
// other tensors, and feeds elementwise ops of its own (rank-0 space, tile []).
TEST(ReduceTest, RankZeroResults) {
  Builder b("rank0");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {300});
  const uint32_t s = b.Op("sum", {x}, {64}, 0, false);
  b.Output("sum", s);
  b.Output("twice", b.Op("muls", {s}, {}, {{"scalar", 2}}));
  b.Output("centered", b.Op("sub", {x, s}, {64}));
  const uint32_t i = b.Input("i", pto::v1::DT_INT32, {70});
  b.Output("argmax", b.Op("argmax", {i}, {32}, 0, false));
  b.Output("isum", b.Op("sum", {i}, {70}, -1, false));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// Every reduction of integer, BOOL and DOUBLE tensors in one kernel per
// dtype and case: sum/prod of integers and BOOL give INT64 (accumulated in
// int64; products of 70 values in [-100, 100] wrap), amax/amin keep the
// dtype, arg* give INT64; DOUBLE accumulates in double. The reduced dim
// spans three tiles with a tail (partial and combine steps; dims -1 and 0),
// or one tile (the last dim, INT8 and BOOL: their amax/amin are row-fused).
TEST(ReduceTest, IntegerBoolAndDoubleReductions) {
  const Case cases[] = {{{37, 70}, {16, 32}, -1}, {{37, 70}, {8, 128}, 0},
                        {{5, 70}, {4, 128}, 1}};
  for (DataType dt : {pto::v1::DT_INT8, pto::v1::DT_INT16, pto::v1::DT_INT32,
                      pto::v1::DT_INT64, pto::v1::DT_UINT8, pto::v1::DT_BOOL,
                      pto::v1::DT_DOUBLE}) {
    for (const Case& c : cases) {
      const bool row = c.tile.back() >= c.shape.back();
      if (row && dt != pto::v1::DT_INT8 && dt != pto::v1::DT_BOOL) continue;
      Builder b(absl::StrCat("reduce_", pto::v1::DataType_Name(dt), "_dim", c.dim));
      const uint32_t x = b.Input("x", dt, c.shape);
      bool keepdim = false;
      for (const char* kind : {"sum", "amax", "amin", "prod", "argmax", "argmin"}) {
        b.Output(kind, b.Op(kind, {x}, c.tile, c.dim, keepdim));
        keepdim = !keepdim;
      }
      testing::CompileRunAndCheck(b.graph(), kSeeds);
    }
  }
}

// INT32 values near the limits (x * 21474835, x in [-100, 100]) sum exactly
// in int64; INT64 values near 2**62.6 (x * 2**56) wrap when summed and
// multiplied, as torch's int64 does. Checked exactly.
TEST(ReduceTest, IntegerReductionsNearTheLimitsAreExact) {
  struct Big {
    DataType dtype;
    double scale;
  };
  for (const Big& big : {Big{pto::v1::DT_INT32, 21474835}, Big{pto::v1::DT_INT64, 0x1p56}}) {
    Builder b(absl::StrCat("reduce_big_", pto::v1::DataType_Name(big.dtype)));
    const uint32_t x = b.Input("x", big.dtype, {37, 70});
    const uint32_t scale = b.Create("full", big.dtype, {70}, {{"value", big.scale}});
    const uint32_t y = b.Op("mul", {x, scale}, {16, 32});
    b.Output("sum_rows", b.Op("sum", {y}, {16, 32}, -1, false));
    b.Output("sum_cols", b.Op("sum", {y}, {16, 32}, 0, true));
    b.Output("prod", b.Op("prod", {y}, {16, 32}, -1, false));
    b.Output("amax", b.Op("amax", {y}, {16, 32}, 0, false));
    b.Output("argmin", b.Op("argmin", {y}, {16, 32}, -1, false));
    auto compiled = compiler::Compile(b.graph(), "host", {});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    auto kernel = runtime::Kernel::Load(compiled->binary);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    const ptoc::Tolerance exact{0, 0, 0};
    ptoc::CheckOptions options;
    options.tolerance = &exact;
    auto report = ptoc::RunAndCheck(b.graph(), **kernel, options);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->pass()) << b.graph().name() << "\n" << report->Summary();
  }
}

// Reductions take every dtype; their results follow torch.
TEST(ReduceTest, ResultDTypesFollowTorch) {
  using compiler::ReduceResultDType;
  EXPECT_EQ(ReduceResultDType("sum", pto::v1::DT_INT8), pto::v1::DT_INT64);
  EXPECT_EQ(ReduceResultDType("prod", pto::v1::DT_BOOL), pto::v1::DT_INT64);
  EXPECT_EQ(ReduceResultDType("sum", pto::v1::DT_FP16), pto::v1::DT_FP16);
  EXPECT_EQ(ReduceResultDType("sum", pto::v1::DT_DOUBLE), pto::v1::DT_DOUBLE);
  EXPECT_EQ(ReduceResultDType("amax", pto::v1::DT_BOOL), pto::v1::DT_BOOL);
  EXPECT_EQ(ReduceResultDType("amin", pto::v1::DT_UINT8), pto::v1::DT_UINT8);
  EXPECT_EQ(ReduceResultDType("argmax", pto::v1::DT_INT16), pto::v1::DT_INT64);
  // Math is still refused on integers, naming the dtypes it takes.
  const absl::Status s = compiler::InferResult(*compiler::FindOp("exp"),
                                               {{pto::v1::DT_INT32, {4}}})
                             .status();
  EXPECT_THAT(s.message(), HasSubstr("exp takes DT_FP32, DT_FP16 or DT_BF16"));
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

absl::StatusOr<compiler::TileGraph> Tiles(const pto::v1::Graph& graph,
                                          bool widen_rows = true) {
  auto tensors = compiler::testing::VerifyAndImport(graph);
  if (!tensors.ok()) return tensors.status();
  compiler::ExpandOptions options;
  options.widen_rows = widen_rows;
  return compiler::ExpandToTiles(*tensors, options);
}

TEST(ReduceTest, PartialAndCombineAreVisibleInTheTileGraph) {
  Builder b("sum_tiles");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {37, 70});
  b.Output("out", b.Op("sum", {x}, {16, 32}, -1, false));
  auto tiles = Tiles(b.graph(), /*widen_rows=*/false);
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  const std::string printed = compiler::PrintTileGraph(*tiles);
  ASSERT_EQ(tiles->groups.size(), 2u) << printed;
  EXPECT_THAT(printed, HasSubstr("TREDSUM"));
  EXPECT_THAT(printed, HasSubstr("ws#2:gm[a0, a1/32]"));  // one slot per tile
  EXPECT_THAT(printed, HasSubstr("space=[37,3] tile=[16,3]"));  // combine
}

// Chains around reductions over the last dim. With a tile spanning that dim
// each lowers to one group (row fusion); with a narrower tile, to partial and
// combine groups with GM workspaces between them.
uint32_t Softmax(Builder& b, uint32_t x, const std::vector<int64_t>& t) {
  const uint32_t m = b.Op("amax", {x}, t, -1, true);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, t)}, t);
  return b.Op("div", {e, b.Op("sum", {e}, t, -1, true)}, t);
}

// (x - mean) * rsqrt(var + eps) * gamma + beta; `mean` gets the row means.
uint32_t LayerNorm(Builder& b, uint32_t x, uint32_t gamma, uint32_t beta,
                   int64_t n, const std::vector<int64_t>& t, uint32_t* mean) {
  *mean = b.Op("muls", {b.Op("sum", {x}, t, -1, true)}, t, {{"scalar", 1.0 / n}});
  const uint32_t xc = b.Op("sub", {x, *mean}, t);
  const uint32_t var = b.Op("muls", {b.Op("sum", {b.Op("mul", {xc, xc}, t)}, t, -1, true)},
                            t, {{"scalar", 1.0 / n}});
  const uint32_t rstd = b.Op("rsqrt", {b.Op("adds", {var}, t, {{"scalar", 1e-5}})}, t);
  return b.Op("add", {b.Op("mul", {b.Op("mul", {xc, rstd}, t), gamma}, t), beta}, t);
}

struct NormCase {
  std::vector<int64_t> shape, tile;
};
// Row tails (33 = 4 * 8 + 1), a reduced dim not a multiple of 8 or 16, a
// tile wider than the dim (clamped), rank 3, one column of 1.
const NormCase kNormCases[] = {
    {{33, 100}, {8, 100}}, {{37, 70}, {16, 128}}, {{3, 5, 40}, {2, 2, 40}},
    {{4, 1}, {2, 1}}};

TEST(ReduceTest, FusedSoftmaxRmsNormLayerNormFp32AndFp16) {
  for (DataType dt : {pto::v1::DT_FP32, pto::v1::DT_FP16}) {
    for (const NormCase& c : kNormCases) {
      const std::string suffix = absl::StrCat(
          "_", absl::StrJoin(c.shape, "x"), dt == pto::v1::DT_FP16 ? "_f16" : "");
      const std::vector<int64_t> row = {c.shape.back()};
      {
        Builder b("softmax" + suffix);
        b.Output("out", Softmax(b, b.Input("x", dt, c.shape), c.tile));
        testing::CompileRunAndCheck(b.graph(), kSeeds);
      }
      {
        Builder b("rms_norm" + suffix);
        const uint32_t x = b.Input("x", dt, c.shape);
        const uint32_t gamma = b.Input("gamma", dt, row);
        b.Output("out", RmsNormOps(b, x, gamma, c.shape.back(), c.tile));
        testing::CompileRunAndCheck(b.graph(), kSeeds);
      }
      {
        Builder b("layer_norm" + suffix);
        const uint32_t x = b.Input("x", dt, c.shape);
        const uint32_t gamma = b.Input("gamma", dt, row);
        const uint32_t beta = b.Input("beta", dt, row);
        uint32_t mean = 0;
        b.Output("out", LayerNorm(b, x, gamma, beta, c.shape.back(), c.tile, &mean));
        b.Output("mean", mean);  // a row value stored from the fused group
        testing::CompileRunAndCheck(b.graph(), kSeeds);
      }
    }
  }
}

// A user-written chain: x - amax(x) with a per-row bias [R,1] read from GM
// into a row tile, a keepdim=false sum stored as an output, and a
// keepdim=false result read by a later op (not fused: it broadcasts along
// the row).
TEST(ReduceTest, FusedUserChainWithRowInputsAndFlatResults) {
  Builder b("chain");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {19, 24});
  const uint32_t bias = b.Input("bias", pto::v1::DT_FP32, {19, 1});
  const std::vector<int64_t> t = {4, 24};
  const uint32_t m = b.Op("amax", {x}, t, -1, true);
  const uint32_t shifted = b.Op("sub", {x, b.Op("add", {m, bias}, t)}, t);
  const uint32_t e = b.Op("exp", {shifted}, t);
  b.Output("e", e);
  b.Output("sum", b.Op("sum", {e}, t, -1, false));
  const uint32_t y = b.Input("y", pto::v1::DT_FP32, {24, 24});
  const uint32_t sq = b.Op("amin", {b.Op("mul", {y, y}, {8, 24})}, {8, 24}, -1, false);
  b.Output("scaled", b.Op("mul", {y, sq}, {8, 24}));  // [24] along the row
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}


int Workspaces(const compiler::TileGraph& tiles) {
  int n = 0;
  for (const compiler::GmBuffer& buf : tiles.buffers) n += buf.param < 0;
  return n;
}

// Fused reductions: softmax, rms_norm and layer norm with a tile that
// spans the reduced dim run as one group with no GM workspace; so does a
// tile that does not (64 of 256: row widening lowers it over [4,256]);
// without row widening, reductions keep their partial and combine groups.
TEST(ReduceTest, FusedChainsAreOneGroupWithoutWorkspaces) {
  for (int form : {0, 1, 2}) {  // spanning tile, widened tile, partials
    const bool spans = form != 2;
    const std::vector<int64_t> shape = {64, 256};
    const std::vector<int64_t> t = {4, form == 0 ? 256 : 64};
    Builder sm("softmax");
    sm.Output("out", Softmax(sm, sm.Input("x", pto::v1::DT_FP32, shape), t));
    Builder rms("rms_norm");
    {
      const uint32_t x = rms.Input("x", pto::v1::DT_FP16, shape);
      rms.Output("out", RmsNormOps(rms, x, rms.Input("g", pto::v1::DT_FP16, {256}), 256, t));
    }
    Builder ln("layer_norm");
    {
      const uint32_t x = ln.Input("x", pto::v1::DT_FP32, shape);
      uint32_t mean = 0;
      ln.Output("out", LayerNorm(ln, x, ln.Input("g", pto::v1::DT_FP32, {256}),
                                 ln.Input("b", pto::v1::DT_FP32, {256}), 256, t, &mean));
    }
    for (const Builder* b : {&sm, &rms, &ln}) {
      auto tiles = Tiles(b->graph(), /*widen_rows=*/form != 2);
      ASSERT_TRUE(tiles.ok()) << tiles.status();
      const std::string printed = compiler::PrintTileGraph(*tiles);
      if (spans) {
        EXPECT_EQ(tiles->groups.size(), 1u) << printed;
        EXPECT_THAT(printed, HasSubstr("space=[64,256] tile=[4,256]")) << printed;
        EXPECT_EQ(Workspaces(*tiles), 0) << printed;
        EXPECT_THAT(printed, HasSubstr(":ub.row.")) << printed;
      } else {
        EXPECT_GT(tiles->groups.size(), 3u) << printed;
        EXPECT_GT(Workspaces(*tiles), 2) << printed;
        EXPECT_THAT(printed, Not(HasSubstr("ub.row"))) << printed;
      }
    }
  }
}

// Unfused lowering (ExpandOptions::fuse = false) keeps one group per op.
TEST(ReduceTest, UnfusedLoweringKeepsReductionsApart) {
  Builder b("softmax");
  b.Output("out", Softmax(b, b.Input("x", pto::v1::DT_FP32, {8, 32}), {4, 32}));
  auto tensors = compiler::testing::VerifyAndImport(b.graph());
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  compiler::ExpandOptions options;
  options.fuse = false;
  auto tiles = compiler::ExpandToTiles(*tensors, options);
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  EXPECT_EQ(tiles->groups.size(), 5u) << compiler::PrintTileGraph(*tiles);
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
// partial results for UB even one row at a time is an error naming the op,
// the tile and both sizes.
TEST(ReduceTest, TooManyPartialResultsForUbIsAnError) {
  Builder b("ub");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {64, 1 << 20});
  b.Output("out", b.Op("sum", {x}, {64, 16}, -1, true));
  auto compiled = compiler::Compile(b.graph(), "host", {});
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("op #0 \"sum\": tile [1,65536]"));
  EXPECT_THAT(compiled.status().message(), HasSubstr("bytes of UB; a block may use"));
}

// A partial step's result tiles hold one value per column (a tile's
// elements over its extent along the reduced dim), and UB counts them so:
// sums, maxima and argmax over dim 0 of 256 x 1024 in tiles of 32 whole
// rows (128 KiB of input, 4 KiB of sums, 8 KiB of indices) compile and
// match the reference, where counting each result as a whole tile (256 or
// 384 KiB) refused them. A tile of 48 rows needs 196608 + 4096 bytes.
TEST(ReduceTest, ReducedResultTilesCountOneRowOfUb) {
  for (const char* kind : {"sum", "amax", "argmax"}) {
    Builder b(absl::StrCat("rows32_", kind));
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {256, 1024});
    b.Output("out", b.Op(kind, {x}, {32, 1024}, 0, false));
    SCOPED_TRACE(kind);
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  Builder b("rows48");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {480, 1024});
  b.Output("out", b.Op("sum", {x}, {48, 1024}, 0, false));
  auto compiled = compiler::Compile(b.graph(), "host", {});
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("op #0 \"sum\": tile [48,1024] needs 200704 bytes of UB; a block may "
                        "use 196608 bytes"));
}

// Where the partials' tile with all n slots along the reduced dim does not
// fit UB, the combine's tile shrinks along the other dims (each result
// combines its own slots): sums, maxima and argmax over dim 0 of 2048 rows
// in tiles of 8 rows (256 partial rows of 256 columns: 512 KiB at the
// partials' width) compile and match the reference; the Tile Graph shows
// the narrower combine tile.
TEST(ReduceTest, CombineTileShrinksToFitUb) {
  for (const char* kind : {"sum", "amax", "argmax"}) {
    Builder b(absl::StrCat("combine_", kind));
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {2048, 256});
    b.Output("out", b.Op(kind, {x}, {8, 256}, 0, true));
    SCOPED_TRACE(kind);
    testing::CompileRunAndCheck(b.graph(), kSeeds);
    compiler::CompileSettings settings;
    settings.keep_dumps = true;
    auto r = compiler::Compile(b.graph(), "host", {}, settings);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_THAT(r->dumps["tile"], HasSubstr("tile=[256,"));
    EXPECT_THAT(r->dumps["tile"], ::testing::Not(HasSubstr("tile=[256,256]")));
  }
}

// Row widening: a last-dim reduction whose tile splits the row into 2..16
// tiles (with tails) is lowered over whole rows (one tile along the row,
// the user's granularity elsewhere, no workspace): sum/amax/argmax of
// FP32 and FP16 rows and a softmax, against the reference evaluator (the
// sum's order changes: one pass per row, not per-tile partials combined).
TEST(ReduceTest, WidenedRowsMatchTheReference) {
  const Case cases[] = {{{9, 100}, {4, 64}, -1},     // 2 tiles, a tail
                        {{5, 3, 200}, {2, 2, 16}, -1},  // 13 tiles, rank 3
                        {{6, 1024}, {2, 64}, -1}};   // 16 tiles
  for (DataType dt : {pto::v1::DT_FP32, pto::v1::DT_FP16}) {
    for (const Case& c : cases) {
      Builder b(absl::StrCat("widened_", pto::v1::DataType_Name(dt), "_", c.shape.back()));
      const uint32_t x = b.Input("x", dt, c.shape);
      b.Output("sum", b.Op("sum", {x}, c.tile, c.dim, true));
      b.Output("amax", b.Op("amax", {x}, c.tile, c.dim, false));
      b.Output("argmax", b.Op("argmax", {x}, c.tile, c.dim, false));
      b.Output("softmax", Softmax(b, x, c.tile));
      auto tiles = Tiles(b.graph());
      ASSERT_TRUE(tiles.ok()) << tiles.status();
      const std::string printed = compiler::PrintTileGraph(*tiles);
      EXPECT_EQ(Workspaces(*tiles), 0) << printed;
      std::vector<int64_t> wide = c.tile;
      wide.back() = c.shape.back();
      EXPECT_THAT(printed, HasSubstr(absl::StrCat("tile=[", absl::StrJoin(wide, ","), "]")))
          << printed;
      testing::CompileRunAndCheck(b.graph(), kSeeds);
    }
  }
}

}  // namespace
}  // namespace pto
