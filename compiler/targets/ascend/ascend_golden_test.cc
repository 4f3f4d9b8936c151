// Golden tests of the Ascend target's PTO-ISA source: an elementwise chain
// with tails (exp(a) + b, f32, f16 and bf16), softmax rows (row reductions and
// row-expanding arithmetic), scans, matmuls through L1 and L0 tiles (f32, and BF16
// operands) and the softmax loop whose body loads through a dynamic view,
// integer ops on int32 tiles, INT32 division and maxima, an argmax, a
// gather, a sort (TSORT32 and TMRGSORT). (The instructions the target
// refuses in every form: ascend_unmapped_test.) Goldens live in
// compiler/targets/ascend/testdata/.
//
// To regenerate after an intended change:
//   PTO_UPDATE_GOLDENS=$PWD/compiler/targets/ascend/testdata bazel test //compiler:ascend_golden_test --test_env=PTO_UPDATE_GOLDENS
// and review the diff.
#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/pipeline.h"
#include "compiler/testing/golden.h"
#include "compiler/testing/graph_builder.h"
#include "compiler/util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/ascend_target.h"

namespace pto::compiler {
namespace {

void CheckGolden(const std::string& name, const std::string& actual) {
  testing::CheckGolden("compiler/targets/ascend/testdata", name, actual);
}

// `graph` lowered for ascend-a2a3-cpusim up to codegen: its PTO-ISA source.
std::string AscendSource(const pto::v1::Graph& graph) {
  LoweringState state;
  state.graph = &graph;
  state.target = runtime::kAscendA2A3CpuSimTarget;
  state.settings.keep_dumps = true;
  std::map<std::string, std::string> dumps;
  absl::Status s = RunPipeline(&state, nullptr, &dumps, "codegen");
  EXPECT_TRUE(s.ok()) << s;
  return dumps["cpp"];
}

TEST(AscendGoldenTest, ExpAdd) {
  CheckGolden("exp_add.cc.txt", AscendSource(testing::ExpAddGraph()));
}

TEST(AscendGoldenTest, ExpAddFp16) {
  CheckGolden("exp_add_fp16.cc.txt", AscendSource(testing::ExpAddGraph(pto::v1::DT_FP16)));
}

// BF16: both forms of each load, store and rounding under PTO_BF16_NATIVE.
TEST(AscendGoldenTest, ExpAddBf16) {
  CheckGolden("exp_add_bf16.cc.txt", AscendSource(testing::ExpAddGraph(pto::v1::DT_BF16)));
}

TEST(AscendGoldenTest, SoftmaxRows) {
  testing::GraphBuilder b("softmax");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {16, 100});
  const uint32_t m = b.Op("amax", {x}, {8, 128}, -1, true);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, {8, 128})}, {8, 128});
  const uint32_t s = b.Op("sum", {e}, {8, 128}, -1, true);
  b.Output("out", b.Op("div", {e, s}, {8, 128}));
  CheckGolden("softmax_rows.cc.txt", AscendSource(b.graph()));
}

// The exact extrema's scratch (xtmp) fits beside examples/softmax.py's
// [4, 1024] tiles: its row maximum keeps a NaN from any position.
TEST(AscendGoldenTest, SoftmaxOfWholeRowsTakesTheExactMaximum) {
  testing::GraphBuilder b("softmax");
  const std::vector<int64_t> tile = {4, 1024};
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {64, 1024});
  const uint32_t m = b.Op("amax", {x}, tile, -1, true);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
  b.Output("out", b.Op("div", {e, b.Op("sum", {e}, tile, -1, true)}, tile));
  const std::string source = AscendSource(b.graph());
  EXPECT_THAT(source, ::testing::HasSubstr("Full xtmp;"));
  EXPECT_THAT(source, ::testing::HasSubstr("TROWSUM(rtmp, xtmp, tmp);"));
}

// Rows of 1600: the function's three full tiles fit the UB, a fourth
// (xtmp) would not, so its row maximum is TROWMAX as it is.
TEST(AscendGoldenTest, SoftmaxOfLongerRowsTakesThePlainMaximum) {
  testing::GraphBuilder b("softmax");
  const std::vector<int64_t> tile = {8, 1600};
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {16, 1600});
  const uint32_t m = b.Op("amax", {x}, tile, -1, true);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
  b.Output("out", b.Op("div", {e, b.Op("sum", {e}, tile, -1, true)}, tile));
  const std::string source = AscendSource(b.graph());
  EXPECT_THAT(source, ::testing::HasSubstr("TROWMAX(t1, t0, tmp);\n  TROWEXPANDSUB("));
  EXPECT_THAT(source, ::testing::Not(::testing::HasSubstr("Full xtmp")));
}

// Scans: FP32 values (a double running value) along the last dim in
// log2(cols) steps, FP16 values down the columns in index order.
TEST(AscendGoldenTest, Scans) {
  testing::GraphBuilder b("scans");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {8, 40});
  const uint32_t y = b.Input("y", pto::v1::DT_FP16, {40, 8});
  b.Output("rows", b.Op("cumsum", {x}, {8, 16}));
  (*b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs())["dim"].set_i(-1);
  b.Output("columns", b.Op("cumprod", {y}, {16, 8}));
  (*b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs())["dim"].set_i(0);
  CheckGolden("scans.cc.txt", AscendSource(b.graph()));
}

