// Test helper: builds pto.v1.Graph protos tersely (the one graph builder of
// the tests; UniformGraphBuilder below is its one-dtype, one-shape form).
//
//   GraphBuilder b("exp_add");
//   uint32_t a = b.Input("a", DT_FP32, {3, 5});
//   uint32_t x = b.Op("exp", {a}, {2, 4});
//   b.Output("out", b.Op("add", {x, a}, {2, 4}));
//   pto::v1::Graph g = b.Build();
#ifndef PTO_COMPILER_TESTING_GRAPH_BUILDER_H_
#define PTO_COMPILER_TESTING_GRAPH_BUILDER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ops/infer.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler::testing {

class GraphBuilder {
 public:
  // Value ids are first_id, first_id + id_stride, ... (to test renumbering).
  explicit GraphBuilder(const std::string& name = "k", uint32_t first_id = 1,
                        uint32_t id_stride = 1);

  uint32_t Value(pto::v1::DataType dtype, const std::vector<int64_t>& shape,
                 const std::string& name = "");
  // A value plus an IN parameter holding it.
  uint32_t Input(const std::string& name, pto::v1::DataType dtype,
                 const std::vector<int64_t>& shape);
  // The same with symbolic dims (written as size, symbol or expr dims).
  uint32_t SymValue(pto::v1::DataType dtype, const SymShape& shape,
                    const std::string& name = "");
  uint32_t SymInput(const std::string& name, pto::v1::DataType dtype,
                    const SymShape& shape);
  // An op whose single output has the type the compiler infers (numpy
  // broadcasting, BOOL for comparisons), or inputs[0]'s dtype and shape when
  // inference fails (graphs built to be invalid). Reductions reduce the
  // last dim with keepdim (attrs "dim" = -1, "keepdim" = true). The vector
  // tile is `tile`, or its trailing dims when it has more than the output's
  // rank (so one tile serves the ranks of a broadcast).
  uint32_t Op(const std::string& kind, const std::vector<uint32_t>& inputs,
              const std::vector<int64_t>& tile,
              std::optional<double> scalar = std::nullopt,
              const std::string& name = "");
  // The same with float attributes by name ("scalar", clip's "min"/"max").
  uint32_t Op(const std::string& kind, const std::vector<uint32_t>& inputs,
              const std::vector<int64_t>& tile,
              const std::map<std::string, double>& attrs);
  // A reduction over `dim` (attrs "dim", "keepdim"), its output inferred;
  // `tile` covers its input.
  uint32_t Op(const std::string& kind, const std::vector<uint32_t>& inputs,
              const std::vector<int64_t>& tile, int64_t dim, bool keepdim);
  // An op with float attributes over symbols ("scalar", clip's "min" and
  // "max"): each an f when constant, else an expr (x * n, x * i).
  uint32_t ScalarOp(const std::string& kind, const std::vector<uint32_t>& inputs,
                    const std::vector<int64_t>& tile,
                    const std::map<std::string, SymExpr>& scalars);
  // sort(x) along `dim`, its first `k` positions (INT64), largest first
  // when `descending`.
  uint32_t Sort(uint32_t x, int64_t dim, int64_t k, bool descending,
                const std::vector<int64_t>& tile);
  // cast(input, to), or `kind` (bitcast) with the same attribute.
  uint32_t Cast(uint32_t input, pto::v1::DataType to,
                const std::vector<int64_t>& tile, const std::string& kind = "cast");
  // A layout op with an explicit result shape (inputs[0]'s dtype), list
  // attributes ("offsets", "shape", "dims") and int ones ("dim", "dim0").
  uint32_t Layout(const std::string& kind, const std::vector<uint32_t>& inputs,
                  const std::vector<int64_t>& out_shape,
                  const std::vector<int64_t>& tile,
                  const std::map<std::string, std::vector<int64_t>>& lists,
                  const std::map<std::string, int64_t>& ints = {});
  // The same with the result's type inferred from the attributes (view,
  // reshape, transpose, permute, unsqueeze, concat, assemble); the vector
  // tile is the trailing dims of `tile` as for Op, over the result (an
  // assemble's: over its src).
  uint32_t Layout(const std::string& kind, const std::vector<uint32_t>& inputs,
                  const std::vector<int64_t>& tile,
                  const std::map<std::string, std::vector<int64_t>>& lists,
                  const std::map<std::string, int64_t>& ints = {});
  // A creation op (full, arange, ...) of `shape` and `dtype` with float
  // attributes ("value", "start", "step"); vector tile [32].
  uint32_t Create(const std::string& kind, pto::v1::DataType dtype,
                  const std::vector<int64_t>& shape,
                  const std::map<std::string, double>& attrs);
  // matmul(a, b) -> a value of `out_shape` and `out_dtype` (given, not
  // inferred, so that invalid graphs can be built); a_trans/b_trans set only
  // when true; cube tile m, k, n, each [L0, L1].
  uint32_t Matmul(uint32_t a, uint32_t b, const std::vector<int64_t>& out_shape,
                  pto::v1::DataType out_dtype, bool a_trans, bool b_trans,
                  const std::vector<int64_t>& m, const std::vector<int64_t>& k,
                  const std::vector<int64_t>& n);
  // The same with the output's shape inferred, out_dtype DT_UNSPECIFIED
  // meaning a's dtype, and the cube tile {mL0, mL1, kL0, kL1, nL0, nL1}.
  uint32_t Matmul(uint32_t a, uint32_t b, pto::v1::DataType out_dtype,
                  bool a_trans, bool b_trans, const std::vector<int64_t>& cube);
  // Control flow. A region function gets the region's
  // args (one per carried value, of its type) and returns the results;
  // ops it adds go into the region. Returns the op's outputs.
  //   auto outs = b.Loop("i", 0, bs, 1, {out0}, [&](auto args) {
  //     uint32_t x = b.View(in, {i, 0}, {1, 4}, {1, 4});
  //     return std::vector<uint32_t>{b.Assemble(b.Op("exp", {x}, {1, 4}),
  //                                             args[0], {i, 0}, {1, 4})};
  //   });
  using RegionFn = std::function<std::vector<uint32_t>(const std::vector<uint32_t>&)>;
  std::vector<uint32_t> Loop(const std::string& index, const SymExpr& start,
                             const SymExpr& stop, int64_t step,
                             const std::vector<uint32_t>& carried,
                             const RegionFn& body);
  std::vector<uint32_t> If(const pto::v1::DimExpr& cond,
                           const std::vector<uint32_t>& carried,
                           const RegionFn& then_body, const RegionFn& else_body);
  // A control op of any kind and attributes (to build invalid ones).
  std::vector<uint32_t> Control(const std::string& kind,
                                const std::map<std::string, pto::v1::Attribute>& attrs,
                                const std::vector<uint32_t>& carried,
                                const std::vector<RegionFn>& bodies);
  // view / assemble with offsets (and shape) written as exprs.
  uint32_t View(uint32_t x, const SymShape& offsets, const SymShape& shape,
                const std::vector<int64_t>& tile);
  uint32_t Assemble(uint32_t src, uint32_t dst, const SymShape& offsets,
                    const std::vector<int64_t>& tile);
  // A new value with `of`'s dtype and shape.
  uint32_t SameType(uint32_t of, const std::string& name = "");
  // Gives value `id` a symbolic shape (Matmul and Layout take static ones:
  // a matmul in a loop body may have a tail extent).
  void SetShape(uint32_t id, const SymShape& shape);
  // Makes `value` the OUT parameter `name`, or the result of the INOUT
  // parameter `name` added by InOut(name, dtype, shape) below.
  void Output(const std::string& name, uint32_t value);
  void InOut(const std::string& name, uint32_t in_value, uint32_t result);
  // A new INOUT parameter, in order with the inputs; returns the value
  // holding its incoming contents (Output(name, v) sets its result).
  uint32_t InOut(const std::string& name, pto::v1::DataType dtype,
                 const std::vector<int64_t>& shape);

