#include "compiler/verify/verify.h"

#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/import.h"
#include "compiler/ops/infer.h"
#include "compiler/testing/graph_builder.h"
#include "compiler/verify/limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ExpAddGraph;
using testing::GraphBuilder;

// ExpAddGraph: values 1 a, 2 b, 3 exp-out, 4 add-out; params a(1) b(2) out(4);
// op #0 exp(1) -> 3, op #1 add(3, 2) -> 4.
pto::v1::Graph Base() { return ExpAddGraph(); }

pto::v1::Value* ValueById(pto::v1::Graph& g, uint32_t id) {
  for (pto::v1::Value& v : *g.mutable_values()) {
    if (v.id() == id) return &v;
  }
  return nullptr;
}

void ExpectInvalid(const pto::v1::Graph& g,
                   const std::vector<std::string>& parts) {
  absl::Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  for (const std::string& p : parts) EXPECT_THAT(s.message(), HasSubstr(p));
}

TEST(VerifyTest, AcceptsWellFormedGraph) {
  EXPECT_TRUE(VerifyGraph(Base()).ok()) << VerifyGraph(Base());
}

TEST(VerifyTest, RejectsSchemaVersion) {
  pto::v1::Graph g = Base();
  g.set_schema_version(pto::v1::SCHEMA_VERSION_UNSPECIFIED);
  ExpectInvalid(g, {"graph", "schema_version 0"});
}

TEST(VerifyTest, RejectsUnknownOpKind) {
  pto::v1::Graph g = Base();
  g.mutable_ops(1)->set_kind("frobnicate");
  ExpectInvalid(g, {"op #1", "unknown op kind \"frobnicate\""});
}

TEST(VerifyTest, RejectsWrongInputArity) {
  pto::v1::Graph g = Base();
  g.mutable_ops(1)->add_inputs(1);
  ExpectInvalid(g, {"op #1 \"add\"", "inputs: expected 2, got 3"});
}

TEST(VerifyTest, RejectsWrongOutputArity) {
  pto::v1::Graph g = Base();
  g.mutable_ops(0)->clear_outputs();
  ExpectInvalid(g, {"op #0 \"exp\"", "outputs: expected 1, got 0"});
}

TEST(VerifyTest, RejectsDanglingInput) {
  pto::v1::Graph g = Base();
  g.mutable_ops(1)->set_inputs(1, 17);
  ExpectInvalid(g, {"op #1 \"add\" (name \"add1\")", "input 1",
                    "dangling value id 17"});
}

TEST(VerifyTest, RejectsDanglingOutput) {
  pto::v1::Graph g = Base();
  g.mutable_ops(0)->set_outputs(0, 99);
  ExpectInvalid(g, {"op #0", "output 0", "dangling value id 99"});
}

TEST(VerifyTest, RejectsOutputWrittenTwice) {
  pto::v1::Graph g = Base();
  g.mutable_ops(1)->set_outputs(0, 3);  // exp already defined value 3
  ExpectInvalid(g, {"op #1", "output 0", "value id 3 is already defined by op #0"});
}

TEST(VerifyTest, RejectsOpWritingAnInputParameter) {
  pto::v1::Graph g = Base();
  g.mutable_ops(0)->set_outputs(0, 2);
  ExpectInvalid(g, {"op #0", "output 0", "already defined by param #1 \"b\""});
}

TEST(VerifyTest, RejectsOutParamNeverWritten) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {4});
  b.Op("exp", {a}, {4});
  uint32_t orphan = b.Value(pto::v1::DT_FP32, {4});
  b.Output("y", orphan);
  ExpectInvalid(b.Build(), {"param #1 \"y\"", "never written"});
}

TEST(VerifyTest, RejectsOutParamThatIsAnInput) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {4});
  b.Op("exp", {a}, {4});
  b.Output("y", a);
  ExpectInvalid(b.Build(), {"param #1 \"y\"", "an out value must be written by an op"});
}

TEST(VerifyTest, RejectsKernelsWithoutOutputs) {
  pto::v1::Graph g = Base();
  g.mutable_params()->RemoveLast();
  ExpectInvalid(g, {"graph", "no out or inout parameter"});
}

TEST(VerifyTest, RejectsDTypeMismatchBetweenInputs) {
  pto::v1::Graph g = Base();
  ValueById(g, 2)->set_dtype(pto::v1::DT_FP16);
  ExpectInvalid(g, {"op #1 \"add\"", "input 1 f16[3,5] and input 0 f32[3,5]",
                    "add needs equal dtypes"});
}

