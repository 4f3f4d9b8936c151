// Conditions of "if" ops: comparisons of integer
// expressions over symbols, combined with and/or.
//
//   // from a DimExpr tree such as (n > 64) and (i < n//2)
//   absl::StatusOr<CondExpr> c = CondExprFromProto(attr.expr());
//   c->ToString();                  // "n>64 and i<n//2"
//   c->Evaluate({{"n", 100}, {"i", 3}});   // true
//
// The arithmetic operands are SymExprs in canonical form, so two conditions
// that differ only in how their operands were written compare equal. A bare
// expression is a condition too (nonzero is true), which makes `cond = 1`
// (constant true) legal. Comparison and logic operators (DIM_OP_EQ..OR) are
// accepted only here: SymExprFromProto refuses them in dims and offsets.
#ifndef PTO_COMPILER_IR_COND_EXPR_H_
#define PTO_COMPILER_IR_COND_EXPR_H_

#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/ir/sym_expr.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler {

class CondExpr {
 public:
  enum Kind { kValue, kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr };

  CondExpr() = default;  // the constant 0 (false)
  static CondExpr Value(SymExpr e);
  static CondExpr Compare(Kind kind, SymExpr lhs, SymExpr rhs);
  static CondExpr Logic(Kind kind, CondExpr lhs, CondExpr rhs);

  Kind kind() const { return kind_; }
  // Every symbol used, sorted.
  std::set<std::string> Symbols() const;
  // Whether the condition holds; INVALID_ARGUMENT as SymExpr::Evaluate.
  absl::StatusOr<bool> Evaluate(const SymBindings& bindings) const;
  CondExpr Rename(const std::map<std::string, std::string>& names) const;
  // "n>64 and i<n//2"; `or` binds looser than `and` and is parenthesized
  // inside it.
  std::string ToString() const;
  pto::v1::DimExpr ToProto() const;

  friend bool operator==(const CondExpr& a, const CondExpr& b) {
    return a.ToString() == b.ToString();
  }

 private:
  Kind kind_ = kValue;
  SymExpr value_, lhs_, rhs_;                       // kValue; comparisons
  std::shared_ptr<const CondExpr> left_, right_;    // kAnd, kOr
};

// Parses a condition: the DimExpr bounds (depth, nodes) over the whole tree,
// comparisons of integer operands (which may hold comparisons as 0/1 values
// and selects), and/or of conditions (or integer operands, nonzero = true).
absl::StatusOr<CondExpr> CondExprFromProto(const pto::v1::DimExpr& proto);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_COND_EXPR_H_
