// The Ascend target's CPU-simulation build over kernels of the corpus: each
// case is compiled for the host and for ascend-a2a3 (PTO-ISA C++ built
// against the PTO-ISA library's CPU simulation), both run in the MPMD
// executor on the same random inputs, and each output is checked against
// the double-precision reference within that op's error bound (the host's
// tolerance, client/ptoc/check.h). A case whose kernel uses an instruction
// the Ascend target does not map yet is reported as skipped, naming the
// opcode. The CPU simulation's own constraint checks (PTO_CPU_ASSERT: tile
// sizes, valid regions, layouts) abort the process when they fire, so every
// case that runs also checks that none of them does.
//
// Without the PTO-ISA headers (PTO_ISA_ROOT, or ../shared/third_party/pto-isa
// beside the repository) every case is skipped, saying what to install.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/ptoc/check.h"
#include "client/ptoc/graph_io.h"
#include "compiler/compile.h"
#include "compiler/ir/dtype.h"
#include "compiler/targets/ascend/testing/pto_isa_for_tests.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/ascend_target.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto {
namespace {

using Builder = compiler::testing::GraphBuilder;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kExampleData[] = "examples/graphs/add_exp.pbtxt";

struct Case {
  std::string name;
  std::function<pto::v1::Graph()> graph;
  // The Ascend kernel's stated accuracy where it is not the reference's
  // bound (docs/pto-isa.md's table): |got - want| <= rtol |want|.
  double rtol = 0;
};

// An elementwise chain of the ops the target maps one to one or composes,
// at a shape with tails (or none) in every dim.
pto::v1::Graph Chain(const std::vector<int64_t>& shape, const std::vector<int64_t>& tile,
                     pto::v1::DataType dtype) {
  compiler::testing::UniformGraphBuilder b(absl::StrCat("chain_r", shape.size()), dtype, shape,
                                           tile);
  const uint32_t x = b.Input("x"), y = b.Input("y");
  uint32_t v = b.Op("add", {x, y});
  v = b.Op("mul", {v, b.Op("sub", {x, y})});
  v = b.Op("div", {v, b.Op("adds", {b.Op("abs", {y})}, 1.5)});
  v = b.Op("exp", {b.Op("muls", {v}, 0.25)});
  v = b.Op("rsubs", {v}, 2.5);
  v = b.Op("maximum", {v, b.Op("neg", {x})});
  b.Output("out", b.Op("rdivs", {b.Op("adds", {b.Op("abs", {v})}, 0.5)}, 3.0));
  return b.Build();
}

pto::v1::Graph Softmax() {
  Builder b("softmax");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {33, 100});
  const uint32_t m = b.Op("amax", {x}, {8, 32}, -1, true);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, {8, 32})}, {8, 32});
  const uint32_t s = b.Op("sum", {e}, {8, 32}, -1, true);
  b.Output("out", b.Op("div", {e, s}, {8, 32}));
  return b.graph();
}

pto::v1::Graph RmsNorm(pto::v1::DataType dtype) {
  Builder b("rms_norm");
  const uint32_t x = b.Input("x", dtype, {16, 64});
  const uint32_t gamma = b.Input("gamma", dtype, {64});
  b.Output("out", compiler::testing::RmsNormOps(b, x, gamma, 64, {4, 64}));
  return b.graph();
}

pto::v1::Graph SumOverDim(int64_t dim, const std::string& op = "sum",
                          pto::v1::DataType dtype = pto::v1::DT_FP32) {
  Builder b(absl::StrCat(op, "_dim", dim));
  const uint32_t x = b.Input("x", dtype, {37, 70});
  b.Output("out", b.Op(op, {x}, {16, 32}, dim, true));
  return b.graph();
}

// x - (amax(x) + bias): a per-row bias [R, 1] loaded into a row tile (rank
// 3: rows that lie unevenly in GM, the second dim's 4 of 9 rows a tile).
pto::v1::Graph RowBias(pto::v1::DataType dtype, bool rank3 = false) {
  Builder b(absl::StrCat("row_bias", rank3 ? "_r3" : ""));
  const std::vector<int64_t> shape = rank3 ? std::vector<int64_t>{3, 9, 24}
                                           : std::vector<int64_t>{19, 24};
  const std::vector<int64_t> t = rank3 ? std::vector<int64_t>{2, 4, 24}
                                       : std::vector<int64_t>{4, 24};
  std::vector<int64_t> bias_shape = shape;
  bias_shape.back() = 1;
  const uint32_t x = b.Input("x", dtype, shape);
  const uint32_t bias = b.Input("bias", dtype, bias_shape);
  const uint32_t m = b.Op("amax", {x}, t, -1, true);
  b.Output("out", b.Op("sub", {x, b.Op("add", {m, bias}, t)}, t));
  return b.graph();
}

pto::v1::Graph Unary(const std::string& op) {
  compiler::testing::UniformGraphBuilder b(op, pto::v1::DT_FP32, {37, 70}, {16, 32});
  b.Output("out", b.Op(op, {b.Input("x")}));
  return b.Build();
}

pto::v1::Graph Binary(const std::string& op) {
  compiler::testing::UniformGraphBuilder b(op, pto::v1::DT_FP32, {37, 70}, {16, 32});
  const uint32_t x = b.Input("x"), y = b.Input("y");
  b.Output("out", b.Op(op, {x, y}));
  return b.Build();
}

// Comparisons feeding selections: a two-tile comparison (through where), a
// scalar one, a row tile compared with a full one (softmax's max against
// x), BOOL outputs and a BOOL input read from GM. Equal values come from
// rounded copies and the row maximum, equal infinities from scaling past
// FLT_MAX, differences below 1e-9 from tiny values.
pto::v1::Graph CompareSelect(const std::string& cmp, pto::v1::DataType dtype) {
  Builder b(absl::StrCat("cmp_", cmp));
  const std::vector<int64_t> tile = {8, 32};
  const uint32_t x = b.Input("x", dtype, {21, 70});
  const uint32_t y = b.Input("y", dtype, {21, 70});
  const uint32_t c = b.Input("c", pto::v1::DT_BOOL, {21, 70});
  const uint32_t yr = b.Op("round", {y}, tile);
  const uint32_t xr = b.Op("round", {x}, tile);
  const uint32_t m = b.Op(cmp, {xr, yr}, tile);
  b.Output("mask", m);
  const uint32_t w = b.Op("where", {m, x, b.Op("neg", {y}, tile)}, tile);
  const uint32_t s = b.Op(absl::StrCat(cmp, "s"), {xr}, tile, 1.0);
  const uint32_t v = b.Op("where", {s, w, b.Op("muls", {x}, tile, 0.5)}, tile);
  b.Output("out", b.Op("where", {c, v, y}, tile));
  // Tiny values closer than 1e-9 (FP32: in FP16 they are 0) and equal
  // infinities (x, y scaled past the largest finite value).
  if (dtype == pto::v1::DT_FP32) {
    const uint32_t tx = b.Op("muls", {x}, tile, 1e-12), ty = b.Op("muls", {y}, tile, 1e-12);
    b.Output("tiny", b.Op(cmp, {tx, ty}, tile));
    b.Output("tiny_s", b.Op(absl::StrCat(cmp, "s"), {tx}, tile, 1e-12));
  }
  const uint32_t ix = b.Op("muls", {b.Op("muls", {x}, tile, 1e30)}, tile, 1e30);
  const uint32_t iy = b.Op("muls", {b.Op("muls", {y}, tile, 1e30)}, tile, 1e30);
  b.Output("inf", b.Op(cmp, {ix, iy}, tile));
  const uint32_t mx = b.Op("amax", {x}, tile, -1, true);
  b.Output("at_max", b.Op("where", {b.Op(cmp, {x, mx}, tile), x, y}, tile));
  return b.graph();
}

// relu by comparison: where(x > 0, x, 0 * x).
pto::v1::Graph ReluByCompare() {
  compiler::testing::UniformGraphBuilder b("relu_cmp", pto::v1::DT_FP32, {37, 70}, {16, 32});
  const uint32_t x = b.Input("x");
  b.Output("out", b.Op("where", {b.Op("gts", {x}, 0.0), x, b.Op("muls", {x}, 0.0)}));
  return b.Build();
}

// pow in its three forms over bases in [0.5, 1.5] and exponents in [-2, 2],
// and integer exponents of negative bases (odd: negative results; a
// non-integer one: NaN).
pto::v1::Graph Pow() {
  compiler::testing::UniformGraphBuilder b("pow", pto::v1::DT_FP32, {37, 70}, {16, 32});
  const uint32_t x = b.Input("x"), y = b.Input("y");
  const uint32_t tx = b.Op("tanh", {x});
  const uint32_t base = b.Op("adds", {b.Op("muls", {tx}, 0.5)}, 1.0);
  b.Output("pow", b.Op("pow", {base, b.Op("muls", {b.Op("tanh", {y})}, 2.0)}));
  b.Output("pows", b.Op("pows", {base}, -1.5));
  b.Output("rpows", b.Op("rpows", {tx}, 2.0));
  b.Output("cube", b.Op("pows", {tx}, 3.0));
  b.Output("square", b.Op("pows", {tx}, 2.0));
  b.Output("sqrt", b.Op("pows", {tx}, 0.5));
  b.Output("zero", b.Op("pows", {tx}, 0.0));
  return b.Build();
}

// bitcast to the element type it has (TRESHAPE), between computations.
pto::v1::Graph BitcastToItsOwnType() {
  Builder b("bitcast_same");
  const std::vector<int64_t> tile = {16, 32};
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {37, 70});
  const uint32_t e = b.Op("muls", {x}, tile, 2.0);
  b.Output("out", b.Op("adds", {b.Cast(e, pto::v1::DT_FP32, tile, "bitcast")}, tile, 1.0));
  return b.graph();
}

// Loop tails: for i in 0..n step 4, j in 0..20 step 8, out[i:min(i+4, n),
// j:min(j+8, 20)] = softmax-like rows of exp(x) * 2 over the tile, with a
// row sum (the tail functions take their extents from the args: the tiles'
// valid region). n = 13: a tail in both dims.
pto::v1::Graph LoopTails() {
  using compiler::SymExpr;
  using Ids = std::vector<uint32_t>;
  const SymExpr i = SymExpr::Symbol("i"), j = SymExpr::Symbol("j"), n(13);
  Builder b("loop_tails");
  const uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, SymExpr(20)});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {n, SymExpr(20)}, "out");
  const uint32_t result = b.Loop("i", 0, n, 4, {out}, [&](const Ids& outer) {
    return b.Loop("j", 0, 20, 8, {outer[0]}, [&](const Ids& inner) {
      const compiler::SymShape shape = {SymExpr::Min(SymExpr(4), n - i),
                                        SymExpr::Min(SymExpr(8), SymExpr(20) - j)};
      const uint32_t v = b.View(x, {i, j}, shape, {4, 8});
      const uint32_t e = b.Op("muls", {b.Op("exp", {v}, {4, 8})}, {4, 8}, 2.0);
      const uint32_t s = b.Op("div", {e, b.Op("sum", {e}, {4, 8})}, {4, 8});
      const uint32_t w = b.Op("where", {b.Op("gts", {v}, {4, 8}, 0.0), s, e}, {4, 8});
      return Ids{b.Assemble(w, inner[0], {i, j}, {4, 8})};
    });
  })[0];
  b.InOut("out", out, result);
  return b.Build();
}

// out = x * arange(start, start + 100 step) over [100] in tiles of 32 (a
// tail): TCI's indices from each task's offset.
pto::v1::Graph Arange(double start, double step) {
  Builder b("arange");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {100});
  const uint32_t r = b.Value(pto::v1::DT_FP32, {100});
  pto::v1::Op* op = b.graph().add_ops();
  op->set_kind("arange");
  op->add_outputs(r);
  op->mutable_vec_tile()->add_dims(32);
  (*op->mutable_attrs())["shape"].mutable_ints()->add_values(100);
  (*op->mutable_attrs())["dtype"].set_dtype(pto::v1::DT_FP32);
  (*op->mutable_attrs())["start"].set_f(start);
  (*op->mutable_attrs())["step"].set_f(step);
  b.Output("out", b.Op("mul", {x, r}, {32}));
  b.Output("r", r);
  return b.graph();
}

// INT32 arithmetic on int32 tiles (a broadcast operand, a chain ending in
// neg and abs), sign, clip with fractional bounds, scalars, and full.
pto::v1::Graph IntArithmetic() {
  Builder b("int_arith");
  const std::vector<int64_t> tile = {16, 32};
  const auto i32 = pto::v1::DT_INT32;
  const uint32_t x = b.Input("x", i32, {37, 70});
  const uint32_t y = b.Input("y", i32, {70});
  for (const char* kind : {"add", "sub", "mul", "maximum", "minimum"}) {
    const uint32_t z = b.Op(kind, {x, y}, tile);
    b.Output(kind, b.Op("abs", {b.Op("neg", {z}, tile)}, tile));
  }
  const uint32_t c = b.Op("clip", {x}, tile, {{"min", -2.5}, {"max", 3.5}});
  b.Output("sign_clip", b.Op("add", {b.Op("sign", {x}, tile), c}, tile));
  const uint32_t big = b.Create("full", i32, {70}, {{"value", 16777217.0}});
  b.Output("big", b.Op("add", {x, big}, tile));
  return b.graph();
}

