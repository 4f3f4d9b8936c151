#include "compiler/reference/reference_eval.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "compiler/ops/op_registry.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"

namespace pto::reference {
namespace {

using ::testing::HasSubstr;

pto::v1::Graph Parse(const std::string& text) {
  pto::v1::Graph g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g)) << text;
  return g;
}

// out = exp(adds(x + y, 0.5)) * x, y written in place: y = rsubs(y, 3).
constexpr char kGraph[] = R"pb(
  schema_version: SCHEMA_VERSION_1
  values { id: 1 name: "x" dtype: DT_FP32 shape { dims { size: 2 } dims { size: 3 } } }
  values { id: 2 name: "y" dtype: DT_FP32 shape { dims { size: 2 } dims { size: 3 } } }
  values { id: 3 dtype: DT_FP32 shape { dims { size: 2 } dims { size: 3 } } }
  values { id: 4 dtype: DT_FP32 shape { dims { size: 2 } dims { size: 3 } } }
  values { id: 5 dtype: DT_FP32 shape { dims { size: 2 } dims { size: 3 } } }
  values { id: 6 name: "out" dtype: DT_FP32 shape { dims { size: 2 } dims { size: 3 } } }
  values { id: 7 dtype: DT_FP32 shape { dims { size: 2 } dims { size: 3 } } }
  params { name: "x" role: PARAM_ROLE_IN value_id: 1 }
  params { name: "y" role: PARAM_ROLE_INOUT value_id: 2 result_value_id: 7 }
  params { name: "out" role: PARAM_ROLE_OUT value_id: 6 }
  ops { kind: "add" inputs: 1 inputs: 2 outputs: 3 }
  ops { kind: "adds" inputs: 3 outputs: 4 attrs { key: "scalar" value { f: 0.5 } } }
  ops { kind: "exp" inputs: 4 outputs: 5 }
  ops { kind: "mul" inputs: 5 inputs: 1 outputs: 6 }
  ops { kind: "rsubs" inputs: 2 outputs: 7 attrs { key: "scalar" value { f: 3 } } }
)pb";

TEST(ReferenceEvalTest, EvaluatesAChainWithInoutParameter) {
  const pto::v1::Graph g = Parse(kGraph);
  RefTensor x{pto::v1::DT_FP32, {2, 3}, {1, -2, 0.25, 3, 0, -1}};
  RefTensor y{pto::v1::DT_FP32, {2, 3}, {0.5, 1, -1, 2, 7, 0.125}};
  auto out = EvaluateReference(g, {x, y, RefTensor()});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].data, x.data);  // IN unchanged
  for (int i = 0; i < 6; ++i) {
    // Every op's result rounded to FP32.
    const float sum = static_cast<float>(x.data[i] + y.data[i]);
    const float shifted = sum + 0.5f;
    const float e = static_cast<float>(std::exp(static_cast<double>(shifted)));
    const float want = e * static_cast<float>(x.data[i]);
    EXPECT_EQ((*out)[2].data[i], want) << i;
    EXPECT_EQ((*out)[1].data[i], 3.0 - y.data[i]) << i;
  }
  EXPECT_EQ((*out)[2].shape, (std::vector<int64_t>{2, 3}));
}

// An input's own bound (an earlier evaluation's) is carried into the ops
// that read it; without one, an input is exact.
TEST(ReferenceEvalTest, InputBoundsAreCarriedIn) {
  const pto::v1::Graph g = Parse(kGraph);
  RefTensor x{pto::v1::DT_FP32, {2, 3}, {1, -2, 0.25, 3, 0, -1}};
  RefTensor y{pto::v1::DT_FP32, {2, 3}, {0.5, 1, -1, 2, 7, 0.125}};
  auto exact = EvaluateReference(g, {x, y, RefTensor()});
  ASSERT_TRUE(exact.ok()) << exact.status();
  y.bound.assign(6, 0.25);
  auto carried = EvaluateReference(g, {x, y, RefTensor()});
  ASSERT_TRUE(carried.ok()) << carried.status();
  EXPECT_EQ((*carried)[2].data, (*exact)[2].data);  // the values do not move
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ((*exact)[1].bound[i], 0.0) << i;        // 3 - y, exact on exact y
    EXPECT_GE((*carried)[1].bound[i], 0.25) << i;     // y's own 0.25
    // out = exp(x + y + 0.5) * x moves by at least |x| (exp(z + 0.25) - exp(z)).
    const double z = x.data[i] + y.data[i] + 0.5;
    const double moved = std::fabs(x.data[i]) * (std::exp(z + 0.25) - std::exp(z));
    EXPECT_GE((*carried)[2].bound[i], 0.99 * moved) << i;
    EXPECT_LT((*exact)[2].bound[i], 1e-5 * std::fabs((*exact)[2].data[i]) + 1e-30) << i;
  }
  y.bound.assign(2, 1.0);  // not one per element: ignored, y is exact
  auto ignored = EvaluateReference(g, {x, y, RefTensor()});
  ASSERT_TRUE(ignored.ok()) << ignored.status();
  EXPECT_EQ((*ignored)[1].bound, (*exact)[1].bound);
}