TEST(VerifyTest, RejectsShapeMismatchBetweenInputs) {
  pto::v1::Graph g = Base();
  ValueById(g, 2)->mutable_shape()->mutable_dims(1)->set_size(6);
  ExpectInvalid(g, {"op #1 \"add\"", "inputs 0 [3,5] and 1 [3,6] do not broadcast",
                    "dim -1 is 5 vs 6", "equal or 1"});
}

TEST(VerifyTest, AcceptsBroadcastingAndChecksItsResultShape) {
  pto::v1::Graph g = Base();
  // b: [5] broadcasts against exp(a): [3,5].
  ValueById(g, 2)->mutable_shape()->mutable_dims()->DeleteSubrange(0, 1);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  ValueById(g, 4)->mutable_shape()->mutable_dims(1)->set_size(1);
  ExpectInvalid(g, {"op #1 \"add\"", "output 0: shape [3,1]",
                    "the inferred [3,5]"});
}

TEST(VerifyTest, RejectsBoolInFloatOp) {
  pto::v1::Graph g = Base();
  ValueById(g, 1)->set_dtype(pto::v1::DT_BOOL);
  ExpectInvalid(g, {"op #0 \"exp\"", "input 0 has dtype DT_BOOL",
                    "exp takes DT_FP32, DT_FP16 or DT_BF16"});
}

TEST(VerifyTest, ComparisonsGiveBool) {
  pto::v1::Graph g = Base();
  g.mutable_ops(1)->set_kind("lt");
  ExpectInvalid(g, {"op #1 \"lt\"", "output 0: dtype DT_FP32",
                    "the inferred DT_BOOL"});
  ValueById(g, 4)->set_dtype(pto::v1::DT_BOOL);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
}

TEST(VerifyTest, CastTakesItsResultTypeFromTheAttribute) {
  pto::v1::Graph g = Base();
  g.mutable_ops(0)->set_kind("cast");
  ExpectInvalid(g, {"op #0 \"cast\"", "missing required attribute \"dtype\""});
  (*g.mutable_ops(0)->mutable_attrs())["dtype"].set_dtype(pto::v1::DT_INT8);
  ExpectInvalid(g, {"op #0 \"cast\"", "output 0: dtype DT_FP32",
                    "the inferred DT_INT8"});
  (*g.mutable_ops(0)->mutable_attrs())["dtype"].set_dtype(pto::v1::DT_FP32);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  (*g.mutable_ops(0)->mutable_attrs())["dtype"].set_dtype(
      pto::v1::DT_UNSPECIFIED);
  ExpectInvalid(g, {"op #0 \"cast\"", "cannot cast to DT_UNSPECIFIED"});
}

// FP8 values cast (graphs of SCHEMA_VERSION_3), take no arithmetic, and an
// older graph with one is refused.
TEST(VerifyTest, Fp8ValuesNeedSchemaVersion3AndACastForArithmetic) {
  pto::v1::Graph g = Base();
  g.set_schema_version(pto::v1::SCHEMA_VERSION_3);
  g.mutable_ops(0)->set_kind("cast");
  (*g.mutable_ops(0)->mutable_attrs())["dtype"].set_dtype(pto::v1::DT_FP32);
  ValueById(g, 1)->set_dtype(pto::v1::DT_FP8E4M3);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  g.set_schema_version(pto::v1::SCHEMA_VERSION_2);
  ExpectInvalid(g, {"dtype DT_FP8E4M3 needs schema_version SCHEMA_VERSION_3"});
  g.set_schema_version(pto::v1::SCHEMA_VERSION_3);
  ValueById(g, 2)->set_dtype(pto::v1::DT_FP8E5M2);
  ExpectInvalid(g, {"op #1 \"add\"", "DT_FP8E5M2"});

  GraphBuilder b;  // creation ops make FP32 values to cast, not FP8 ones
  b.Output("y", b.Create("full", pto::v1::DT_FP8E4M3, {4}, {{"value", 0.3}}));
  pto::v1::Graph full = b.Build();
  full.set_schema_version(pto::v1::SCHEMA_VERSION_3);
  ExpectInvalid(full, {"full does not create DT_FP8E4M3 tensors (create DT_FP32 and cast)"});
}

