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
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/ptoc/check.h"
#include "client/ptoc/graph_io.h"
#include "compiler/compile.h"
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

pto::v1::Graph SumOverDim(int64_t dim, const std::string& op = "sum") {
  Builder b(absl::StrCat(op, "_dim", dim));
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {37, 70});
  b.Output("out", b.Op(op, {x}, {16, 32}, dim, true));
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
  const auto f32 = pto::v1::DT_FP32, f16 = pto::v1::DT_FP16;
  return {
      {"ExpAddF32", [=] { return compiler::testing::ExpAddGraph(f32); }},
      {"ExpAddF16", [=] { return compiler::testing::ExpAddGraph(f16); }},
      {"ChainRank1", [=] { return Chain({1000}, {128}, f32); }},
      {"ChainRank2", [=] { return Chain({37, 70}, {16, 32}, f32); }},
      {"ChainRank3", [=] { return Chain({3, 17, 45}, {2, 8, 16}, f32); }},
      {"ChainRank4", [=] { return Chain({2, 3, 9, 33}, {1, 2, 4, 16}, f32); }},
      {"ChainRank2F16", [=] { return Chain({64, 64}, {32, 32}, f16); }},
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
      {"ArgmaxRow", [] { return ArgReduce("argmax", {37, 70}, {8, 70}); }},
      {"ArgminRow", [] { return ArgReduce("argmin", {37, 70}, {16, 32}); }},
      {"ArgmaxTiles", [] { return ArgReduce("argmax", {3, 5000}, {1, 256}); }},
      {"ArgminTiles", [] { return ArgReduce("argmin", {3, 5000}, {1, 256}); }},
      {"ArgmaxDim0", [] { return ArgReduce("argmax", {37, 70}, {16, 32}, 0); }},
      // Rows of the partial positions lie unevenly in the workspace.
      {"ArgmaxRank4", [] { return ArgReduce("argmax", {2, 3, 9, 33}, {1, 2, 4, 8}, 3); }},
      {"ArgminDim0OneTile", [] { return ArgReduce("argmin", {20, 70}, {24, 32}, 0); }},
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

// An instruction the target does not map is UNIMPLEMENTED naming it.
TEST(AscendRuntimeTest, UnmappedInstructionIsNamed) {
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(Unary("signbit"), runtime::kAscendA2A3CpuSimTarget, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("TSIGNBIT"));
}

// philox (pypto.uniform and pypto.normal's generator) is a host
// instruction: UNIMPLEMENTED naming it and what uses it.
TEST(AscendRuntimeTest, PhiloxIsNamedAsHostOnly) {
  Builder b("philox");
  const uint32_t w = b.Create("philox", pto::v1::DT_INT64, {64},
                              {{"key0", 1}, {"key1", 2}, {"counter0", 3}, {"counter1", 0},
                               {"counter2", 0}, {"counter3", 0}});
  b.Output("w", w);
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(b.graph(), runtime::kAscendA2A3CpuSimTarget, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("TPHILOX"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("pypto.uniform"));
}

// Integer instructions the target leaves out are UNIMPLEMENTED naming the
// instruction and the dtype: INT64 arithmetic (the vector unit has no
// 64-bit arithmetic), INT32 floor division.
TEST(AscendRuntimeTest, UnmappedIntegerInstructionsNameTheDType) {
  for (const auto& [dtype, op, opcode] :
       {std::tuple{pto::v1::DT_INT64, "add", "TADD"},
        std::tuple{pto::v1::DT_INT32, "floor_divide", "TFLOORDIV"}}) {
    compiler::testing::UniformGraphBuilder b(op, dtype, {37, 70}, {16, 32});
    const uint32_t x = b.Input("x"), y = b.Input("y");
    b.Output("out", b.Op(op, {x, y}));
    absl::StatusOr<compiler::CompileResult> r =
        compiler::Compile(b.Build(), runtime::kAscendA2A3CpuSimTarget, {});
    ASSERT_FALSE(r.ok()) << op;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(opcode));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(pto::v1::DataType_Name(dtype)));
  }
}

// A sort along a dim other than the last, of INT32 values or of rows longer
// than the UB sorts, the index ops and a bitcast between element types are
// UNIMPLEMENTED naming the instruction and why.
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
    Builder b("sort_dim0");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {13, 64});
    b.Output("order", b.Sort(x, 0, 13, false, tile));
    const std::string why = refused(b.graph());
    EXPECT_THAT(why, HasSubstr("MSORT (sort, topk, argsort) along dim 0"));
  }
  {
    Builder b("sort_int32");
    const uint32_t x = b.Input("x", pto::v1::DT_INT32, {13, 64});
    b.Output("order", b.Sort(x, -1, 64, false, tile));
    EXPECT_THAT(refused(b.graph()), HasSubstr("MSORT (sort, topk, argsort) of DT_INT32"));
  }
  {
    Builder b("sort_long");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {2, 8193});
    b.Output("order", b.Sort(x, -1, 4, true, tile));
    EXPECT_THAT(refused(b.graph()), HasSubstr("of rows of 8193 values"));
  }
  {
    Builder b("gather");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {13, 64});
    const uint32_t idx = b.Input("idx", pto::v1::DT_INT64, {13, 8});
    b.Output("out", b.Op("gather", {x, idx}, {4, 8}, 1, false));
    b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs()->erase("keepdim");
    const std::string why = refused(b.graph());
    EXPECT_THAT(why, HasSubstr("MGATHER (gather"));
    EXPECT_THAT(why, HasSubstr("INT64 indices"));
  }
  {
    Builder b("index_add");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {13, 64});
    const uint32_t idx = b.Input("idx", pto::v1::DT_INT64, {5});
    const uint32_t src = b.Input("src", pto::v1::DT_FP32, {5, 64});
    b.Output("out", b.Op("index_add", {x, idx, src}, tile, 0, false));
    b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs()->erase("keepdim");
    EXPECT_THAT(refused(b.graph()), HasSubstr("MSCATTER"));
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

}  // namespace
}  // namespace pto
