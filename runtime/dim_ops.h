// The integer meaning of each dimension operator (pto.v1.DimOp), in one
// place: the runtime's evaluator (dim_expr.cc) and the compiler's SymExpr
// (compiler/ir/sym_expr.cc), which folds and evaluates the same trees, both
// compute through it, so a kernel's sizes mean the same at compile time and
// at launch. // and % round toward negative infinity, as in Python;
// comparisons, and/or give 1 or 0.
//
//   int64_t v;
//   if (!ApplyDimOp(pto::v1::DIM_OP_FLOORDIV, -7, 2, &v)) ...   // v == -4
#ifndef PTO_RUNTIME_DIM_OPS_H_
#define PTO_RUNTIME_DIM_OPS_H_

#include <algorithm>
#include <cstdint>

#include "pto/v1/graph.pb.h"

namespace pto::runtime {

// Whether a // b and a % b are int64 values: b != 0, and not INT64_MIN / -1.
inline bool DivisionDefined(int64_t a, int64_t b) {
  return b != 0 && !(a == INT64_MIN && b == -1);
}

// Python's a // b and a % b; DivisionDefined(a, b) must hold.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

// a `op` b into *out; false where the result is no int64 (overflow, a
// division by zero, INT64_MIN / -1) or `op` is unknown.
inline bool ApplyDimOp(pto::v1::DimOp op, int64_t a, int64_t b, int64_t* out) {
  switch (op) {
    case pto::v1::DIM_OP_ADD: return !__builtin_add_overflow(a, b, out);
    case pto::v1::DIM_OP_SUB: return !__builtin_sub_overflow(a, b, out);
    case pto::v1::DIM_OP_MUL: return !__builtin_mul_overflow(a, b, out);
    case pto::v1::DIM_OP_FLOORDIV:
      if (!DivisionDefined(a, b)) return false;
      *out = FloorDiv(a, b);
      return true;
    case pto::v1::DIM_OP_MOD:
      if (!DivisionDefined(a, b)) return false;
      *out = FloorMod(a, b);
      return true;
    case pto::v1::DIM_OP_MIN: *out = std::min(a, b); return true;
    case pto::v1::DIM_OP_MAX: *out = std::max(a, b); return true;
    case pto::v1::DIM_OP_EQ: *out = a == b; return true;
    case pto::v1::DIM_OP_NE: *out = a != b; return true;
    case pto::v1::DIM_OP_LT: *out = a < b; return true;
    case pto::v1::DIM_OP_LE: *out = a <= b; return true;
    case pto::v1::DIM_OP_GT: *out = a > b; return true;
    case pto::v1::DIM_OP_GE: *out = a >= b; return true;
    case pto::v1::DIM_OP_AND: *out = a != 0 && b != 0; return true;
    case pto::v1::DIM_OP_OR: *out = a != 0 || b != 0; return true;
    default: return false;
  }
}

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_DIM_OPS_H_
