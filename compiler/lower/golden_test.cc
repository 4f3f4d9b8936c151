// Golden tests: the printed form of every IR level, the PTO text and the
// generated C++ for exp(a) + b on f32[3,5] with tile [2,4] (tails in both
// dims), fused, unfused and in f16. Goldens live in compiler/testdata/.
//
// To regenerate after an intended change:
//   PTO_UPDATE_GOLDENS=$PWD/compiler/testdata bazel test //compiler:golden_test --test_env=PTO_UPDATE_GOLDENS
// (with --spawn_strategy=local, as .bazelrc sets) and review the diff.
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ir/import.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/pipeline.h"
#include "compiler/testing/golden.h"
#include "compiler/testing/graph_builder.h"
#include "compiler/util/temp_dir.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

void CheckGolden(const std::string& name, const std::string& actual) {
  testing::CheckGolden("compiler/testdata", name, actual);
}

// The printed form of each level of `graph` lowered for host-x86_64 up to
// codegen ("tensor", "tile", "block", "execute", "pto", "cpp"); a failed
// lowering fails the test and leaves the map empty.
std::map<std::string, std::string> Dumps(const pto::v1::Graph& graph,
                                         bool fuse = true) {
  LoweringState state;
  state.graph = &graph;
  state.target = "host-x86_64";
  state.settings.keep_dumps = true;
  state.fuse = fuse;
  std::map<std::string, std::string> dumps;
  absl::Status s = RunPipeline(&state, nullptr, &dumps, "codegen");
  EXPECT_TRUE(s.ok()) << s;
  return dumps;
}

// Checks `levels` of `graph` against compiler/testdata/<name>.<level>.txt.
void CheckGoldens(const pto::v1::Graph& graph, const std::string& name,
                  const std::vector<std::string>& levels, bool fuse = true) {
  std::map<std::string, std::string> dumps = Dumps(graph, fuse);
  for (const std::string& level : levels) {
    auto it = dumps.find(level);
    ASSERT_NE(it, dumps.end()) << "no " << level << " dump for " << name;
    CheckGolden(absl::StrCat(name, ".", level, ".txt"), it->second);
  }
}

const std::vector<std::string> kAllLevels = {"tensor",  "tile", "block",
                                             "execute", "pto",  "cpp"};

void RunGoldens(bool fuse, const std::string& suffix,
                pto::v1::DataType dtype = pto::v1::DT_FP32) {
  CheckGoldens(testing::ExpAddGraph(dtype), "exp_add" + suffix, kAllLevels,
               fuse);
}

TEST(GoldenTest, ExpAddFused) { RunGoldens(true, ""); }

// The loop softmax over a symbolic batch: the
// body is one fused group whose loads and stores add the loop-dependent
// offset (dynamic arg d0 = idx, args[3] in the C++), and the Execute Graph's
// program is a loop node with the view's and the assemble's region checks.
TEST(GoldenTest, SoftmaxLoop) {
  CheckGoldens(testing::SoftmaxLoopGraph(), "softmax_loop",
               {"tensor", "tile", "execute", "pto", "cpp"});
}

// Symbolic dims in inner positions, exp(x) + y over [m, n] with
// tile [2,16]: the dumps print the symbols where the lowering knows them —
// buffer shapes [m,n], the space and its grid, the generic tail function
// (extents=args), and dynamic arg d0 = n, the GM stride of dim 0 of each
// buffer (TemplateAccess.stride_arg); the code itself is the first probe's.
TEST(GoldenTest, SymbolicInnerDims) {
  testing::GraphBuilder b("sym_exp_add");
  const SymExpr m = SymExpr::Symbol("m"), n = SymExpr::Symbol("n");
  const uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {m, n});
  const uint32_t y = b.SymInput("y", pto::v1::DT_FP32, {m, n});
  b.Output("out", b.Op("add", {b.Op("exp", {x}, {2, 16}), y}, {2, 16}));
  CheckGoldens(b.Build(), "sym_exp_add", {"tile", "block", "execute", "pto"});
}

TEST(GoldenTest, ExpAddUnfused) { RunGoldens(false, "_unfused"); }

// Scalar operands over symbols. for i in 0..bs: out[i] = in[i] * i
// / bs: the body's group takes i (d0: the view's offset and the muls's
// scalar share it) and bs (d1) as dynamic args; the C++ converts them to
// float (static_cast<float>(args[2]), args[3]) where an immediate would be.
pto::v1::Graph ScalarLoopGraph(pto::v1::DataType dtype) {
  const SymExpr bs = SymExpr::Symbol("bs"), i = SymExpr::Symbol("i");
  testing::GraphBuilder b("scalar_loop");
  const uint32_t in = b.SymInput("in", dtype, {bs, 8});
  const uint32_t out = b.SymValue(dtype, {bs, 8}, "out");
  const std::vector<int64_t> tile = {1, 8};
  const uint32_t result = b.Loop("i", 0, bs, 1, {out}, [&](const std::vector<uint32_t>& args) {
    const uint32_t x = b.View(in, {i, 0}, {1, 8}, tile);
    const uint32_t y = b.ScalarOp("muls", {x}, tile, {{"scalar", i}});
    const uint32_t z = b.ScalarOp("divs", {y}, tile, {{"scalar", bs}});
    return std::vector<uint32_t>{b.Assemble(z, args[0], {i, 0}, tile)};
  })[0];
  b.InOut("out", out, result);
  return b.Build();
}

TEST(GoldenTest, ScalarOperandsOverSymbols) {
  CheckGoldens(ScalarLoopGraph(pto::v1::DT_FP32), "scalar_loop",
               {"tensor", "tile", "execute", "pto", "cpp"});
}

// The same in f16: each dynamic arg is rounded to f16 where it becomes the
// scalar (pto_tile::Round<pto_tile::half>), as pypto rounds a Python number
// meeting an FP16 tensor.
TEST(GoldenTest, ScalarOperandsOverSymbolsF16) {
  CheckGoldens(ScalarLoopGraph(pto::v1::DT_FP16), "scalar_loop_f16", {"pto", "cpp"});
}

// f16: loads and stores convert, every result rounds to f16.
TEST(GoldenTest, ExpAddF16) { RunGoldens(true, "_f16", pto::v1::DT_FP16); }

