// pypto._native's dimension arithmetic: the one meaning of the dimension
// operators (runtime/dim_ops.h), the runtime's evaluator of DimExpr trees
// (runtime/dim_expr.h) and the compiler's canonical form of them
// (compiler/ir/sym_expr.h), for Python. pypto's symbolic scalars
// (pypto/symbolic.py) fold constants through apply_dim_op, so a dim means
// the same in the front end, the compiler and the runtime.
//
//   apply_dim_op(graph_pb2.DIM_OP_FLOORDIV, -7, 2)   # -4
//   apply_dim_op(graph_pb2.DIM_OP_ADD, 2**63 - 1, 1) # None: no int64
//   evaluate_dim_expr(expr_bytes, {"n": 7})          # runtime's value
//   fold_dim_expr(expr_bytes)                        # ("n*4+3", None)
//
// Operands and values are Python ints; one outside int64 is no int64 value
// (apply_dim_op: None; evaluate_dim_expr: ValueError). Errors are
// ValueError with the evaluator's message (an unbound symbol, a division by
// zero, an int64 overflow, a malformed tree).
#ifndef PTO_CLIENT_PYTHON_NATIVE_DIM_BINDING_H_
#define PTO_CLIENT_PYTHON_NATIVE_DIM_BINDING_H_

#include <pybind11/pybind11.h>

namespace pto::python {

// Adds apply_dim_op, evaluate_dim_expr and fold_dim_expr to module `m`.
void BindDimOps(pybind11::module_& m);

}  // namespace pto::python

#endif  // PTO_CLIENT_PYTHON_NATIVE_DIM_BINDING_H_
