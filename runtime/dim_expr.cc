#include "runtime/dim_expr.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

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
      int64_t out = 0;
      bool overflow = false;
      switch (e.binary().op()) {
        case pto::v1::DIM_OP_ADD: overflow = __builtin_add_overflow(a, b, &out); break;
        case pto::v1::DIM_OP_SUB: overflow = __builtin_sub_overflow(a, b, &out); break;
        case pto::v1::DIM_OP_MUL: overflow = __builtin_mul_overflow(a, b, &out); break;
        case pto::v1::DIM_OP_FLOORDIV:
        case pto::v1::DIM_OP_MOD: {
          if (b == 0) {
            return Invalid(absl::StrCat("dim expression divides ", a, " by zero"));
          }
          if (a == INT64_MIN && b == -1) {
            overflow = true;
            break;
          }
          int64_t q = a / b;
          if (a % b != 0 && ((a < 0) != (b < 0))) --q;
          out = e.binary().op() == pto::v1::DIM_OP_MOD ? a - q * b : q;
          break;
        }
        case pto::v1::DIM_OP_MIN: out = std::min(a, b); break;
        case pto::v1::DIM_OP_MAX: out = std::max(a, b); break;
        // Comparisons and and/or: 1 or 0.
        case pto::v1::DIM_OP_EQ: out = a == b; break;
        case pto::v1::DIM_OP_NE: out = a != b; break;
        case pto::v1::DIM_OP_LT: out = a < b; break;
        case pto::v1::DIM_OP_LE: out = a <= b; break;
        case pto::v1::DIM_OP_GT: out = a > b; break;
        case pto::v1::DIM_OP_GE: out = a >= b; break;
        case pto::v1::DIM_OP_AND: out = a != 0 && b != 0; break;
        case pto::v1::DIM_OP_OR: out = a != 0 || b != 0; break;
        default:
          return Invalid(absl::StrCat("dim expression has unknown op ",
                                      static_cast<int>(e.binary().op())));
      }
      if (overflow) {
        return Invalid(absl::StrCat("dim expression overflows int64 (", a, ", ",
                                    b, ")"));
      }
      return out;
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