// The bitwise instructions and shifts on INT32 (counts from the inputs,
// negative ones and ones past 31 taken modulo 32).
pto::v1::Graph IntBitwise() {
  Builder b("int_bitwise");
  const std::vector<int64_t> tile = {16, 32};
  const uint32_t x = b.Input("x", pto::v1::DT_INT32, {37, 70});
  const uint32_t y = b.Input("y", pto::v1::DT_INT32, {70});
  for (const char* kind : {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                           "bitwise_right_shift"}) {
    b.Output(kind, b.Op(kind, {x, y}, tile));
  }
  b.Output("not", b.Op("bitwise_not", {x}, tile));
  return b.graph();
}

// Comparisons of INT32 tiles with each other and with scalars (fractional,
// integral, past int32), selections of INT32 values.
pto::v1::Graph IntCompareSelect() {
  Builder b("int_cmp");
  const std::vector<int64_t> tile = {16, 32};
  const uint32_t x = b.Input("x", pto::v1::DT_INT32, {21, 70});
  const uint32_t y = b.Input("y", pto::v1::DT_INT32, {1, 70});
  for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    b.Output(cmp, b.Op(cmp, {x, y}, tile));
    b.Output(absl::StrCat(cmp, "_frac"), b.Op(absl::StrCat(cmp, "s"), {x}, tile, 1.5));
    b.Output(absl::StrCat(cmp, "_int"), b.Op(absl::StrCat(cmp, "s"), {x}, tile, -2.0));
    b.Output(absl::StrCat(cmp, "_huge"), b.Op(absl::StrCat(cmp, "s"), {x}, tile, 1e10));
  }
  b.Output("where", b.Op("where", {b.Op("lt", {x, y}, tile), x, y}, tile));
  return b.graph();
}

// Casts between INT32 and FP32/FP16/BOOL/INT8/INT16/UINT8 both ways, and
// INT8/INT16/UINT8 buffers moved through f32 tiles (inputs scaled to wrap).
pto::v1::Graph IntCasts() {
  Builder b("int_casts");
  const std::vector<int64_t> tile = {8, 32};
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {13, 40});
  const uint32_t wide = b.Op("muls", {x}, tile, 100.0);
  const uint32_t i = b.Cast(wide, pto::v1::DT_INT32, tile);
  b.Output("i32", i);
  for (pto::v1::DataType to : {pto::v1::DT_FP32, pto::v1::DT_FP16, pto::v1::DT_BOOL,
                               pto::v1::DT_INT8, pto::v1::DT_INT16, pto::v1::DT_UINT8}) {
    const std::string name = pto::v1::DataType_Name(to);
    const uint32_t c = b.Cast(i, to, tile);
    b.Output("to_" + name, c);
    b.Output("back_" + name, b.Cast(c, pto::v1::DT_INT32, tile));
    if (to != pto::v1::DT_FP32 && to != pto::v1::DT_FP16 && to != pto::v1::DT_BOOL) {
      b.Output("f_" + name, b.Cast(wide, to, tile));
      const uint32_t in = b.Input("in_" + name, to, {13, 40});
      const uint32_t back = b.Cast(c, to, tile);
      b.Output("copy_" + name, b.Op("where", {b.Op("lt", {in, back}, tile), in, back}, tile));
    }
  }
  return b.graph();
}

// Integer aranges: integral start and step in int32, a fractional step
// truncated, INT8 values wrapped past 127; each added to an INT32 input.
pto::v1::Graph IntArange() {
  Builder b("int_arange");
  const uint32_t x = b.Input("x", pto::v1::DT_INT32, {100});
  const uint32_t whole = b.Create("arange", pto::v1::DT_INT32, {100}, {{"start", -7}, {"step", 3}});
  const uint32_t frac = b.Create("arange", pto::v1::DT_INT32, {100}, {{"start", -3}, {"step", 2.5}});
  b.Output("whole", b.Op("add", {x, whole}, {32}));
  b.Output("frac", b.Op("sub", {x, frac}, {32}));
  b.Output("narrow", b.Create("arange", pto::v1::DT_INT8, {100}, {{"start", 100}, {"step", 7}}));
  return b.graph();
}

// Floor division, remainder, fmod and gcd of INT32 tiles (zero divisors
// among the inputs: 0, as the host), and INT32 maxima and minima over the
// last dim and dim 0, within one tile and across tiles (partials combined).
pto::v1::Graph IntDivision() {
  Builder b("int_division");
  const std::vector<int64_t> tile = {16, 32};
  const uint32_t x = b.Input("x", pto::v1::DT_INT32, {37, 70});
  const uint32_t y = b.Input("y", pto::v1::DT_INT32, {37, 70});
  for (const char* kind : {"floor_divide", "remainder", "fmod", "gcd"}) {
    b.Output(kind, b.Op(kind, {x, y}, tile));
  }
  return b.graph();
}

pto::v1::Graph IntReductions(const std::vector<int64_t>& tile) {
  Builder b(absl::StrCat("int_reductions_", tile.back()));
  const uint32_t x = b.Input("x", pto::v1::DT_INT32, {37, 70});
  for (const char* kind : {"amax", "amin"}) {
    b.Output(absl::StrCat(kind, "_last"), b.Op(kind, {x}, tile, -1, true));
    b.Output(absl::StrCat(kind, "_dim0"), b.Op(kind, {x}, tile, 0, false));
  }
  return b.graph();
}

// argmax/argmin over the last dim or dim 0: the dim in one tile (the
// position straight out), and dims too long for one (partial positions per
// tile, combined by TARGSEL).
pto::v1::Graph ArgReduce(const std::string& op, const std::vector<int64_t>& shape,
                         const std::vector<int64_t>& tile, int64_t dim = -1) {
  Builder b(absl::StrCat(op, "_", tile.back(), "_dim", dim));
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, shape);
  b.Output("out", b.Op(op, {x}, tile, dim, false));
  b.Output("keep", b.Op(op, {b.Op("muls", {x}, tile, -1.0)}, tile, dim, true));
  return b.graph();
}

// Op `kind` along `dim` (the builder's reduction form without its
// "keepdim"); `reduce` sets scatter's attribute.
uint32_t IndexOp(Builder& b, const std::string& kind, const std::vector<uint32_t>& in,
                 const std::vector<int64_t>& tile, int64_t dim, const std::string& reduce = "") {
  const uint32_t out = b.Op(kind, in, tile, dim, false);
  pto::v1::Op* op = b.graph().mutable_ops(b.graph().ops_size() - 1);
  op->mutable_attrs()->erase("keepdim");
  if (!reduce.empty()) (*op->mutable_attrs())["reduce"].set_s(reduce);
  return out;
}

// The index ops' corpus cases: the reference takes in-range indices only
// (an argument's are checked at launch), so each index is abs() of an INT32
// input (random integers in [-100, 100]) along a dim of 101 or more; INT64
// indices out of range are checked against the host below
// (AscendIndexTest).
uint32_t InRange(Builder& b, const std::string& name, const std::vector<int64_t>& shape,
                 const std::vector<int64_t>& tile) {
  return b.Op("abs", {b.Input(name, pto::v1::DT_INT32, shape)}, tile);
}

// gather and index_select along each dim of a rank-2 input with tails, of
// FP32, FP16 and INT32 values.
pto::v1::Graph Gather(pto::v1::DataType dtype, int64_t dim) {
  Builder b(absl::StrCat("gather_", pto::v1::DataType_Name(dtype), "_dim", dim));
  const std::vector<int64_t> tile = {8, 16};
  const uint32_t x = b.Input("x", dtype, {dim == 0 ? 110 : 13, dim == 1 ? 110 : 70});
  const uint32_t idx = InRange(b, "idx", {13, 40}, tile);
  b.Output("gather", IndexOp(b, "gather", {x, idx}, tile, dim));
  const uint32_t sel = InRange(b, "sel", {dim == 0 ? 21 : 50}, {16});
  b.Output("index_select", IndexOp(b, "index_select", {x, sel}, tile, dim));
  return b.graph();
}

// A rank-3 gather along its middle dim (the rows split into two dims).
pto::v1::Graph GatherRank3() {
  Builder b("gather_rank3");
  const std::vector<int64_t> tile = {2, 4, 16};
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {3, 105, 20});
  b.Output("out", IndexOp(b, "gather", {x, InRange(b, "idx", {3, 30, 20}, tile)}, tile, 1));
  return b.graph();
}

// scatter (none, add, multiply) along `dim`: repeated indices (30 or 40
// per row or column into 101 slots) take the last value or combine in
// row-major order.
pto::v1::Graph Scatter(pto::v1::DataType dtype, int64_t dim, const std::string& reduce) {
  Builder b(absl::StrCat("scatter_", pto::v1::DataType_Name(dtype), "_dim", dim, "_",
                         reduce.empty() ? "none" : reduce));
  const std::vector<int64_t> tile = {4, 16};
  const uint32_t x = b.Input("x", dtype, {dim == 0 ? 101 : 9, dim == 1 ? 101 : 40});
  const uint32_t idx = InRange(b, "idx", {9, 37}, tile);
  const uint32_t src = b.Input("src", dtype, {9, 40});
  b.Output("scatter", IndexOp(b, "scatter", {x, idx, src}, tile, dim, reduce));
  return b.graph();
}

pto::v1::Graph IndexCopyAdd(const std::string& kind, pto::v1::DataType dtype, int64_t dim) {
  Builder b(absl::StrCat(kind, "_", pto::v1::DataType_Name(dtype), "_dim", dim));
  const uint32_t x = b.Input("x", dtype, {dim == 0 ? 101 : 12, dim == 1 ? 101 : 40});
  const uint32_t idx = InRange(b, "idx", {70}, {16});
  const uint32_t src = b.Input("src", dtype, {dim == 0 ? 70 : 12, dim == 1 ? 70 : 40});
  b.Output("out", IndexOp(b, kind, {x, idx, src}, {4, 16}, dim));
  return b.graph();
}

// sort's positions (MSORT through TSORT32 and TMRGSORT, one row at a
// time): `k` of them per row of `shape` along the last dim, largest first
// when `descending`. `ties`: the values rounded to multiples of 1/4 first,
// so many are equal (their positions must keep the input order).
pto::v1::Graph SortPositions(const std::string& name, pto::v1::DataType dtype,
                             const std::vector<int64_t>& shape, int64_t k, bool descending,
                             bool ties = false) {
  Builder b(name);
  std::vector<int64_t> tile(shape.size(), 1);
  tile[0] = 4;
  tile.back() = 64;
  uint32_t x = b.Input("x", dtype, shape);
  if (ties) {
    x = b.Op("muls", {b.Op("round", {b.Op("muls", {x}, tile, 4.0)}, tile)}, tile, 0.25);
  }
  b.Output("order", b.Sort(x, -1, k, descending, tile));
  return b.graph();
}

// Rows holding NaN (sqrt of x < -1/2), +inf (x > 1/2 scaled past FLT_MAX)
// and finite values: torch's order puts NaN above +inf (FP32 rows sort a
// second time for it), both ways.
pto::v1::Graph SortNanInf(pto::v1::DataType dtype, bool descending) {
  Builder b(absl::StrCat("sort_nan_inf_", descending ? "desc" : "asc"));
  const std::vector<int64_t> tile = {4, 64};
  const uint32_t x = b.Input("x", dtype, {9, 200});
  const uint32_t inf = b.Op("muls", {b.Op("muls", {x}, tile, 1e30)}, tile, 1e30);
  const uint32_t v = b.Op("where", {b.Op("gts", {x}, tile, 0.5), inf,
                                    b.Op("where", {b.Op("lts", {x}, tile, -0.5),
                                                   b.Op("sqrt", {x}, tile), x}, tile)}, tile);
  b.Output("order", b.Sort(v, -1, 200, descending, tile));
  b.Output("top", b.Sort(v, -1, 7, descending, tile));
  return b.graph();
}

// sort's positions along `dim` of `shape`, `k` of them, through TTRANS
// (the second last dim): columns in groups of 8 and a tail group, ties
// (values rounded to halves) and, for floats, NaN and +-inf in a column.
pto::v1::Graph SortColumns(const std::string& name, pto::v1::DataType dtype,
                           const std::vector<int64_t>& shape, int64_t dim, int64_t k,
                           bool descending, const std::vector<int64_t>& tile) {
  Builder b(name);
  uint32_t x = b.Input("x", dtype, shape);
  if (dtype != pto::v1::DT_INT32) {
    x = b.Op("muls", {b.Op("round", {b.Op("muls", {x}, tile, 2.0)}, tile)}, tile, 0.5);
    const uint32_t inf = b.Op("muls", {b.Op("muls", {x}, tile, 1e30)}, tile, 1e30);
    x = b.Op("where", {b.Op("gts", {x}, tile, 1.8), inf,
                       b.Op("where", {b.Op("lts", {x}, tile, -1.8), b.Op("sqrt", {x}, tile), x},
                            tile)},
             tile);
  }
  b.Output("order", b.Sort(x, dim, k, descending, tile));
  return b.graph();
}

// argsort of a transposed input (copied to a workspace first).
pto::v1::Graph SortTransposed() {
  Builder b("sort_transposed");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {40, 9});
  const uint32_t xt = b.Layout("transpose", {x}, {8, 16}, {}, {{"dim0", 0}, {"dim1", 1}});
  b.Output("order", b.Sort(xt, -1, 40, true, {8, 16}));
  return b.graph();
}

pto::v1::Graph Example(const std::string& file) {
  absl::StatusOr<pto::v1::Graph> g = ptoc::ReadGraphFile(absl::StrCat("examples/graphs/", file));
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : pto::v1::Graph();
}