// philox makes rank-1 DT_INT64 words from a key and a counter of 32-bit
// words (integers in [0, 2**32)).
TEST(VerifyTest, PhiloxTakesWordsAndMakesRankOneInt64) {
  auto graph = [](pto::v1::DataType dtype, const std::vector<int64_t>& shape,
                  const std::string& bad, double value) {
    std::map<std::string, double> attrs = {{"key0", 1},     {"key1", 0xFFFFFFFF},
                                           {"counter0", 3}, {"counter1", 0},
                                           {"counter2", 0}, {"counter3", 0}};
    if (!bad.empty()) attrs[bad] = value;
    GraphBuilder b;
    b.Output("w", b.Create("philox", dtype, shape, attrs));
    return b.Build();
  };
  EXPECT_TRUE(VerifyGraph(graph(pto::v1::DT_INT64, {64}, "", 0)).ok())
      << VerifyGraph(graph(pto::v1::DT_INT64, {64}, "", 0));
  ExpectInvalid(graph(pto::v1::DT_INT32, {64}, "", 0),
                {"\"philox\"", "philox makes rank-1 DT_INT64 tensors"});
  ExpectInvalid(graph(pto::v1::DT_INT64, {2, 32}, "", 0), {"philox makes rank-1 DT_INT64"});
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, double>>{{"key1", 0x1p32}, {"counter2", 1.5},
                                                   {"counter0", -1}}) {
    ExpectInvalid(graph(pto::v1::DT_INT64, {64}, name, value),
                  {absl::StrCat("attrs[\"", name, "\"]"), "is not a 32-bit word"});
  }
}

// philox_normal takes the same words and makes rank-1 DT_FP32 normals.
TEST(VerifyTest, PhiloxNormalTakesWordsAndMakesRankOneFp32) {
  auto graph = [](pto::v1::DataType dtype, const std::vector<int64_t>& shape, double key1) {
    GraphBuilder b;
    b.Output("z", b.Create("philox_normal", dtype, shape,
                           {{"key0", 1}, {"key1", key1}, {"counter0", 3}, {"counter1", 0},
                            {"counter2", 0}, {"counter3", 0}}));
    return b.Build();
  };
  EXPECT_TRUE(VerifyGraph(graph(pto::v1::DT_FP32, {63}, 7)).ok())
      << VerifyGraph(graph(pto::v1::DT_FP32, {63}, 7));
  ExpectInvalid(graph(pto::v1::DT_FP16, {64}, 7),
                {"\"philox_normal\"", "philox_normal makes rank-1 DT_FP32 tensors"});
  ExpectInvalid(graph(pto::v1::DT_FP32, {2, 32}, 7), {"philox_normal makes rank-1 DT_FP32"});
  ExpectInvalid(graph(pto::v1::DT_FP32, {64}, 0x1p32),
                {"attrs[\"key1\"]", "is not a 32-bit word"});
}

TEST(VerifyTest, WhereNeedsBoolCondition) {
  pto::v1::Graph g = Base();
  g.mutable_ops(1)->set_kind("where");
  g.mutable_ops(1)->add_inputs(2);
  ExpectInvalid(g, {"op #1 \"where\"", "input 0 (the condition) is f32[3,5]",
                    "needs a DT_BOOL condition"});
}

TEST(VerifyTest, RejectsOutputShapeMismatch) {
  pto::v1::Graph g = Base();
  ValueById(g, 3)->mutable_shape()->mutable_dims(0)->set_size(4);
  ExpectInvalid(g, {"op #0 \"exp\"", "output 0: shape [4,5]"});
}

TEST(VerifyTest, RejectsZeroAndNegativeDims) {
  for (int64_t bad : {0, -3}) {
    pto::v1::Graph g = Base();
    ValueById(g, 3)->mutable_shape()->mutable_dims(1)->set_size(bad);
    ExpectInvalid(g, {"op #0 \"exp\"", "output 0: value id 3",
                      absl::StrCat("shape dim 1 is ", bad)});
  }
}

TEST(VerifyTest, RejectsZeroAndNegativeTileDims) {
  for (int64_t bad : {0, -1}) {
    pto::v1::Graph g = Base();
    g.mutable_ops(1)->mutable_vec_tile()->set_dims(0, bad);
    ExpectInvalid(g, {"op #1 \"add\"", absl::StrCat("vec_tile dim 0 is ", bad)});
  }
}

TEST(VerifyTest, RejectsTileRankMismatch) {
  pto::v1::Graph g = Base();
  g.mutable_ops(0)->mutable_vec_tile()->add_dims(8);
  ExpectInvalid(g, {"op #0 \"exp\"", "vec_tile: rank 3 does not match the op's rank 2"});
}

TEST(VerifyTest, RejectsMissingVecTile) {
  pto::v1::Graph g = Base();
  g.mutable_ops(0)->clear_vec_tile();
  ExpectInvalid(g, {"op #0 \"exp\"", "vec_tile: missing"});
}