// The elementwise ops in one fused group: a row [5] and a column [3,1]
// broadcast against x [3,5] (TLOADs %1[a1] and %2[a0, 0]), a comparison
// giving a bool tile, a select and a cast to f16.
TEST(GoldenTest, BroadcastWhereCast) {
  testing::GraphBuilder b("bcast_where_cast");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, 5});
  uint32_t r = b.Input("r", pto::v1::DT_FP32, {5});
  uint32_t c = b.Input("c", pto::v1::DT_FP32, {3, 1});
  uint32_t m = b.Op("lt", {x, r}, {2, 4});
  uint32_t w = b.Op("where", {m, x, c}, {2, 4});
  uint32_t h = b.Cast(w, pto::v1::DT_FP16, {2, 4});
  b.Output("out", h);
  b.Output("mask", m);
  CheckGoldens(b.Build(), "bcast_where_cast", {"tensor", "tile", "pto", "cpp"});
}

// bitcast (TRESHAPE): an f32 tensor's bits as INT32, masked to the sign and
// exponent and read back as FP32, and an FP16 tensor's as INT16. TRESHAPE
// names both element types (the source's bits are read).
TEST(GoldenTest, Bitcast) {
  testing::GraphBuilder b("bitcast");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, 5});
  uint32_t h = b.Input("h", pto::v1::DT_FP16, {3, 5});
  uint32_t mask = b.Input("mask", pto::v1::DT_INT32, {5});
  uint32_t bits = b.Cast(x, pto::v1::DT_INT32, {2, 4}, "bitcast");
  uint32_t masked = b.Op("bitwise_and", {bits, mask}, {2, 4});
  b.Output("out", b.Cast(masked, pto::v1::DT_FP32, {2, 4}, "bitcast"));
  b.Output("h_bits", b.Cast(h, pto::v1::DT_INT16, {2, 4}, "bitcast"));
  CheckGoldens(b.Build(), "bitcast", {"tensor", "tile", "pto", "cpp"});
}

// Math, bitwise and signbit instructions: atan2 with an [R, 1] operand
// (its Rows form reads one value per row), a bool-valued signbit, and INT32
// shifts and gcd (D = int32_t: the count modulo 32, the result wrapped).
TEST(GoldenTest, MathBitwiseSignbit) {
  testing::GraphBuilder b("math_bitwise");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, 5});
  uint32_t c = b.Input("c", pto::v1::DT_FP32, {3, 1});
  uint32_t i = b.Input("i", pto::v1::DT_INT32, {3, 5});
  uint32_t k = b.Input("k", pto::v1::DT_INT32, {3, 5});
  b.Output("angle", b.Op("atan2", {x, c}, {2, 4}));
  b.Output("sign", b.Op("signbit", {x}, {2, 4}));
  b.Output("shl", b.Op("bitwise_left_shift", {i, k}, {2, 4}));
  b.Output("gcd", b.Op("gcd", {i, k}, {2, 4}));
  CheckGoldens(b.Build(), "math_bitwise", {"pto", "cpp"});
}

pto::v1::Graph SoftmaxGraph() {
  testing::GraphBuilder b("softmax");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, 10});
  uint32_t m = b.Op("amax", {x}, {2, 4});
  uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, {2, 4})}, {2, 4});
  uint32_t s = b.Op("sum", {e}, {2, 4});
  b.Output("out", b.Op("div", {e, s}, {2, 4}));
  return b.Build();
}

// softmax over the last dim of [3,10] with tile [2,4]: row widening
// (ExpandOptions::widen_rows) lowers it over whole rows, tile [2,10]: one
// fused row group, as with a tile spanning the row (SoftmaxFused).
TEST(GoldenTest, SoftmaxTileGraph) {
  CheckGoldens(SoftmaxGraph(), "softmax", {"tensor", "tile", "execute"});
}

// The same softmax without row widening (the form before it, and the one a
// reduction takes when a whole-row tile would exceed the widening bound):
// amax and sum each lower to a partial group (slots ws[a0, a1/4]) and a
// combine group over the 3 partial results per row; the broadcasting
// sub/exp and div groups read the [3,1] results.
TEST(GoldenTest, SoftmaxPartials) {
  absl::StatusOr<TensorGraph> g = testing::VerifyAndImport(SoftmaxGraph());
  ASSERT_TRUE(g.ok()) << g.status();
  ExpandOptions options;
  options.widen_rows = false;
  absl::StatusOr<TileGraph> tiles = ExpandToTiles(*g, options);
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  CheckGolden("softmax_partials.tile.txt", PrintTileGraph(*tiles));
}

// Column reductions over many tiles: sum and argmax over dim 0 of [256, 64]
// in tiles [32, 64] (8 partial slots), then the combine steps. A step's
// result tiles hold one value per column (t1[64] and the argmax's indices),
// not a whole [32, 64] tile, in the generated code as in the UB count.
TEST(GoldenTest, ColumnReductionResultsAreOneRowLong) {
  testing::GraphBuilder b("column_reductions");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {256, 64});
  b.Output("s", b.Op("sum", {x}, {32, 64}, 0, false));
  b.Output("i", b.Op("argmax", {x}, {32, 64}, 0, true));
  CheckGoldens(b.Build(), "column_reductions", {"tile", "cpp"});
}

// The loop softmax: softmax of (32,1,256) rows per batch index in a loop,
// with PyPTO's tile [1,4,1,64]. Row widening applies inside the loop body:
// one fused row group over tiles [1,4,1,256] (8 tasks per iteration, no
// partial/combine workspaces) instead of 4 partials + a combine per row,
// twice, and separate elementwise groups.
TEST(GoldenTest, SoftmaxLoopIssueTile) {
  testing::GraphBuilder b("softmax_loop_rows");
  const SymExpr bs = SymExpr::Symbol("bs"), i = SymExpr::Symbol("idx");
  const uint32_t inp = b.SymInput("inp", pto::v1::DT_FP32, {bs, 32, 1, 256});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {bs, 32, 1, 256}, "out");
  const std::vector<int64_t> tile = {1, 4, 1, 64};
  std::vector<uint32_t> outs = b.Loop("idx", 0, bs, 1, {out}, [&](const auto& args) {
    const uint32_t x = b.View(inp, {i, 0, 0, 0}, {1, 32, 1, 256}, tile);
    const uint32_t m = b.Op("amax", {x}, tile);
    const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
    const uint32_t y = b.Op("div", {e, b.Op("sum", {e}, tile)}, tile);
    return std::vector<uint32_t>{b.Assemble(y, args[0], {i, 0, 0, 0}, tile)};
  });
  b.InOut("out", out, outs[0]);
  CheckGoldens(b.Build(), "softmax_loop_rows", {"tile", "block", "execute"});
}

