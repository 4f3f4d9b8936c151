// Loops and branches: verification, import, the printed
// Tensor Graph and the cache key of graphs with regions.
#include <string>
#include <vector>

#include "compiler/ir/import.h"
#include "compiler/key/cache_key.h"
#include "compiler/testing/graph_builder.h"
#include "compiler/verify/limits.h"
#include "compiler/verify/verify.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using ::testing::HasSubstr;
using testing::CompareExpr;
using testing::GraphBuilder;
using testing::SoftmaxLoopGraph;
using Ids = std::vector<uint32_t>;

const SymExpr kBs = SymExpr::Symbol("bs");
const SymExpr kI = SymExpr::Symbol("i");

void ExpectInvalid(const pto::v1::Graph& g, const std::vector<std::string>& parts) {
  absl::Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  for (const std::string& p : parts) EXPECT_THAT(s.message(), HasSubstr(p));
}

// in [bs,4] IN, out [bs,4] INOUT; `body` fills the loop over i in 0..bs.
pto::v1::Graph LoopGraph(const std::function<Ids(GraphBuilder&, uint32_t in,
                                                 const Ids& args)>& body,
                         int64_t step = 1) {
  GraphBuilder b("loop");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  Ids outs = b.Loop("i", 0, kBs, step, {out},
                    [&](const Ids& args) { return body(b, in, args); });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

// out[i] = exp(in[i]).
Ids ExpRow(GraphBuilder& b, uint32_t in, const Ids& args) {
  const uint32_t x = b.View(in, {kI, 0}, {1, 4}, {1, 4});
  return {b.Assemble(b.Op("exp", {x}, {1, 4}), args[0], {kI, 0}, {1, 4})};
}

TEST(VerifyRegionsTest, AcceptsSoftmaxLoopAndImportsIt) {
  const pto::v1::Graph g = SoftmaxLoopGraph();
  ASSERT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  absl::StatusOr<TensorGraph> t = testing::VerifyAndImport(g);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->ops.size(), 1u);
  EXPECT_TRUE(t->HasRegions());
  ASSERT_EQ(t->ops[0].regions.size(), 1u);
  EXPECT_EQ(t->ops[0].regions[0].ops.size(), 7u);  // view .. assemble
}

// The golden printed form of a loop (indented body, symbolic attributes).
TEST(VerifyRegionsTest, PrintsRegionsReadably) {
  absl::StatusOr<TensorGraph> t = testing::VerifyAndImport(LoopGraph(ExpRow));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(PrintTensorGraph(*t),
            "tensor_graph \"loop\"\n"
            "  param #0 in    %0 \"in\": f32[bs,4]\n"
            "  param #1 inout %1->%6 \"out\": f32[bs,4]\n"
            "  %6:f32[bs,4] = loop %1 index=\"i\" start=0 step=1 stop=bs\n"
            "    body (%2):\n"
            "      %3:f32[1,4] = view %0 offsets=[i,0] shape=[1,4]  tile=[1,4]\n"
            "      %4:f32[1,4] = exp %3  tile=[1,4]\n"
            "      %5:f32[bs,4] = assemble %4, %2 offsets=[i,0]  tile=[1,4]\n"
            "      yield %5\n");
}

TEST(VerifyRegionsTest, PrintsIfWithCondition) {
  GraphBuilder b("branch");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  Ids outs = b.If(CompareExpr(pto::v1::DIM_OP_GT, kBs, 64), {out},
                  [&](const Ids& a) { return Ids{b.Op("exp", {in}, {1, 4})}; },
                  [&](const Ids& a) { return a; });
  b.InOut("out", out, outs[0]);
  absl::StatusOr<TensorGraph> t = testing::VerifyAndImport(b.Build());
  ASSERT_TRUE(t.ok()) << t.status();
  const std::string text = PrintTensorGraph(*t);
  EXPECT_THAT(text, HasSubstr("= if %1 cond=(bs>64)\n    then (%2):\n"));
  EXPECT_THAT(text, HasSubstr("    else (%4):\n      yield %4\n"));
}