TEST(VerifyTest, RejectsCycle) {
  // exp reads the value add defines later: use before definition.
  pto::v1::Graph g = Base();
  g.mutable_ops(0)->set_inputs(0, 4);
  ExpectInvalid(g, {"op #0 \"exp\"", "input 0: value id 4 is used before any op defines it"});
}

TEST(VerifyTest, RejectsValueNeverDefined) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {4});
  uint32_t loose = b.Value(pto::v1::DT_FP32, {4});
  b.Output("y", b.Op("add", {a, loose}, {4}));
  ExpectInvalid(b.Build(), {"op #0 \"add\"", "input 1", "used before any op defines it"});
}

TEST(VerifyTest, RejectsUnsupportedDType) {
  pto::v1::Graph g = Base();
  for (pto::v1::Value& v : *g.mutable_values()) {
    v.set_dtype(static_cast<pto::v1::DataType>(42));
  }
  ExpectInvalid(g, {"param #0 \"a\"", "dtype dtype(42) is not supported",
                    "DT_BF16", "DT_DOUBLE"});
  g = Base();
  for (pto::v1::Value& v : *g.mutable_values()) {
    v.set_dtype(pto::v1::DT_UNSPECIFIED);
  }
  ExpectInvalid(g, {"dtype DT_UNSPECIFIED is not supported"});
}

// Ranks 0 (one element, e.g. a full reduction's result) to 4.
TEST(VerifyTest, RejectsRankAboveFour) {
  pto::v1::Graph g = Base();
  for (pto::v1::Value& v : *g.mutable_values()) {
    for (int i = 0; i < 3; ++i) v.mutable_shape()->add_dims()->set_size(1);
  }
  ExpectInvalid(g, {"shape has rank 5", "supported ranks are 0..4"});
  for (pto::v1::Value& v : *g.mutable_values()) v.mutable_shape()->clear_dims();
  ExpectInvalid(g, {"vec_tile: rank 2 does not match the op's rank 0"});
  for (pto::v1::Value& v : *g.mutable_values()) {
    for (int i = 0; i < 9; ++i) v.mutable_shape()->add_dims()->set_size(1);
  }
  ExpectInvalid(g, {"shape has rank 9 (limit 8)"});
}

// exp(a) + b over [bs, 5] with symbolic bs.
pto::v1::Graph SymbolicExpAdd(const SymShape& b_shape = {SymExpr::Symbol("bs"), 5}) {
  GraphBuilder b("sym");
  uint32_t a = b.SymInput("a", pto::v1::DT_FP32, {SymExpr::Symbol("bs"), 5});
  uint32_t bb = b.SymInput("b", pto::v1::DT_FP32, b_shape);
  uint32_t e = b.Op("exp", {a}, {2, 4});
  b.Output("out", b.Op("add", {e, bb}, {2, 4}));
  return b.Build();
}

TEST(VerifyTest, AcceptsSymbolicDims) {
  EXPECT_TRUE(VerifyGraph(SymbolicExpAdd()).ok()) << VerifyGraph(SymbolicExpAdd());
  // [bs,5] + [1,5] broadcasts; so does [bs,5] + [5].
  EXPECT_TRUE(VerifyGraph(SymbolicExpAdd({1, 5})).ok());
  EXPECT_TRUE(VerifyGraph(SymbolicExpAdd({5})).ok());
}

TEST(VerifyTest, ImportKeepsAndPrintsSymbolicDims) {
  absl::StatusOr<TensorGraph> g = testing::VerifyAndImport(SymbolicExpAdd());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->HasSymbolicDims());
  EXPECT_EQ(g->values[0].shape, (std::vector<int64_t>{kSymbolicDim, 5}));
  EXPECT_EQ(g->values[0].sym_shape[0], SymExpr::Symbol("bs"));
  EXPECT_THAT(PrintTensorGraph(*g), HasSubstr("param #0 in    %0 \"a\": f32[bs,5]"));
  EXPECT_FALSE(testing::VerifyAndImport(Base())->HasSymbolicDims());
}