TEST(ReferenceEvalTest, EveryOpKind) {
  struct Case {
    const char* kind;
    bool binary;
    double a, b, want;
  };
  const Case cases[] = {
      {"add", true, 1.5, 2.25, 3.75},   {"sub", true, 1.5, 2.25, -0.75},
      {"mul", true, 1.5, -2.0, -3.0},   {"div", true, 3.0, -1.5, -2.0},
      {"adds", false, 1.5, 0.5, 2.0},   {"subs", false, 1.5, 0.5, 1.0},
      {"muls", false, 1.5, 4.0, 6.0},   {"divs", false, 1.5, 0.5, 3.0},
      {"rsubs", false, 1.5, 4.0, 2.5},  {"rdivs", false, 0.5, 4.0, 8.0},
      {"neg", false, 1.5, 0, -1.5},     {"abs", false, -1.5, 0, 1.5},
      {"copy", false, -1.5, 0, -1.5},
      {"exp", false, 1.0, 0, static_cast<float>(std::exp(1.0))},
  };
  for (const Case& c : cases) {
    pto::v1::Graph g = Parse(R"pb(
      values { id: 1 dtype: DT_FP32 shape { dims { size: 1 } } }
      values { id: 2 dtype: DT_FP32 shape { dims { size: 1 } } }
      values { id: 3 dtype: DT_FP32 shape { dims { size: 1 } } }
      params { name: "a" role: PARAM_ROLE_IN value_id: 1 }
      params { name: "b" role: PARAM_ROLE_IN value_id: 2 }
      params { name: "out" role: PARAM_ROLE_OUT value_id: 3 }
    )pb");
    pto::v1::Op* op = g.add_ops();
    op->set_kind(c.kind);
    op->add_inputs(1);
    if (c.binary) op->add_inputs(2);
    op->add_outputs(3);
    const bool scalar = std::string(c.kind).back() == 's' &&
                        std::string(c.kind) != "abs";
    if (scalar) (*op->mutable_attrs())["scalar"].set_f(c.b);
    auto out = EvaluateReference(
        g, {{pto::v1::DT_FP32, {1}, {c.a}}, {pto::v1::DT_FP32, {1}, {c.b}}, {}});
    ASSERT_TRUE(out.ok()) << c.kind << ": " << out.status();
    EXPECT_EQ((*out)[2].data[0], c.want) << c.kind;
  }
}

TEST(ReferenceEvalTest, Fp16RoundsInputsAndOutputs) {
  pto::v1::Graph g = Parse(R"pb(
    values { id: 1 dtype: DT_FP16 shape { dims { size: 1 } } }
    values { id: 2 dtype: DT_FP16 shape { dims { size: 1 } } }
    values { id: 3 dtype: DT_FP16 shape { dims { size: 1 } } }
    params { name: "x" role: PARAM_ROLE_IN value_id: 1 }
    params { name: "out" role: PARAM_ROLE_OUT value_id: 3 }
    ops { kind: "adds" inputs: 1 outputs: 2 attrs { key: "scalar" value { f: 0.0004 } } }
    ops { kind: "subs" inputs: 2 outputs: 3 attrs { key: "scalar" value { f: 1 } } }
  )pb");
  // By default every result is rounded to its dtype: 1 + 0.0004 rounds to 1
  // in FP16 (spacing 2^-10), so the result is 0.
  auto out = EvaluateReference(g, {{pto::v1::DT_FP16, {1}, {1.0}}, {}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].data[0], 0.0);
  // Computed in FP32 the intermediate survives, and the output is
  // float(1 + float(0.0004)) - 1 rounded to FP16.
  ReferenceOptions compute;
  compute.intermediates = ReferenceOptions::Intermediates::kCompute;
  out = EvaluateReference(g, {{pto::v1::DT_FP16, {1}, {1.0}}, {}}, compute);
  ASSERT_TRUE(out.ok()) << out.status();
  const float in_fp32 = (1.0f + 0.0004f) - 1.0f;
  EXPECT_EQ((*out)[1].data[0], RoundToDType(in_fp32, pto::v1::DT_FP16));
  EXPECT_NE((*out)[1].data[0], 0.0);
  // In double, the output is 0.0004 rounded to FP16 (the scalar rounded to
  // FP32 first).
  ReferenceOptions exact;
  exact.intermediates = ReferenceOptions::Intermediates::kDouble;
  out = EvaluateReference(g, {{pto::v1::DT_FP16, {1}, {1.0}}, {}}, exact);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].data[0],
            RoundToDType(static_cast<double>(0.0004f), pto::v1::DT_FP16));
  // Inputs are rounded to their dtype too: 1/3 is not a half.
  out = EvaluateReference(g, {{pto::v1::DT_FP16, {1}, {1.0 / 3}}, {}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].data[0], 0.333251953125);
}