std::vector<Case> Cases() {
  const auto f32 = pto::v1::DT_FP32, f16 = pto::v1::DT_FP16, bf16 = pto::v1::DT_BF16;
  return {
      {"ExpAddF32", [=] { return compiler::testing::ExpAddGraph(f32); }},
      {"ExpAddF16", [=] { return compiler::testing::ExpAddGraph(f16); }},
      {"ChainRank1", [=] { return Chain({1000}, {128}, f32); }},
      {"ChainRank2", [=] { return Chain({37, 70}, {16, 32}, f32); }},
      {"ChainRank3", [=] { return Chain({3, 17, 45}, {2, 8, 16}, f32); }},
      {"ChainRank4", [=] { return Chain({2, 3, 9, 33}, {1, 2, 4, 16}, f32); }},
      {"ChainRank2F16", [=] { return Chain({64, 64}, {32, 32}, f16); }},
      // BF16: loads, stores and each result's rounding (ascend_bf16.h).
      {"ExpAddBf16", [=] { return compiler::testing::ExpAddGraph(bf16); }},
      {"ChainRank2Bf16", [=] { return Chain({37, 70}, {16, 32}, bf16); }},
      {"RmsNormBf16", [=] { return RmsNorm(bf16); }},
      {"SumLastDimBf16", [=] { return SumOverDim(-1, "sum", bf16); }},
      {"MaxLastDimBf16", [=] { return SumOverDim(-1, "amax", bf16); }},
      // Column results: rounded and stored through TCOLEXPAND / TCOLMAX.
      {"SumDim0Bf16", [=] { return SumOverDim(0, "sum", bf16); }},
      {"MinDim0Bf16", [=] { return SumOverDim(0, "amin", bf16); }},
      {"SumDim0F16", [=] { return SumOverDim(0, "sum", f16); }},
      {"MaxDim0F16", [=] { return SumOverDim(0, "amax", f16); }},
      // Row tiles loaded from F16 and BF16 buffers, and F32 rows that lie
      // unevenly in GM.
      {"RowBiasF16", [=] { return RowBias(f16); }},
      {"RowBiasBf16", [=] { return RowBias(bf16); }},
      {"RowBiasRank3", [=] { return RowBias(f32, true); }},
      {"Softmax", Softmax},
      {"RmsNormF32", [=] { return RmsNorm(f32); }},
      {"SumLastDim", [] { return SumOverDim(-1); }},
      {"SumDim0", [] { return SumOverDim(0); }},
      // exp(sum(log|x|)): the log sum's rounding, magnified by exp.
      {"ProdLastDim", [] { return SumOverDim(-1, "prod"); }, 1e-4},
      {"ProdDim0", [] { return SumOverDim(0, "prod"); }, 1e-4},
      {"Sqrt", [] { return Unary("sqrt"); }},
      {"Sigmoid", [] { return Unary("sigmoid"); }},
      {"Sin", [] { return Unary("sin"); }},
      {"Cos", [] { return Unary("cos"); }},
      {"Exp2", [] { return Unary("exp2"); }},
      {"Expm1", [] { return Unary("expm1"); }},
      {"Erf", [] { return Unary("erf"); }},
      {"Erfc", [] { return Unary("erfc"); }},
      {"Pow", Pow},
      // Both operands as the inputs come: the edge inputs' exponents to 100.
      {"PowTiles", [] { return Binary("pow"); }},
      {"BitcastToItsOwnType", BitcastToItsOwnType},
      {"Log2", [] { return Unary("log2"); }},
      {"Log10", [] { return Unary("log10"); }},
      {"Log1p", [] { return Unary("log1p"); }},
      {"Floor", [] { return Unary("floor"); }},
      {"Ceil", [] { return Unary("ceil"); }},
      {"Round", [] { return Unary("round"); }},
      {"Trunc", [] { return Unary("trunc"); }},
      {"Sign", [] { return Unary("sign"); }},
      {"Tanh", [] { return Unary("tanh"); }},
      {"Tan", [] { return Unary("tan"); }},
      {"Atan", [] { return Unary("atan"); }},
      {"Asin", [] { return Unary("asin"); }},
      {"Acos", [] { return Unary("acos"); }},
      {"Sinh", [] { return Unary("sinh"); }},
      {"Cosh", [] { return Unary("cosh"); }},
      {"Asinh", [] { return Unary("asinh"); }},
      {"Acosh", [] { return Unary("acosh"); }},
      {"Atanh", [] { return Unary("atanh"); }},
      {"Cbrt", [] { return Unary("cbrt"); }},
      {"Atan2", [] { return Binary("atan2"); }},
      {"Hypot", [] { return Binary("hypot"); }},
      {"Fmod", [] { return Binary("fmod"); }},
      {"Remainder", [] { return Binary("remainder"); }},
      {"FloorDivide", [] { return Binary("floor_divide"); }},
      {"Matmul", [] { return compiler::testing::MatmulGraph({40, 100}, {100, 72}, {40, 72}); }},
      {"MatmulF16", [=] {
         return compiler::testing::MatmulGraph({64, 128}, {128, 96}, {64, 96}, false, false, f16,
                                               f32);
       }},
      {"MatmulTransposedA", [] {
         return compiler::testing::MatmulGraph({100, 40}, {100, 72}, {40, 72}, true, false);
       }},
      {"MatmulTransposedB", [] {
         return compiler::testing::MatmulGraph({64, 128}, {96, 128}, {64, 96}, false, true);
       }},
      // BF16 operands (ascend_bf16_matmul.h): K over L1 blocks of 64 in L0
      // steps of 16 with a tail, B transposed, a batch of transposed A
      // against one B.
      {"MatmulBf16", [=] {
         return compiler::testing::MatmulGraph({40, 100}, {100, 72}, {40, 72}, false, false, bf16,
                                               f32);
       }},
      {"MatmulBf16TransposedB", [=] {
         return compiler::testing::MatmulGraph({64, 128}, {96, 128}, {64, 96}, false, true, bf16,
                                               f32);
       }},
      {"MatmulBf16BatchedTransposedA", [=] {
         return compiler::testing::MatmulGraph({3, 100, 40}, {100, 72}, {3, 40, 72}, true, false,
                                               bf16, f32);
       }},
      // F16 and BF16 results: the device's fixpipe conversion, the
      // simulation's rounding in UB (ascend_bf16_matmul.h).
      {"MatmulBf16Result", [=] {
         return compiler::testing::MatmulGraph({40, 100}, {100, 72}, {40, 72}, false, false, bf16,
                                               bf16);
       }},
      {"MatmulBf16ResultBatchedTransposedB", [=] {
         return compiler::testing::MatmulGraph({3, 40, 100}, {3, 72, 100}, {3, 40, 72}, false,
                                               true, bf16, bf16);
       }},
      {"MatmulF16Result", [=] {
         return compiler::testing::MatmulGraph({64, 128}, {128, 96}, {64, 96}, false, false, f16,
                                               f16);
       }},
      {"MatmulF16ResultBatchedTransposedA", [=] {
         return compiler::testing::MatmulGraph({3, 100, 40}, {100, 72}, {3, 40, 72}, true, false,
                                               f16, f16);
       }},
      {"CmpEq", [=] { return CompareSelect("eq", f32); }},
      {"CmpNe", [=] { return CompareSelect("ne", f32); }},
      {"CmpLt", [=] { return CompareSelect("lt", f32); }},
      {"CmpLe", [=] { return CompareSelect("le", f32); }},
      {"CmpGt", [=] { return CompareSelect("gt", f32); }},
      {"CmpGe", [=] { return CompareSelect("ge", f32); }},
      {"CmpGeF16", [=] { return CompareSelect("ge", f16); }},
      {"ReluByCompare", ReluByCompare},
      {"LoopTails", LoopTails},
      {"ArangeIntegers", [] { return Arange(-7, 3); }},
      {"ArangeQuarters", [] { return Arange(2.5, -0.25); }},
      {"IntArithmetic", IntArithmetic},
      {"IntBitwise", IntBitwise},
      {"IntCompareSelect", IntCompareSelect},
      {"IntCasts", IntCasts},
      {"IntArange", IntArange},
      {"IntDivision", IntDivision},
      {"IntReductionsTiles", [] { return IntReductions({16, 32}); }},
      {"IntReductionsOneTile", [] { return IntReductions({8, 70}); }},
      {"ArgmaxRow", [] { return ArgReduce("argmax", {37, 70}, {8, 70}); }},
      {"ArgminRow", [] { return ArgReduce("argmin", {37, 70}, {16, 32}); }},
      {"ArgmaxTiles", [] { return ArgReduce("argmax", {3, 5000}, {1, 256}); }},
      {"ArgminTiles", [] { return ArgReduce("argmin", {3, 5000}, {1, 256}); }},
      {"ArgmaxDim0", [] { return ArgReduce("argmax", {37, 70}, {16, 32}, 0); }},
      // Rows of the partial positions lie unevenly in the workspace.
      {"ArgmaxRank4", [] { return ArgReduce("argmax", {2, 3, 9, 33}, {1, 2, 4, 8}, 3); }},
      {"ArgminDim0OneTile", [] { return ArgReduce("argmin", {20, 70}, {24, 32}, 0); }},
      {"GatherDim0", [=] { return Gather(f32, 0); }},
      {"GatherDim1", [=] { return Gather(f32, 1); }},
      {"GatherF16", [=] { return Gather(f16, 1); }},
      {"GatherInt32", [] { return Gather(pto::v1::DT_INT32, 0); }},
      {"GatherRank3", GatherRank3},
      {"ScatterDim0", [=] { return Scatter(f32, 0, ""); }},
      {"ScatterDim1", [=] { return Scatter(f32, 1, ""); }},
      {"ScatterAddDim0", [=] { return Scatter(f32, 0, "add"); }},
      {"ScatterAddDim1", [=] { return Scatter(f32, 1, "add"); }},
      {"ScatterMultiplyF16", [=] { return Scatter(f16, 1, "multiply"); }},
      {"ScatterAddInt32", [] { return Scatter(pto::v1::DT_INT32, 0, "add"); }},
      {"ScatterBool", [] { return Scatter(pto::v1::DT_BOOL, 1, ""); }},
      {"IndexCopyDim0", [=] { return IndexCopyAdd("index_copy", f32, 0); }},
      {"IndexAddDim0", [=] { return IndexCopyAdd("index_add", f32, 0); }},
      {"IndexAddDim1", [=] { return IndexCopyAdd("index_add", f32, 1); }},
      // Rows of 1000 (padded to 2048: TSORT32, then TMRGSORT four times),
      // of 20 (one block, no merge), of 8192 (the longest), FP16 values,
      // ties, a rank-3 tile, a transposed input.
      {"ArgsortDesc", [=] { return SortPositions("argsort_desc", f32, {13, 1000}, 1000, true); }},
      {"TopkAsc", [=] { return SortPositions("topk_asc", f32, {13, 1000}, 8, false); }},
      {"TopkShortRows", [=] { return SortPositions("topk_short", f32, {5, 20}, 5, true); }},
      {"TopkLongRows", [=] { return SortPositions("topk_long", f32, {2, 8192}, 16, true); }},
      {"ArgsortAscF16", [=] { return SortPositions("argsort_f16", f16, {7, 64}, 64, false); }},
      {"TopkF16", [=] { return SortPositions("topk_f16", f16, {7, 300}, 10, true); }},
      {"ArgsortTies", [=] { return SortPositions("argsort_ties", f32, {9, 300}, 300, true, true); }},
      {"ArgsortTiesAscF16", [=] {
         return SortPositions("argsort_ties_f16", f16, {9, 130}, 130, false, true);
       }},
      {"ArgsortRank3", [=] { return SortPositions("argsort_r3", f32, {2, 3, 100}, 100, false); }},
      {"ArgsortTransposed", SortTransposed},
      {"ArgsortDim0Desc", [=] {
         return SortColumns("argsort_dim0", f32, {50, 21}, 0, 50, true, {4, 16});
       }},
      {"TopkDim0Asc", [=] { return SortColumns("topk_dim0", f32, {300, 12}, 0, 7, false, {4, 64}); }},
      {"ArgsortDim0F16", [=] { return SortColumns("argsort_dim0_f16", f16, {40, 9}, 0, 40, false, {4, 16}); }},
      {"ArgsortDim0Int32", [] {
         return SortColumns("argsort_dim0_i32", pto::v1::DT_INT32, {33, 10}, 0, 33, true, {4, 16});
       }},
      {"ArgsortRank3Dim1", [=] {
         return SortColumns("argsort_r3_dim1", f32, {3, 40, 11}, 1, 40, true, {2, 4, 8});
       }},
      // Dims before the second last: column blocks whose rows step by the
      // dim's stride (a tail group of columns, the other dims in rows).
      {"ArgsortRank3Dim0", [=] {
         return SortColumns("argsort_r3_dim0", f32, {13, 3, 20}, 0, 13, false, {2, 4, 16});
       }},
      {"TopkRank3Dim0F16", [=] {
         return SortColumns("topk_r3_dim0_f16", f16, {30, 2, 9}, 0, 4, true, {2, 2, 16});
       }},
      {"ArgsortRank4Dim1", [=] {
         return SortColumns("argsort_r4_dim1", f32, {2, 17, 3, 10}, 1, 17, true, {1, 4, 2, 8});
       }},
      {"ArgsortInt32Desc", [] {
         return SortPositions("argsort_i32", pto::v1::DT_INT32, {7, 300}, 300, true);
       }},
      {"TopkInt32Asc", [] { return SortPositions("topk_i32", pto::v1::DT_INT32, {5, 1000}, 9, false); }},
      {"SortNanInfDesc", [=] { return SortNanInf(f32, true); }},
      {"SortNanInfAsc", [=] { return SortNanInf(f32, false); }},
      {"SortNanInfAscF16", [=] { return SortNanInf(f16, false); }},
      {"ExampleAddExp", [] { return Example("add_exp.pbtxt"); }},
      {"ExampleAxpyInplace", [] { return Example("axpy_inplace.pbtxt"); }},
      {"ExampleScaleShiftFp16", [] { return Example("scale_shift_fp16.pbtxt"); }},
  };
}

class AscendKernelTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
      GTEST_SKIP() << why;
    }
  }
};

TEST_P(AscendKernelTest, MatchesReferenceLikeTheHost) {
  const pto::v1::Graph graph = GetParam().graph();
  absl::StatusOr<compiler::CompileResult> ascend =
      compiler::Compile(graph, runtime::kAscendA2A3Target, {});
  if (!ascend.ok() && absl::IsUnimplemented(ascend.status())) {
    // Not silently passed: the skip names the instruction.
    ASSERT_THAT(std::string(ascend.status().message()), ContainsRegex("T[A-Z_]+ "));
    GTEST_SKIP() << ascend.status().message();
  }
  ASSERT_TRUE(ascend.ok()) << ascend.status();
  EXPECT_EQ(ascend->binary.target(), runtime::kAscendA2A3CpuSimTarget);
  auto ascend_kernel = runtime::Kernel::Load(ascend->binary);
  ASSERT_TRUE(ascend_kernel.ok()) << ascend_kernel.status();
  auto host_kernel = testing::CompileAndLoad(graph, "host");
  ptoc::Tolerance tolerance;
  tolerance.rtol = GetParam().rtol;
  ASSERT_NE(host_kernel, nullptr);
  for (int seed = 1; seed <= 2; ++seed) {
    ptoc::CheckOptions options;
    options.seed = static_cast<uint64_t>(seed);
    testing::RunAndExpectMatch(graph, *host_kernel, options,
                               absl::StrCat(graph.name(), " host seed ", seed));
    if (tolerance.rtol > 0) options.tolerance = &tolerance;
    testing::RunAndExpectMatch(graph, **ascend_kernel, options,
                               absl::StrCat(graph.name(), " ascend seed ", seed));
  }
  // Magnitudes from 1e-6 to 100: exp's overflow, sigmoid's tails.
  ptoc::CheckOptions edges = testing::EdgeInputs();
  edges.seed = 1;
  if (tolerance.rtol > 0) edges.tolerance = &tolerance;
  testing::RunAndExpectMatch(graph, **ascend_kernel, edges,
                             absl::StrCat(graph.name(), " ascend edge inputs"));
}

INSTANTIATE_TEST_SUITE_P(Corpus, AscendKernelTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// The corpus's row-tile loads and matmul results take the forms docs/pto-isa.md
// names: FP16 rows loaded through `hrow` and columns stored through `hcol`,
// BF16 rows through `bfrow` (native) and `i16row` widened in a full tile
// (words), F32 rows that lie unevenly in GM through `rnd`; an F16 or BF16
// matmul result stored from L0C on the device and through the workspace
// `ws_c` in the simulation.
TEST(AscendSourceTest, RowLoadsAndHalfMatmulResultsTakeTheirForms) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const auto f16 = pto::v1::DT_FP16, bf16 = pto::v1::DT_BF16;
  compiler::CompileSettings settings;
  settings.keep_dumps = true;
  auto source = [&](const pto::v1::Graph& graph) {
    absl::StatusOr<compiler::CompileResult> r =
        compiler::Compile(graph, runtime::kAscendA2A3Target, {}, settings);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->dumps["cpp"] : std::string();
  };
  EXPECT_THAT(source(RowBias(f16)), HasSubstr("TLOAD(hrow, "));
  EXPECT_THAT(source(SumOverDim(0, "sum", f16)), ContainsRegex("TSTORE\\(g[0-9]+, hcol\\);"));
  const std::string bf16_rows = source(RowBias(bf16));
  EXPECT_THAT(bf16_rows, HasSubstr("TLOAD(bfrow, "));
  EXPECT_THAT(bf16_rows, HasSubstr("TLOAD(i16row, "));
  EXPECT_THAT(bf16_rows, ContainsRegex("TROWMAX\\(t[0-9]+, tmp2, tmp\\);"));
  const std::string uneven = source(RowBias(pto::v1::DT_FP32, true));
  EXPECT_THAT(uneven, ContainsRegex("TLOAD\\(rnd, g[0-9]+\\);"));
  EXPECT_THAT(uneven, Not(ContainsRegex("TSTORE\\(g[0-9]+, rnd\\);")));
  for (auto dtype : {f16, bf16}) {
    const std::string mm = source(compiler::testing::MatmulGraph(
        {40, 100}, {100, 72}, {40, 72}, false, false, dtype, dtype));
    EXPECT_THAT(mm, HasSubstr("TSTORE(gc, l0c);"));
    EXPECT_THAT(mm, HasSubstr("TSTORE(gwc, l0c);"));
    EXPECT_THAT(mm, HasSubstr("TCVT(uh, uc, RoundMode::CAST_RINT);"));
  }
}

// The runtime refuses a device object (no NPU launcher here), naming the
// CPU-simulation target.
TEST(AscendRuntimeTest, DeviceObjectIsRefusedWithTheCpuSimAlternative) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(compiler::testing::ExpAddGraph(), runtime::kAscendA2A3Target, {});
  ASSERT_TRUE(r.ok()) << r.status();
  pto::v1::KernelBinary device = r->binary;
  device.set_target(runtime::kAscendA2A3Target);
  auto kernel = runtime::Kernel::Load(device);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(kernel.status().message()), HasSubstr("ascend-a2a3-cpusim"));
}

// A scan of INT32 values (torch's INT64 accumulator) is UNIMPLEMENTED naming
// the instruction and DT_INT64, as is a scan along dim 0 of a [2, 16, 32]
// tile (its carry, [1, 16, 32], is not one row).
TEST(AscendRuntimeTest, ScansTheTargetLeavesOutNameWhy) {
  for (const auto& [dtype, dim, why] :
       {std::tuple{pto::v1::DT_INT32, -1, "DT_INT64"},
        std::tuple{pto::v1::DT_FP32, 0, "the target scans along the last dim"}}) {
    Builder b("cumsum");
    const uint32_t x = b.Input("x", dtype, {3, 37, 70});
    b.Output("out", b.Op("cumsum", {x}, {2, 16, 32}));
    (*b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs())["dim"].set_i(dim);
    absl::StatusOr<compiler::CompileResult> r =
        compiler::Compile(b.graph(), runtime::kAscendA2A3CpuSimTarget, {});
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("TCUMSUM"));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(why));
  }
}

// philox and philox_normal (pypto.uniform's and pypto.normal's generators)
// are host instructions: UNIMPLEMENTED naming each and what uses it.
TEST(AscendRuntimeTest, PhiloxIsNamedAsHostOnly) {
  const struct {
    const char* kind;
    pto::v1::DataType dtype;
    const char* instruction;
    const char* user;
  } cases[] = {{"philox", pto::v1::DT_INT64, "TPHILOX ", "pypto.uniform"},
               {"philox_normal", pto::v1::DT_FP32, "TPHILOXNORMAL", "pypto.normal"}};
  for (const auto& c : cases) {
    Builder b(c.kind);
    const uint32_t w = b.Create(c.kind, c.dtype, {64},
                                {{"key0", 1}, {"key1", 2}, {"counter0", 3}, {"counter1", 0},
                                 {"counter2", 0}, {"counter3", 0}});
    b.Output("w", w);
    absl::StatusOr<compiler::CompileResult> r =
        compiler::Compile(b.graph(), runtime::kAscendA2A3CpuSimTarget, {});
    ASSERT_FALSE(r.ok()) << c.kind;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.instruction));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.user));
  }
}

// Integer instructions the target leaves out are UNIMPLEMENTED naming the
// instruction and the dtype: INT64 division (the vector unit has no 64-bit
// arithmetic; words tiles, ascend_int64_arith.h, map sums, products,
// arithmetic, comparisons and casts).
TEST(AscendRuntimeTest, UnmappedIntegerInstructionsNameTheDType) {
  auto refused = [](const pto::v1::Graph& g) {
    absl::StatusOr<compiler::CompileResult> r =
        compiler::Compile(g, runtime::kAscendA2A3CpuSimTarget, {});
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
    return std::string(r.status().message());
  };
  {
    compiler::testing::UniformGraphBuilder b("floor_divide", pto::v1::DT_INT64, {37, 70}, {16, 32});
    const uint32_t x = b.Input("x"), y = b.Input("y");
    b.Output("out", b.Op("floor_divide", {x, y}));
    const std::string why = refused(b.Build());
    EXPECT_THAT(why, HasSubstr("TFLOORDIV"));
    EXPECT_THAT(why, HasSubstr("DT_INT64"));
  }
}

// Every parameter of `graph` after `kernel` ran, as its bytes: a parameter
// `inputs` names (by value id) starts as the bytes there, every other one as
// 0x5a bytes. (RunOnRawInputs below draws the inputs instead.)
std::vector<std::vector<uint8_t>> RunOnBytes(const pto::v1::Graph& graph,
                                             const runtime::Kernel& kernel,
                                             const std::map<uint32_t, const void*>& inputs) {
  std::map<uint32_t, const pto::v1::Value*> declared;
  for (const pto::v1::Value& v : graph.values()) declared[v.id()] = &v;
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<runtime::TensorArg> args;
  for (const pto::v1::Parameter& param : graph.params()) {
    const pto::v1::Value& v = *declared.at(param.value_id());
    absl::StatusOr<std::vector<int64_t>> shape = reference::StaticShape(v.shape());
    EXPECT_TRUE(shape.ok()) << param.name();
    if (!shape.ok()) return {};
    int64_t elems = 1;
    for (int64_t e : *shape) elems *= e;
    std::vector<uint8_t> bytes(elems * compiler::DTypeBytes(v.dtype()), 0x5a);
    if (auto it = inputs.find(param.value_id()); it != inputs.end()) {
      std::memcpy(bytes.data(), it->second, bytes.size());
    }
    buffers.push_back(std::move(bytes));
    args.push_back({nullptr, v.dtype(), *shape});
  }
  for (size_t i = 0; i < args.size(); ++i) args[i].data = buffers[i].data();
  const absl::Status s = kernel.Run(args);
  EXPECT_TRUE(s.ok()) << graph.name() << ": " << s;
  return buffers;
}

// Every parameter of `graph` after `kernel` ran: each made at its static
// shape and filled by `fill` (the parameter, its tensor, the tensor's last
// extent) before the run.
std::vector<ptoc::HostTensor> RunOnFilled(
    const pto::v1::Graph& graph, const runtime::Kernel& kernel,
    const std::function<void(const pto::v1::Parameter&, ptoc::HostTensor&, int64_t)>& fill) {
  std::map<uint32_t, const pto::v1::Value*> declared;
  for (const pto::v1::Value& v : graph.values()) declared[v.id()] = &v;
  std::vector<ptoc::HostTensor> buffers;
  for (const pto::v1::Parameter& param : graph.params()) {
    const pto::v1::Value& v = *declared.at(param.value_id());
    absl::StatusOr<std::vector<int64_t>> shape = reference::StaticShape(v.shape());
    EXPECT_TRUE(shape.ok()) << param.name();
    if (!shape.ok() || shape->empty()) return {};
    absl::StatusOr<ptoc::HostTensor> t = ptoc::HostTensor::Create(v.dtype(), *shape);
    EXPECT_TRUE(t.ok()) << t.status();
    if (!t.ok()) return {};
    fill(param, *t, shape->back());
    buffers.push_back(*std::move(t));
  }
  std::vector<runtime::TensorArg> args;
  for (ptoc::HostTensor& t : buffers) args.push_back(t.AsArg());
  const absl::Status ran = kernel.Run(args);
  EXPECT_TRUE(ran.ok()) << graph.name() << ": " << ran;
  return buffers;
}

