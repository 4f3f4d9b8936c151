// The op registry: every fact the compiler knows about a Tensor-graph op kind,
// in one table, so a new op is added in one place (op_registry.cc). The
// other readers of op facts take them from here: pypto's front end (through
// its native extension: client/python/native/op_registry_binding.h,
// pypto/op_table.py) and the reference evaluator (compiler/reference/, which
// dispatches on the category and checks the arity).
//
//   const OpInfo* info = FindOp("adds");   // nullptr for unknown kinds
//   info->num_inputs == 1; info->attrs[0].name == "scalar";
#ifndef PTO_COMPILER_OPS_OP_REGISTRY_H_
#define PTO_COMPILER_OPS_OP_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "compiler/pto/opcode.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler {

enum class OpCategory {
  kElementwiseBinary,  // out = f(a, b); a, b same dtype; numpy broadcasting
  kElementwiseScalar,  // out = f(a, attr "scalar")
  kElementwiseUnary,   // out = f(a) (float attrs, e.g. clip's min/max)
  kSelect,             // out = cond ? a : b (where); cond BOOL; broadcasting
  kCast,               // out = a converted to attr "dtype"
  kReduce,             // out = reduction of a over attr "dim" ("keepdim")
  kCreate,             // no inputs; out of attrs "shape" and "dtype"
  kMatmul,             // out = a @ b (cube path; cube_tile required)
  kLayout,             // view, assemble, transpose, ... (layout.h)
  kIndex,              // gather, scatter, ...: addressed by an index tensor; sort
  kScan,               // out = inclusive scan of a along attr "dim" (cumsum, cumprod)
  kControl,            // loop, if: regions carrying tensors
};

// Which element types an op's (data) operands accept.
enum class OperandTypes {
  kFloat,  // FP32, FP16, BF16 (computing in f32): arithmetic and math
  kAny,    // every supported dtype (comparisons, copy, where's branches)
  // kFloat plus INT32, INT64 (int64 tiles, wrapping like torch) and DOUBLE
  // (double tiles): add sub mul maximum minimum neg abs sign clip.
  kNumeric,
  // kFloat plus DOUBLE (double tiles; scalars as double immediates): div
  // pow and the tensor-with-scalar arithmetic (adds ... minimums).
  kFloatOrDouble,
  // INT32 and INT64 (int64 tiles): bitwise ops and gcd.
  kInteger,
};

// Whether a data operand of `dtype` is one `types` admits: the verifier's
// rule (InferSymResult). kAny admits every dtype (a value's own dtype is
// checked as a value).
bool AcceptsOperand(OperandTypes types, pto::v1::DataType dtype);

// The names of the categories and operand types outside C++ (pypto's
// op_table): "elementwise_binary", "elementwise_scalar", "elementwise_unary",
// "select", "cast", "reduce", "create", "matmul", "layout", "index",
// "control"; "float", "any", "numeric", "float_or_double", "integer".
const char* OpCategoryName(OpCategory category);
const char* OperandTypesName(OperandTypes types);

// The type an attribute must have (the oneof case of pto.v1.Attribute).
enum class AttrType { kInt, kFloat, kString, kBool, kDType, kInts, kExpr, kExprs };

// "i", "f", "s", "b", "dtype", "ints", "expr", "exprs"
const char* AttrTypeName(AttrType type);

struct AttrSpec {
  std::string name;
  AttrType type;
  bool required = true;
  // kInt also accepts an expr, kInts also exprs (loop
  // bounds, a view's offsets and shape over loop indices and symbols);
  // kFloat also an expr (a scalar operand such as x * n or
  // x * i, its integer value at launch converted to the op's compute type;
  // lower_regions.h passes it as a dynamic arg).
  bool symbolic = false;
};

struct OpInfo {
  std::string kind;         // as in pto.v1.Op.kind
  OpCategory category;
  int num_inputs;  // -1: one or more (concat)
  int num_outputs;
  std::vector<AttrSpec> attrs;  // every attribute the kind accepts
  bool needs_vec_tile;          // vector op: vec_tile required
  PtoOpcode pto;                // the tile instruction that computes it
  OperandTypes operands = OperandTypes::kFloat;
  bool bool_result = false;     // comparisons: the result is DT_BOOL
  // The float attributes (AttrType::kFloat, in `attrs` order) are the tile
  // instruction's scalar immediates (or run-time args where symbolic).
};

// The registry entry for `kind`, or nullptr when the kind is unknown.
const OpInfo* FindOp(absl::string_view kind);

// Every known kind, in registry order (for error messages and tests).
const std::vector<OpInfo>& AllOps();

}  // namespace pto::compiler

#endif  // PTO_COMPILER_OPS_OP_REGISTRY_H_