// The same softmax with tile [2,16] (clamped to [2,10]: a tile spans the
// reduced dim): one group, one block per two rows, amax and sum in row
// tiles (ub.row), nothing in GM but x and out.
TEST(GoldenTest, SoftmaxFused) {
  testing::GraphBuilder b("softmax_fused");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, 10});
  uint32_t m = b.Op("amax", {x}, {2, 16});
  uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, {2, 16})}, {2, 16});
  uint32_t s = b.Op("sum", {e}, {2, 16});
  b.Output("out", b.Op("div", {e, s}, {2, 16}));
  CheckGoldens(b.Build(), "softmax_fused",
               {"tile", "block", "execute", "pto", "cpp"});
}

// Softmax over a symbolic last dim, x [3,n] with tile [2,16]. Two
// forms under one if on n at launch (the execute program): when n <= 2048
// (SymbolicRowCap of [2,16] with a 192 KiB UB) one fused row group (tile
// [2,2048]; a row of n < 2048 runs the generic function _n, the row code with c = n from its
// args, one row at a time); otherwise the accumulating form (amax, exp and
// sum as groups of their own). The Tile Graph lists both.
TEST(GoldenTest, SoftmaxSymbolicRows) {
  constexpr int64_t kMarker = 999983;
  testing::GraphBuilder b("softmax_symbolic_rows");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, kMarker});
  uint32_t m = b.Op("amax", {x}, {2, 16});
  uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, {2, 16})}, {2, 16});
  uint32_t s = b.Op("sum", {e}, {2, 16});
  b.Output("out", b.Op("div", {e, s}, {2, 16}));
  pto::v1::Graph g = b.Build();
  for (pto::v1::Value& v : *g.mutable_values()) {
    for (pto::v1::Dim& d : *v.mutable_shape()->mutable_dims()) {
      if (d.kind_case() == pto::v1::Dim::kSize && d.size() == kMarker) d.set_symbol("n");
    }
  }
  CheckGoldens(g, "softmax_symbolic_rows", {"tile", "execute", "cpp"});
}

// Layout ops: out[:, 8:12] = x[:, 2:6] * 2 (a view is a TLOAD at an
// offset, fused with the mul and the assemble's TSTORE at an offset into the
// inout buffer) and y = x.T + b (a strided TLOAD fused with the add); the
// execute graph's deps follow the regions.
// GM-direct operands: a dense f32 load is read in place and the last result
// written into its output, except into a buffer the function also loads
// (an inout parameter: the store stays after every read).
TEST(GoldenTest, GmDirectOperandsSkipInoutBuffers) {
  auto cpp = [](bool inout) {
    testing::GraphBuilder b("direct");
    uint32_t x = b.Input("x", pto::v1::DT_FP32, {8, 16});
    uint32_t y = inout ? b.Value(pto::v1::DT_FP32, {8, 16}, "y")
                       : b.Input("y", pto::v1::DT_FP32, {8, 16});
    uint32_t r = b.Op("add", {x, y}, {2, 16});
    if (inout) {
      b.InOut("y", y, r);
    } else {
      b.Output("out", r);
    }
    return Dumps(b.Build())["cpp"];
  };
  const std::string out_param = cpp(false), inout = cpp(true);
  EXPECT_NE(out_param.find("const float* g0 ="), std::string::npos) << out_param;
  EXPECT_NE(out_param.find("TAdd<32>(o2, g0, g1)"), std::string::npos) << out_param;
  EXPECT_EQ(out_param.find("TStore"), std::string::npos) << out_param;
  EXPECT_NE(inout.find("TAdd<32>(t2, g0, g1)"), std::string::npos) << inout;
  EXPECT_NE(inout.find("TStore<float"), std::string::npos) << inout;
}

// An FP16 op or an FP32 chain over dense tiles of at least two chunks runs
// one chunk of 16 elements at a time (host_function_plan's ChunkElements); one
// FP32 op (already in place in GM), a tile of one chunk, and a buffer both
// loaded and stored keep whole-tile instructions.
TEST(GoldenTest, ChainsRunPerChunk) {
  auto cpp = [](pto::v1::DataType dtype, int64_t tile_rows, bool inout, bool chain = true,
                int64_t cols = 256) {
    testing::GraphBuilder b("chunks");
    uint32_t x = b.Input("x", dtype, {8, cols});
    uint32_t y = inout ? b.Value(dtype, {8, cols}, "y") : b.Input("y", dtype, {8, cols});
    uint32_t e = chain ? b.Op("exp", {x}, {tile_rows, cols}) : x;
    uint32_t r = b.Op("add", {e, y}, {tile_rows, cols});
    if (inout) {
      b.InOut("y", y, r);
    } else {
      b.Output("out", r);
    }
    return Dumps(b.Build())["cpp"];
  };
  const std::string chunked = cpp(pto::v1::DT_FP16, 2, false);
  EXPECT_NE(chunked.find("for (int64_t c = 0; c < 512; c += 16) {"), std::string::npos)
      << chunked;
  EXPECT_NE(chunked.find("alignas(64) float t0[16];"), std::string::npos) << chunked;
  EXPECT_NE(chunked.find("TLoad<pto_tile::half, 1, 1, 1, 16>(t0, "), std::string::npos)
      << chunked;
  EXPECT_NE(chunked.find("TExp<16, pto_tile::half>("), std::string::npos) << chunked;
  EXPECT_NE(chunked.find("TStore<pto_tile::half, 1, 1, 1, 16>("), std::string::npos)
      << chunked;
  EXPECT_NE(cpp(pto::v1::DT_FP16, 2, false, false).find("for (int64_t c"), std::string::npos);
  const std::string f32 = cpp(pto::v1::DT_FP32, 2, false);
  EXPECT_NE(f32.find("for (int64_t c = 0; c < 512; c += 16) {"), std::string::npos) << f32;
  EXPECT_NE(f32.find("TExp<16>(t2, (g0 + c));"), std::string::npos) << f32;
  for (const std::string& whole : {cpp(pto::v1::DT_FP32, 2, false, false),
                                   cpp(pto::v1::DT_FP16, 1, false, true, 16),
                                   cpp(pto::v1::DT_FP16, 1, false, true, 24),
                                   cpp(pto::v1::DT_FP16, 2, true)}) {
    EXPECT_EQ(whole.find("for (int64_t c"), std::string::npos) << whole;
  }
}