  pto::v1::Graph Build() const { return g_; }
  pto::v1::Graph& graph() { return g_; }
  const pto::v1::Graph& graph() const { return g_; }

 private:
  const pto::v1::Value* Find(uint32_t id) const;
  // Adds parameter `name` holding `value` (and, for an INOUT, `result`);
  // returns `value`.
  uint32_t AddParam(const std::string& name, pto::v1::ParamRole role,
                    uint32_t value, uint32_t result = 0);
  pto::v1::Op* AddOp();  // into the innermost open region, or the graph
  // Adds op `kind` on `inputs` with one output of the type the compiler
  // infers for `attrs` (inputs[0]'s when inference fails); *out is its id.
  pto::v1::Op* AddInferred(const std::string& kind,
                           const std::vector<uint32_t>& inputs,
                           const InferAttrs& attrs, const std::string& name,
                           uint32_t* out);
  // Sets op's vector tile to the trailing dims of `tile`, at most `rank`.
  static void SetVecTile(pto::v1::Op* op, const std::vector<int64_t>& tile,
                         int rank);
  int RankOf(uint32_t id) const;
  pto::v1::Op* LastOp();  // the op added last, in the innermost open region

  pto::v1::Graph g_;
  uint32_t next_id_;
  uint32_t stride_;
  int op_count_ = 0;
  std::vector<pto::v1::Region*> scopes_;
};