// bitcast reads each value's bits as the other type (torch's x.view(dtype)):
// FP32 -> INT32 and back, FP16 -> INT16 (an FP16 NaN as the quiet NaN of its
// sign, as the kernel stores it) -> BF16. A result of an inexact value has no
// bound (any error moves the bits anywhere).
TEST(ReferenceEvalTest, BitcastReadsTheBits) {
  pto::v1::Graph g = Parse(R"pb(
    values { id: 1 dtype: DT_FP32 shape { dims { size: 3 } } }
    values { id: 2 dtype: DT_INT32 shape { dims { size: 3 } } }
    values { id: 3 dtype: DT_FP32 shape { dims { size: 3 } } }
    values { id: 4 dtype: DT_FP16 shape { dims { size: 3 } } }
    values { id: 5 dtype: DT_INT16 shape { dims { size: 3 } } }
    values { id: 6 dtype: DT_BF16 shape { dims { size: 3 } } }
    values { id: 7 dtype: DT_FP32 shape { dims { size: 3 } } }
    values { id: 8 dtype: DT_INT32 shape { dims { size: 3 } } }
    params { name: "x" role: PARAM_ROLE_IN value_id: 1 }
    params { name: "bits" role: PARAM_ROLE_OUT value_id: 2 }
    params { name: "back" role: PARAM_ROLE_OUT value_id: 3 }
    params { name: "h" role: PARAM_ROLE_IN value_id: 4 }
    params { name: "h_bits" role: PARAM_ROLE_OUT value_id: 5 }
    params { name: "as_bf16" role: PARAM_ROLE_OUT value_id: 6 }
    params { name: "inexact" role: PARAM_ROLE_OUT value_id: 8 }
    ops { kind: "bitcast" inputs: 1 outputs: 2 attrs { key: "dtype" value { dtype: DT_INT32 } } }
    ops { kind: "bitcast" inputs: 2 outputs: 3 attrs { key: "dtype" value { dtype: DT_FP32 } } }
    ops { kind: "bitcast" inputs: 4 outputs: 5 attrs { key: "dtype" value { dtype: DT_INT16 } } }
    ops { kind: "bitcast" inputs: 5 outputs: 6 attrs { key: "dtype" value { dtype: DT_BF16 } } }
    ops { kind: "exp" inputs: 1 outputs: 7 }
    ops { kind: "bitcast" inputs: 7 outputs: 8 attrs { key: "dtype" value { dtype: DT_INT32 } } }
  )pb");
  auto out = EvaluateReference(
      g, {{pto::v1::DT_FP32, {3}, {1.0, -2.5, 0x1p-149}},
          {},
          {},
          {pto::v1::DT_FP16, {3}, {1.0, -0x1p-24, std::nan("")}},
          {},
          {},
          {}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].data, (std::vector<double>{0x3F800000, -1071644672.0, 1}));
  EXPECT_EQ((*out)[2].data, (std::vector<double>{1.0, -2.5, 0x1p-149}));
  EXPECT_EQ((*out)[4].data, (std::vector<double>{0x3C00, -32767, 0x7E00}));
  EXPECT_EQ((*out)[5].data[0], 0x1p-7);  // bf16 0x3C00: exponent 120, mantissa 0
  EXPECT_EQ((*out)[1].bound, (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(std::isinf((*out)[6].bound[0]));
}

// gather along dim 1 and index_add along dim 0 (a repeated index
// accumulates); an index out of range is an error naming it.
constexpr char kIndexGraph[] = R"pb(
  schema_version: SCHEMA_VERSION_1
  values { id: 1 name: "x" dtype: DT_FP32 shape { dims { size: 2 } dims { size: 3 } } }
  values { id: 2 name: "i" dtype: DT_INT64 shape { dims { size: 2 } dims { size: 2 } } }
  values { id: 3 name: "g" dtype: DT_FP32 shape { dims { size: 2 } dims { size: 2 } } }
  values { id: 4 name: "r" dtype: DT_INT32 shape { dims { size: 3 } } }
  values { id: 5 name: "a" dtype: DT_FP32 shape { dims { size: 2 } dims { size: 3 } } }
  params { name: "x" role: PARAM_ROLE_IN value_id: 1 }
  params { name: "i" role: PARAM_ROLE_IN value_id: 2 }
  params { name: "g" role: PARAM_ROLE_OUT value_id: 3 }
  params { name: "r" role: PARAM_ROLE_IN value_id: 4 }
  params { name: "a" role: PARAM_ROLE_OUT value_id: 5 }
  ops { kind: "gather" inputs: 1 inputs: 2 outputs: 3 attrs { key: "dim" value { i: 1 } } }
  ops {
    kind: "index_add" inputs: 1 inputs: 4 inputs: 1 outputs: 5
    attrs { key: "dim" value { i: 1 } }
  }
)pb";

TEST(ReferenceEvalTest, IndexOps) {
  const pto::v1::Graph g = Parse(kIndexGraph);
  RefTensor x{pto::v1::DT_FP32, {2, 3}, {1, 2, 3, 4, 5, 6}};
  RefTensor i{pto::v1::DT_INT64, {2, 2}, {2, 0, 1, 1}};
  RefTensor r{pto::v1::DT_INT32, {3}, {0, 0, 2}};
  auto out = EvaluateReference(g, {x, i, RefTensor(), r, RefTensor()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[2].data, (std::vector<double>{3, 1, 5, 5}));
  // a[:, 0] += x[:, 0] + x[:, 1]; a[:, 2] += x[:, 2].
  EXPECT_EQ((*out)[4].data, (std::vector<double>{4, 2, 6, 13, 5, 12}));
  i.data[3] = 3;
  out = EvaluateReference(g, {x, i, RefTensor(), r, RefTensor()});
  EXPECT_THAT(out.status().message(), HasSubstr("index 3 (element 3 of the index) is out of "
                                                "bounds for dim 1 with size 3"));
}

// sort along dim 0, descending, cut to 2 (topk's positions), and along
// dim 1 ascending (argsort's): NaN the largest, -0.0 tying 0.0, ties in
// input order.
constexpr char kSortGraph[] = R"pb(
  schema_version: SCHEMA_VERSION_1
  values { id: 1 name: "x" dtype: DT_FP32 shape { dims { size: 3 } dims { size: 4 } } }
  values { id: 2 name: "t" dtype: DT_INT64 shape { dims { size: 2 } dims { size: 4 } } }
  values { id: 3 name: "s" dtype: DT_INT64 shape { dims { size: 3 } dims { size: 4 } } }
  params { name: "x" role: PARAM_ROLE_IN value_id: 1 }
  params { name: "t" role: PARAM_ROLE_OUT value_id: 2 }
  params { name: "s" role: PARAM_ROLE_OUT value_id: 3 }
  ops {
    kind: "sort" inputs: 1 outputs: 2 attrs { key: "dim" value { i: 0 } }
    attrs { key: "k" value { i: 2 } } attrs { key: "descending" value { b: true } }
  }
  ops {
    kind: "sort" inputs: 1 outputs: 3 attrs { key: "dim" value { i: -1 } }
    attrs { key: "k" value { i: 4 } }
  }
)pb";

TEST(ReferenceEvalTest, SortGivesStablePositions) {
  const pto::v1::Graph g = Parse(kSortGraph);
  const double nan = std::nan("");
  RefTensor x{pto::v1::DT_FP32, {3, 4}, {2, nan, -0.0, 1,  //
                                         2, 5, 0.0, nan,   //
                                         3, 5, -1, 1}};
  auto out = EvaluateReference(g, {x, RefTensor(), RefTensor()});
  ASSERT_TRUE(out.ok()) << out.status();
  // Columns, largest first: (2, 2, 3) -> 2, 0; (nan, 5, 5) -> 0, 1;
  // (-0.0, 0.0, -1) -> 0, 1; (1, nan, 1) -> 1, 0.
  EXPECT_EQ((*out)[1].data, (std::vector<double>{2, 0, 0, 1, 0, 1, 1, 0}));
  // Rows, smallest first.
  EXPECT_EQ((*out)[2].data, (std::vector<double>{2, 3, 0, 1, 2, 0, 1, 3, 2, 3, 0, 1}));
}

// cumsum of FP16 along dim 1 (an FP32 running value, each output rounded
// to FP16), cumprod of INT64 along dim 0 (wrapping like torch's int64).
constexpr char kScanGraph[] = R"pb(
  schema_version: SCHEMA_VERSION_1
  values { id: 1 name: "h" dtype: DT_FP16 shape { dims { size: 1 } dims { size: 3 } } }
  values { id: 2 name: "i" dtype: DT_INT64 shape { dims { size: 3 } dims { size: 1 } } }
  values { id: 3 name: "s" dtype: DT_FP16 shape { dims { size: 1 } dims { size: 3 } } }
  values { id: 4 name: "p" dtype: DT_INT64 shape { dims { size: 3 } dims { size: 1 } } }
  params { name: "h" role: PARAM_ROLE_IN value_id: 1 }
  params { name: "i" role: PARAM_ROLE_IN value_id: 2 }
  params { name: "s" role: PARAM_ROLE_OUT value_id: 3 }
  params { name: "p" role: PARAM_ROLE_OUT value_id: 4 }
  ops { kind: "cumsum" inputs: 1 outputs: 3 attrs { key: "dim" value { i: -1 } } }
  ops { kind: "cumprod" inputs: 2 outputs: 4 attrs { key: "dim" value { i: 0 } } }
)pb";