// INT32 values at the edges of the range: every pair of edge values (INT32_MIN
// and MAX and their neighbours, divisors 0, +-1, +-2, powers of two, values
// beyond 2^24 that f32 does not hold, consecutive Fibonacci numbers, gcd's
// longest case) and random ones across the whole range, through floor
// division, remainder, fmod, gcd, and maxima and minima over both dims: the
// Ascend kernel's results equal the host's bit for bit.
TEST(AscendIntegerTest, EdgeValuesMatchTheHostBitForBit) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const int64_t rows = 40, cols = 72;
  Builder b("int_edges");
  const std::vector<int64_t> tile = {16, 32};
  const uint32_t x = b.Input("x", pto::v1::DT_INT32, {rows, cols});
  const uint32_t y = b.Input("y", pto::v1::DT_INT32, {rows, cols});
  for (const char* kind : {"floor_divide", "remainder", "fmod", "gcd"}) {
    b.Output(kind, b.Op(kind, {x, y}, tile));
  }
  for (const char* kind : {"amax", "amin"}) {
    b.Output(absl::StrCat(kind, "_last"), b.Op(kind, {x}, tile, -1, true));
    b.Output(absl::StrCat(kind, "_dim0"), b.Op(kind, {y}, tile, 0, true));
  }
  const pto::v1::Graph graph = b.graph();
  auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
  ASSERT_NE(ascend_kernel, nullptr);
  auto host_kernel = testing::CompileAndLoad(graph, "host");
  ASSERT_NE(host_kernel, nullptr);

  constexpr int32_t kMin = INT32_MIN, kMax = INT32_MAX;
  std::vector<int32_t> edges = {kMin, kMin + 1, kMin + 2, kMin + 127, kMin + 128,
                                -(1 << 30) - 1, -(1 << 30), -16777217, -16777216, -65537,
                                -65536, -1000, -7, -3, -2, -1, 0, 1, 2, 3, 7, 64, 1000,
                                65535, 65536, 16777217, 1 << 30, 1134903170, 1836311903,
                                kMax - 128, kMax - 1, kMax};
  std::vector<int32_t> xs, ys;
  for (int32_t a : edges) {
    for (int32_t d : edges) {
      xs.push_back(a);
      ys.push_back(d);
    }
  }
  std::mt19937_64 rng(7);
  while (static_cast<int64_t>(xs.size()) < rows * cols) {
    const uint64_t r = rng();
    const int32_t a = static_cast<int32_t>(r);
    int32_t d = static_cast<int32_t>(r >> 32);
    switch (xs.size() % 4) {
      case 0: break;                                      // both across the range
      case 1: d >>= (r >> 59); break;                     // any magnitude
      case 2: d = (d < 0 ? -1 : 1) << ((r >> 58) % 31); break;  // +-2^k
      default: d = static_cast<int32_t>(d % 9); break;    // small, 0 included
    }
    xs.push_back(a);
    ys.push_back(d);
  }
  const std::map<uint32_t, const void*> inputs = {{x, xs.data()}, {y, ys.data()}};
  const auto want = RunOnBytes(graph, *host_kernel, inputs);
  const auto got = RunOnBytes(graph, *ascend_kernel, inputs);
  auto at = [](const std::vector<uint8_t>& buffer, size_t i) {
    int32_t v;
    std::memcpy(&v, &buffer[4 * i], 4);
    return v;
  };
  ASSERT_EQ(want.size(), got.size());
  for (int p = 2; p < graph.params_size(); ++p) {
    int mismatches = 0;
    for (size_t i = 0; i < want[p].size() / 4; ++i) {
      if (at(want[p], i) == at(got[p], i)) continue;
      if (++mismatches <= 5) {
        const size_t k = i < xs.size() ? i : 0;
        ADD_FAILURE() << graph.params(p).name() << "[" << i << "]: got " << at(got[p], i)
                      << ", host " << at(want[p], i) << " (x " << xs[k] << ", y " << ys[k] << ")";
      }
    }
    EXPECT_EQ(mismatches, 0) << graph.params(p).name();
  }
  // A few facts the host holds too, so that both cannot drift together.
  ASSERT_EQ(graph.params(2).name(), "floor_divide");
  ASSERT_EQ(graph.params(5).name(), "gcd");
  const size_t min_by_minus_one = 15;  // (kMin, -1)
  ASSERT_EQ(xs[min_by_minus_one], kMin);
  ASSERT_EQ(ys[min_by_minus_one], -1);
  EXPECT_EQ(at(got[2], min_by_minus_one), kMin);  // floor_divide wraps
  EXPECT_EQ(at(got[3], min_by_minus_one), 0);
  EXPECT_EQ(at(got[2], 16), 0);  // (kMin, 0): a zero divisor gives 0
  EXPECT_EQ(at(got[5], 16), kMin);  // gcd(kMin, 0) = 2^31, wrapped
}

// prod's sign and zeros as the host's (torch's): a row with a -0.0 factor
// and no other negative is -0.0, with +0.0 and one negative -0.0, with
// infinities +-inf; finite products within the composition's tolerance.
TEST(AscendProdTest, SignedZerosAndInfinitiesGiveTheHostsSigns) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const int64_t rows = 24, cols = 8;
  Builder b("prod_signs");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {rows, cols});
  b.Output("last", b.Op("prod", {x}, {16, 8}, -1, true));
  b.Output("dim0", b.Op("prod", {x}, {8, 8}, 0, true));
  const pto::v1::Graph graph = b.graph();
  auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
  ASSERT_NE(ascend_kernel, nullptr);
  auto host_kernel = testing::CompileAndLoad(graph, "host");
  ASSERT_NE(host_kernel, nullptr);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> specials = {-0.0f, 0.0f, -1.5f, 2.0f, -inf, inf, 0.5f, -3.0f};
  std::vector<float> xs(rows * cols);
  std::mt19937 rng(11);
  for (float& v : xs) {
    const uint32_t r = rng();
    v = r % 3 == 0 ? specials[(r >> 8) % specials.size()]
                   : static_cast<float>((r >> 8) % 1000 + 1) / 500.0f *
                         ((r >> 20) % 2 ? -1.0f : 1.0f);
  }
  auto run = [&](const runtime::Kernel& kernel) {
    std::vector<std::vector<float>> out = {xs, std::vector<float>(rows, 7.0f),
                                           std::vector<float>(cols, 7.0f)};
    std::vector<runtime::TensorArg> args = {
        {out[0].data(), pto::v1::DT_FP32, {rows, cols}},
        {out[1].data(), pto::v1::DT_FP32, {rows, 1}},
        {out[2].data(), pto::v1::DT_FP32, {1, cols}}};
    const absl::Status s = kernel.Run(args);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  };
  const auto want = run(*host_kernel);
  const auto got = run(*ascend_kernel);
  int signed_zeros = 0;
  for (int p = 1; p <= 2; ++p) {
    for (size_t i = 0; i < want[p].size(); ++i) {
      const float w = want[p][i], g = got[p][i];
      const std::string where = absl::StrCat(graph.params(p).name(), "[", i, "]");
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << where << ": got " << g;
        continue;
      }
      EXPECT_EQ(std::signbit(g), std::signbit(w)) << where << ": got " << g << ", host " << w;
      EXPECT_EQ(std::isinf(g), std::isinf(w)) << where << ": got " << g << ", host " << w;
      EXPECT_EQ(g == 0.0f, w == 0.0f) << where << ": got " << g << ", host " << w;
      if (std::isfinite(w)) EXPECT_NEAR(g, w, 1e-4 * std::fabs(w)) << where;
      if (w == 0.0f && std::signbit(w)) ++signed_zeros;
    }
  }
  EXPECT_GT(signed_zeros, 0) << "the inputs must give some -0.0 products";
}

// Signed zeros, infinities and NaN through the unary compositions and pow
// as the host gives them (C's functions): abs(-0.0) is +0.0, floor(-0.0),
// ceil(-0.5), round(-0.3), trunc(-0.7) and the odd functions of -0.0 are
// -0.0, log1p(-1) is -inf; pow of every pair of special values (pow(-0,
// 0.3) is +0, pow(-inf, 3) -inf, pow(-1, +-inf) 1, pow(-2, inf) inf), with
// a tensor exponent, an immediate one (0.3, the products' 1.5 and -0.5) and
// an immediate base (-3, -1); atan2 of every pair (+-pi/4 and +-3pi/4 for
// two infinities), hypot of every pair (+0 for two zeros). Finite values
// within the compositions' few ulp.
TEST(AscendSpecialValuesTest, ZerosInfinitiesAndNanGiveTheHostsValues) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::vector<float> specials = {nan,  inf,  -inf, -0.0f, 0.0f, 1.0f, -1.0f, 0.5f,
                                       -2.5f, 3.0f, -3.0f, 0.3f, -0.3f, -0.7f, 2.0f, -0.5f};
  const int64_t n = static_cast<int64_t>(specials.size());
  const std::vector<int64_t> tile = {16, 16};
  Builder b("special_values");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {n, n});
  const uint32_t y = b.Input("y", pto::v1::DT_FP32, {n, n});
  const std::vector<std::string> unary = {"abs",  "floor", "ceil",  "round", "trunc", "log1p",
                                          "sin",  "tan",   "atan",  "asin",  "sinh",  "tanh",
                                          "expm1", "erf",  "asinh", "atanh", "cbrt",  "sign"};
  for (const std::string& op : unary) b.Output(op, b.Op(op, {x}, tile));
  b.Output("pow", b.Op("pow", {x, y}, tile));
  b.Output("atan2", b.Op("atan2", {x, y}, tile));
  b.Output("hypot", b.Op("hypot", {x, y}, tile));
  b.Output("pows_0_3", b.Op("pows", {x}, tile, 0.3));
  b.Output("pows_1_5", b.Op("pows", {x}, tile, 1.5));
  b.Output("pows_neg_0_5", b.Op("pows", {x}, tile, -0.5));
  b.Output("rpows_neg_3", b.Op("rpows", {x}, tile, -3.0));
  b.Output("rpows_neg_1", b.Op("rpows", {x}, tile, -1.0));
  const pto::v1::Graph graph = b.graph();
  auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
  ASSERT_NE(ascend_kernel, nullptr);
  auto host_kernel = testing::CompileAndLoad(graph, "host");
  ASSERT_NE(host_kernel, nullptr);
  std::vector<float> xs(n * n), ys(n * n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      xs[i * n + j] = specials[j];
      ys[i * n + j] = specials[i];
    }
  }
  const int outputs = graph.params_size() - 2;
  auto run = [&](const runtime::Kernel& kernel) {
    std::vector<std::vector<float>> out = {xs, ys};
    std::vector<runtime::TensorArg> args;
    for (int p = 0; p < 2 + outputs; ++p) {
      if (p >= 2) out.emplace_back(n * n, 7.0f);
      args.push_back({out[p].data(), pto::v1::DT_FP32, {n, n}});
    }
    const absl::Status s = kernel.Run(args);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  };
  const auto want = run(*host_kernel);
  const auto got = run(*ascend_kernel);
  for (int p = 2; p < 2 + outputs; ++p) {
    for (int64_t i = 0; i < n * n; ++i) {
      const float w = want[p][i], g = got[p][i];
      const std::string where = absl::StrCat(graph.params(p).name(), "(", xs[i], ", ", ys[i],
                                             "): got ", g, ", host ", w);
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << where;
        continue;
      }
      EXPECT_EQ(std::signbit(g), std::signbit(w)) << where;
      EXPECT_EQ(std::isinf(g), std::isinf(w)) << where;
      EXPECT_EQ(g == 0.0f, w == 0.0f) << where;
      if (std::isfinite(w)) EXPECT_NEAR(g, w, 1e-6 * std::fabs(w)) << where;
    }
  }
}

