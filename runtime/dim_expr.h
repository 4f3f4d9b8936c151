// Evaluates symbolic dims (pto.v1.Dim / pto.v1.DimExpr) at launch, when the
// runtime has bound each symbol from the actual argument shapes. The runtime
// reads the proto directly: it never depends on the compiler, whose SymExpr
// (compiler/ir/sym_expr.h) makes these trees and evaluates them the same way
// (floordiv and mod round toward negative infinity, as in Python).
//
//   SymbolValues values = {{"bs", 7}};
//   absl::StatusOr<int64_t> n = EvaluateDim(param.shape().dims(0), values);
#ifndef PTO_RUNTIME_DIM_EXPR_H_
#define PTO_RUNTIME_DIM_EXPR_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "pto/v1/graph.pb.h"

namespace pto::runtime {

// Symbol name -> its value in this launch.
using SymbolValues = std::map<std::string, int64_t>;

// The value of `expr`; INVALID_ARGUMENT naming an unbound symbol, a division
// by zero, an int64 overflow, an unset node or unknown operator, or a tree
// deeper than 64 levels (the compiler emits at most 16).
absl::StatusOr<int64_t> EvaluateDimExpr(const pto::v1::DimExpr& expr,
                                        const SymbolValues& values);

// The value of a shape dim (size, symbol or expr).
absl::StatusOr<int64_t> EvaluateDim(const pto::v1::Dim& dim,
                                    const SymbolValues& values);

// A readable form of a dim for error messages ("bs", "128", "(bs*4)").
std::string DimToString(const pto::v1::Dim& dim);

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_DIM_EXPR_H_