TEST(VerifyRegionsTest, RejectsStepZeroNamingTheOp) {
  ExpectInvalid(LoopGraph(ExpRow, 0), {"op #0 \"loop\"", "attrs[\"step\"]", "0"});
}

TEST(VerifyRegionsTest, RejectsCarriedTypeMismatchNamingRegionAndPosition) {
  // The body yields a [1,4] value for a [bs,4] arg.
  ExpectInvalid(LoopGraph([](GraphBuilder& b, uint32_t in, const Ids& args) {
                  return Ids{b.View(in, {kI, 0}, {1, 4}, {1, 4})};
                }),
                {"op #0 \"loop\"", "body", "result 0", "f32[1,4]",
                 "does not match arg 0's f32[bs,4]"});
  // An arg of another type than its input.
  pto::v1::Graph g = LoopGraph(ExpRow);
  pto::v1::Value* arg = nullptr;
  for (pto::v1::Value& v : *g.mutable_values()) {
    if (v.id() == g.ops(0).regions(0).args(0)) arg = &v;
  }
  arg->set_dtype(pto::v1::DT_FP16);
  ExpectInvalid(g, {"op #0 \"loop\" (name \"loop0\") body", "arg 0",
                    "f16[bs,4] does not match input 0's f32[bs,4]"});
}

TEST(VerifyRegionsTest, RejectsOutputTypeMismatch) {
  GraphBuilder b("loop");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  Ids outs = b.Loop("i", 0, kBs, 1, {out},
                    [&](const Ids& args) { return ExpRow(b, in, args); });
  b.InOut("out", out, b.Op("exp", {outs[0]}, {1, 4}));
  pto::v1::Graph g = b.Build();
  for (pto::v1::Value& v : *g.mutable_values()) {
    if (v.id() == outs[0]) v.set_dtype(pto::v1::DT_FP16);
  }
  ExpectInvalid(g, {"op #0 \"loop\"", "output 0: f16[bs,4] does not match input 0's f32[bs,4]"});
}

TEST(VerifyRegionsTest, RejectsAssembleIntoACapture) {
  GraphBuilder b("loop");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  const uint32_t other = b.Op("exp", {in}, {1, 4});
  Ids outs = b.Loop("i", 0, kBs, 1, {out}, [&](const Ids& args) {
    const uint32_t x = b.View(in, {kI, 0}, {1, 4}, {1, 4});
    b.Assemble(x, other, {kI, 0}, {1, 4});
    return args;
  });
  b.InOut("out", out, outs[0]);
  ExpectInvalid(b.Build(), {"op #1 body op #1 \"assemble\"", "input 1 (dst)",
                            "outside op #1's region", "assembles only into its args"});
}

TEST(VerifyRegionsTest, RejectsReadingTheCarriedInputInTheBody) {
  ExpectInvalid(LoopGraph([](GraphBuilder& b, uint32_t in, const Ids& args) {
                  // value 2 is `out` (the loop's input), read instead of args[0].
                  return Ids{b.Op("exp", {2}, {1, 4})};
                }),
                {"op #0 body op #0 \"exp\"", "input 0 of op #0", "read the region's arg 0"});
}

TEST(VerifyRegionsTest, RejectsValuesOfAnEndedRegion) {
  GraphBuilder b("loop");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  uint32_t inner = 0;
  Ids outs = b.Loop("i", 0, kBs, 1, {out}, [&](const Ids& args) {
    inner = b.Op("exp", {in}, {1, 4});
    return args;
  });
  b.InOut("out", out, b.Op("add", {outs[0], inner}, {1, 4}));
  ExpectInvalid(b.Build(), {"op #1 \"add\"", "input 1", "inside a region of op #0",
                            "has ended"});
}

TEST(VerifyRegionsTest, RejectsCapturesDefinedLater) {
  // The body reads a value that only a later op defines.
  GraphBuilder b("loop");
  b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});  // a param the body does not read
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  const uint32_t later = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "later");
  Ids outs = b.Loop("i", 0, kBs, 1, {out}, [&](const Ids& args) {
    return Ids{b.Op("add", {args[0], later}, {1, 4})};
  });
  b.InOut("out", out, outs[0]);
  ExpectInvalid(b.Build(), {"op #0 body op #0 \"add\"", "input 1",
                            "used before any op defines it"});
}