TEST(ReferenceEvalTest, ScansRunTorchsLoopInItsAccumulator) {
  pto::v1::Graph g = Parse(kScanGraph);
  // 2048 + 1 + 1 in FP32 is 2050, then rounded to FP16 (2050, spacing 2);
  // one FP16 rounding per step would have stayed at 2048.
  RefTensor h{pto::v1::DT_FP16, {1, 3}, {2048, 1, 1}};
  RefTensor i{pto::v1::DT_INT64, {3, 1}, {4611686018427387904.0, 2, 3}};  // 2^62
  auto out = EvaluateReference(g, {h, i, RefTensor(), RefTensor()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[2].data, (std::vector<double>{2048, 2048, 2050}));
  // 2^62 * 2 wraps to INT64_MIN; times 3 wraps back to INT64_MIN.
  EXPECT_EQ((*out)[3].data, (std::vector<double>{4611686018427387904.0, -9223372036854775808.0,
                                                 -9223372036854775808.0}));
  EXPECT_EQ((*out)[2].bound, (std::vector<double>{0, 0, 0}));

  g.mutable_ops(0)->mutable_attrs()->at("dim").set_i(2);
  out = EvaluateReference(g, {h, i, RefTensor(), RefTensor()});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 'cumsum': dim 2 is out of range for rank 2"));
}

// philox: Random123's known answers for Philox4x32-10 (block 0 of each
// counter and key), from the generator's definition (eager runs' words).
constexpr char kPhiloxGraph[] = R"pb(
  schema_version: SCHEMA_VERSION_1
  values { id: 1 name: "a" dtype: DT_INT64 shape { dims { size: 4 } } }
  values { id: 2 name: "b" dtype: DT_INT64 shape { dims { size: 4 } } }
  params { name: "a" role: PARAM_ROLE_OUT value_id: 1 }
  params { name: "b" role: PARAM_ROLE_OUT value_id: 2 }
  ops { kind: "philox" outputs: 1
        attrs { key: "shape" value { ints { values: 4 } } }
        attrs { key: "dtype" value { dtype: DT_INT64 } }
        attrs { key: "key0" value { f: 4294967295 } }
        attrs { key: "key1" value { f: 4294967295 } }
        attrs { key: "counter0" value { f: 4294967295 } }
        attrs { key: "counter1" value { f: 4294967295 } }
        attrs { key: "counter2" value { f: 4294967295 } }
        attrs { key: "counter3" value { f: 4294967295 } } }
  ops { kind: "philox" outputs: 2
        attrs { key: "shape" value { ints { values: 4 } } }
        attrs { key: "dtype" value { dtype: DT_INT64 } }
        attrs { key: "key0" value { f: 2752067618 } }
        attrs { key: "key1" value { f: 698298832 } }
        attrs { key: "counter0" value { f: 608135816 } }
        attrs { key: "counter1" value { f: 2242054355 } }
        attrs { key: "counter2" value { f: 320440878 } }
        attrs { key: "counter3" value { f: 57701188 } } }
)pb";

