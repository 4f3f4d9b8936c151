#include "compiler/ir/cond_expr.h"

#include "absl/strings/str_cat.h"

namespace pto::compiler {
namespace {

bool IsComparison(pto::v1::DimOp op) {
  return op >= pto::v1::DIM_OP_EQ && op <= pto::v1::DIM_OP_GE;
}
bool IsLogic(pto::v1::DimOp op) {
  return op == pto::v1::DIM_OP_AND || op == pto::v1::DIM_OP_OR;
}

// The whole tree's depth and node count, against the DimExpr bounds.
absl::Status CheckBounds(const pto::v1::DimExpr& p, int depth, int* nodes) {
  if (depth > kMaxDimExprDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expression is deeper than ", kMaxDimExprDepth, " levels (the limit)"));
  }
  if (++*nodes > kMaxDimExprNodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expression has more than ", kMaxDimExprNodes, " nodes (the limit)"));
  }
  if (p.kind_case() == pto::v1::DimExpr::kSelect) {
    for (const pto::v1::DimExpr* e :
         {&p.select().cond(), &p.select().if_true(), &p.select().if_false()}) {
      if (absl::Status s = CheckBounds(*e, depth + 1, nodes); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (p.kind_case() != pto::v1::DimExpr::kBinary) return absl::OkStatus();
  if (absl::Status s = CheckBounds(p.binary().lhs(), depth + 1, nodes); !s.ok()) {
    return s;
  }
  return CheckBounds(p.binary().rhs(), depth + 1, nodes);
}

absl::StatusOr<CondExpr> Parse(const pto::v1::DimExpr& p) {
  if (p.kind_case() == pto::v1::DimExpr::kBinary) {
    const pto::v1::DimOp op = p.binary().op();
    if (IsLogic(op)) {
      absl::StatusOr<CondExpr> l = Parse(p.binary().lhs());
      if (!l.ok()) return l.status();
      absl::StatusOr<CondExpr> r = Parse(p.binary().rhs());
      if (!r.ok()) return r.status();
      return CondExpr::Logic(op == pto::v1::DIM_OP_AND ? CondExpr::kAnd
                                                       : CondExpr::kOr,
                             *l, *r);
    }
    if (IsComparison(op)) {
      // Operands may hold comparisons and and/or too: integer 0/1 values.
      absl::StatusOr<SymExpr> l = SymExprFromProto(p.binary().lhs());
      if (!l.ok()) return l.status();
      absl::StatusOr<SymExpr> r = SymExprFromProto(p.binary().rhs());
      if (!r.ok()) return r.status();
      const CondExpr::Kind kind = static_cast<CondExpr::Kind>(
          CondExpr::kEq + (op - pto::v1::DIM_OP_EQ));
      return CondExpr::Compare(kind, *l, *r);
    }
  }
  absl::StatusOr<SymExpr> e = SymExprFromProto(p);
  if (!e.ok()) return e.status();
  return CondExpr::Value(*e);
}

const char* CompareText(CondExpr::Kind k) {
  switch (k) {
    case CondExpr::kEq: return "==";
    case CondExpr::kNe: return "!=";
    case CondExpr::kLt: return "<";
    case CondExpr::kLe: return "<=";
    case CondExpr::kGt: return ">";
    case CondExpr::kGe: return ">=";
    default: return "?";
  }
}

}  // namespace

CondExpr CondExpr::Value(SymExpr e) {
  CondExpr c;
  c.kind_ = kValue;
  c.value_ = std::move(e);
  return c;
}

CondExpr CondExpr::Compare(Kind kind, SymExpr lhs, SymExpr rhs) {
  CondExpr c;
  c.kind_ = kind;
  c.lhs_ = std::move(lhs);
  c.rhs_ = std::move(rhs);
  return c;
}

CondExpr CondExpr::Logic(Kind kind, CondExpr lhs, CondExpr rhs) {
  CondExpr c;
  c.kind_ = kind;
  c.left_ = std::make_shared<const CondExpr>(std::move(lhs));
  c.right_ = std::make_shared<const CondExpr>(std::move(rhs));
  return c;
}

std::set<std::string> CondExpr::Symbols() const {
  std::set<std::string> out;
  auto add = [&out](const std::set<std::string>& s) { out.insert(s.begin(), s.end()); };
  switch (kind_) {
    case kValue: add(value_.Symbols()); break;
    case kAnd:
    case kOr: add(left_->Symbols()); add(right_->Symbols()); break;
    default: add(lhs_.Symbols()); add(rhs_.Symbols()); break;
  }
  return out;
}

absl::StatusOr<bool> CondExpr::Evaluate(const SymBindings& bindings) const {
  if (kind_ == kValue) {
    absl::StatusOr<int64_t> v = value_.Evaluate(bindings);
    if (!v.ok()) return v.status();
    return *v != 0;
  }
  if (kind_ == kAnd || kind_ == kOr) {
    absl::StatusOr<bool> l = left_->Evaluate(bindings);
    if (!l.ok()) return l.status();
    if (kind_ == kAnd && !*l) return false;
    if (kind_ == kOr && *l) return true;
    return right_->Evaluate(bindings);
  }
  absl::StatusOr<int64_t> l = lhs_.Evaluate(bindings);
  if (!l.ok()) return l.status();
  absl::StatusOr<int64_t> r = rhs_.Evaluate(bindings);
  if (!r.ok()) return r.status();
  switch (kind_) {
    case kEq: return *l == *r;
    case kNe: return *l != *r;
    case kLt: return *l < *r;
    case kLe: return *l <= *r;
    case kGt: return *l > *r;
    default: return *l >= *r;
  }
}

CondExpr CondExpr::Rename(const std::map<std::string, std::string>& names) const {
  switch (kind_) {
    case kValue: return Value(value_.Rename(names));
    case kAnd:
    case kOr: return Logic(kind_, left_->Rename(names), right_->Rename(names));
    default: return Compare(kind_, lhs_.Rename(names), rhs_.Rename(names));
  }
}

std::string CondExpr::ToString() const {
  switch (kind_) {
    case kValue: return value_.ToString();
    case kAnd:
    case kOr: {
      auto side = [this](const CondExpr& c) {
        return kind_ == kAnd && c.kind_ == kOr ? absl::StrCat("(", c.ToString(), ")")
                                               : c.ToString();
      };
      return absl::StrCat(side(*left_), kind_ == kAnd ? " and " : " or ",
                          side(*right_));
    }
    default:
      return absl::StrCat(lhs_.ToString(), CompareText(kind_), rhs_.ToString());
  }
}

pto::v1::DimExpr CondExpr::ToProto() const {
  if (kind_ == kValue) return value_.ToProto();
  pto::v1::DimExpr out;
  pto::v1::DimBinary* b = out.mutable_binary();
  if (kind_ == kAnd || kind_ == kOr) {
    b->set_op(kind_ == kAnd ? pto::v1::DIM_OP_AND : pto::v1::DIM_OP_OR);
    *b->mutable_lhs() = left_->ToProto();
    *b->mutable_rhs() = right_->ToProto();
  } else {
    b->set_op(static_cast<pto::v1::DimOp>(pto::v1::DIM_OP_EQ + (kind_ - kEq)));
    *b->mutable_lhs() = lhs_.ToProto();
    *b->mutable_rhs() = rhs_.ToProto();
  }
  return out;
}

absl::StatusOr<CondExpr> CondExprFromProto(const pto::v1::DimExpr& proto) {
  int nodes = 0;
  if (absl::Status s = CheckBounds(proto, 1, &nodes); !s.ok()) return s;
  return Parse(proto);
}

}  // namespace pto::compiler