TEST(VerifyRegionsTest, RejectsSymbolsOutOfScope) {
  // The index of a loop that has ended, in a later loop's view.
  GraphBuilder b("loop");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  Ids first = b.Loop("i", 0, kBs, 1, {out}, [&](const Ids& a) { return a; });
  Ids second = b.Loop("j", 0, kBs, 1, {first[0]}, [&](const Ids& args) {
    const uint32_t x = b.View(in, {kI, 0}, {1, 4}, {1, 4});
    return Ids{b.Assemble(x, args[0], {SymExpr::Symbol("j"), 0}, {1, 4})};
  });
  b.InOut("out", out, second[0]);
  ExpectInvalid(b.Build(), {"op #1 body op #0 \"view\"", "attrs[\"offsets\"][0] (i)",
                            "uses symbol i", "not in scope"});
}

TEST(VerifyRegionsTest, RejectsDuplicateIndexAndBadIndexName) {
  GraphBuilder b("loop");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  Ids outs = b.Loop("bs", 0, kBs, 1, {out}, [&](const Ids& a) { return a; });
  b.InOut("out", out, outs[0]);
  ExpectInvalid(b.Build(), {"attrs[\"index\"]", "bs is already a symbol of the parameters"});
  (void)in;
  pto::v1::Graph g = LoopGraph(ExpRow);
  (*g.mutable_ops(0)->mutable_attrs())["index"].set_s("2x");
  ExpectInvalid(g, {"attrs[\"index\"]", "not an identifier"});
}

TEST(VerifyRegionsTest, AcceptsComparisonsAsZeroOrOneOutsideConditions) {
  pto::v1::Graph g = LoopGraph(ExpRow);
  *(*g.mutable_ops(0)->mutable_attrs())["stop"].mutable_expr() =
      CompareExpr(pto::v1::DIM_OP_LT, kBs, 4);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
}

TEST(VerifyRegionsTest, RejectsBadRegionCountsAndAttributes) {
  pto::v1::Graph g = LoopGraph(ExpRow);
  g.mutable_ops(0)->add_regions();
  ExpectInvalid(g, {"op #0 \"loop\"", "regions: expected 1 (the body), got 2"});
  g = LoopGraph(ExpRow);
  g.mutable_ops(0)->mutable_attrs()->erase("start");
  ExpectInvalid(g, {"missing required attribute \"start\""});
  g = LoopGraph(ExpRow);
  (*g.mutable_ops(0)->mutable_attrs())["start"].set_f(0.5);
  ExpectInvalid(g, {"attrs[\"start\"]: expected type i or expr"});
  g = LoopGraph(ExpRow);
  g.mutable_ops(0)->mutable_regions(0)->add_results(g.ops(0).regions(0).args(0));
  ExpectInvalid(g, {"op #0 \"loop\" (name \"loop0\") body", "results: expected 1"});
}

TEST(VerifyRegionsTest, RejectsDeepNestingAndTooManyOps) {
  GraphBuilder b("deep");
  const uint32_t out0 = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  std::function<Ids(int, const Ids&)> nest = [&](int depth, const Ids& carried) {
    if (depth == kMaxRegionDepth + 1) return carried;
    return b.Loop(absl::StrCat("i", depth), 0, kBs, 1, carried,
                  [&, depth](const Ids& args) { return nest(depth + 1, args); });
  };
  Ids outs = nest(0, {out0});
  b.InOut("out", out0, outs[0]);
  ExpectInvalid(b.Build(), {"regions nest more than 8 deep"});

  pto::v1::Graph g = LoopGraph([](GraphBuilder& b, uint32_t in, const Ids& args) {
    uint32_t x = b.View(in, {kI, 0}, {1, 4}, {1, 4});
    for (int k = 0; k < kMaxOps; ++k) x = b.Op("neg", {x}, {1, 4});
    return Ids{b.Assemble(x, args[0], {kI, 0}, {1, 4})};
  });
  ExpectInvalid(g, {"more than 4096 ops, those in regions included"});
}