// Casts between f32 and f16/bf16 run per chunk too, folded into the load
// (f16 -> f32: the chunk is widened once, no TCVT copy) or into the store
// (f32 -> f16: the TSTORE rounds); other casts run per chunk as a TCVT
// into an int64 (or f32, double) chunk.
TEST(GoldenTest, FloatCastsRunPerChunk) {
  auto cpp = [](pto::v1::DataType from, pto::v1::DataType to) {
    testing::GraphBuilder b("casts");
    uint32_t x = b.Input("x", from, {8, 256});
    b.Output("out", b.Cast(x, to, {2, 256}));
    return Dumps(b.Build())["cpp"];
  };
  const std::string widen = cpp(pto::v1::DT_FP16, pto::v1::DT_FP32);
  EXPECT_NE(widen.find("for (int64_t c = 0; c < 512; c += 16) {"), std::string::npos) << widen;
  EXPECT_NE(widen.find("TLoad<pto_tile::half, 1, 1, 1, 16>("), std::string::npos) << widen;
  EXPECT_EQ(widen.find("TCvt"), std::string::npos) << widen;
  const std::string narrow = cpp(pto::v1::DT_FP32, pto::v1::DT_BF16);
  EXPECT_NE(narrow.find("for (int64_t c = 0; c < 512; c += 16) {"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("TStore<pto_tile::bf16, 1, 1, 1, 16>("), std::string::npos) << narrow;
  const std::string to_int = cpp(pto::v1::DT_FP32, pto::v1::DT_INT32);
  EXPECT_NE(to_int.find("for (int64_t c = 0; c < 512; c += 16) {"), std::string::npos) << to_int;
  EXPECT_NE(to_int.find("alignas(64) int64_t t1[16];"), std::string::npos) << to_int;
  EXPECT_NE(to_int.find("TCvt<16, int32_t>(t1, (g0 + c));"), std::string::npos) << to_int;
  EXPECT_NE(to_int.find("TStore<int32_t, 1, 1, 1, 16>("), std::string::npos) << to_int;
}

// Integer tensors compute in int64 tiles; their elementwise functions run
// per chunk as float ones do (the INT32 add wraps per chunk, the same bits).
TEST(GoldenTest, IntegerChainsRunPerChunk) {
  testing::GraphBuilder b("int_add");
  uint32_t x = b.Input("x", pto::v1::DT_INT32, {8, 256});
  uint32_t y = b.Input("y", pto::v1::DT_INT32, {8, 256});
  b.Output("out", b.Op("add", {x, y}, {2, 256}));
  const std::string cpp = Dumps(b.Build())["cpp"];
  EXPECT_NE(cpp.find("for (int64_t c = 0; c < 512; c += 16) {"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("TLoad<int32_t, 1, 1, 1, 16>(t0, "), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("TAdd<16, int32_t>(t2, t0, t1);"), std::string::npos) << cpp;
}

// An [R, 1] operand broadcast along the rows is loaded as R values, one per
// row, and read by the Rows form as a row operand (kRow), not copied into
// R x C values; integer tiles (no Rows form) keep the repeating load.
TEST(GoldenTest, RowOperandsLoadOneValuePerRow) {
  auto cpp = [](pto::v1::DataType dtype) {
    testing::GraphBuilder b("row_operand");
    uint32_t x = b.Input("x", dtype, {8, 256});
    uint32_t s = b.Input("s", dtype, {8, 1});
    b.Output("out", b.Op("mul", {x, s}, {4, 256}));
    return Dumps(b.Build())["cpp"];
  };
  const std::string f32 = cpp(pto::v1::DT_FP32);
  EXPECT_NE(f32.find("TLoad<float, 1, 1, 4, 1>(t1, "), std::string::npos) << f32;
  EXPECT_NE(f32.find("TMulRows<4, 256, pto_tile::kFull, pto_tile::kRow>("), std::string::npos)
      << f32;
  const std::string i32 = cpp(pto::v1::DT_INT32);
  EXPECT_NE(i32.find(", 1, 1, 4, 256, true>("), std::string::npos) << i32;
}

// A fused row group runs one row at a time (host_codegen's PerRow): loops
// over the tile's leading dims, one-row UB tiles and one-value row tiles, the
// input read in place at each row's GM offset although the tile's rows are
// not adjacent in GM (2x2 rows of a [3, 6, 32] tensor), gamma read as a full
// row, the result written in place; no TLOAD or TSTORE. A tile of one row and
// a buffer both loaded and stored keep the whole-tile form.
TEST(GoldenTest, RowGroupsRunPerRow) {
  auto cpp = [](const std::vector<int64_t>& tile, bool inout,
                pto::v1::DataType dt = pto::v1::DT_FP32) {
    testing::GraphBuilder b("rows");
    uint32_t x = inout ? b.Value(dt, {3, 6, 32}, "x") : b.Input("x", dt, {3, 6, 32});
    uint32_t gamma = b.Input("gamma", dt, {32});
    uint32_t m = b.Op("amax", {x}, tile);
    uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
    uint32_t r = b.Op("mul", {b.Op("div", {e, b.Op("sum", {e}, tile)}, tile), gamma}, tile);
    if (inout) {
      b.InOut("x", x, r);
    } else {
      b.Output("out", r);
    }
    return Dumps(b.Build())["cpp"];
  };
  const std::string rows = cpp({2, 2, 32}, false);
  EXPECT_NE(rows.find("for (int64_t i1 = 0; i1 < 2; ++i1) for (int64_t i2 = 0; i2 < 2; ++i2) {"),
            std::string::npos) << rows;
  EXPECT_NE(rows.find("TRedMax<1, 1, 1, 32, 3>(t2, (g0 + i1 * 192 + i2 * 32));"),
            std::string::npos) << rows;
  // x - m, exp and the sum of the exp: one pass per row (TSubExpSumRow).
  EXPECT_NE(rows.find("TSubExpSumRow<32, true>(t"), std::string::npos) << rows;
  // It prefetches the next row of x and, for writing, this row of out
  // (RowPrefetch); nothing else in the row prefetches.
  EXPECT_NE(rows.find("(g0 + i1 * 192 + i2 * 32) + 32, static_cast<float*>(buffers[2]) + ("),
            std::string::npos) << rows;
  EXPECT_EQ(rows.find("__builtin_prefetch"), std::string::npos) << rows;
  EXPECT_EQ(rows.find("TSubRows<"), std::string::npos) << rows;
  EXPECT_EQ(rows.find("TExp<"), std::string::npos) << rows;
  EXPECT_NE(rows.find("alignas(64) float t2[1];"), std::string::npos) << rows;
  // e / s * gamma: one loop over the row (row arithmetic run), straight into GM.
  EXPECT_NE(rows.find("const float v6 = pto_tile::TDivFn::Apply(r0[k], r1[0]);"),
            std::string::npos) << rows;
  EXPECT_NE(rows.find("const float v7 = pto_tile::TMulFn::Apply(v6, r2[k]);"), std::string::npos)
      << rows;
  EXPECT_NE(rows.find("}(t0, t2, g1, o7);"), std::string::npos) << rows;
  EXPECT_NE(rows.find(" + i1 * 192 + i2 * 32);"), std::string::npos) << rows;
  EXPECT_EQ(rows.find("TLoad"), std::string::npos) << rows;
  EXPECT_EQ(rows.find("TStore"), std::string::npos) << rows;
  for (const std::string& whole : {cpp({1, 1, 32}, false), cpp({2, 2, 32}, true)}) {
    EXPECT_EQ(whole.find("for (int64_t i"), std::string::npos) << whole;
  }
  // A tile one row long fuses too; FP16 rows (rounded after each
  // instruction) keep the three instructions.
  EXPECT_NE(cpp({1, 1, 32}, false).find("TSubExpSumRow<32, true>(t"), std::string::npos);
  const std::string f16 = cpp({2, 2, 32}, false, pto::v1::DT_FP16);
  EXPECT_NE(f16.find("for (int64_t i1 = 0; i1 < 2; ++i1)"), std::string::npos) << f16;
  EXPECT_EQ(f16.find("TSubExpSumRow"), std::string::npos) << f16;
  EXPECT_NE(f16.find("TExp<32, pto_tile::half>("), std::string::npos) << f16;
}

// pypto's FP32 softmax (a reciprocal of the sum, then a multiply) per row:
// one TSoftmaxRow call writing the row into GM (pto_tile.h keeps the row in
// registers where it fits; the same bits as the instructions it replaces).
TEST(GoldenTest, SoftmaxRowIsOneCall) {
  auto cpp = [](const std::vector<int64_t>& tile, bool read_later) {
    testing::GraphBuilder b("softmax_recip");
    uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, 6, 32});
    uint32_t m = b.Op("amax", {x}, tile);
    uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
    uint32_t r = b.Op("reciprocal", {b.Op("sum", {e}, tile)}, tile);
    b.Output("out", b.Op("mul", {e, r}, tile));
    if (read_later) b.Output("e2", b.Op("mul", {e, e}, tile));  // e read after the row's end
    return Dumps(b.Build())["cpp"];
  };
  const std::string rows = cpp({2, 2, 32}, false);
  EXPECT_NE(rows.find("pto_tile::TSoftmaxRow<32>(o6, (g0 + i1 * 192 + i2 * 32), (g0 + i1 * 192 + "
                      "i2 * 32) + 32);"),
            std::string::npos) << rows;
  for (const char* gone : {"TRedMax", "TSubExpSumRow", "TRecip", "TMul", "__builtin_prefetch"}) {
    EXPECT_EQ(rows.find(gone), std::string::npos) << gone << "\n" << rows;
  }
  // A tile one row long: the same call, no next row to prefetch.
  EXPECT_NE(cpp({1, 1, 32}, false).find("pto_tile::TSoftmaxRow<32>(o6, g0);"), std::string::npos)
      << cpp({1, 1, 32}, false);
  // e read later: the instructions stay.
  const std::string kept = cpp({2, 2, 32}, true);
  EXPECT_EQ(kept.find("TSoftmaxRow"), std::string::npos) << kept;
  EXPECT_NE(kept.find("TSubExpSumRow<32, true>(t"), std::string::npos) << kept;
}

