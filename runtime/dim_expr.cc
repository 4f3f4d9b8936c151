#include "runtime/dim_expr.h"

#include "absl/strings/str_cat.h"
#include "runtime/dim_ops.h"

namespace pto::runtime {
namespace {

constexpr int kMaxDepth = 64;

absl::Status Invalid(const std::string& what) {
  return absl::InvalidArgumentError(what);
}

absl::StatusOr<int64_t> Lookup(const std::string& symbol, const SymbolValues& values) {
  auto it = values.find(symbol);
  if (it == values.end()) return Invalid(absl::StrCat("symbol ", symbol, " is not bound"));
  return it->second;
}

absl::StatusOr<int64_t> Eval(const pto::v1::DimExpr& e, const SymbolValues& values,
                             int depth) {
  if (depth > kMaxDepth) {
    return Invalid(absl::StrCat("dim expression deeper than ", kMaxDepth,
                                " levels"));
  }
  switch (e.kind_case()) {
    case pto::v1::DimExpr::kConstant: return e.constant();
    case pto::v1::DimExpr::kSymbol: return Lookup(e.symbol(), values);
    case pto::v1::DimExpr::kBinary: {
      absl::StatusOr<int64_t> l = Eval(e.binary().lhs(), values, depth + 1);
      if (!l.ok()) return l.status();
      absl::StatusOr<int64_t> r = Eval(e.binary().rhs(), values, depth + 1);
      if (!r.ok()) return r.status();
      const int64_t a = *l, b = *r;
      const pto::v1::DimOp op = e.binary().op();
      int64_t out = 0;
      if (ApplyDimOp(op, a, b, &out)) return out;
      if (op < pto::v1::DIM_OP_ADD || op > pto::v1::DIM_OP_OR) {
        return Invalid(absl::StrCat("dim expression has unknown op ", static_cast<int>(op)));
      }
      if ((op == pto::v1::DIM_OP_FLOORDIV || op == pto::v1::DIM_OP_MOD) && b == 0) {
        return Invalid(absl::StrCat("dim expression divides ", a, " by zero"));
      }
      return Invalid(absl::StrCat("dim expression overflows int64 (", a, ", ", b, ")"));
    }
    case pto::v1::DimExpr::kSelect: {  // only the operand selected is evaluated
      absl::StatusOr<int64_t> c = Eval(e.select().cond(), values, depth + 1);
      if (!c.ok()) return c.status();
      return Eval(*c != 0 ? e.select().if_true() : e.select().if_false(), values, depth + 1);
    }
    default: return Invalid("dim expression node is not set");
  }
}

const char* OpText(pto::v1::DimOp op) {
  switch (op) {
    case pto::v1::DIM_OP_ADD: return "+";
    case pto::v1::DIM_OP_SUB: return "-";
    case pto::v1::DIM_OP_MUL: return "*";
    case pto::v1::DIM_OP_FLOORDIV: return "//";
    case pto::v1::DIM_OP_MOD: return "%";
    case pto::v1::DIM_OP_MIN: return "min";
    case pto::v1::DIM_OP_MAX: return "max";
    case pto::v1::DIM_OP_EQ: return "==";
    case pto::v1::DIM_OP_NE: return "!=";
    case pto::v1::DIM_OP_LT: return "<";
    case pto::v1::DIM_OP_LE: return "<=";
    case pto::v1::DIM_OP_GT: return ">";
    case pto::v1::DIM_OP_GE: return ">=";
    case pto::v1::DIM_OP_AND: return " and ";
    case pto::v1::DIM_OP_OR: return " or ";
    default: return "?";
  }
}

std::string ExprText(const pto::v1::DimExpr& e, int depth) {
  if (depth > kMaxDepth) return "...";
  switch (e.kind_case()) {
    case pto::v1::DimExpr::kConstant: return absl::StrCat(e.constant());
    case pto::v1::DimExpr::kSymbol: return e.symbol();
    case pto::v1::DimExpr::kBinary: {
      const auto op = e.binary().op();
      const std::string l = ExprText(e.binary().lhs(), depth + 1);
      const std::string r = ExprText(e.binary().rhs(), depth + 1);
      if (op == pto::v1::DIM_OP_MIN || op == pto::v1::DIM_OP_MAX) {
        return absl::StrCat(OpText(op), "(", l, ", ", r, ")");
      }
      return absl::StrCat("(", l, OpText(op), r, ")");
    }
    case pto::v1::DimExpr::kSelect:
      return absl::StrCat("select(", ExprText(e.select().cond(), depth + 1), ", ",
                          ExprText(e.select().if_true(), depth + 1), ", ",
                          ExprText(e.select().if_false(), depth + 1), ")");
    default: return "?";
  }
}

}  // namespace

absl::StatusOr<int64_t> EvaluateDimExpr(const pto::v1::DimExpr& expr,
                                        const SymbolValues& values) {
  return Eval(expr, values, 1);
}

absl::StatusOr<int64_t> EvaluateDim(const pto::v1::Dim& dim,
                                    const SymbolValues& values) {
  switch (dim.kind_case()) {
    case pto::v1::Dim::kSize: return dim.size();
    case pto::v1::Dim::kSymbol: return Lookup(dim.symbol(), values);
    case pto::v1::Dim::kExpr: return EvaluateDimExpr(dim.expr(), values);
    default: return Invalid("dim is not set");
  }
}

std::string DimToString(const pto::v1::Dim& dim) {
  switch (dim.kind_case()) {
    case pto::v1::Dim::kSize: return absl::StrCat(dim.size());
    case pto::v1::Dim::kSymbol: return dim.symbol();
    case pto::v1::Dim::kExpr: return ExprText(dim.expr(), 1);
    default: return "?";
  }
}

}  // namespace pto::runtime