// BF16 at the edges, bit for bit against the host: every BF16 word widened
// to FP32 and through a BF16 add (NaNs with payloads, infinities,
// subnormals, -0.0); FP32 values narrowed to BF16 at each kind of low half
// (ties to even both ways, just below and above a tie, NaNs whose payload
// lies only in the low half, values that round to infinity, subnormals);
// INT32 values cast to BF16 (rounded twice, as the host); a BF16 row sum
// (a row tile's rounding and store: zeros, and NaN from the infinities).
TEST(AscendBf16Test, CastsAndRoundingMatchTheHostBitForBit) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const int64_t rows = 256, cols = 256;  // one element per BF16 word
  const std::vector<int64_t> tile = {8, 64};
  const auto f32 = pto::v1::DT_FP32, bf16 = pto::v1::DT_BF16, i32 = pto::v1::DT_INT32;
  Builder b("bf16_edges");
  const uint32_t y = b.Input("y", bf16, {rows, cols});
  const uint32_t x = b.Input("x", f32, {rows, cols});
  const uint32_t n = b.Input("n", i32, {rows, cols});
  b.Output("widened", b.Cast(y, f32, tile));
  b.Output("added", b.Op("add", {y, y}, tile));
  b.Output("narrowed", b.Cast(x, bf16, tile));
  b.Output("from_int", b.Cast(n, bf16, tile));
  b.Output("row_sum", b.Op("sum", {b.Op("muls", {y}, tile, 0.0)}, tile, -1, true));
  const pto::v1::Graph graph = b.graph();
  auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
  ASSERT_NE(ascend_kernel, nullptr);
  auto host_kernel = testing::CompileAndLoad(graph, "host");
  ASSERT_NE(host_kernel, nullptr);

  const int64_t count = rows * cols;
  std::vector<uint16_t> ys(count);
  std::vector<uint32_t> xs(count);
  std::vector<int32_t> ns(count);
  std::mt19937_64 rng(11);
  const uint32_t lows[] = {0x0000, 0x8000, 0x7FFF, 0x8001, 0x0001, 0xFFFF};
  for (int64_t i = 0; i < count; ++i) {
    ys[i] = static_cast<uint16_t>(i);
    const uint32_t r = static_cast<uint32_t>(rng());
    xs[i] = (static_cast<uint32_t>(i) << 16) | (i % 7 < 6 ? lows[i % 7] : (r & 0xFFFF));
    ns[i] = i % 2 ? static_cast<int32_t>(r) : static_cast<int32_t>(r % 70000) - 35000;
  }
  const std::map<uint32_t, const void*> inputs = {{y, ys.data()}, {x, xs.data()}, {n, ns.data()}};
  const auto want = RunOnBytes(graph, *host_kernel, inputs);
  const auto got = RunOnBytes(graph, *ascend_kernel, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (int p = 3; p < graph.params_size(); ++p) {
    const size_t size = graph.params(p).name() == "widened" ? 4 : 2;
    int mismatches = 0;
    for (size_t i = 0; i + size <= want[p].size(); i += size) {
      if (std::memcmp(&want[p][i], &got[p][i], size) == 0) continue;
      uint32_t w = 0, g = 0;
      std::memcpy(&w, &want[p][i], size);
      std::memcpy(&g, &got[p][i], size);
      // A row of NaN and infinities sums to a NaN whose payload depends on
      // the order of the f32 sum, not on BF16's rounding.
      auto nan16 = [](uint32_t h) { return (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0; };
      if (graph.params(p).name() == "row_sum" && nan16(w) && nan16(g)) continue;
      if (++mismatches <= 5) {
        ADD_FAILURE() << graph.params(p).name() << "[" << i / size << "]: got 0x" << std::hex
                      << g << ", host 0x" << w << " (x 0x" << xs[i / size] << ")";
      }
    }
    EXPECT_EQ(mismatches, 0) << graph.params(p).name();
  }
  // Facts the host holds too, so that both cannot drift together.
  ASSERT_EQ(graph.params(5).name(), "narrowed");
  auto narrowed = [&](int64_t i) {
    uint16_t h;
    std::memcpy(&h, &got[5][2 * i], 2);
    return h;
  };
  int ties = 0, nans = 0;
  for (int64_t i = 0; i < count; ++i) {
    const bool nan = (i & 0x7F80) == 0x7F80 && (i & 0x7F) != 0;
    if (nan) {  // quiet, sign and payload kept
      nans += narrowed(i) == (i | 0x40);
    } else if (i % 7 == 1) {  // low half 0x8000: a tie, to the even word
      ties += narrowed(i) == ((i + (i & 1)) & 0xFFFF);
    }
  }
  EXPECT_EQ(nans, 2 * 127);
  int want_ties = 0;
  for (int64_t i = 0; i < count; ++i) want_ties += i % 7 == 1 && !((i & 0x7F80) == 0x7F80 && (i & 0x7F) != 0);
  EXPECT_EQ(ties, want_ties);
}

// signbit of FP32, FP16 and BF16 values bit for bit against the host: every
// FP16 and BF16 word (-0.0, infinities, NaNs of both signs, subnormals),
// FP32 values with every high half (and zero low halves: -0.0, -inf, -NaN
// among them), and of a computed tile (neg of FP32: the sign flipped, NaN's
// too).
TEST(AscendSignbitTest, EveryWordGivesTheHostsSignBit) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const int64_t rows = 256, cols = 256;
  const std::vector<int64_t> tile = {8, 64};
  const auto f32 = pto::v1::DT_FP32, f16 = pto::v1::DT_FP16, bf16 = pto::v1::DT_BF16;
  Builder b("signbit_words");
  const uint32_t x = b.Input("x", f32, {rows, cols});
  const uint32_t h = b.Input("h", f16, {rows, cols});
  const uint32_t y = b.Input("y", bf16, {rows, cols});
  b.Output("of_f32", b.Op("signbit", {x}, tile));
  b.Output("of_f16", b.Op("signbit", {h}, tile));
  b.Output("of_bf16", b.Op("signbit", {y}, tile));
  b.Output("of_neg", b.Op("signbit", {b.Op("neg", {x}, tile)}, tile));
  const pto::v1::Graph graph = b.graph();
  auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
  ASSERT_NE(ascend_kernel, nullptr);
  auto host_kernel = testing::CompileAndLoad(graph, "host");
  ASSERT_NE(host_kernel, nullptr);

  const int64_t count = rows * cols;
  std::vector<uint32_t> xs(count);
  std::vector<uint16_t> words(count);
  std::mt19937 rng(5);
  for (int64_t i = 0; i < count; ++i) {
    words[i] = static_cast<uint16_t>(i);
    xs[i] = (static_cast<uint32_t>(i) << 16) | (i % 3 == 0 ? 0u : rng() & 0xFFFF);
  }
  auto run = [&](const runtime::Kernel& kernel) {
    std::vector<std::vector<uint8_t>> buffers;
    std::vector<runtime::TensorArg> args;
    for (const pto::v1::Parameter& param : graph.params()) {
      const bool is_x = param.value_id() == x;
      const bool is_word = param.value_id() == h || param.value_id() == y;
      std::vector<uint8_t> bytes(count * (is_x ? 4 : is_word ? 2 : 1), 0x5a);
      if (is_x) std::memcpy(bytes.data(), xs.data(), bytes.size());
      if (is_word) std::memcpy(bytes.data(), words.data(), bytes.size());
      const pto::v1::DataType dtype = is_x ? f32 : param.value_id() == h ? f16
                                      : param.value_id() == y ? bf16 : pto::v1::DT_BOOL;
      buffers.push_back(std::move(bytes));
      args.push_back({nullptr, dtype, {rows, cols}});
    }
    for (size_t i = 0; i < args.size(); ++i) args[i].data = buffers[i].data();
    const absl::Status s = kernel.Run(args);
    EXPECT_TRUE(s.ok()) << s;
    return buffers;
  };
  const auto want = run(*host_kernel);
  const auto got = run(*ascend_kernel);
  ASSERT_EQ(want.size(), got.size());
  for (int p = 3; p < graph.params_size(); ++p) {
    int mismatches = 0, set = 0;
    for (int64_t i = 0; i < count; ++i) {
      set += want[p][i] == 1;
      if (want[p][i] == got[p][i]) continue;
      if (++mismatches <= 5) {
        ADD_FAILURE() << graph.params(p).name() << "[" << i << "]: got " << int{got[p][i]}
                      << ", host " << int{want[p][i]};
      }
    }
    EXPECT_EQ(mismatches, 0) << graph.params(p).name();
    EXPECT_EQ(set, count / 2) << graph.params(p).name() << ": half the words have the sign set";
  }
}

// cumsum and cumprod along `dim` (-1 or 0 of a rank-2 tensor) against the
// host: lines spanning several tiles (each seeded by the one before) with
// tails in both dims, negative values, zeros and -0.0 (products through
// them), an infinity and a NaN. FP16 and BF16 scan in f32 on both targets,
// one element at a time, so their results are the host's bit for bit; FP32
// scans in f32 here and in double on the host, within the bound
// docs/pto-isa.md states: (n + 1) 2^-24 of the partial sums' magnitudes
// (cumsum: the sum of |x| so far; cumprod: the product's).
void ExpectTheHostsScans(int64_t rows, int64_t cols, const std::vector<int64_t>& tile, int dim) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  // Element k of line l (a row, or a column for dim 0), and the lines' count
  // and length.
  const int64_t lines = dim == 0 ? cols : rows, length = dim == 0 ? rows : cols;
  auto at = [&](int64_t l, int64_t k) { return dim == 0 ? k * cols + l : l * cols + k; };
  for (pto::v1::DataType dtype : {pto::v1::DT_FP16, pto::v1::DT_BF16, pto::v1::DT_FP32}) {
    const std::string name = absl::StrCat(pto::v1::DataType_Name(dtype), " dim ", dim);
    Builder b(absl::StrCat("scans_", pto::v1::DataType_Name(dtype)));
    const uint32_t x = b.Input("x", dtype, {rows, cols});
    for (const char* kind : {"cumsum", "cumprod"}) {
      b.Output(kind, b.Op(kind, {x}, tile));
      pto::v1::Graph& g = b.graph();
      (*g.mutable_ops(g.ops_size() - 1)->mutable_attrs())["dim"].set_i(dim);
    }
    const pto::v1::Graph graph = b.graph();
    auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
    ASSERT_NE(ascend_kernel, nullptr) << name;
    auto host_kernel = testing::CompileAndLoad(graph, "host");
    ASSERT_NE(host_kernel, nullptr) << name;
    // Values of magnitude 0.5 to 1.5 (products stay finite), every 23rd a
    // zero (-0.0 in odd lines), line 3 an infinity and a NaN late in it.
    std::vector<float> xs(rows * cols);
    std::mt19937 rng(7);
    for (int64_t l = 0; l < lines; ++l) {
      for (int64_t k = 0; k < length; ++k) {
        const int64_t i = l * length + k;
        const uint32_t r = rng();
        const float v = 0.5f + static_cast<float>(r % 1024) / 1024.0f;
        xs[at(l, k)] = i % 23 == 5 ? (l % 2 ? -0.0f : 0.0f) : (r >> 20) % 2 ? -v : v;
      }
    }
    xs[at(3, 200)] = std::numeric_limits<float>::infinity();
    xs[at(3, 250)] = std::numeric_limits<float>::quiet_NaN();
    const size_t size = dtype == pto::v1::DT_FP32 ? 4 : 2;
    std::vector<uint8_t> in(rows * cols * size);
    for (int64_t i = 0; i < rows * cols; ++i) {
      if (dtype == pto::v1::DT_FP32) {
        std::memcpy(&in[4 * i], &xs[i], 4);
      } else if (dtype == pto::v1::DT_FP16) {
        const _Float16 h = static_cast<_Float16>(xs[i]);
        std::memcpy(&in[2 * i], &h, 2);
      } else {
        uint32_t w;
        std::memcpy(&w, &xs[i], 4);
        const uint16_t hi = static_cast<uint16_t>(w >> 16);  // truncated: still a BF16 value
        std::memcpy(&in[2 * i], &hi, 2);
      }
    }
    auto run = [&](const runtime::Kernel& kernel) {
      std::vector<std::vector<uint8_t>> buffers = {in, std::vector<uint8_t>(in.size(), 0x5a),
                                                   std::vector<uint8_t>(in.size(), 0x5a)};
      std::vector<runtime::TensorArg> args;
      for (auto& buffer : buffers) args.push_back({buffer.data(), dtype, {rows, cols}});
      const absl::Status s = kernel.Run(args);
      EXPECT_TRUE(s.ok()) << s;
      return buffers;
    };
    const auto want = run(*host_kernel);
    const auto got = run(*ascend_kernel);
    auto value = [&](const std::vector<uint8_t>& v, int64_t i) {
      if (dtype == pto::v1::DT_FP32) {
        float f;
        std::memcpy(&f, &v[4 * i], 4);
        return static_cast<double>(f);
      }
      uint16_t h;
      std::memcpy(&h, &v[2 * i], 2);
      if (dtype == pto::v1::DT_BF16) {
        const uint32_t w = static_cast<uint32_t>(h) << 16;
        float f;
        std::memcpy(&f, &w, 4);
        return static_cast<double>(f);
      }
      _Float16 f;
      std::memcpy(&f, &h, 2);
      return static_cast<double>(f);
    };
    for (int p = 1; p <= 2; ++p) {
      int bad = 0;
      for (int64_t l = 0; l < lines; ++l) {
        double magnitude = p == 1 ? 0.0 : 1.0;
        for (int64_t k = 0; k < length; ++k) {
          const int64_t i = at(l, k);
          const double w = value(want[p], i), g = value(got[p], i), a = value(in, i);
          magnitude = p == 1 ? magnitude + std::fabs(a) : magnitude * std::fabs(a);
          const bool same = std::memcmp(&want[p][size * i], &got[p][size * i], size) == 0;
          bool ok = same || (std::isnan(w) && std::isnan(g));
          if (!ok && dtype == pto::v1::DT_FP32 && std::isfinite(w)) {
            ok = std::fabs(g - w) <= static_cast<double>(k + 2) * 0x1p-24 * magnitude &&
                 std::signbit(g) == std::signbit(w);
          }
          if (!ok && ++bad <= 5) {
            ADD_FAILURE() << name << " " << graph.params(p).name() << "[" << i / cols << ", "
                          << i % cols << "]: got " << g << ", host " << w;
          }
        }
      }
      EXPECT_EQ(bad, 0) << name << " " << graph.params(p).name();
    }
  }
}

TEST(AscendScanTest, LongRowsGiveTheHostsScans) { ExpectTheHostsScans(5, 300, {4, 64}, -1); }

// Down the columns (dim 0): a running row, each tile's rows in turn.
TEST(AscendScanTest, LongColumnsGiveTheHostsScans) { ExpectTheHostsScans(300, 5, {64, 4}, 0); }