TEST(VerifyRegionsTest, RejectsOversizedExpressions) {
  pto::v1::Graph g = LoopGraph(ExpRow);
  pto::v1::DimExpr e;
  e.set_symbol("bs");
  for (int k = 0; k < 20; ++k) {
    pto::v1::DimExpr up;
    up.mutable_binary()->set_op(pto::v1::DIM_OP_ADD);
    *up.mutable_binary()->mutable_lhs() = e;
    up.mutable_binary()->mutable_rhs()->set_constant(1);
    e = up;
  }
  *(*g.mutable_ops(0)->mutable_attrs())["stop"].mutable_expr() = e;
  ExpectInvalid(g, {"attrs[\"stop\"]", "deeper than 16"});
}

TEST(VerifyRegionsTest, RejectsConstantViewOutOfRange) {
  ExpectInvalid(LoopGraph([](GraphBuilder& b, uint32_t in, const Ids& args) {
                  const uint32_t x = b.View(in, {kI, 3}, {1, 4}, {1, 4});
                  return Ids{b.Assemble(x, args[0], {kI, 0}, {1, 4})};
                }),
                {"op #0 body op #0 \"view\"", "does not fit in input", "dim 1 covers [3, 7)"});
}

// Outside regions too, offsets and extents may be expressions of the
// parameters' symbols (checked at launch); what is decidable now is checked.
TEST(VerifyRegionsTest, SymbolicViewsAtTopLevel) {
  {
    GraphBuilder b("top");
    const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
    b.Output("out", b.View(in, {kBs - 1, 0}, {1, 4}, {1, 4}));
    EXPECT_TRUE(VerifyGraph(b.Build()).ok());
  }
  GraphBuilder b("top");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  b.Output("out", b.View(in, {0, 3}, {1, 4}, {1, 4}));
  absl::Status s = VerifyGraph(b.Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("dim 1 covers [3, 7)"));
}

TEST(VerifyRegionsTest, RejectsOutValueDefinedInARegion) {
  GraphBuilder b("loop");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
  uint32_t inner = 0;
  Ids outs = b.Loop("i", 0, kBs, 1, {out}, [&](const Ids& args) {
    inner = b.Op("exp", {in}, {1, 4});
    return args;
  });
  b.InOut("out", out, outs[0]);
  b.Output("leak", inner);
  ExpectInvalid(b.Build(), {"param #2 \"leak\"", "inside a region of op #0"});
}

TEST(VerifyRegionsTest, IfConditionsAndTheirErrors) {
  auto make = [](const pto::v1::DimExpr& cond) {
    GraphBuilder b("branch");
    const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
    const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
    Ids outs = b.If(cond, {out},
                    [&](const Ids&) { return Ids{b.Op("exp", {in}, {1, 4})}; },
                    [&](const Ids&) { return Ids{b.Op("neg", {in}, {1, 4})}; });
    b.InOut("out", out, outs[0]);
    return b.Build();
  };
  pto::v1::DimExpr both;
  both.mutable_binary()->set_op(pto::v1::DIM_OP_AND);
  *both.mutable_binary()->mutable_lhs() = CompareExpr(pto::v1::DIM_OP_GE, kBs, 2);
  *both.mutable_binary()->mutable_rhs() = CompareExpr(pto::v1::DIM_OP_NE, kBs, 7);
  EXPECT_TRUE(VerifyGraph(make(both)).ok()) << VerifyGraph(make(both));
  ExpectInvalid(make(CompareExpr(pto::v1::DIM_OP_GT, SymExpr::Symbol("n"), 2)),
                {"op #0 \"if\"", "attrs[\"cond\"] (n>2)", "uses symbol n"});
  // A comparison of comparisons (their 0/1 values): Python's not (bs < 3).
  pto::v1::DimExpr nested = CompareExpr(pto::v1::DIM_OP_EQ, kBs, 0);
  *nested.mutable_binary()->mutable_lhs() = CompareExpr(pto::v1::DIM_OP_LT, kBs, 3);
  EXPECT_TRUE(VerifyGraph(make(nested)).ok()) << VerifyGraph(make(nested));
}