TEST(VerifyTest, SymbolicDimsCompareByCanonicalForm) {
  const SymExpr bs = SymExpr::Symbol("bs");
  // [bs,5] vs [4,5]: a symbol is never assumed to be 4 (or 1).
  ExpectInvalid(SymbolicExpAdd({4, 5}),
                {"op #1 \"add\"", "do not broadcast", "dim -2 is bs vs 4"});
  // The declared output differs from the inferred one: both expressions.
  pto::v1::Graph g = SymbolicExpAdd();
  pto::v1::Value* out = ValueById(g, 4);
  *out->mutable_shape()->mutable_dims(0) = SymExprToDim(bs * 2);
  ExpectInvalid(g, {"op #1 \"add\"", "output 0: shape [bs*2,5]",
                    "does not match the inferred [bs,5]"});
  // bs+bs and bs*2 are one canonical form.
  GraphBuilder b("sym");
  uint32_t a = b.SymInput("a", pto::v1::DT_FP32, {bs, 4});
  uint32_t two = b.SymInput("two", pto::v1::DT_FP32, {bs * 2, 4});
  b.Output("out", b.Op("add", {two, two}, {2, 4}));
  (void)a;
  pto::v1::Graph sum = b.Build();
  pto::v1::Value* twice = ValueById(sum, 2);
  pto::v1::DimExpr plus;
  plus.mutable_binary()->set_op(pto::v1::DIM_OP_ADD);
  plus.mutable_binary()->mutable_lhs()->set_symbol("bs");
  plus.mutable_binary()->mutable_rhs()->set_symbol("bs");
  *twice->mutable_shape()->mutable_dims(0)->mutable_expr() = plus;
  EXPECT_TRUE(VerifyGraph(sum).ok()) << VerifyGraph(sum);
}

TEST(VerifyTest, SymbolsMustBeBoundByAParameterDim) {
  GraphBuilder b("sym");
  uint32_t a = b.SymInput("a", pto::v1::DT_FP32, {SymExpr::Symbol("bs") * 2, 4});
  b.Output("out", b.Op("exp", {a}, {2, 4}));
  ExpectInvalid(b.Build(), {"value id 1", "shape dim 0 (bs*2) uses symbol bs",
                            "no parameter binds"});
}

TEST(VerifyTest, RejectsBadSymbolicDims) {
  pto::v1::Graph g = SymbolicExpAdd();
  g.mutable_values(0)->mutable_shape()->mutable_dims(0)->set_symbol("1x");
  ExpectInvalid(g, {"value id 1", "shape dim 0 symbol \"1x\" is not an identifier"});
  g = SymbolicExpAdd();
  pto::v1::DimExpr* e =
      g.mutable_values(0)->mutable_shape()->mutable_dims(0)->mutable_expr();
  e->mutable_binary()->set_op(pto::v1::DIM_OP_MOD);
  e->mutable_binary()->mutable_lhs()->set_symbol("bs");
  e->mutable_binary()->mutable_rhs()->set_constant(0);
  ExpectInvalid(g, {"value id 1", "shape dim 0 bs % 0: the divisor is 0"});
}

TEST(VerifyTest, ReductionsCastsAndMatmulWithSymbolicDims) {
  const SymExpr bs = SymExpr::Symbol("bs"), n = SymExpr::Symbol("n");
  GraphBuilder b("sym");
  uint32_t x = b.SymInput("x", pto::v1::DT_FP16, {bs, n});
  uint32_t c = b.Cast(x, pto::v1::DT_FP32, {2, 8});
  uint32_t m = b.Op("amax", {c}, {2, 8});  // [bs,1]
  uint32_t d = b.Op("sub", {c, m}, {2, 8});
  b.Output("out", b.Op("sum", {d}, {2, 8}));
  pto::v1::Graph g = b.Build();
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  EXPECT_EQ(FormatSymShape({*SymExprFromDim(ValueById(g, 3)->shape().dims(0)),
                            *SymExprFromDim(ValueById(g, 3)->shape().dims(1))}),
            "[bs,1]");

  const OpInfo* matmul = FindOp("matmul");
  InferAttrs attrs;
  attrs.out_dtype = pto::v1::DT_FP32;
  absl::StatusOr<SymValueType> r = InferSymResult(
      *matmul, {{pto::v1::DT_FP32, {bs, 64}}, {pto::v1::DT_FP32, {64, n}}}, attrs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(FormatSymShape(r->shape), "[bs,n]");
  r = InferSymResult(
      *matmul, {{pto::v1::DT_FP32, {bs, n}}, {pto::v1::DT_FP32, {64, n}}}, attrs);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("have K n and 64"));
}

// Only loop and if have regions (verify_regions_test covers those).
// Gives value `id` the static shape `shape`: its shape so far becomes its
// valid region (graph.proto Value.valid_shape), in a version-2 graph.
void MakePartlyValid(pto::v1::Graph& g, uint32_t id, const std::vector<int64_t>& shape) {
  g.set_schema_version(pto::v1::SCHEMA_VERSION_2);
  pto::v1::Value* v = ValueById(g, id);
  *v->mutable_valid_shape() = v->shape();
  v->mutable_shape()->clear_dims();
  for (int64_t d : shape) v->mutable_shape()->add_dims()->set_size(d);
}