// A sort along a dim of run-time length before the last, of INT64 values, of columns
// whose transposed blocks do not fit the UB or of rows longer
// than the UB sorts, the index ops of INT64 values and a bitcast between
// element types are UNIMPLEMENTED naming the instruction and why.
TEST(AscendRuntimeTest, IndexOpsAndBitcastsSayWhyTheyAreNotMapped) {
  const std::vector<int64_t> tile = {4, 64};
  auto refused = [](const pto::v1::Graph& g) {
    absl::StatusOr<compiler::CompileResult> r =
        compiler::Compile(g, runtime::kAscendA2A3CpuSimTarget, {});
    EXPECT_FALSE(r.ok()) << g.name();
    if (r.ok()) return std::string();
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
    return std::string(r.status().message());
  };
  {
    Builder b("sort_dim0_symbolic");
    const uint32_t x = b.SymInput("x", pto::v1::DT_FP32,
                                  {compiler::SymExpr::Symbol("n"), compiler::SymExpr(16)});
    b.Output("order", b.Sort(x, 0, 0, false, tile));
    const std::string why = refused(b.Build());
    EXPECT_THAT(why, HasSubstr("MSORT (sort, topk, argsort) along dim 0 over a run-time column "
                               "length"));
  }
  {
    Builder b("sort_long_columns");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {3000, 16});
    b.Output("order", b.Sort(x, 0, 3000, false, tile));
    const std::string why = refused(b.graph());
    EXPECT_THAT(why, HasSubstr("bytes of UB (columns of 3000, 3000 positions each)"));
  }
  {
    Builder b("sort_int64");
    const uint32_t x = b.Input("x", pto::v1::DT_INT64, {13, 64});
    b.Output("order", b.Sort(x, -1, 64, false, tile));
    EXPECT_THAT(refused(b.graph()), HasSubstr("MSORT (sort, topk, argsort) of DT_INT64"));
  }
  {
    Builder b("sort_long");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {2, 8193});
    b.Output("order", b.Sort(x, -1, 4, true, tile));
    EXPECT_THAT(refused(b.graph()), HasSubstr("of rows of 8193 values"));
  }
  {
    Builder b("gather_int64");
    const uint32_t x = b.Input("x", pto::v1::DT_INT64, {13, 64});
    const uint32_t idx = b.Input("idx", pto::v1::DT_INT64, {13, 8});
    b.Output("out", IndexOp(b, "gather", {x, idx}, {4, 8}, 1));
    const std::string why = refused(b.graph());
    EXPECT_THAT(why, HasSubstr("MGATHER"));
    EXPECT_THAT(why, HasSubstr("DT_INT64 values"));
  }
  {
    Builder b("index_add_int64");
    const uint32_t x = b.Input("x", pto::v1::DT_INT64, {13, 64});
    const uint32_t idx = b.Input("idx", pto::v1::DT_INT64, {5});
    const uint32_t src = b.Input("src", pto::v1::DT_INT64, {5, 64});
    b.Output("out", IndexOp(b, "index_add", {x, idx, src}, tile, 0));
    const std::string why = refused(b.graph());
    EXPECT_THAT(why, HasSubstr("MSCATTER"));
    EXPECT_THAT(why, HasSubstr("DT_INT64 values"));
  }
  {
    Builder b("bitcast_bits");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {13, 64});
    b.Output("bits", b.Cast(x, pto::v1::DT_INT32, tile, "bitcast"));
    EXPECT_THAT(refused(b.graph()), HasSubstr("TRESHAPE (bitcast) of DT_FP32 to DT_INT32"));
  }
  {
    Builder b("bitcast_widened");
    const uint32_t x = b.Input("x", pto::v1::DT_INT8, {13, 64});
    b.Output("bits", b.Cast(x, pto::v1::DT_UINT8, tile, "bitcast"));
    EXPECT_THAT(refused(b.graph()), HasSubstr("of DT_INT8 to DT_UINT8: the target's f32 tiles"));
  }
}

// Every parameter of `graph` after `kernel` ran on inputs drawn from `seed`:
// integers across [-100, 100] (INT64 indices: many out of range), floats
// across [-2, 2], outputs filled with NaN first.
std::vector<ptoc::HostTensor> RunOnRawInputs(const pto::v1::Graph& graph,
                                             const runtime::Kernel& kernel, uint64_t seed,
                                             const std::map<std::string, int64_t>& sizes = {}) {
  std::mt19937_64 rng(seed);
  std::map<uint32_t, const pto::v1::Value*> declared;
  for (const pto::v1::Value& v : graph.values()) declared[v.id()] = &v;
  std::vector<ptoc::HostTensor> buffers;
  std::vector<runtime::TensorArg> args;
  for (const pto::v1::Parameter& param : graph.params()) {
    const pto::v1::Value& v = *declared.at(param.value_id());
    std::vector<int64_t> shape;
    for (const auto& d : v.shape().dims()) {
      shape.push_back(d.kind_case() == pto::v1::Dim::kSymbol ? sizes.at(d.symbol()) : d.size());
    }
    absl::StatusOr<ptoc::HostTensor> t = ptoc::HostTensor::Create(v.dtype(), shape);
    EXPECT_TRUE(t.ok()) << t.status();
    if (!t.ok()) return {};
    for (int64_t i = 0; i < t->size(); ++i) {
      const bool out = param.role() == pto::v1::PARAM_ROLE_OUT;
      const bool integer = v.dtype() == pto::v1::DT_INT64 || v.dtype() == pto::v1::DT_INT32;
      t->Set(i, out       ? NAN
                : integer ? static_cast<double>(static_cast<int64_t>(rng() % 201) - 100)
                          : std::uniform_real_distribution<double>(-2, 2)(rng));
    }
    buffers.push_back(*std::move(t));
  }
  for (ptoc::HostTensor& b : buffers) args.push_back(b.AsArg());
  absl::Status ran = kernel.Run(args);
  EXPECT_TRUE(ran.ok()) << graph.name() << ": " << ran;
  return buffers;
}

// Every parameter of `got` equal to `want`'s, element by element (NaN
// matching NaN: an output element neither wrote).
void ExpectSameBits(const std::string& label, const std::vector<ptoc::HostTensor>& got,
                    const std::vector<ptoc::HostTensor>& want) {
  ASSERT_EQ(got.size(), want.size()) << label;
  for (size_t p = 0; p < got.size(); ++p) {
    for (int64_t i = 0; i < got[p].size(); ++i) {
      const double g = got[p].Get(i), w = want[p].Get(i);
      ASSERT_TRUE(g == w || (std::isnan(g) && std::isnan(w)))
          << label << ": parameter " << p << " element " << i << ": got " << g << ", host " << w;
    }
  }
}

// index_select and index_add over symbolic dims (x [5, n], i [m]): the
// buffer's strides and the bound of a valid index from the dynamic args,
// tails with run-time extents.
pto::v1::Graph SymbolicIndexOps() {
  const compiler::SymExpr m = compiler::SymExpr::Symbol("m"), n = compiler::SymExpr::Symbol("n");
  Builder b("sym_index_ops");
  const uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {compiler::SymExpr(5), n});
  const uint32_t i = b.SymInput("i", pto::v1::DT_INT32, {m});
  const uint32_t rows = IndexOp(b, "index_select", {x, i}, {2, 4}, 1);
  b.Output("out", IndexOp(b, "index_add", {x, i, rows}, {2, 4}, 1));
  return b.Build();
}

// INT64 indices as they come, many outside their dim (the reference refuses
// those; a kernel guards them: a gather reads 0, a scatter writes nothing),
// narrowed to int32 on the Ascend target: every parameter after the run
// equal to the host's, bit for bit (a repeated scatter index included).
TEST(AscendIndexTest, RawInt64IndicesGiveTheHostsResults) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::vector<int64_t> tile = {4, 16};
  const auto f32 = pto::v1::DT_FP32, i64 = pto::v1::DT_INT64;
  std::vector<pto::v1::Graph> graphs;
  {
    Builder b("raw_gather");
    const uint32_t x = b.Input("x", f32, {9, 40});
    b.Output("gather", IndexOp(b, "gather", {x, b.Input("idx", i64, {9, 37})}, tile, 1));
    b.Output("select", IndexOp(b, "index_select", {x, b.Input("sel", i64, {21})}, tile, 0));
    graphs.push_back(b.graph());
  }
  {
    Builder b("raw_scatter");
    const uint32_t x = b.Input("x", f32, {60, 40});
    const uint32_t src = b.Input("src", f32, {9, 40});
    b.Output("out", IndexOp(b, "scatter", {x, b.Input("idx", i64, {9, 37}), src}, tile, 0));
    graphs.push_back(b.graph());
  }
  {
    Builder b("raw_index_add");
    const uint32_t x = b.Input("x", f32, {12, 60});
    const uint32_t src = b.Input("src", f32, {12, 30});
    b.Output("out", IndexOp(b, "index_add", {x, b.Input("idx", i64, {30}), src}, tile, 1));
    graphs.push_back(b.graph());
  }
  for (const pto::v1::Graph& graph : graphs) {
    auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
    ASSERT_NE(ascend_kernel, nullptr);
    auto host_kernel = testing::CompileAndLoad(graph, "host");
    ASSERT_NE(host_kernel, nullptr);
    for (uint64_t seed : {1, 2}) {
      std::vector<ptoc::HostTensor> want = RunOnRawInputs(graph, *host_kernel, seed);
      std::vector<ptoc::HostTensor> got = RunOnRawInputs(graph, *ascend_kernel, seed);
      ExpectSameBits(graph.name() + " seed " + std::to_string(seed), got, want);
    }
  }
}

// The same over symbolic dims, at sizes with and without tails, indices in
// and out of range.
TEST(AscendIndexTest, SymbolicDimsGiveTheHostsResults) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const pto::v1::Graph graph = SymbolicIndexOps();
  auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
  ASSERT_NE(ascend_kernel, nullptr);
  auto host_kernel = testing::CompileAndLoad(graph, "host");
  ASSERT_NE(host_kernel, nullptr);
  for (const auto& [n, m] : {std::pair{13, 7}, std::pair{120, 33}, std::pair{4, 8}}) {
    const std::map<std::string, int64_t> sizes = {{"n", n}, {"m", m}};
    ExpectSameBits(absl::StrCat("sym_index_ops n=", n, " m=", m),
                   RunOnRawInputs(graph, *ascend_kernel, 1, sizes),
                   RunOnRawInputs(graph, *host_kernel, 1, sizes));
  }
}

// INT32 sort keys (two sorts, by the low and then the high 16 bits): rows
// across the whole range, rows whose values share their high half or their
// low half, rows of a few repeated values and of the range's edges, and
// rows of 5000 (8192 keys, the longest): argsort both ways and a topk give
// the host's positions bit for bit, ties in input order.
TEST(AscendSortTest, Int32KeysGiveTheHostsPositions) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::vector<int64_t> tile = {4, 64};
  Builder b("sort_int32_keys");
  const uint32_t x = b.Input("x", pto::v1::DT_INT32, {12, 300});
  const uint32_t y = b.Input("y", pto::v1::DT_INT32, {2, 5000});
  b.Output("desc", b.Sort(x, -1, 300, true, tile));
  b.Output("asc", b.Sort(x, -1, 300, false, tile));
  b.Output("top", b.Sort(x, -1, 5, true, tile));
  b.Output("long", b.Sort(y, -1, 5000, false, tile));
  const pto::v1::Graph graph = b.graph();
  auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
  ASSERT_NE(ascend_kernel, nullptr);
  auto host_kernel = testing::CompileAndLoad(graph, "host");
  ASSERT_NE(host_kernel, nullptr);

  constexpr int32_t kMin = INT32_MIN, kMax = INT32_MAX;
  const std::vector<int32_t> edges = {kMin, kMin + 1, -65537, -65536, -65535, -1, 0,
                                      1, 65535, 65536, 65537, kMax - 1, kMax};
  auto value = [&](std::mt19937_64& rng, int64_t row) -> int32_t {
    const uint64_t r = rng();
    const int32_t low = static_cast<int32_t>(r & 0xffff);
    switch (row % 5) {
      case 0: return static_cast<int32_t>(r >> 32);                     // across the range
      case 1: return static_cast<int32_t>((r >> 40) % 4 - 2) * 65536 + low;  // shared highs
      case 2: return static_cast<int32_t>(static_cast<uint32_t>(r >> 32) << 16) +
                     std::vector<int32_t>{0, 1, 65535}[(r >> 20) % 3];  // shared lows
      case 3: return edges[(r >> 32) % edges.size()];
      default: return static_cast<int32_t>((r >> 32) % 7) - 3;  // a few repeated values
    }
  };
  auto run = [&](const runtime::Kernel& kernel) {
    std::mt19937_64 rng(11);
    return RunOnFilled(graph, kernel,
                       [&](const pto::v1::Parameter& param, ptoc::HostTensor& t, int64_t cols) {
                         const bool out = param.role() == pto::v1::PARAM_ROLE_OUT;
                         for (int64_t i = 0; i < t.size(); ++i) {
                           t.Set(i, out ? -7.0 : static_cast<double>(value(rng, i / cols)));
                         }
                       });
  };
  const std::vector<ptoc::HostTensor> want = run(*host_kernel), got = run(*ascend_kernel);
  ExpectSameBits(graph.name(), got, want);
  // The host's order holds too: the first row's values fall along "desc".
  ASSERT_EQ(graph.params(2).name(), "desc");
  for (int64_t i = 1; i < 300; ++i) {
    const auto at = [&](int64_t j) { return want[0].Get(static_cast<int64_t>(want[2].Get(j))); };
    ASSERT_GE(at(i - 1), at(i)) << i;
  }
}