// The key: loop index names (like symbol names) never enter it, sizes never
// do, offsets and bodies do.
TEST(VerifyRegionsTest, CacheKeyRenamesIndicesAndEncodesRegions) {
  auto key = [](const pto::v1::Graph& g) {
    absl::StatusOr<TensorGraph> t = testing::VerifyAndImport(g);
    EXPECT_TRUE(t.ok()) << t.status();
    return ComputeCacheKey(*t, "host", {}, "fp");
  };
  const std::string a = key(SoftmaxLoopGraph("idx"));
  EXPECT_EQ(a, key(SoftmaxLoopGraph("row")));
  EXPECT_NE(a, key(SoftmaxLoopGraph("idx", 8, 64)));  // static body dims differ
  const std::string exp_row = key(LoopGraph(ExpRow));
  EXPECT_NE(exp_row, key(LoopGraph([](GraphBuilder& b, uint32_t in, const Ids& args) {
              const uint32_t x = b.View(in, {kI, 0}, {1, 4}, {1, 4});
              return Ids{b.Assemble(b.Op("exp", {x}, {1, 4}), args[0],
                                    {kBs - kI - 1, 0}, {1, 4})};
            })));
  EXPECT_NE(exp_row, key(LoopGraph(ExpRow, 2)));
  // Static graphs keep their keys: no regions, no extra bytes.
  GraphBuilder b("k");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {4});
  b.Output("y", b.Op("exp", {x}, {4}));
  absl::StatusOr<TensorGraph> t = testing::VerifyAndImport(b.Build());
  EXPECT_EQ(CanonicalGraphBytes(*t).find('R'), std::string::npos);
}

TEST(VerifyRegionsTest, ConstantExpressionsImportAsInts) {
  GraphBuilder b("k");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {4, 4});
  b.Output("y", b.View(x, {SymExpr(1), SymExpr(0)}, {SymExpr(2), SymExpr(4)}, {2, 4}));
  absl::StatusOr<TensorGraph> t = testing::VerifyAndImport(b.Build());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(std::holds_alternative<std::vector<int64_t>>(t->ops[0].attrs.at("offsets")));
}

// Scalar operands over symbols: the "scalar" of a tensor-with-
// scalar op, clip's bounds and full's value may be exprs over the symbols
// in scope; errors name the op and the attribute.
Ids ScaledRow(GraphBuilder& b, uint32_t in, const Ids& args, const SymExpr& scalar) {
  const uint32_t x = b.View(in, {kI, 0}, {1, 4}, {1, 4});
  const uint32_t y = b.ScalarOp("muls", {x}, {1, 4}, {{"scalar", scalar}});
  return {b.Assemble(y, args[0], {kI, 0}, {1, 4})};
}