// x [8,5]: v = view(x, [6,0]) of static shape [4,5], valid [2,5] (it hangs
// past x's end); e = exp(v); out[6:8, :] = e.
struct PartlyValidGraph {
  pto::v1::Graph graph;
  uint32_t view = 0, exp = 0;
};

PartlyValidGraph ViewPastTheEnd() {
  GraphBuilder b("valid");
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {8, 5});
  uint32_t out = b.InOut("out", pto::v1::DT_FP32, {8, 5});
  PartlyValidGraph p;
  p.view = b.View(x, {SymExpr(6), SymExpr(0)}, {SymExpr(2), SymExpr(5)}, {2, 5});
  p.exp = b.Op("exp", {p.view}, {2, 5});
  b.Output("out", b.Assemble(p.exp, out, {SymExpr(6), SymExpr(0)}, {2, 5}));
  p.graph = b.Build();
  MakePartlyValid(p.graph, p.view, {4, 5});
  MakePartlyValid(p.graph, p.exp, {4, 5});
  return p;
}

TEST(VerifyTest, OpsComputeOnTheValidRegion) {
  PartlyValidGraph p = ViewPastTheEnd();
  ASSERT_TRUE(VerifyGraph(p.graph).ok()) << VerifyGraph(p.graph);
  absl::StatusOr<TensorGraph> g = testing::VerifyAndImport(p.graph);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::string printed = PrintTensorGraph(*g);
  EXPECT_THAT(printed, HasSubstr("f32[4,5] valid [2,5]")) << printed;
  // The region is what the ops compute on, hence what the lowering and the
  // cache key see.
  for (const TensorValue& v : g->values) {
    if (!v.static_shape.empty()) EXPECT_EQ(v.shape, (std::vector<int64_t>{2, 5}));
  }
}

TEST(VerifyTest, ChecksValidShapes) {
  {  // Only version 2 knows the field.
    PartlyValidGraph p = ViewPastTheEnd();
    p.graph.set_schema_version(pto::v1::SCHEMA_VERSION_1);
    ExpectInvalid(p.graph, {"valid_shape needs schema_version SCHEMA_VERSION_2"});
  }
  {
    PartlyValidGraph p = ViewPastTheEnd();
    ValueById(p.graph, p.exp)->mutable_valid_shape()->mutable_dims()->RemoveLast();
    ExpectInvalid(p.graph, {"valid_shape has rank 1, shape [4,5] has rank 2"});
  }
  {  // Larger than the static dim.
    PartlyValidGraph p = ViewPastTheEnd();
    ValueById(p.graph, p.exp)->mutable_shape()->mutable_dims(0)->set_size(1);
    ExpectInvalid(p.graph, {"valid_shape dim 0 (2) is not provably at most shape dim 0 (1)"});
  }
  {  // An expression needs a constant bound within the static dim.
    const SymExpr n = SymExpr::Symbol("n");
    GraphBuilder b("valid");
    uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, 5});
    uint32_t v = b.View(x, {SymExpr(0), SymExpr(0)}, {n, SymExpr(5)}, {2, 5});
    b.Output("out", b.Op("exp", {v}, {2, 5}));
    pto::v1::Graph g = b.Build();
    MakePartlyValid(g, v, {4, 5});
    ExpectInvalid(g, {"valid_shape dim 0 (n) is not provably at most shape dim 0 (4)",
                      "min(4, ...)"});
    *ValueById(g, v)->mutable_valid_shape()->mutable_dims(0) =
        SymExprToDim(SymExpr::Min(n, 4));
    absl::Status s = VerifyGraph(g);
    EXPECT_THAT(s.message(), Not(HasSubstr("valid_shape"))) << s;
  }
  {  // A parameter's data is its whole shape.
    pto::v1::Graph g = Base();
    MakePartlyValid(g, 1, {4, 5});
    ExpectInvalid(g, {"param #0", "has a valid_shape; a parameter's data is its whole shape"});
  }
  // A version-1 graph is a version-2 graph.
  pto::v1::Graph g = Base();
  g.set_schema_version(pto::v1::SCHEMA_VERSION_2);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  g.set_schema_version(pto::v1::SCHEMA_VERSION_3);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  g.set_schema_version(static_cast<pto::v1::SchemaVersion>(4));
  ExpectInvalid(g, {"schema_version 4 is not supported"});
}