TEST(AscendGoldenTest, MatmulL0Tiles) {
  CheckGolden("matmul.cc.txt", AscendSource(testing::MatmulGraph({40, 100}, {100, 72}, {40, 72})));
}

// BF16 operands, A transposed: the device's bfloat16_t tiles and the
// simulation's blocks widened to f32 through the workspace, under
// `#if !defined(__CPU_SIM)`.
TEST(AscendGoldenTest, MatmulBf16) {
  CheckGolden("matmul_bf16.cc.txt",
              AscendSource(testing::MatmulGraph({100, 40}, {100, 72}, {40, 72}, true, false,
                                                pto::v1::DT_BF16, pto::v1::DT_FP32)));
}

// A BF16 result: the device's TSTORE from L0C into bfloat16_t GM, the
// simulation's workspace and rounding in UB (its words form: PtoBf16Round).
TEST(AscendGoldenTest, MatmulBf16Result) {
  CheckGolden("matmul_bf16_result.cc.txt",
              AscendSource(testing::MatmulGraph({40, 100}, {100, 72}, {40, 72}, false, false,
                                                pto::v1::DT_BF16, pto::v1::DT_BF16)));
}

TEST(AscendGoldenTest, SoftmaxLoopDynamicView) {
  CheckGolden("softmax_loop.cc.txt", AscendSource(testing::SoftmaxLoopGraph()));
}

// INT32 tiles: a shift (its count modulo 32), xor, a comparison of two
// int32 tiles selecting int32 values, and a cast to f32.
TEST(AscendGoldenTest, IntegerOps) {
  testing::GraphBuilder b("int_ops");
  const uint32_t x = b.Input("x", pto::v1::DT_INT32, {16, 40});
  const uint32_t y = b.Input("y", pto::v1::DT_INT32, {16, 40});
  const uint32_t shl = b.Op("bitwise_left_shift", {x, y}, {8, 32});
  const uint32_t v = b.Op("where", {b.Op("lt", {x, y}, {8, 32}), shl,
                                    b.Op("bitwise_xor", {x, y}, {8, 32})}, {8, 32});
  b.Output("out", v);
  b.Output("f", b.Cast(v, pto::v1::DT_FP32, {8, 32}));
  CheckGolden("int_ops.cc.txt", AscendSource(b.graph()));
}

// INT32 floor division (a float quotient estimate corrected in int32) and
// an INT32 maximum over the last dim (its 16-bit halves' maxima in f32).
TEST(AscendGoldenTest, IntegerDivisionAndSum) {
  testing::GraphBuilder b("int_division");
  const uint32_t x = b.Input("x", pto::v1::DT_INT32, {16, 40});
  const uint32_t y = b.Input("y", pto::v1::DT_INT32, {16, 40});
  b.Output("q", b.Op("floor_divide", {x, y}, {8, 40}));
  b.Output("m", b.Op("amax", {x}, {8, 40}, -1, true));
  CheckGolden("int_division.cc.txt", AscendSource(b.graph()));
}

// argmax over a last dim too long for one tile: TARGFIRST's partial
// positions (int32, widened to INT64 in the workspace), TARGSEL's combine.
TEST(AscendGoldenTest, Argmax) {
  testing::GraphBuilder b("argmax");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {2, 5000});
  b.Output("out", b.Op("argmax", {x}, {1, 256}, -1, false));
  CheckGolden("argmax.cc.txt", AscendSource(b.graph()));
}

// gather along the last dim: each element's linear offset in int32 tiles
// (the row's offset, the index clamped where it is out of range), MGATHER,
// and 0 where the index was out of range.
TEST(AscendGoldenTest, Gather) {
  testing::GraphBuilder b("gather");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {16, 40});
  const uint32_t idx = b.Input("idx", pto::v1::DT_INT64, {16, 24});
  b.Output("out", b.Op("gather", {x, idx}, {8, 24}, 1, false));
  b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs()->erase("keepdim");
  CheckGolden("gather.cc.txt", AscendSource(b.graph()));
}

// argsort of FP16 rows of 100, ascending: the keys (negated, NaN last),
// padded to 128, TSORT32's blocks of 32 merged once by TMRGSORT, the
// positions gathered from the pairs and stored as INT64, row by row.
TEST(AscendGoldenTest, Sort) {
  testing::GraphBuilder b("sort");
  const uint32_t x = b.Input("x", pto::v1::DT_FP16, {6, 100});
  b.Output("order", b.Sort(x, -1, 100, false, {4, 64}));
  CheckGolden("sort.cc.txt", AscendSource(b.graph()));
}

// Not a golden: a bitcast to the type its values have is one TRESHAPE
// between the two tiles (ascend_test runs it against the host).
TEST(AscendSourceTest, BitcastToItsOwnTypeIsTreshape) {
  testing::GraphBuilder b("bitcast_same");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {16, 64});
  const uint32_t e = b.Op("muls", {x}, {8, 64}, 2.0);
  b.Output("out", b.Op("adds", {b.Cast(e, pto::v1::DT_FP32, {8, 64}, "bitcast")}, {8, 64}, 1.0));
  EXPECT_THAT(AscendSource(b.graph()),
              ::testing::ContainsRegex("TRESHAPE\\(t[0-9]+, t[0-9]+\\);"));
}

}  // namespace
}  // namespace pto::compiler