// Sums and products into INT64 (torch's result type for integers), over the
// last dim and dim 0, of dims in one tile and split over several (partial
// INT64 results, then a combine step of them): INT32 values across the
// whole range (sums past 2^31, negative sums), rows of INT32_MAX and of
// INT32_MIN, products wrapping modulo 2^64 (odd factors, so that they do
// not vanish, and rows of edge values), and INT64 values across their range
// (sums and products wrapping): the Ascend kernel's results equal the
// host's bit for bit.
TEST(AscendInt64Test, SumsAndProductsMatchTheHostBitForBit) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const auto i32 = pto::v1::DT_INT32, i64 = pto::v1::DT_INT64;
  // Three kernels (each CPU-simulation build stays short): sums of x (5
  // column tiles with a tail, 2 row tiles), products of y (2 row tiles with
  // a tail), both of z.
  std::vector<pto::v1::Graph> graphs;
  {
    Builder b("int32_sums");
    const uint32_t x = b.Input("x", i32, {32, 300});
    b.Output("sum_last", b.Op("sum", {x}, {16, 64}, -1, true));
    b.Output("sum_dim0", b.Op("sum", {x}, {16, 64}, 0, false));
    graphs.push_back(b.graph());
  }
  {
    Builder b("int32_prods");
    const uint32_t y = b.Input("y", i32, {24, 40});
    b.Output("prod_last", b.Op("prod", {y}, {16, 16}, -1, false));
    b.Output("prod_dim0", b.Op("prod", {y}, {16, 16}, 0, true));
    graphs.push_back(b.graph());
  }
  {
    Builder b("int64_values");
    const uint32_t z = b.Input("z", i64, {16, 48});
    b.Output("sum64_last", b.Op("sum", {z}, {8, 16}, -1, true));
    b.Output("prod64_dim0", b.Op("prod", {z}, {8, 16}, 0, false));
    graphs.push_back(b.graph());
  }

  constexpr int32_t kMin = INT32_MIN, kMax = INT32_MAX;
  const std::vector<int32_t> edges = {kMin, kMin + 1, -16777217, -65537, -65536, -255, -1, 0,
                                      1, 255, 256, 65535, 65536, 16777217, kMax - 1, kMax};
  // Row r of x: 0 across the range, 1 all INT32_MAX, 2 all INT32_MIN, 3
  // edge values, 4 small negatives (a negative sum); y: odd values across
  // the range, odd small ones, edge values (and so zeros), all -1.
  auto sum_value = [&](std::mt19937_64& rng, int64_t row) -> int32_t {
    const uint64_t r = rng();
    switch (row % 5) {
      case 0: return static_cast<int32_t>(r >> 32);
      case 1: return kMax;
      case 2: return kMin;
      case 3: return edges[(r >> 32) % edges.size()];
      default: return -static_cast<int32_t>((r >> 32) % 1000);
    }
  };
  auto prod_value = [&](std::mt19937_64& rng, int64_t row) -> int32_t {
    const uint64_t r = rng();
    switch (row % 4) {
      case 0: return static_cast<int32_t>(r >> 32) | 1;
      case 1: return static_cast<int32_t>((r >> 32) % 31) - 15 | 1;
      case 2: return edges[(r >> 32) % edges.size()];
      default: return -1;
    }
  };
  auto run = [&](const pto::v1::Graph& graph, const runtime::Kernel& kernel) {
    std::mt19937_64 rng(5);
    return RunOnFilled(graph, kernel, [&](const pto::v1::Parameter& param, ptoc::HostTensor& t,
                                          int64_t cols) {
      for (int64_t i = 0; i < t.size(); ++i) {
        const int64_t row = i / cols;
        if (param.role() == pto::v1::PARAM_ROLE_OUT) {
          static_cast<int64_t*>(t.data())[i] = 0x5a5a5a5a5a5a5a5a;
        } else if (param.name() == "x") {
          static_cast<int32_t*>(t.data())[i] = sum_value(rng, row);
        } else if (param.name() == "y") {
          static_cast<int32_t*>(t.data())[i] = prod_value(rng, row);
        } else {  // z: INT64 across the range, odd, and small values
          const uint64_t r = rng();
          static_cast<int64_t*>(t.data())[i] =
              row % 2 == 0 ? static_cast<int64_t>(r | 1) : static_cast<int64_t>(r % 7) - 3;
        }
      }
    });
  };
  for (const pto::v1::Graph& graph : graphs) {
    auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
    ASSERT_NE(ascend_kernel, nullptr);
    auto host_kernel = testing::CompileAndLoad(graph, "host");
    ASSERT_NE(host_kernel, nullptr);
    std::vector<ptoc::HostTensor> want = run(graph, *host_kernel);
    std::vector<ptoc::HostTensor> got = run(graph, *ascend_kernel);
    ExpectSameBits(graph.name(), got, want);
    if (graph.name() != "int32_sums") continue;
    // A few sums the host holds too, so that both cannot drift together.
    ASSERT_EQ(graph.params(1).name(), "sum_last");
    const int64_t* sums = static_cast<const int64_t*>(got[1].data());
    EXPECT_EQ(sums[1], int64_t{300} * kMax);  // past 2^31
    EXPECT_EQ(sums[2], int64_t{300} * kMin);
    EXPECT_LT(sums[4], 0);
  }
}

// INT64 values computed on (words tiles, ascend_int64_arith.h): arithmetic
// wrapping modulo 2^64, maxima and minima, comparisons (BOOL, with tiles and
// scalars), casts from INT32, BOOL and FP32 and to INT32, of dims split
// over tiles (tails):
// values at the edges of the range (INT64_MIN and MAX and their
// neighbours, values whose words carry or borrow), pairs sharing their
// high word, negatives, random ones across the range; the Ascend kernel's
// results equal the host's bit for bit.
TEST(AscendInt64Test, ArithmeticComparisonsAndCastsMatchTheHostBitForBit) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const auto i32 = pto::v1::DT_INT32, i64 = pto::v1::DT_INT64, f32 = pto::v1::DT_FP32;
  const std::vector<int64_t> tile = {8, 16};
  std::vector<pto::v1::Graph> graphs;
  {
    Builder b("int64_arith");
    const uint32_t x = b.Input("x", i64, {12, 40}), y = b.Input("y", i64, {12, 40});
    b.Output("add", b.Op("add", {x, y}, tile));
    b.Output("sub", b.Op("sub", {x, y}, tile));
    b.Output("mul", b.Op("mul", {x, y}, tile));
    b.Output("max", b.Op("maximum", {x, y}, tile));
    b.Output("min", b.Op("minimum", {x, y}, tile));
    b.Output("neg_abs", b.Op("add", {b.Op("neg", {x}, tile), b.Op("abs", {y}, tile)}, tile));
    graphs.push_back(b.graph());
  }
  // (Comparisons and casts over whole tiles: one function each, so that
  // each CPU-simulation build stays short.)
  {
    Builder b("int64_compares");
    const uint32_t x = b.Input("x", i64, {16, 32}), y = b.Input("y", i64, {16, 32});
    b.Output("lt", b.Op("lt", {x, y}, tile));
    b.Output("le", b.Op("le", {x, y}, tile));
    b.Output("ne", b.Op("ne", {x, y}, tile));
    b.Output("lts", b.Op("lts", {x}, tile, -2.5));
    b.Output("ges", b.Op("ges", {x}, tile, 4294967296.0));
    graphs.push_back(b.graph());
  }
  {
    Builder b("int64_casts");
    const uint32_t x = b.Input("x", i64, {16, 32}), n = b.Input("n", i32, {16, 32});
    const uint32_t f = b.Input("f", f32, {16, 32});
    b.Output("to_int32", b.Cast(x, i32, tile));
    b.Output("from_int32", b.Op("sub", {b.Cast(n, i64, tile), x}, tile));
    b.Output("from_bool", b.Cast(b.Op("gts", {n}, tile, 0.0), i64, tile));
    b.Output("from_f32", b.Cast(f, i64, tile));
    graphs.push_back(b.graph());
  }
  constexpr int64_t kMin = INT64_MIN, kMax = INT64_MAX;
  const std::vector<int64_t> edges = {kMin, kMin + 1, kMax, kMax - 1, -1, 0, 1,
                                      int64_t{1} << 32, (int64_t{1} << 32) - 1,
                                      -(int64_t{1} << 32), int64_t{0x7fffffff}, int64_t{0x80000000},
                                      -int64_t{0x80000000}, int64_t{0xffffffff} << 16};
  // Rows of x and y: 0 across the range, 1 edges, 2 sharing the high word
  // (low words across theirs), 3 small values; the rest mixed.
  auto value = [&](std::mt19937_64& rng, int64_t row) -> int64_t {
    const uint64_t r = rng();
    switch (row % 5) {
      case 0: return static_cast<int64_t>(r);
      case 1: return edges[r % edges.size()];
      case 2: return static_cast<int64_t>((uint64_t{(r >> 62) % 2} - 1) << 32 | (r & 0xffffffff));
      case 3: return static_cast<int64_t>(r % 41) - 20;
      default: return r % 2 ? edges[r % edges.size()] : static_cast<int64_t>(r >> (r % 60));
    }
  };
  const std::vector<float> floats = {0.0f, -0.0f, 0.5f, -0.5f, -1.5f, 2147483520.0f, 2147483648.0f,
                                     -2147483648.0f, -2147483904.0f, 4294967296.0f, 1e18f, -1e18f,
                                     9.2233715e18f, 9.223372e18f, -9.223372e18f, 1e30f,
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN(), 16777217.0f, -123.75f};
  auto run = [&](const pto::v1::Graph& graph, const runtime::Kernel& kernel) {
    std::mt19937_64 rng(9);
    return RunOnFilled(graph, kernel, [&](const pto::v1::Parameter& param, ptoc::HostTensor& t,
                                          int64_t cols) {
      for (int64_t i = 0; i < t.size(); ++i) {
        const int64_t row = i / cols;
        if (param.role() == pto::v1::PARAM_ROLE_OUT) {
          t.Set(i, -7.0);
        } else if (param.name() == "n") {
          static_cast<int32_t*>(t.data())[i] = static_cast<int32_t>(value(rng, row));
        } else if (param.name() == "f") {
          const uint64_t r = rng();
          static_cast<float*>(t.data())[i] =
              r % 3 ? floats[r % floats.size()]
                    : static_cast<float>(static_cast<int64_t>(r) >> (r % 62));
        } else {
          static_cast<int64_t*>(t.data())[i] = value(rng, row);
        }
      }
    });
  };
  for (const pto::v1::Graph& graph : graphs) {
    auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
    ASSERT_NE(ascend_kernel, nullptr) << graph.name();
    auto host_kernel = testing::CompileAndLoad(graph, "host");
    ASSERT_NE(host_kernel, nullptr);
    ExpectSameBits(graph.name(), run(graph, *ascend_kernel), run(graph, *host_kernel));
  }
}

// Sorts over a run-time row length (x [5, n]): argsort both ways (tiles
// of 1024 positions, a tail in each dim) and topk of 1 and of 7 (positions
// past a shorter row's end are 0). Float rows hold ties (halves), NaN (sqrt
// of x < -1.5) and +inf (x > 1.8 scaled past FLT_MAX).
pto::v1::Graph SymbolicSorts(pto::v1::DataType dtype) {
  const std::vector<int64_t> tile = {2, 1024}, ew = {2, 256};  // the sorts', the values'
  Builder b(absl::StrCat("sym_sorts_", pto::v1::DataType_Name(dtype)));
  uint32_t x = b.SymInput("x", dtype, {compiler::SymExpr(5), compiler::SymExpr::Symbol("n")});
  if (dtype != pto::v1::DT_INT32) {
    x = b.Op("muls", {b.Op("round", {b.Op("muls", {x}, ew, 2.0)}, ew)}, ew, 0.5);
    const uint32_t inf = b.Op("muls", {b.Op("muls", {x}, ew, 1e30)}, ew, 1e30);
    x = b.Op("where", {b.Op("gts", {x}, ew, 1.8), inf,
                       b.Op("where", {b.Op("lts", {x}, ew, -1.8), b.Op("sqrt", {x}, ew), x}, ew)},
             ew);
  }
  b.Output("desc", b.Sort(x, -1, 0, true, tile));
  b.Output("asc", b.Sort(x, -1, 0, false, tile));
  b.Output("top1", b.Sort(x, -1, 1, true, tile));
  b.Output("top7", b.Sort(x, -1, 7, false, tile));
  return b.Build();
}

// Run-time row lengths give the host's positions bit for bit, up to the
// sort's capacity (rows padded to it: 8192 FP32 and FP16 values, 2048 INT32
// ones beside their first order); a longer row is a launch error naming
// its length and the bound.
TEST(AscendSortTest, RunTimeRowLengthsGiveTheHostsPositions) {
  if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const struct {
    pto::v1::DataType dtype;
    int64_t capacity;
  } cases[] = {{pto::v1::DT_FP32, 8192}, {pto::v1::DT_FP16, 8192}, {pto::v1::DT_INT32, 2048}};
  for (const auto& c : cases) {
    const pto::v1::Graph graph = SymbolicSorts(c.dtype);
    auto ascend_kernel = testing::CompileAndLoad(graph, runtime::kAscendA2A3Target);
    ASSERT_NE(ascend_kernel, nullptr) << graph.name();
    auto host_kernel = testing::CompileAndLoad(graph, "host");
    ASSERT_NE(host_kernel, nullptr);
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{100}, c.capacity}) {
      const std::map<std::string, int64_t> sizes = {{"n", n}};
      ExpectSameBits(absl::StrCat(graph.name(), " n=", n),
                     RunOnRawInputs(graph, *ascend_kernel, 1, sizes),
                     RunOnRawInputs(graph, *host_kernel, 1, sizes));
    }
    const int64_t n = c.capacity + 1;
    std::vector<ptoc::HostTensor> buffers;
    std::vector<runtime::TensorArg> args;
    for (const auto& [dtype, shape] :
         std::vector<std::pair<pto::v1::DataType, std::vector<int64_t>>>{
             {c.dtype, {5, n}}, {pto::v1::DT_INT64, {5, n}}, {pto::v1::DT_INT64, {5, n}},
             {pto::v1::DT_INT64, {5, 1}}, {pto::v1::DT_INT64, {5, 7}}}) {
      absl::StatusOr<ptoc::HostTensor> t = ptoc::HostTensor::Create(dtype, shape);
      ASSERT_TRUE(t.ok()) << t.status();
      buffers.push_back(*std::move(t));
    }
    for (ptoc::HostTensor& t : buffers) args.push_back(t.AsArg());
    const absl::Status ran = (*ascend_kernel).Run(args);
    EXPECT_EQ(ran.code(), absl::StatusCode::kInvalidArgument) << ran;
    EXPECT_THAT(std::string(ran.message()),
                HasSubstr(absl::StrCat("sorts rows of up to ", c.capacity, " values")));
    EXPECT_THAT(std::string(ran.message()), HasSubstr(absl::StrCat("at n=", n)));
    EXPECT_TRUE(host_kernel->Run(args).ok()) << graph.name();
  }
}

}  // namespace
}  // namespace pto