// Softmax's exp(x - max(x)) is TEXPSOFTMAX (lower/softmax_exp.h) in the
// forms that are not one row at a time too: a whole tile at a time (x both
// read and written) and per-tile partials of a row too long to widen (x - m
// and exp per tile of [8,256], m the combined maximum): pto_tile's
// TExpSoftmax, the row forms' exp. A general exp in the same kernel stays
// TExp.
TEST(GoldenTest, SoftmaxExpInEveryForm) {
  auto cpp = [](const std::vector<int64_t>& shape, const std::vector<int64_t>& tile, bool inout) {
    testing::GraphBuilder b("softmax_forms");
    uint32_t x = inout ? b.InOut("x", pto::v1::DT_FP32, shape)
                       : b.Input("x", pto::v1::DT_FP32, shape);
    uint32_t m = b.Op("amax", {x}, tile);
    uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
    uint32_t r = b.Op("reciprocal", {b.Op("sum", {e}, tile)}, tile);
    b.Output(inout ? "x" : "out", b.Op("mul", {e, r}, tile));
    b.Output("e2", b.Op("exp", {e}, tile));  // exp(e): a general exp
    return Dumps(b.Build())["cpp"];
  };
  const std::string whole = cpp({3, 6, 32}, {2, 2, 32}, true);
  EXPECT_NE(whole.find("pto_tile::TSubRows<4, 32, pto_tile::kFull, pto_tile::kRow>("),
            std::string::npos) << whole;
  EXPECT_NE(whole.find("pto_tile::TExpSoftmax<128>("), std::string::npos) << whole;
  EXPECT_NE(whole.find("pto_tile::TExp<128>("), std::string::npos) << whole;  // exp(e)
  EXPECT_EQ(whole.find("for (int64_t i"), std::string::npos) << whole;      // not per row
  const std::string parts = cpp({8, 1024}, {8, 256}, false);
  EXPECT_NE(parts.find("pto_tile::TExpSoftmax<2048>("), std::string::npos) << parts;
  EXPECT_NE(parts.find("pto_tile::TExp<"), std::string::npos) << parts;
}

