// The Tensor Graph: the first IR level, an op on whole tensors per node.
//
// Made from a verified pto.v1.Graph by ImportGraph (import.h). Value ids are
// dense and canonical: the parameters' incoming values first (in parameter
// order), then each op's outputs in program order (a control op's region
// args and region values first, region by region); names are kept for
// debugging only and never influence lowering or the cache key.
#ifndef PTO_COMPILER_IR_TENSOR_GRAPH_H_
#define PTO_COMPILER_IR_TENSOR_GRAPH_H_

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/cond_expr.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/ops/op_registry.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler {

// Alternatives in AttrType order: i, f, s, b, dtype, ints, expr, exprs,
// then an "if"'s cond. Import stores a symbolic attribute (expr, exprs) as
// i or ints (a float attribute: f) when it folds to constants, so only
// attributes that really depend on symbols (a view's offsets in a loop
// body, a scalar operand x * n) hold expressions.
using AttrValue = std::variant<int64_t, double, std::string, bool,
                               pto::v1::DataType, std::vector<int64_t>,
                               SymExpr, std::vector<SymExpr>, CondExpr>;

// A dim of `TensorValue::shape` that is symbolic (see `sym_shape`).
inline constexpr int64_t kSymbolicDim = -1;

struct TensorValue {
  pto::v1::DataType dtype = pto::v1::DT_UNSPECIFIED;
  // Dims, outermost first: the static size, or kSymbolicDim where sym_shape
  // holds an expression. Lowering passes that only handle static shapes
  // read this; TensorGraph::HasSymbolicDims() tells them when they cannot.
  std::vector<int64_t> shape;
  SymShape sym_shape;          // the same dims, constants where static
  // A value with a valid region (graph.proto Value.valid_shape): `shape`
  // and `sym_shape` are that region, the dims ops compute on, and this is
  // the static shape it lies in (printed, never lowered). Empty otherwise.
  SymShape static_shape;
  std::string name;            // debug only
};

struct TensorParam {
  std::string name;  // debug only
  pto::v1::ParamRole role = pto::v1::PARAM_ROLE_UNSPECIFIED;
  int in_value = -1;   // IN, INOUT: the caller's incoming data
  int out_value = -1;  // OUT, INOUT: the value written back to the caller
};

struct TensorOp;

// A nested body: a loop's body, an if's then/else. Its
// args are the carried tensors on entry (values defined by the region), its
// results their values at the end (one per arg, same type); ops may read
// any value defined before the enclosing op (captures).
struct TensorRegion {
  std::vector<int> args;
  std::vector<TensorOp> ops;  // program order
  std::vector<int> results;
};

struct TensorOp {
  const OpInfo* info = nullptr;  // never null in a verified graph
  std::string name;              // debug only
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::map<std::string, AttrValue> attrs;  // sorted by name
  std::vector<int64_t> vec_tile;           // rank == output rank
  // Cube ops (matmul): [mL0, mL1, kL0, kL1, nL0, nL1]; empty otherwise.
  std::vector<int64_t> cube_tile;
  // "loop": the body; "if": then, else. Empty for every other kind.
  std::vector<TensorRegion> regions;
};

struct TensorGraph {
  std::string name;  // debug only
  std::vector<TensorValue> values;
  std::vector<TensorParam> params;
  std::vector<TensorOp> ops;  // program order

  // The op's float attributes in registry order: the scalar immediates of
  // its tile instruction ("scalar"; clip's "min", "max"). A symbolic one
  // (an expr) reads 0: FlattenRegions (lower/flatten_regions.h)
  // replaces those before lowering.
  static std::vector<double> Scalars(const TensorOp& op);

  // Whether any value has a symbolic dim.
  bool HasSymbolicDims() const;
  // Whether some op has regions (loops, branches).
  bool HasRegions() const;
};

// Short role name: "in", "out", "inout".
const char* ParamRoleName(pto::v1::ParamRole role);

// Human-readable form, stable for golden tests, e.g.
//   tensor_graph "k"
//     param #0 in    %0 "a": f32[3,5]
//     %2:f32[3,5] = exp %0  tile=[2,4]
//     %3:f32[bs,4] = loop %1 index="i" start=0 step=1 stop=bs
//       body (%4):
//         %5:f32[1,4] = view %0 offsets=[i,0] shape=[1,4]  tile=[1,4]
//         %6:f32[bs,4] = assemble %5, %4 offsets=[i,0]  tile=[1,4]
//         yield %6
std::string PrintTensorGraph(const TensorGraph& graph);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_TENSOR_GRAPH_H_
