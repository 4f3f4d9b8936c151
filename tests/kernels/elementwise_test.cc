// End to end through the compiler and the runtime: the elementwise op set
// (binary ops and comparisons with numpy broadcasting, where, ops
// with a scalar, unary math, clip), FP32 and FP16, checked element by
// element against the double-precision reference evaluator.
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "compiler/ops/infer.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto {
namespace {

using pto::v1::DataType;

using Builder = compiler::testing::GraphBuilder;
constexpr int kSeeds = 2;

const DataType kFloatTypes[] = {pto::v1::DT_FP32, pto::v1::DT_FP16};

std::string Name(const std::string& kind, DataType dtype) {
  return absl::StrCat(kind, "_", dtype == pto::v1::DT_FP16 ? "fp16" : "fp32");
}

TEST(ElementwiseTest, UnaryOps) {
  for (const char* kind :
       {"exp",  "exp2",  "expm1", "log",  "log2",  "log10", "log1p", "sqrt",
        "rsqrt", "reciprocal", "abs", "neg", "relu", "sigmoid", "tanh", "erf",
        "erfc", "sign", "floor", "ceil", "round", "trunc", "sin", "cos"}) {
    for (DataType dtype : kFloatTypes) {
      Builder b(Name(kind, dtype));
      const uint32_t x = b.Input("x", dtype, {37, 70});
      b.Output("out", b.Op(kind, {x}, {16, 32}));
      testing::CompileRunAndCheck(b.graph(), kSeeds);
    }
  }
}

TEST(ElementwiseTest, Clip) {
  for (DataType dtype : kFloatTypes) {
    Builder b(Name("clip", dtype));
    const uint32_t x = b.Input("x", dtype, {37, 70});
    b.Output("out", b.Op("clip", {x}, {16, 32}, {{"min", -1.5}, {"max", 0.7}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

struct Broadcast {
  std::vector<int64_t> a, b, tile;
};

// Same shapes, rank extension, size-1 dims on either side, an innermost
// broadcast dim (a column), tails everywhere.
const Broadcast kBroadcasts[] = {
    {{37, 70}, {37, 70}, {16, 32}},
    {{37, 70}, {70}, {16, 32}},
    {{37, 1}, {1, 70}, {16, 32}},
    {{3, 17, 45}, {17, 1}, {2, 8, 16}},
    {{1}, {2, 3, 9, 33}, {1, 2, 4, 16}},
};

TEST(ElementwiseTest, BinaryOpsBroadcast) {
  for (const char* kind : {"add", "sub", "mul", "div", "pow", "maximum",
                           "minimum", "floor_divide", "remainder", "eq", "ne", "lt",
                           "le", "gt", "ge"}) {
    for (DataType dtype : kFloatTypes) {
      for (const Broadcast& c : kBroadcasts) {
        Builder b(absl::StrCat(Name(kind, dtype), "_", absl::StrJoin(c.a, "x"),
                               "_", absl::StrJoin(c.b, "x")));
        const uint32_t x = b.Input("x", dtype, c.a);
        const uint32_t y = b.Input("y", dtype, c.b);
        b.Output("out", b.Op(kind, {x, y}, c.tile));
        testing::CompileRunAndCheck(b.graph(), kSeeds);
      }
    }
  }
}

TEST(ElementwiseTest, ScalarOps) {
  for (const char* kind : {"pows", "rpows", "maximums", "minimums", "eqs",
                           "nes", "lts", "les", "gts", "ges"}) {
    for (DataType dtype : kFloatTypes) {
      Builder b(Name(kind, dtype));
      const uint32_t x = b.Input("x", dtype, {37, 70});
      // 1.5: exact, so eqs can be true for FP16 inputs; pows of negatives
      // is NaN on both sides.
      b.Output("out", b.Op(kind, {x}, {16, 32}, {{"scalar", 1.5}}));
      testing::CompileRunAndCheck(b.graph(), kSeeds);
    }
  }
}

TEST(ElementwiseTest, WhereWithComparisonAndBroadcast) {
  for (DataType dtype : kFloatTypes) {
    Builder b(Name("where", dtype));
    const uint32_t x = b.Input("x", dtype, {37, 70});
    const uint32_t y = b.Input("y", dtype, {70});
    const uint32_t z = b.Input("z", dtype, {37, 1});
    const uint32_t cond = b.Op("lt", {x, y}, {16, 32});
    const uint32_t picked = b.Op("where", {cond, x, z}, {16, 32});
    b.Output("out", b.Op("mul", {picked, y}, {16, 32}));
    b.Output("mask", cond);
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

TEST(ElementwiseTest, BoolParameters) {
  Builder b("where_bool_param");
  const uint32_t c = b.Input("c", pto::v1::DT_BOOL, {9, 1});
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {9, 40});
  const uint32_t y = b.Input("y", pto::v1::DT_FP32, {40});
  b.Output("out", b.Op("where", {c, x, y}, {4, 16}));
  b.Output("not_c", b.Op("eqs", {c}, {4, 1}, {{"scalar", 0}}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// Chains over dense tiles of 1024 (and a tail tile of 512) run one chunk
// of 16 elements at a time (FP16/BF16: widen, compute, narrow per chunk):
// the same results as the reference, two outputs from one group.
TEST(ElementwiseTest, ChainsOverDenseTilesRunPerChunk) {
  for (DataType dtype : {pto::v1::DT_FP32, pto::v1::DT_FP16, pto::v1::DT_BF16}) {
    Builder b(absl::StrCat("dense_chain_", pto::v1::DataType_Name(dtype)));
    const uint32_t x = b.Input("x", dtype, {10, 256});
    const uint32_t y = b.Input("y", dtype, {10, 256});
    const uint32_t sum = b.Op("add", {x, y}, {4, 256});
    b.Output("out", b.Op("sub", {b.Op("mul", {sum, x}, {4, 256}), y}, {4, 256}));
    b.Output("e", b.Op("exp", {x}, {4, 256}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// A broadcast operand produced by an earlier op (a workspace in GM): the
// reader's tasks must depend on the producer's tasks that wrote the row.
TEST(ElementwiseTest, BroadcastOperandFromEarlierGroup) {
  Builder b("bcast_workspace");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {64, 96});
  const uint32_t r = b.Input("r", pto::v1::DT_FP32, {96});
  const uint32_t e = b.Op("exp", {r}, {8});  // other tile: its own group
  b.Output("out", b.Op("sub", {x, e}, {16, 32}));
  // x - exp(r) cancels: the reference's error bound scales with the terms.
  // A task reading the workspace before its row is written would be off by
  // far more.
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

const DataType kAllTypes[] = {
    pto::v1::DT_FP32,  pto::v1::DT_FP16,  pto::v1::DT_BF16, pto::v1::DT_INT8,
    pto::v1::DT_INT16, pto::v1::DT_INT32, pto::v1::DT_INT64, pto::v1::DT_UINT8,
    pto::v1::DT_BOOL,  pto::v1::DT_DOUBLE};

// Every pair of dtypes, with inputs wide enough that float -> int8/uint8
// wraps and int -> FP16 rounds.
TEST(ElementwiseTest, CastBetweenEveryPairOfDTypes) {
  for (DataType from : kAllTypes) {
    for (DataType to : kAllTypes) {
      Builder b(absl::StrCat("cast_", pto::v1::DataType_Name(from), "_to_",
                             pto::v1::DataType_Name(to)));
      const uint32_t x = b.Input("x", from, {13, 40});
      b.Output("out", b.Cast(x, to, {8, 16}));
      const pto::v1::Graph& g = b.graph();
      auto compiled = compiler::Compile(g, "host", {});
      ASSERT_TRUE(compiled.ok()) << g.name() << ": " << compiled.status();
      auto kernel = runtime::Kernel::Load(compiled->binary);
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      ptoc::CheckOptions options;
      options.low = -300;
      options.high = 300;
      auto report = ptoc::RunAndCheck(g, **kernel, options);
      ASSERT_TRUE(report.ok()) << report.status();
      EXPECT_TRUE(report->pass()) << g.name() << "\n" << report->Summary();
    }
  }
}

// BF16 computes in f32 and rounds every result; INT32/DOUBLE values flow
// through comparisons, where and copies in their own storage (int64,
// double) and are compared exactly.
TEST(ElementwiseTest, Bf16ArithmeticAndIntegerSelects) {
  {
    Builder b("bf16_chain");
    const uint32_t x = b.Input("x", pto::v1::DT_BF16, {37, 70});
    const uint32_t y = b.Input("y", pto::v1::DT_BF16, {70});
    const uint32_t s = b.Op("add", {x, y}, {16, 32});
    b.Output("out", b.Op("exp", {b.Op("muls", {s}, {16, 32}, {{"scalar", 0.3}})}, {16, 32}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  for (DataType dtype : {pto::v1::DT_INT32, pto::v1::DT_INT64, pto::v1::DT_DOUBLE,
                         pto::v1::DT_INT8, pto::v1::DT_UINT8}) {
    Builder b(absl::StrCat("select_", pto::v1::DataType_Name(dtype)));
    const uint32_t x = b.Input("x", dtype, {37, 70});
    const uint32_t y = b.Input("y", dtype, {1, 70});
    const uint32_t lt = b.Op("lt", {x, y}, {16, 32});
    const uint32_t ge = b.Op("ges", {x}, {16, 32}, {{"scalar", 7.5}});
    b.Output("out", b.Op("where", {lt, x, y}, {16, 32}));
    b.Output("ge", ge);
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// add sub mul maximum minimum neg abs on INT32, INT64 (int64 tiles, wrapping
// like torch) and DOUBLE (double tiles), broadcast, in one fused chain,
// checked exactly; INT8 arithmetic is refused naming the op and the dtypes
// it takes.
TEST(ElementwiseTest, IntegerAndDoubleArithmetic) {
  for (DataType dtype : {pto::v1::DT_INT32, pto::v1::DT_INT64, pto::v1::DT_DOUBLE}) {
    for (const char* kind : {"add", "sub", "mul", "maximum", "minimum"}) {
      Builder b(absl::StrCat(kind, "_", pto::v1::DataType_Name(dtype)));
      const uint32_t x = b.Input("x", dtype, {37, 70});
      const uint32_t y = b.Input("y", dtype, {70});
      const uint32_t z = b.Op(kind, {x, y}, {16, 32});
      b.Output("out", b.Op("abs", {b.Op("neg", {z}, {16, 32})}, {16, 32}));
      testing::CompileRunAndCheck(b.graph(), kSeeds);
    }
  }
  const absl::Status s = compiler::InferResult(*compiler::FindOp("add"),
                                               {{pto::v1::DT_INT8, {4}}, {pto::v1::DT_INT8, {4}}})
                             .status();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("add takes DT_FP32, DT_FP16, DT_BF16, DT_INT32, DT_INT64 or "
                             "DT_DOUBLE"), std::string::npos) << s;
}

// sign and clip on INT32/INT64/DOUBLE; DOUBLE with scalars (double
// immediates: the reference does not round them to FP32 for these types),
// div and pow; a comparison of a DOUBLE with 0.1; full of an INT64 value
// past 2**24 is exact.
TEST(ElementwiseTest, IntegerSignClipAndDoubleScalars) {
  Builder b("sign_clip_double_scalars");  // one kernel: compiles are slow
  for (DataType dtype : {pto::v1::DT_INT32, pto::v1::DT_INT64, pto::v1::DT_DOUBLE}) {
    const std::string name = pto::v1::DataType_Name(dtype);
    const uint32_t x = b.Input("x_" + name, dtype, {37, 70});
    const uint32_t c = b.Op("clip", {x}, {16, 32}, {{"min", -50.5}, {"max", 60.5}});
    b.Output("out_" + name, b.Op("add", {b.Op("sign", {x}, {16, 32}), c}, {16, 32}));
    b.Output("lt_" + name, b.Op("lts", {x}, {16, 32}, {{"scalar", 0.1}}));
    const uint32_t big = b.Create("full", dtype, {70}, {{"value", 16777217.0}});
    b.Output("big_" + name, b.Op("add", {x, big}, {16, 32}));
  }
  const uint32_t x = b.Input("x", pto::v1::DT_DOUBLE, {37, 70});
  const uint32_t y = b.Input("y", pto::v1::DT_DOUBLE, {70});
  uint32_t v = x;
  for (const char* kind : {"adds", "subs", "muls", "divs", "rsubs", "rdivs", "maximums",
                           "minimums"}) {
    v = b.Op(kind, {v}, {16, 32}, {{"scalar", 0.1}});
  }
  v = b.Op("pows", {b.Op("div", {v, y}, {16, 32})}, {16, 32}, {{"scalar", 2}});
  b.Output("out", b.Op("pow", {v, b.Op("rpows", {y}, {16, 32}, {{"scalar", 1.5}})}, {16, 32}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
  const absl::Status s = compiler::InferResult(*compiler::FindOp("divs"),
                                               {{pto::v1::DT_INT32, {4}}})
                             .status();
  EXPECT_NE(s.message().find("divs takes DT_FP32, DT_FP16, DT_BF16 or DT_DOUBLE"),
            std::string::npos) << s;
}

// floor_divide and remainder on INT32/INT64 (random ints in [-4, 4]: mixed
// signs and zero divisors, which give 0) and DOUBLE, broadcast; at the
// limits: MIN // -1 wraps to MIN (remainder 0), +-2**62 and INT32_MAX with
// divisors of either sign, exactly as the reference.
TEST(ElementwiseTest, FloorDivideAndRemainder) {
  Builder b("floor_divide_remainder");  // one kernel: compiles are slow
  for (DataType dtype : {pto::v1::DT_INT32, pto::v1::DT_INT64, pto::v1::DT_DOUBLE}) {
    const std::string name = pto::v1::DataType_Name(dtype);
    const uint32_t x = b.Input("x_" + name, dtype, {37, 70});
    const uint32_t y = b.Input("y_" + name, dtype, {70});
    b.Output("div_" + name, b.Op("floor_divide", {x, y}, {16, 32}));
    b.Output("rem_" + name, b.Op("remainder", {y, x}, {16, 32}));
  }
  const double int32_min = -2147483648.0, int32_max = 2147483647.0;
  for (DataType dtype : {pto::v1::DT_INT32, pto::v1::DT_INT64}) {
    const std::string name = pto::v1::DataType_Name(dtype);
    const bool wide = dtype == pto::v1::DT_INT64;
    const uint32_t d = b.Input("d_" + name, dtype, {4, 1});
    const uint32_t minus_one = b.Create("full", dtype, {1}, {{"value", -1.0}});
    const uint32_t lo = b.Create("full", dtype, {1}, {{"value", wide ? -0x1p62 : int32_min}});
    const uint32_t hi = b.Create("full", dtype, {1}, {{"value", wide ? 0x1p62 : int32_max}});
    b.Output("min_div_" + name, b.Op("floor_divide", {lo, minus_one}, {1}));
    b.Output("min_rem_" + name, b.Op("remainder", {lo, minus_one}, {1}));
    b.Output("lo_div_" + name, b.Op("floor_divide", {lo, d}, {4, 1}));
    b.Output("hi_rem_" + name, b.Op("remainder", {hi, d}, {4, 1}));
  }
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// The trigonometric and hyperbolic functions, cbrt, signbit, and atan2,
// hypot and fmod with a broadcast operand, FP32 and FP16, in one kernel
// (compiles are slow): each within the tolerance of the double reference
// (NaN outside asin's, acos's, acosh's and atanh's domain on both sides).
TEST(ElementwiseTest, MathFamilies) {
  Builder b("math_families");
  for (DataType dtype : kFloatTypes) {
    const std::string name = Name("x", dtype);
    const uint32_t x = b.Input(name, dtype, {37, 70});
    const uint32_t y = b.Input(Name("y", dtype), dtype, {70});
    for (const char* kind : {"tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                             "atanh", "cbrt", "signbit"}) {
      b.Output(Name(kind, dtype), b.Op(kind, {x}, {16, 32}));
    }
    for (const char* kind : {"atan2", "hypot", "fmod"}) {
      b.Output(Name(kind, dtype), b.Op(kind, {x, y}, {16, 32}));
    }
  }
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// The integer instructions on INT32 and INT64 (random ints in [-4, 4]:
// negative shift counts, zero divisors), broadcast: bitwise ops, shifts (the
// count modulo 32 or 64), gcd and C fmod, exactly as the reference.
TEST(ElementwiseTest, IntegerBitwiseGcdFmod) {
  Builder b("integer_bitwise");
  for (DataType dtype : {pto::v1::DT_INT32, pto::v1::DT_INT64}) {
    const std::string name = pto::v1::DataType_Name(dtype);
    const uint32_t x = b.Input("x_" + name, dtype, {37, 70});
    const uint32_t y = b.Input("y_" + name, dtype, {70});
    for (const char* kind : {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                             "bitwise_right_shift", "gcd", "fmod"}) {
      b.Output(absl::StrCat(kind, "_", name), b.Op(kind, {x, y}, {16, 32}));
    }
    b.Output("not_" + name, b.Op("bitwise_not", {x}, {16, 32}));
  }
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// full and arange (no inputs) in every dtype, fused with a consumer.
TEST(ElementwiseTest, CreationOps) {
  for (DataType dtype : kAllTypes) {
    Builder b(absl::StrCat("create_", pto::v1::DataType_Name(dtype)));
    const uint32_t x = b.Input("x", dtype, {70});
    const uint32_t r = b.Create("arange", dtype, {70}, {{"start", -3}, {"step", 2.5}});
    const uint32_t f = b.Create("full", dtype, {70}, {{"value", 0.1}});
    b.Output("range", r);
    b.Output("filled", f);
    b.Output("mask", b.Op("lt", {x, r}, {32}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// philox (TPHILOX): Philox4x32-10's words, exact against the reference
// evaluator's own generator, in tiles of 32 and of 30 (tiles that start
// inside a block), with a counter that carries across words along the
// tensor, and fused with a consumer.
TEST(ElementwiseTest, PhiloxWords) {
  Builder b("philox");
  const std::map<std::string, double> words = {
      {"key0", 0x89ABCDEF}, {"key1", 0x01234567}, {"counter0", 0xFFFFFF00},
      {"counter1", 0xFFFFFFFF}, {"counter2", 5},  {"counter3", 0xFFFFFFFF}};
  const uint32_t x = b.Input("x", pto::v1::DT_INT64, {1029});
  const uint32_t w32 = b.Create("philox", pto::v1::DT_INT64, {1029}, words);
  const uint32_t w30 = b.Create("philox", pto::v1::DT_INT64, {1029}, words);
  b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_vec_tile()->set_dims(0, 30);
  b.Output("words", w32);
  b.Output("words_in_tiles_of_30", w30);
  b.Output("mixed", b.Op("bitwise_xor", {x, w32}, {32}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

}  // namespace
}  // namespace pto