// pypto's FP16/BF16 softmax (cast to FP32, the FP32 softmax, cast back)
// runs per row too, as one TSoftmaxRow between the row's load and store:
// the cast in is the load's widening (the load writes the cast's tile), the
// cast out the store's rounding (FoldCasts), and the softmax writes its UB
// row. A cast whose tile is read again stays.
TEST(GoldenTest, HalfRowsRunPerRowThroughTheirCasts) {
  auto cpp = [](pto::v1::DataType dt, bool read_again) {
    const std::vector<int64_t> tile = {2, 2, 32};
    testing::GraphBuilder b("softmax_half");
    uint32_t x = b.Cast(b.Input("x", dt, {3, 6, 32}), pto::v1::DT_FP32, tile);
    uint32_t m = b.Op("amax", {x}, tile);
    uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
    uint32_t r = b.Op("reciprocal", {b.Op("sum", {e}, tile)}, tile);
    uint32_t y = b.Cast(b.Op("mul", {e, r}, tile), dt, tile);
    b.Output("out", y);
    if (read_again) b.Output("y2", b.Op("add", {y, y}, tile));
    return Dumps(b.Build())["cpp"];
  };
  for (pto::v1::DataType dt : {pto::v1::DT_FP16, pto::v1::DT_BF16}) {
    const std::string rows = cpp(dt, false);
    const std::string type = dt == pto::v1::DT_FP16 ? "pto_tile::half" : "pto_tile::bf16";
    for (const std::string& want : {
             std::string("for (int64_t i1 = 0; i1 < 2; ++i1) for (int64_t i2 = 0; i2 < 2; ++i2) {"),
             absl::StrCat("TLoad<", type, ", 1, 1, 1, 32>(t1, "),
             std::string("pto_tile::TSoftmaxRow<32>(t0, t1);"),
             absl::StrCat("TStore<", type, ", 1, 1, 1, 32>("),
             std::string(" + i1 * 192 + i2 * 32), t0, 0, 192, 32);"),
         }) {
      EXPECT_NE(rows.find(want), std::string::npos) << want << "\n" << rows;
    }
    for (const char* gone : {"TCvt", "TRedMax", "TSubExpSumRow", "TRecip"}) {
      EXPECT_EQ(rows.find(gone), std::string::npos) << gone << "\n" << rows;
    }
    // The FP16 result read again (y + y): its cast stays.
    const std::string kept = cpp(dt, true);
    EXPECT_NE(kept.find(absl::StrCat("TCvt<32, ", type, ">(")), std::string::npos) << kept;
  }
}

// Layer norm per row: x - mean, its square and their sum are one loop
// (the sum in ReduceRow's 16 lanes, a tail of 8 past two groups of 16; the
// difference kept for later, the square not), and the scale, gamma and beta
// another, writing GM.
TEST(GoldenTest, RowArithmeticRunsAreOneLoop) {
  testing::GraphBuilder b("layer_norm");
  const std::vector<int64_t> tile = {2, 2, 40};
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, 6, 40});
  uint32_t gamma = b.Input("gamma", pto::v1::DT_FP32, {40});
  uint32_t beta = b.Input("beta", pto::v1::DT_FP32, {40});
  uint32_t mean = b.Op("muls", {b.Op("sum", {x}, tile)}, tile, 1.0 / 40);
  uint32_t xc = b.Op("sub", {x, mean}, tile);
  uint32_t var = b.Op("muls", {b.Op("sum", {b.Op("mul", {xc, xc}, tile)}, tile)}, tile, 1.0 / 40);
  uint32_t r = b.Op("rsqrt", {b.Op("adds", {var}, tile, 1e-5)}, tile);
  b.Output("out", b.Op("add", {b.Op("mul", {b.Op("mul", {xc, r}, tile), gamma}, tile), beta},
                       tile));
  const std::string cpp = Dumps(b.Build())["cpp"];
  for (const char* want : {
           "float lane[16] = {};",
           "for (int64_t k0 = 0; k0 < 32; k0 += 16) {",
           "for (int64_t k = 32; k < 40; ++k) {",
           "lane[k - 32] = lane[k - 32] + v",
           "return pto_tile::SumLanes(lane);",
           "pto_tile::TSubFn::Apply(r0[k], r1[0]);",
           "r2[k] = v",  // the difference, read again for the scale
       }) {
    EXPECT_NE(cpp.find(want), std::string::npos) << want << "\n" << cpp;
  }
  EXPECT_EQ(cpp.find("TSubRows<"), std::string::npos) << cpp;
  EXPECT_EQ(cpp.find("TMulRows<"), std::string::npos) << cpp;
  EXPECT_EQ(cpp.find("TAdd<"), std::string::npos) << cpp;
  // The first run (the row is in L1 after the mean's pass) prefetches the
  // next row of x and, for writing, this row of out, a line per 16 values;
  // the second run (the scale into out) prefetches nothing.
  for (const char* want : {
           "__builtin_prefetch(p0 + k0);",
           "__builtin_prefetch(p1 + k0, 1);",
           "const float* p0, float* p1) {",
           "(g0 + i1 * 240 + i2 * 40) + 40, static_cast<float*>(buffers[3]) + (",
       }) {
    EXPECT_NE(cpp.find(want), std::string::npos) << want << "\n" << cpp;
  }
  const size_t second_run = cpp.find("TRsqrt<1>");
  ASSERT_NE(second_run, std::string::npos) << cpp;
  EXPECT_GT(cpp.find("__builtin_prefetch", second_run), cpp.find("// @f1")) << cpp;
  EXPECT_NE(cpp.find("TAddFn::Apply("), std::string::npos) << cpp;
}