TEST(VerifyTest, RejectsRegionsOnOtherOps) {
  pto::v1::Graph g = Base();
  g.mutable_ops(0)->add_regions();
  ExpectInvalid(g, {"op #0", "regions: exp has no regions"});
}

TEST(VerifyTest, ChecksScalarAttribute) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {4});
  b.Output("y", b.Op("adds", {a}, {4}));  // no scalar
  ExpectInvalid(b.Build(), {"op #0 \"adds\"", "missing required attribute \"scalar\""});

  pto::v1::Graph g = b.Build();
  (*g.mutable_ops(0)->mutable_attrs())["scalar"].set_i(2);
  ExpectInvalid(g, {"op #0 \"adds\"", "attrs[\"scalar\"]: expected type f"});

  (*g.mutable_ops(0)->mutable_attrs())["scalar"].set_f(2);
  (*g.mutable_ops(0)->mutable_attrs())["bogus"].set_f(2);
  ExpectInvalid(g, {"op #0 \"adds\"", "unknown attribute \"bogus\""});
}

TEST(VerifyTest, RejectsDuplicateValueIds) {
  pto::v1::Graph g = Base();
  g.mutable_values(3)->set_id(1);
  ExpectInvalid(g, {"values[#3]", "id 1 is declared twice"});
}

TEST(VerifyTest, RejectsGraphsOverTheBounds) {
  {
    GraphBuilder b;
    uint32_t x = b.Input("a", pto::v1::DT_FP32, {4});
    for (int i = 0; i <= kMaxOps; ++i) x = b.Op("neg", {x}, {4});
    b.Output("y", x);
    ExpectInvalid(b.Build(), {"graph", "4097 ops (limit 4096)"});
  }
  {
    pto::v1::Graph g = Base();
    for (int i = 0; i < kMaxParams; ++i) *g.add_params() = g.params(0);
    ExpectInvalid(g, {"graph", "params", "(limit 256)"});
  }
  {
    pto::v1::Graph g = Base();
    for (pto::v1::Value& v : *g.mutable_values()) {
      v.mutable_shape()->mutable_dims(0)->set_size(int64_t{1} << 30);
      v.mutable_shape()->mutable_dims(1)->set_size(int64_t{1} << 11);
    }
    ExpectInvalid(g, {"elements"});
  }
  {
    pto::v1::Graph g = Base();
    for (pto::v1::Value& v : *g.mutable_values()) {
      v.mutable_shape()->mutable_dims(0)->set_size(4096);
      v.mutable_shape()->mutable_dims(1)->set_size(4096);
    }
    g.mutable_ops(0)->mutable_vec_tile()->set_dims(0, 1);
    g.mutable_ops(0)->mutable_vec_tile()->set_dims(1, 1);
    ExpectInvalid(g, {"op #0 \"exp\"", "vec_tile", "tiles"});
  }
  {
    pto::v1::Graph g = Base();
    g.mutable_values(0)->set_name(std::string(300, 'x'));
    ExpectInvalid(g, {"values[#0]", "name is 300 chars (limit 256)"});
  }
  {
    pto::v1::Graph g = Base();
    for (int i = 0; i <= kMaxAttrsPerOp; ++i) {
      (*g.mutable_ops(0)->mutable_attrs())[absl::StrCat("a", i)].set_f(1);
    }
    ExpectInvalid(g, {"op #0 \"exp\"", "65 attributes (limit 64)"});
  }
}

TEST(VerifyTest, NamesInMessagesAreEscaped) {
  pto::v1::Graph g = Base();
  g.mutable_ops(1)->set_name("evil\"\n*/name");
  g.mutable_ops(1)->set_inputs(1, 17);
  absl::Status s = VerifyGraph(g);
  EXPECT_THAT(s.message(), HasSubstr("evil\\\"\\n*/name"));
  EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("\n")));
}