TEST(VerifyRegionsTest, ScalarOperandsOverSymbols) {
  const auto scaled = [](const SymExpr& scalar) {
    return LoopGraph([scalar](GraphBuilder& b, uint32_t in, const Ids& args) {
      return ScaledRow(b, in, args, scalar);
    });
  };
  EXPECT_TRUE(VerifyGraph(scaled(kI * 2 + kBs)).ok()) << VerifyGraph(scaled(kI * 2 + kBs));
  ExpectInvalid(scaled(SymExpr::Symbol("j")),
                {"op #0 body op #1 \"muls\"", "attrs[\"scalar\"] (j)", "uses symbol j",
                 "not in scope"});
  // An index outside its loop; clip's bound.
  GraphBuilder b("k");
  const uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {kBs, 4});
  b.Output("y", b.ScalarOp("clip", {x}, {2, 4}, {{"min", -kBs}, {"max", kI}}));
  ExpectInvalid(b.Build(), {"op #0 \"clip\"", "attrs[\"max\"] (i)", "not in scope"});
  // A comparison is a number too: 1 when true, 0 when false.
  pto::v1::Graph g = scaled(kI);
  pto::v1::Op& muls = *g.mutable_ops(0)->mutable_regions(0)->mutable_ops(1);
  *(*muls.mutable_attrs())["scalar"].mutable_expr() = CompareExpr(pto::v1::DIM_OP_LT, kI, 4);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  // A float attribute that is not a scalar operand (arange's step: its
  // length is static) takes no expr.
  GraphBuilder a("k");
  const uint32_t x4 = a.SymInput("x", pto::v1::DT_FP32, {kBs, 4});
  const uint32_t r = a.Value(pto::v1::DT_FP32, {4});
  pto::v1::Graph ag = a.Build();
  pto::v1::Op* arange = ag.add_ops();
  arange->set_kind("arange");
  arange->add_outputs(r);
  arange->mutable_vec_tile()->add_dims(4);
  (*arange->mutable_attrs())["shape"].mutable_ints()->add_values(4);
  (*arange->mutable_attrs())["dtype"].set_dtype(pto::v1::DT_FP32);
  (*arange->mutable_attrs())["start"].set_f(0);
  *(*arange->mutable_attrs())["step"].mutable_expr() = kBs.ToProto();
  pto::v1::Parameter* p = ag.add_params();
  p->set_name("y");
  p->set_role(pto::v1::PARAM_ROLE_OUT);
  p->set_value_id(r);
  (void)x4;
  ExpectInvalid(ag, {"\"arange\"", "attrs[\"step\"]: expected type f, got oneof case 7"});
}

TEST(VerifyRegionsTest, ScalarOperandsImportAndKeyByExpression) {
  const auto scaled = [](const SymExpr& scalar, const std::string& index = "i") {
    GraphBuilder b("loop");
    const SymExpr i = SymExpr::Symbol(index);
    const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {kBs, 4});
    const uint32_t out = b.SymValue(pto::v1::DT_FP32, {kBs, 4}, "out");
    Ids outs = b.Loop(index, 0, kBs, 1, {out}, [&](const Ids& args) {
      const uint32_t x = b.View(in, {i, 0}, {1, 4}, {1, 4});
      const uint32_t y = b.ScalarOp("muls", {x}, {1, 4}, {{"scalar", scalar}});
      return Ids{b.Assemble(y, args[0], {i, 0}, {1, 4})};
    });
    b.InOut("out", out, outs[0]);
    return b.Build();
  };
  auto import = [](const pto::v1::Graph& g) {
    absl::StatusOr<TensorGraph> t = testing::VerifyAndImport(g);
    EXPECT_TRUE(t.ok()) << t.status();
    return *t;
  };
  auto key = [&](const pto::v1::Graph& g) { return ComputeCacheKey(import(g), "host", {}, "fp"); };
  // A constant expr is the f; a symbolic one is kept and printed.
  const TensorGraph constant = import(scaled(SymExpr(3)));
  EXPECT_EQ(std::get<double>(constant.ops[0].regions[0].ops[1].attrs.at("scalar")), 3.0);
  pto::v1::Graph with_f = scaled(SymExpr(3));
  (*with_f.mutable_ops(0)->mutable_regions(0)->mutable_ops(1)->mutable_attrs())["scalar"].set_f(3);
  EXPECT_EQ(key(scaled(SymExpr(3))), key(with_f));
  EXPECT_THAT(PrintTensorGraph(import(scaled(kBs - kI))), HasSubstr("muls %3 scalar=bs-i"));
  // The key covers the expression (not a value), whatever the index's name.
  const std::string a = key(scaled(kBs - kI));
  EXPECT_EQ(a, key(scaled(kBs - SymExpr::Symbol("row"), "row")));
  EXPECT_NE(a, key(scaled(kBs - kI + 1)));
  EXPECT_NE(a, key(scaled(kI)));
  EXPECT_NE(key(scaled(SymExpr(3))), key(scaled(SymExpr(4))));
}

}  // namespace
}  // namespace pto::compiler