TEST(GoldenTest, LayoutViewAssembleTranspose) {
  testing::GraphBuilder b("layout");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {6, 8});
  uint32_t bias = b.Input("b", pto::v1::DT_FP32, {6});
  uint32_t out_in = b.Value(pto::v1::DT_FP32, {6, 12}, "out");
  uint32_t v = b.Layout("view", {x}, {6, 4}, {4, 4}, {{"shape", {6, 4}}, {"offsets", {0, 2}}});
  uint32_t m = b.Op("muls", {v}, {4, 4}, 2.0);
  uint32_t a = b.Layout("assemble", {m, out_in}, {6, 12}, {4, 4}, {{"offsets", {0, 8}}});
  uint32_t t = b.Layout("transpose", {x}, {8, 6}, {4, 4}, {}, {{"dim0", 0}, {"dim1", 1}});
  b.InOut("out", out_in, a);
  b.Output("y", b.Op("add", {t, bias}, {4, 4}));
  CheckGoldens(b.Build(), "layout",
               {"tensor", "tile", "execute", "pto", "cpp"});
}

// An elementwise chain over a view of a wider tensor runs row after row,
// each row read and written in place, when the rows are long enough to pay
// for a call per instruction per row; over a column view ([64, 1] of a
// [64, 2] tensor) it runs a whole tile at a time through strided loads.
TEST(GoldenTest, SlicesRunPerRowOnlyWithLongRows) {
  auto cpp = [](int64_t cols) {
    testing::GraphBuilder b("slice_rows");
    uint32_t x = b.Input("x", pto::v1::DT_FP32, {64, 2 * cols});
    uint32_t v = b.Layout("view", {x}, {64, cols}, {64, cols},
                          {{"shape", {64, cols}}, {"offsets", {0, cols}}});
    b.Output("y", b.Op("adds", {b.Op("exp", {v}, {64, cols})}, {64, cols}, 1.0));
    return Dumps(b.Build())["cpp"];
  };
  const std::string rows = cpp(16);
  EXPECT_NE(rows.find("for (int64_t i"), std::string::npos) << rows;
  EXPECT_EQ(rows.find("TLoad"), std::string::npos) << rows;
  const std::string column = cpp(1);
  EXPECT_EQ(column.find("for (int64_t i"), std::string::npos) << column;
  EXPECT_NE(column.find("TLoad"), std::string::npos) << column;
}

// concat([x * 2, y + 1], dim=1): one group computes both inputs and stores
// each tile into its region of the result (TSTOREs at a1 and a1+4), no copy
// group; the execute graph has no deps (the regions are disjoint).
TEST(GoldenTest, ConcatStoresFromItsProducers) {
  testing::GraphBuilder b("concat");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, 4});
  uint32_t y = b.Input("y", pto::v1::DT_FP32, {3, 4});
  uint32_t m = b.Op("muls", {x}, {2, 4}, 2.0);
  uint32_t a = b.Op("adds", {y}, {2, 4}, 1.0);
  b.Output("out", b.Layout("concat", {m, a}, {3, 8}, {2, 4}, {}, {{"dim", 1}}));
  CheckGoldens(b.Build(), "concat", {"tile", "execute", "cpp"});
}

// matmul f32[5,7] @ f32[7,6] with cube tile m=[4,4] k=[2,4] n=[4,4]: a cube
// group over [5,6] with tiles [4,4] (tails in M and N: four cube
// functions), K=7 in L1 blocks of 4 and L0 steps of 2 (a tail in both),
// then relu on the vector cores reading the matmul's GM result per tile.
TEST(GoldenTest, MatmulWithTails) {
  testing::GraphBuilder b("matmul_relu");
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {5, 7});
  uint32_t w = b.Input("w", pto::v1::DT_FP32, {7, 6});
  uint32_t y = b.Matmul(a, w, {5, 6}, pto::v1::DT_FP32, false, false,
                        {4, 4}, {2, 4}, {4, 4});
  b.Output("out", b.Op("relu", {y}, {2, 6}));
  CheckGoldens(b.Build(), "matmul_relu", kAllLevels);
}

// Lines of `text` that start with `prefix`.
int CountLines(const std::string& text, const std::string& prefix) {
  int n = 0;
  for (size_t at = 0; at < text.size();) {
    if (text.compare(at, prefix.size(), prefix) == 0) ++n;
    const size_t end = text.find('\n', at);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return n;
}

// Fusion and block dedup, counted in the printed Block Graph and PTO of
// kernels with many same-shaped tiles: exp(x) * 2 + y and a softmax over
// rows are each one fused group (one group, no workspace buffer), and blocks
// that differ only in their offsets share one function: [64,96] in tiles
// of [16,32] is 12 tasks of one .func, [37,70] (tails in both dims) 9 tasks
// of four, softmax [64,256] in tiles of [4,256] 16 tasks of one.
TEST(DedupTest, SameShapedTilesShareOneFunctionInThePto) {
  struct Case {
    bool softmax;
    std::vector<int64_t> shape, tile;
    int tasks, functions;
    std::string function;
  };
  const Case cases[] = {
      {false, {64, 96}, {16, 32}, 12, 1, "g0_exp_muls_add_16x32"},
      {false, {37, 70}, {16, 32}, 9, 4, "g0_exp_muls_add_5x6"},
      {true, {64, 256}, {4, 256}, 16, 1, "g0_amax_sub_exp_sum_etc_4x256"},
  };
  for (const Case& c : cases) {
    testing::GraphBuilder b("dedup");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, c.shape);
    if (c.softmax) {
      const uint32_t m = b.Op("amax", {x}, c.tile);
      const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, c.tile)}, c.tile);
      b.Output("out", b.Op("div", {e, b.Op("sum", {e}, c.tile)}, c.tile));
    } else {
      const uint32_t y = b.Input("y", pto::v1::DT_FP32, c.shape);
      const uint32_t e = b.Op("muls", {b.Op("exp", {x}, c.tile)}, c.tile, 2.0);
      b.Output("out", b.Op("add", {e, y}, c.tile));
    }
    std::map<std::string, std::string> dumps = Dumps(b.Build());
    const std::string& pto = dumps["pto"];
    const std::string& block = dumps["block"];
    SCOPED_TRACE(pto);
    EXPECT_EQ(CountLines(pto, ".func @"), c.functions);
    EXPECT_EQ(CountLines(pto, ".buffer"), c.softmax ? 2 : 3);  // params only
    EXPECT_EQ(CountLines(dumps["execute"], "  task #"), c.tasks) << dumps["execute"];
    EXPECT_EQ(CountLines(block, "  group #"), 1) << block;
    EXPECT_EQ(CountLines(block, "  function #"), c.functions) << block;
    EXPECT_NE(block.find(c.function), std::string::npos) << block;
  }
}