TEST(ReferenceEvalTest, PhiloxGivesRandom123KnownAnswers) {
  auto out = EvaluateReference(Parse(kPhiloxGraph), {RefTensor(), RefTensor()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data, (std::vector<double>{0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD}));
  EXPECT_EQ((*out)[1].data, (std::vector<double>{0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1}));
}

// philox_normal: Box-Muller of the known answer's words (the second
// block above), z0, z1 from (w0, w1) and z2, z3 from (w2, w3), each within
// its bound of the formula in double.
TEST(ReferenceEvalTest, PhiloxNormalIsBoxMullerOfTheWords) {
  pto::v1::Graph g = Parse(kPhiloxGraph);
  g.mutable_ops(1)->set_kind("philox_normal");
  (*g.mutable_ops(1)->mutable_attrs())["dtype"].set_dtype(pto::v1::DT_FP32);
  g.mutable_values(1)->set_dtype(pto::v1::DT_FP32);
  auto out = EvaluateReference(g, {RefTensor(), RefTensor()});
  ASSERT_TRUE(out.ok()) << out.status();
  const uint32_t w[4] = {0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1};
  for (int e = 0; e < 4; ++e) {
    const int p = e / 2;
    const double r = std::sqrt(-2 * std::log(((w[2 * p] >> 8) + 1) * 0x1p-24));
    const double t = 2 * M_PI * (w[2 * p + 1] >> 8) * 0x1p-24;
    const double want = r * (e % 2 == 0 ? std::cos(t) : std::sin(t));
    EXPECT_GT((*out)[1].bound[e], 0) << e;
    EXPECT_NEAR((*out)[1].data[e], want, (*out)[1].bound[e]) << e;
    EXPECT_NEAR((*out)[1].data[e], want, 1e-5) << e;
  }
}

TEST(ReferenceEvalTest, ErrorsNameTheOp) {
  pto::v1::Graph g = Parse(kGraph);
  g.mutable_ops(2)->set_kind("frobnicate");
  RefTensor t{pto::v1::DT_FP32, {2, 3}, std::vector<double>(6, 1.0)};
  auto out = EvaluateReference(g, {t, t, {}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 2 'frobnicate': op kind is not supported"));

  g = Parse(kGraph);
  g.mutable_ops(1)->mutable_attrs()->clear();
  out = EvaluateReference(g, {t, t, {}});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 1 'adds': attribute 'scalar' (f) is missing"));

  g = Parse(kGraph);
  g.mutable_ops(3)->set_inputs(1, 99);
  out = EvaluateReference(g, {t, t, {}});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 3 'mul': input value 99 is not defined"));

  g = Parse(kGraph);
  out = EvaluateReference(g, {t, {pto::v1::DT_FP32, {3, 2}, t.data}, {}});
  EXPECT_THAT(out.status().message(),
              HasSubstr("parameter 1 'y': expected shape [2,3], got [3,2]"));
}


// Every kind of the compiler's op registry that the reference computes
// elementwise, by reduction or by creation evaluates on a small graph of its
// own (layout, index and matmul kinds have the tests above and below; loops
// and ifs are written out first: reference_regions.h), so a kind added to
// the registry without its meaning here fails.
TEST(ReferenceEvalTest, EvaluatesEveryElementwiseReductionAndCreationKind) {
  using compiler::OpCategory;
  int evaluated = 0;
  for (const compiler::OpInfo& info : compiler::AllOps()) {
    const OpCategory c = info.category;
    if (c == OpCategory::kLayout || c == OpCategory::kIndex || c == OpCategory::kMatmul ||
        c == OpCategory::kControl) {
      continue;
    }
    const pto::v1::DataType dtype = compiler::AcceptsOperand(info.operands, pto::v1::DT_FP32)
                                        ? pto::v1::DT_FP32
                                        : pto::v1::DT_INT32;
    pto::v1::Graph g;
    std::vector<RefTensor> inputs;
    const int num_inputs = c == OpCategory::kCreate ? 0 : info.num_inputs;
    pto::v1::Op* op = g.add_ops();
    op->set_kind(info.kind);
    for (int k = 0; k < num_inputs; ++k) {
      const bool cond = c == OpCategory::kSelect && k == 0;
      pto::v1::Value* v = g.add_values();
      v->set_id(k + 1);
      v->set_dtype(cond ? pto::v1::DT_BOOL : dtype);
      v->mutable_shape()->add_dims()->set_size(2);
      pto::v1::Parameter* p = g.add_params();
      p->set_name(absl::StrCat("in", k));
      p->set_role(pto::v1::PARAM_ROLE_IN);
      p->set_value_id(k + 1);
      op->add_inputs(k + 1);
      inputs.push_back({v->dtype(), {2}, {1, cond ? 0.0 : 2.0}});
    }
    pto::v1::Value* out = g.add_values();
    out->set_id(10);
    out->set_dtype(info.bool_result ? pto::v1::DT_BOOL : dtype);
    if (c != OpCategory::kReduce) out->mutable_shape()->add_dims()->set_size(2);
    pto::v1::Parameter* p = g.add_params();
    p->set_name("out");
    p->set_role(pto::v1::PARAM_ROLE_OUT);
    p->set_value_id(10);
    op->add_outputs(10);
    inputs.emplace_back();
    for (const compiler::AttrSpec& a : info.attrs) {
      pto::v1::Attribute& attr = (*op->mutable_attrs())[a.name];
      switch (a.type) {
        case compiler::AttrType::kFloat: attr.set_f(0.5); break;
        case compiler::AttrType::kInt: attr.set_i(0); break;
        case compiler::AttrType::kBool: attr.set_b(false); break;
        case compiler::AttrType::kDType: attr.set_dtype(dtype); break;
        case compiler::AttrType::kInts: attr.mutable_ints()->add_values(2); break;
        default: (*op->mutable_attrs()).erase(a.name); break;
      }
    }
    auto result = EvaluateReference(g, inputs);
    EXPECT_TRUE(result.ok()) << info.kind << ": " << result.status();
    ++evaluated;
  }
  EXPECT_GT(evaluated, 80);
}

// The number of inputs an op takes is the registry's.
TEST(ReferenceEvalTest, InputCountsAreTheRegistrys) {
  RefTensor t{pto::v1::DT_FP32, {2, 3}, std::vector<double>(6, 1.0)};
  pto::v1::Graph g = Parse(kGraph);
  g.mutable_ops(2)->add_inputs(1);  // exp(x, a)
  auto out = EvaluateReference(g, {t, t, {}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("op 2 'exp': expected 1 input, got 2"));

  g = Parse(kGraph);
  g.mutable_ops(0)->mutable_inputs()->RemoveLast();  // add(x)
  out = EvaluateReference(g, {t, t, {}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("op 0 'add': expected 2 inputs, got 1"));
}

using pto::compiler::testing::MatmulGraph;

TEST(ReferenceEvalTest, Matmul2DWithTransposes) {
  // a = [[1, 2, 3], [4, 5, 6]] (2x3), b = [[1, 0], [0, 1], [1, 1]] (3x2).
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, at = {1, 4, 2, 5, 3, 6};
  const std::vector<double> b = {1, 0, 0, 1, 1, 1}, bt = {1, 0, 1, 0, 1, 1};
  const std::vector<double> want = {4, 5, 10, 11};
  for (bool a_trans : {false, true}) {
    for (bool b_trans : {false, true}) {
      const pto::v1::Graph g = MatmulGraph(
          a_trans ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3},
          b_trans ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3, 2},
          {2, 2}, a_trans, b_trans, pto::v1::DT_FP32, pto::v1::DT_FP32);
      RefTensor ta{pto::v1::DT_FP32, a_trans ? std::vector<int64_t>{3, 2}
                                             : std::vector<int64_t>{2, 3},
                   a_trans ? at : a};
      RefTensor tb{pto::v1::DT_FP32, b_trans ? std::vector<int64_t>{2, 3}
                                             : std::vector<int64_t>{3, 2},
                   b_trans ? bt : b};
      auto out = EvaluateReference(g, {ta, tb, {}});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[2].data, want) << a_trans << b_trans;
    }
  }
}

TEST(ReferenceEvalTest, MatmulBatchedBroadcastsAndRoundsOnce) {
  // a [2, 1, 1, 2] x b [3, 2, 1] -> [2, 3, 1, 1]: a's batch dim 1 broadcasts.
  const pto::v1::Graph g = MatmulGraph({2, 1, 1, 2}, {3, 2, 1}, {2, 3, 1, 1}, false, false, pto::v1::DT_FP32, pto::v1::DT_FP32);
  RefTensor a{pto::v1::DT_FP32, {2, 1, 1, 2}, {1, 2, 3, 4}};
  RefTensor b{pto::v1::DT_FP32, {3, 2, 1}, {1, 1, 10, 0, 0, 100}};
  auto out = EvaluateReference(g, {a, b, {}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[2].data, (std::vector<double>{3, 10, 200, 7, 30, 400}));

  // BF16 inputs, FP32 output: the sum is exact in double and rounded to
  // float once (1 + 2^-30 is not representable: rounds to 1).
  const pto::v1::Graph h = MatmulGraph({1, 2}, {2, 1}, {1, 1}, false, false, pto::v1::DT_BF16, pto::v1::DT_FP32);
  RefTensor x{pto::v1::DT_BF16, {1, 2}, {1, std::ldexp(1.0, -15)}};
  RefTensor y{pto::v1::DT_BF16, {2, 1}, {1, std::ldexp(1.0, -15)}};
  out = EvaluateReference(h, {x, y, {}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[2].data[0], 1.0);
}

TEST(ReferenceEvalTest, MatmulErrorsNameTheShapes) {
  const pto::v1::Graph g = MatmulGraph({2, 3}, {4, 2}, {2, 2}, false, false, pto::v1::DT_FP32, pto::v1::DT_FP32);
  RefTensor a{pto::v1::DT_FP32, {2, 3}, std::vector<double>(6, 1.0)};
  RefTensor b{pto::v1::DT_FP32, {4, 2}, std::vector<double>(8, 1.0)};
  auto out = EvaluateReference(g, {a, b, {}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 'matmul': K mismatch: a [2,3] (a_trans=0) has "
                        "K=3, b [4,2] (b_trans=0) has K=4"));

  const pto::v1::Graph h = MatmulGraph({2, 2, 3}, {3, 3, 2}, {3, 2, 2}, false, false, pto::v1::DT_FP32, pto::v1::DT_FP32);
  RefTensor c{pto::v1::DT_FP32, {2, 2, 3}, std::vector<double>(12, 1.0)};
  RefTensor d{pto::v1::DT_FP32, {3, 3, 2}, std::vector<double>(18, 1.0)};
  out = EvaluateReference(h, {c, d, {}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("do not broadcast"));
}

// A matmul with attr "img2col": a [G, M, K] times the im2col matrix of
// feature map b [N, C, H, W] (compiler/ops/img2col.h) is the conv of b
// with a's rows as the kernels (K in tap-major, channel-minor order).
TEST(ReferenceEvalTest, MatmulOverImg2ColIsTheConv) {
  struct Case {
    std::vector<int64_t> x, geometry;  // geometry: kh, kw, sh, sw, ph, pw, dh, dw
    int64_t groups, m;
  };
  const Case cases[] = {
      {{1, 2, 3, 3}, {2, 2, 1, 1, 1, 1, 1, 1}, 1, 1},
      {{2, 4, 7, 6}, {3, 2, 2, 1, 2, 1, 2, 3}, 2, 3},
  };
  for (const Case& c : cases) {
    const int64_t n = c.x[0], ch = c.x[1], h = c.x[2], w = c.x[3];
    const int64_t kh = c.geometry[0], kw = c.geometry[1], sh = c.geometry[2],
                  sw = c.geometry[3], ph = c.geometry[4], pw = c.geometry[5],
                  dh = c.geometry[6], dw = c.geometry[7];
    const int64_t cg = ch / c.groups, k = kh * kw * cg;
    const int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
    const int64_t ow = (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
    pto::v1::Graph g = MatmulGraph({c.groups, c.m, k}, c.x, {n, c.groups, c.m, oh * ow}, false,
                                   false, pto::v1::DT_FP32, pto::v1::DT_FP32);
    for (pto::v1::Op& op : *g.mutable_ops()) {
      if (op.kind() != "matmul") continue;
      for (int64_t v : c.geometry) (*op.mutable_attrs())["img2col"].mutable_ints()->add_values(v);
    }
    RefTensor a{pto::v1::DT_FP32, {c.groups, c.m, k}, {}};
    RefTensor x{pto::v1::DT_FP32, c.x, {}};
    for (int64_t i = 0; i < c.groups * c.m * k; ++i) a.data.push_back(i % 7 - 3);
    for (int64_t i = 0; i < n * ch * h * w; ++i) x.data.push_back(i % 11 - 5);
    a.bound.assign(a.data.size(), 0.0);
    x.bound.assign(x.data.size(), 0.0);
    auto out = EvaluateReference(g, {a, x, {}});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<double> want;
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t gr = 0; gr < c.groups; ++gr) {
        for (int64_t row = 0; row < c.m; ++row) {
          for (int64_t p = 0; p < oh * ow; ++p) {
            double sum = 0;
            for (int64_t i = 0; i < kh; ++i) {
              for (int64_t j = 0; j < kw; ++j) {
                for (int64_t cc = 0; cc < cg; ++cc) {
                  const int64_t y = p / ow * sh - ph + i * dh, z = p % ow * sw - pw + j * dw;
                  if (y < 0 || y >= h || z < 0 || z >= w) continue;
                  sum += a.data[(gr * c.m + row) * k + (i * kw + j) * cg + cc] *
                         x.data[((b * ch + gr * cg + cc) * h + y) * w + z];
                }
              }
            }
            want.push_back(sum);
          }
        }
      }
    }
    EXPECT_EQ((*out)[2].data, want);
  }
}

}  // namespace
}  // namespace pto::reference