TEST(VerifyTest, ChecksParameters) {
  {
    pto::v1::Graph g = Base();
    g.mutable_params(0)->set_role(pto::v1::PARAM_ROLE_UNSPECIFIED);
    ExpectInvalid(g, {"param #0 \"a\"", "role 0 is not in, out or inout"});
  }
  {
    pto::v1::Graph g = Base();
    g.mutable_params(1)->set_value_id(1);  // a and b share value 1
    ExpectInvalid(g, {"param #1 \"b\"", "value_id: value id 1 is also the value of param #0"});
  }
  {
    pto::v1::Graph g = Base();
    g.mutable_params(0)->set_value_id(42);
    ExpectInvalid(g, {"param #0 \"a\"", "value_id: dangling value id 42"});
  }
  {
    pto::v1::Graph g = Base();
    *g.add_params() = g.params(2);  // out written back twice
    ExpectInvalid(g, {"param #3 \"out\"", "also written back by param #2"});
  }
  {
    GraphBuilder b;
    uint32_t x = b.Value(pto::v1::DT_FP32, {4}, "x");
    b.InOut("x", x, x);
    b.Op("exp", {x}, {4});
    ExpectInvalid(b.Build(), {"param #0 \"x\"", "result_value_id equals value_id"});
  }
  {
    GraphBuilder b;
    uint32_t x = b.Value(pto::v1::DT_FP32, {4}, "x");
    uint32_t y = b.Value(pto::v1::DT_FP32, {5}, "y");
    b.InOut("x", x, y);
    b.Op("exp", {x}, {4});
    ExpectInvalid(b.Build(), {"param #0 \"x\"", "result_value_id: f32[5] does not match value_id's f32[4]"});
  }
}

TEST(VerifyTest, InoutReadAfterOverwriteIsUnimplemented) {
  GraphBuilder b;
  uint32_t x = b.Value(pto::v1::DT_FP32, {4}, "x");
  uint32_t r = b.Op("exp", {x}, {4});
  uint32_t y = b.Op("add", {x, r}, {2});  // other tile: another group later
  b.InOut("x", x, r);
  b.Output("y", y);
  // Params must list x's incoming value before ops use it: params are
  // checked first regardless of their order in the proto.
  absl::Status s = VerifyGraph(b.Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("op #1 \"add\""));
}


using testing::MatmulGraph;

TEST(VerifyTest, MatmulShapes) {
  EXPECT_TRUE(VerifyGraph(MatmulGraph({8, 5}, {5, 3}, {8, 3})).ok());
  EXPECT_TRUE(VerifyGraph(MatmulGraph({5, 8}, {3, 5}, {8, 3}, true, true)).ok());
  // Batched with a broadcast batch dim.
  EXPECT_TRUE(
      VerifyGraph(MatmulGraph({2, 1, 8, 5}, {4, 5, 3}, {2, 4, 8, 3})).ok());
  ExpectInvalid(MatmulGraph({8, 5}, {4, 3}, {8, 3}),
                {"op #0 \"matmul\"",
                 "matmul K mismatch: a [8,5] (a_trans=false), b [4,3] "
                 "(b_trans=false) have K 5 and 4"});
  ExpectInvalid(MatmulGraph({8, 5}, {4, 3}, {8, 3}, false, true),
                {"K mismatch", "(b_trans=true) have K 5 and 3"});
  ExpectInvalid(MatmulGraph({2, 8, 5}, {3, 5, 3}, {2, 8, 3}),
                {"batch dims do not broadcast"});
  ExpectInvalid(MatmulGraph({8, 5}, {5, 3}, {8, 4}),
                {"output 0: shape", "does not match the inferred"});
}

TEST(VerifyTest, MatmulCubeTileConstraints) {
  pto::v1::Graph g = MatmulGraph({8, 5}, {5, 3}, {8, 3});
  g.mutable_ops(0)->clear_cube_tile();
  ExpectInvalid(g, {"op #0 \"matmul\"", "cube_tile: missing",
                    "pypto.set_cube_tile_shapes"});

  g = MatmulGraph({8, 5}, {5, 3}, {8, 3});
  g.mutable_ops(0)->mutable_cube_tile()->set_k(0, 128);  // k=[128, 64]
  ExpectInvalid(g, {"op #0 \"matmul\"",
                    "constraint kL0 <= kL1 violated (128 > 64)"});

  g = MatmulGraph({8, 5}, {5, 3}, {8, 3});
  g.mutable_ops(0)->mutable_cube_tile()->set_n(0, 24);  // n=[24, 64]
  ExpectInvalid(g, {"cube_tile m=[16,32] k=[16,64] n=[24,64]",
                    "constraint nL1 % nL0 == 0 violated (64 % 24 = 16)"});

  // Whether the blocks fit L1 and L0 is the target's question (the
  // lowering's, build_execute_graph_test CubeTileTooLargeNamesTheBuffer):
  // the target-free verifier accepts a cube tile needing 256 KiB of L0C.
  g = MatmulGraph({8, 5}, {5, 3}, {8, 3});
  pto::v1::CubeTileShape* t = g.mutable_ops(0)->mutable_cube_tile();
  t->set_m(0, 256);
  t->set_m(1, 256);
  t->set_n(0, 256);
  t->set_n(1, 256);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
}

}  // namespace
}  // namespace pto::compiler