// The index ops' instructions: an index_select (its rank-1 index loaded
// along dim 0) feeding a scatter with reduce "add" (a copy group, then
// MSCATTER tasks each after the one before), over tiles with tails.
TEST(GoldenTest, IndexOps) {
  testing::GraphBuilder b("index_ops");
  const uint32_t x = b.Input("x", pto::v1::DT_FP16, {6, 5});
  const uint32_t i = b.Input("i", pto::v1::DT_INT32, {3});
  const uint32_t j = b.Input("j", pto::v1::DT_INT64, {3, 5});
  const uint32_t rows = b.Op("index_select", {x, i}, {2, 4}, 0, false);
  b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs()->erase("keepdim");
  const uint32_t out = b.Op("scatter", {x, j, rows}, {2, 4}, 1, false);
  pto::v1::Op* scatter = b.graph().mutable_ops(b.graph().ops_size() - 1);
  scatter->mutable_attrs()->erase("keepdim");
  (*scatter->mutable_attrs())["reduce"].set_s("add");
  b.Output("out", out);
  CheckGoldens(b.Build(), "index_ops", {"tile", "execute", "pto", "cpp"});
}

// The index ops over symbolic dims: rows = index_select(x, 1, i) and
// index_add(x, 1, i, rows) with x [5, n] and i [m]. MGATHER and MSCATTER
// take x's GM stride of dim 0 (n) and its extent along dim 1 (n, the bound
// of a valid index) as dynamic args; the generic tail functions call the N
// forms with the task's extents from the args.
TEST(GoldenTest, SymbolicIndexOps) {
  testing::GraphBuilder b("sym_index_ops");
  const SymExpr m = SymExpr::Symbol("m"), n = SymExpr::Symbol("n");
  const uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {SymExpr(5), n});
  const uint32_t i = b.SymInput("i", pto::v1::DT_INT32, {m});
  const uint32_t rows = b.Op("index_select", {x, i}, {2, 4}, 1, false);
  b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs()->erase("keepdim");
  const uint32_t out = b.Op("index_add", {x, i, rows}, {2, 4}, 1, false);
  b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs()->erase("keepdim");
  b.Output("out", out);
  CheckGoldens(b.Build(), "sym_index_ops", {"tile", "execute", "pto", "cpp"});
}

// The sort instruction: topk's shape of it (the first 3 positions along
// the last dim, largest first, then a gather of the values through them)
// and an argsort along dim 0 (all positions, smallest first), each MSORT
// reading whole rows of x's buffer.
TEST(GoldenTest, SortOps) {
  testing::GraphBuilder b("sort_ops");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {6, 10});
  const uint32_t top = b.Sort(x, -1, 3, true, {4, 8});
  const uint32_t values = b.Op("gather", {x, top}, {4, 8}, 1, false);
  b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs()->erase("keepdim");
  b.Output("values", values);
  b.Output("indices", top);
  b.Output("order", b.Sort(x, 0, 6, false, {4, 8}));
  CheckGoldens(b.Build(), "sort_ops", {"tile", "execute", "pto", "cpp"});
}

// The sort instruction over symbolic shapes: topk's 3 positions of each
// row of a dynamic batch (the rows' buffer strides static; tails of the
// batch on the generic function, MSortN) and an argsort along a symbolic
// dim (its length and the row's stride a dynamic arg, the tile along it
// the vec_tile's: each task sorts its rows and keeps 8 of the positions).
TEST(GoldenTest, SymbolicSortOps) {
  testing::GraphBuilder b("sym_sort_ops");
  const SymExpr m = SymExpr::Symbol("m"), n = SymExpr::Symbol("n");
  const uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {m, SymExpr(10)});
  const uint32_t top = b.Sort(x, -1, 3, true, {4, 8});
  const uint32_t values = b.Op("gather", {x, top}, {4, 8}, 1, false);
  b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs()->erase("keepdim");
  b.Output("values", values);
  b.Output("indices", top);
  const uint32_t y = b.SymInput("y", pto::v1::DT_FP16, {SymExpr(4), n});
  b.Output("order", b.Sort(y, 1, 0, false, {2, 8}));
  CheckGoldens(b.Build(), "sym_sort_ops", {"tile", "execute", "pto", "cpp"});
}

// The scan instructions: a cumsum of FP32 values along the last dim (a
// DOUBLE running value: TCVT in and out) and a cumprod of DOUBLE values
// along dim 0, each an init group filling the carry slots and a scan group
// whose tiles along the scanned dim depend each on the one before
// (serial_dim): TCUMSUM/TCUMPROD seeded by the carry, TREDLAST storing the
// next one.
TEST(GoldenTest, ScanOps) {
  testing::GraphBuilder b("scan_ops");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {6, 10});
  const uint32_t y = b.Input("y", pto::v1::DT_DOUBLE, {6, 10});
  b.Output("sums", b.Op("cumsum", {x}, {4, 8}));
  (*b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs())["dim"].set_i(-1);
  b.Output("products", b.Op("cumprod", {y}, {4, 8}));
  (*b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs())["dim"].set_i(0);
  CheckGoldens(b.Build(), "scan_ops", {"tile", "execute", "pto", "cpp"});
}

}  // namespace
}  // namespace pto::compiler