// The one-dtype, one-shape form of GraphBuilder (kernels_test): every value
// is `dtype` of `shape`, every op gets the vector tile `tile`.
//
//   UniformGraphBuilder b("add_exp", DT_FP32, {37, 70}, {16, 32});
//   uint32_t x = b.Input("x"), y = b.Input("y");
//   b.Output("out", b.Op("exp", {b.Op("add", {x, y})}));
//   pto::v1::Graph g = b.Build();
class UniformGraphBuilder {
 public:
  UniformGraphBuilder(const std::string& name, pto::v1::DataType dtype,
                      std::vector<int64_t> shape, std::vector<int64_t> tile);

  // A new IN parameter; returns its value id.
  uint32_t Input(const std::string& name) {
    return b_.Input(name, dtype_, shape_);
  }
  // An op of `kind` on `inputs` (attribute "scalar" when given) with the
  // current tile; its output's type is inferred (the same dtype and shape
  // for the elementwise kinds).
  uint32_t Op(const std::string& kind, const std::vector<uint32_t>& inputs,
              std::optional<double> scalar = std::nullopt) {
    return b_.Op(kind, inputs, tile_, scalar);
  }
  // Makes `value` the OUT parameter `name`, or the result of the INOUT
  // parameter `name`.
  void Output(const std::string& name, uint32_t value) { b_.Output(name, value); }
  // A new INOUT parameter, in order with the others: returns the value
  // holding its incoming contents (Output(name, v) sets its result).
  uint32_t InOut(const std::string& name) { return b_.InOut(name, dtype_, shape_); }
  // Changes the vector tile of ops added from now on.
  void SetTile(std::vector<int64_t> tile) { tile_ = std::move(tile); }

  pto::v1::Graph Build() const { return b_.Build(); }
  const pto::v1::Graph& graph() const { return b_.graph(); }

 private:
  GraphBuilder b_;
  pto::v1::DataType dtype_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> tile_;
};

// An attribute holding `e`: an i when constant, else an expr.
pto::v1::Attribute ExprAttr(const SymExpr& e);
// A float attribute holding `e`: an f when constant, else an expr.
pto::v1::Attribute FloatExprAttr(const SymExpr& e);
// The loop softmax: for `index` in 0..bs, out[index] =
// softmax(inp[index]) over the last dim; inp [bs, rows, cols] IN, out the
// same shape INOUT (carried through the loop); tile [1, rows, cols].
pto::v1::Graph SoftmaxLoopGraph(const std::string& index = "idx",
                                int64_t rows = 8, int64_t cols = 32);
// lhs <op> rhs for an if's "cond" (op DIM_OP_EQ .. DIM_OP_GE).
pto::v1::DimExpr CompareExpr(pto::v1::DimOp op, const SymExpr& lhs,
                             const SymExpr& rhs);

// pypto.rms_norm's ops in `b`: x * rsqrt(sum(x * x) / n + 1e-6) * gamma over
// the last dim (n values), each op in tile `tile`; returns the result's id.
uint32_t RmsNormOps(GraphBuilder& b, uint32_t x, uint32_t gamma, int64_t n,
                    const std::vector<int64_t>& tile);

// exp(a) + b on [3,5] with tile [2,4] (tails in both dims), out = param 2.
pto::v1::Graph ExpAddGraph(pto::v1::DataType dtype = pto::v1::DT_FP32,
                           const std::string& a_name = "a");

// out = matmul(a, b): parameters a, b (IN, in_dtype) and out (OUT,
// out_dtype) with the given shapes; cube tile m=[16,32] k=[16,64] n=[32,64].
pto::v1::Graph MatmulGraph(const std::vector<int64_t>& a_shape,
                           const std::vector<int64_t>& b_shape,
                           const std::vector<int64_t>& out_shape,
                           bool a_trans = false, bool b_trans = false,
                           pto::v1::DataType in_dtype = pto::v1::DT_FP32,
                           pto::v1::DataType out_dtype = pto::v1::DT_FP32);

// (n+1)*(n+2)*...*(n+7) as a DimExpr tree over symbol `n` (27 nodes):
// within the DimExpr limits, but its value overflows int64 for any n above
// ~500, as the probe sizes of the symbolic lowering are.
pto::v1::DimExpr SevenFactorProduct(const std::string& n);

// out = exp(x), x's (and out's) first dim the product (n+1)*(n+2)*...*(n+7)
// with n bound by another parameter: an expression within the DimExpr limits
// whose multiplied-out form is not (once a crash of the region lowering).
pto::v1::Graph SymbolicProductGraph(const std::string& name);

// Verified(graph), then ImportGraph: the pipeline's first two stages, for
// tests that start from a Tensor Graph.
absl::StatusOr<TensorGraph> VerifyAndImport(const pto::v1::Graph& graph);

}  // namespace pto::compiler::testing

#endif  // PTO_COMPILER_TESTING_GRAPH_BUILDER_H_
