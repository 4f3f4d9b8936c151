#include "compiler/ir/sym_expr.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/util/strings.h"
#include "runtime/dim_ops.h"

namespace pto::compiler {
namespace {

using Term = SymExpr::Term;
using Atom = SymExpr::Atom;
using AtomPtr = SymExpr::AtomPtr;

bool AddOk(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
bool MulOk(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// Python's // and % and the rest of the operators' integer meaning are the
// runtime's (runtime/dim_ops.h: runtime::FloorDiv, ...), so folding here
// agrees with launch.
using runtime::DivisionDefined;

std::string MonomialKey(const std::vector<AtomPtr>& factors) {
  std::string key;
  for (const AtomPtr& a : factors) {
    if (!key.empty()) key += "*";
    key += a->key;
  }
  return key;
}

bool AtomLess(const AtomPtr& a, const AtomPtr& b) { return a->key < b->key; }

// An operand of // or %: bare when it is one atom or a non-negative constant.
std::string Operand(const SymExpr& e) {
  std::optional<int64_t> c = e.AsConstant();
  if (c.has_value()) {
    return *c >= 0 ? absl::StrCat(*c) : absl::StrCat("(", *c, ")");
  }
  if (e.AsSymbol().has_value()) return e.ToString();
  return absl::StrCat("(", e.ToString(), ")");
}

// The comparison and and/or atom kinds, in DimOp order (DIM_OP_EQ first).
constexpr Atom::Kind kCompareKinds[] = {Atom::kEq, Atom::kNe, Atom::kLt, Atom::kLe,
                                        Atom::kGt, Atom::kGe, Atom::kAnd, Atom::kOr};

bool IsCompareOp(pto::v1::DimOp op) {
  return op >= pto::v1::DIM_OP_EQ && op <= pto::v1::DIM_OP_OR;
}

Atom::Kind CompareKind(pto::v1::DimOp op) {
  return kCompareKinds[op - pto::v1::DIM_OP_EQ];
}

pto::v1::DimOp CompareOp(Atom::Kind kind) {
  for (int i = 0; i < 8; ++i) {
    if (kCompareKinds[i] == kind) return static_cast<pto::v1::DimOp>(pto::v1::DIM_OP_EQ + i);
  }
  return pto::v1::DIM_OP_UNSPECIFIED;
}

const char* CompareOpText(Atom::Kind kind) {
  switch (kind) {
    case Atom::kEq: return "==";
    case Atom::kNe: return "!=";
    case Atom::kLt: return "<";
    case Atom::kLe: return "<=";
    case Atom::kGt: return ">";
    case Atom::kGe: return ">=";
    case Atom::kAnd: return " and ";
    case Atom::kOr: return " or ";
    default: return "?";
  }
}

// The DimOp of a binary atom kind (not kSymbol or kSelect).
pto::v1::DimOp AtomOp(Atom::Kind kind) {
  switch (kind) {
    case Atom::kFloorDiv: return pto::v1::DIM_OP_FLOORDIV;
    case Atom::kMod: return pto::v1::DIM_OP_MOD;
    case Atom::kMin: return pto::v1::DIM_OP_MIN;
    case Atom::kMax: return pto::v1::DIM_OP_MAX;
    default: return CompareOp(kind);
  }
}

// a op b for a comparison or and/or kind, as 0 or 1.
int64_t CompareInt(Atom::Kind kind, int64_t a, int64_t b) {
  int64_t out = 0;
  runtime::ApplyDimOp(CompareOp(kind), a, b, &out);  // never fails for these
  return out;
}

std::string AtomKey(const Atom& a) {
  switch (a.kind) {
    case Atom::kSymbol: return a.name;
    case Atom::kFloorDiv:
      return absl::StrCat(Operand(a.lhs), "//", Operand(a.rhs));
    case Atom::kMod: return absl::StrCat(Operand(a.lhs), "%", Operand(a.rhs));
    case Atom::kMin:
      return absl::StrCat("min(", a.lhs.ToString(), ", ", a.rhs.ToString(), ")");
    case Atom::kMax:
      return absl::StrCat("max(", a.lhs.ToString(), ", ", a.rhs.ToString(), ")");
    case Atom::kSelect:
      return absl::StrCat("select(", a.cond.ToString(), ", ", a.lhs.ToString(), ", ",
                          a.rhs.ToString(), ")");
    default:
      return absl::StrCat("(", a.lhs.ToString(), CompareOpText(a.kind), a.rhs.ToString(),
                          ")");
  }
}

const std::string& EmptyKey() {
  static const std::string* empty = new std::string;
  return *empty;
}

}  // namespace

SymExpr::SymExpr(int64_t value) : constant_(value) {}

const std::string& SymExpr::key() const { return key_ ? *key_ : EmptyKey(); }

SymExpr SymExpr::FromTerms(std::vector<Term> terms, int64_t constant) {
  SymExpr e(constant);
  if (terms.size() > static_cast<size_t>(kMaxTerms)) {
    e.overflow_ = true;
    terms.resize(kMaxTerms);
  }
  std::vector<std::pair<std::string, Term>> keyed;
  keyed.reserve(terms.size());
  for (Term& t : terms) {
    std::sort(t.factors.begin(), t.factors.end(), AtomLess);
    keyed.emplace_back(MonomialKey(t.factors), std::move(t));
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string key;
  for (size_t i = 0; i < keyed.size();) {
    size_t j = i + 1;
    int64_t coeff = keyed[i].second.coeff;
    while (j < keyed.size() && keyed[j].first == keyed[i].first) {
      if (!AddOk(coeff, keyed[j].second.coeff, &coeff)) e.overflow_ = true;
      ++j;
    }
    if (coeff != 0) {
      Term t = std::move(keyed[i].second);
      t.coeff = coeff;
      absl::StrAppend(&key, key.empty() ? "" : "+", coeff, "*", keyed[i].first);
      e.terms_.push_back(std::move(t));
    }
    i = j;
  }
  if (!e.terms_.empty()) e.key_ = std::make_shared<const std::string>(std::move(key));
  return e;
}

SymExpr SymExpr::FromAtom(AtomPtr atom) {
  Term t;
  t.factors.push_back(std::move(atom));
  return FromTerms({std::move(t)}, 0);
}

SymExpr SymExpr::Symbol(const std::string& name) {
  auto atom = std::make_shared<Atom>();
  atom->kind = Atom::kSymbol;
  atom->name = name;
  atom->key = name;
  return FromAtom(std::move(atom));
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  std::vector<Term> terms = a.terms_;
  terms.insert(terms.end(), b.terms_.begin(), b.terms_.end());
  int64_t c;
  bool overflow = !AddOk(a.constant_, b.constant_, &c);
  SymExpr e = SymExpr::FromTerms(std::move(terms), c);
  e.overflow_ = e.overflow_ || overflow || a.overflow_ || b.overflow_;
  return e;
}

SymExpr SymExpr::operator-() const { return *this * SymExpr(-1); }

SymExpr operator-(const SymExpr& a, const SymExpr& b) { return a + (-b); }

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  bool overflow = a.overflow_ || b.overflow_;
  // (sum a_i + ca) * (sum b_j + cb), with the constants as empty monomials.
  std::vector<Term> as = a.terms_, bs = b.terms_;
  if (a.constant_ != 0) as.push_back(Term{{}, a.constant_});
  if (b.constant_ != 0) bs.push_back(Term{{}, b.constant_});
  if (as.size() * bs.size() > static_cast<size_t>(kMaxTerms) * 4) {
    SymExpr e = a;  // too large to multiply out; the result is unusable
    e.overflow_ = true;
    return e;
  }
  std::vector<Term> terms;
  int64_t constant = 0;
  for (const Term& x : as) {
    for (const Term& y : bs) {
      int64_t coeff;
      if (!MulOk(x.coeff, y.coeff, &coeff)) overflow = true;
      if (x.factors.empty() && y.factors.empty()) {
        if (!AddOk(constant, coeff, &constant)) overflow = true;
        continue;
      }
      Term t;
      t.coeff = coeff;
      t.factors = x.factors;
      t.factors.insert(t.factors.end(), y.factors.begin(), y.factors.end());
      terms.push_back(std::move(t));
    }
  }
  SymExpr e = SymExpr::FromTerms(std::move(terms), constant);
  e.overflow_ = e.overflow_ || overflow;
  return e;
}

SymExpr SymExpr::TermExpr(const Term& t) {
  SymExpr m(t.coeff);
  for (const AtomPtr& f : t.factors) m = m * FromAtom(f);
  return m;
}

void SymExpr::SplitByDivisor(int64_t c, SymExpr* q, SymExpr* r) const {
  SymExpr qs(runtime::FloorDiv(constant_, c)), rs(runtime::FloorMod(constant_, c));
  for (const Term& t : terms_) {
    if (t.coeff % c == 0) {
      qs = qs + TermExpr(Term{t.factors, t.coeff / c});
    } else {
      rs = rs + TermExpr(t);
    }
  }
  qs.overflow_ = qs.overflow_ || overflow_;
  rs.overflow_ = rs.overflow_ || overflow_;
  *q = std::move(qs);
  *r = std::move(rs);
}

SymExpr SymExpr::MakeAtom(int kind, const SymExpr& lhs, const SymExpr& rhs) {
  auto atom = std::make_shared<Atom>();
  atom->kind = static_cast<Atom::Kind>(kind);
  atom->lhs = lhs;
  atom->rhs = rhs;
  if ((kind == Atom::kMin || kind == Atom::kMax) &&
      rhs.ToString() < lhs.ToString()) {
    std::swap(atom->lhs, atom->rhs);  // commutative: one order
  }
  atom->key = AtomKey(*atom);
  SymExpr e = FromAtom(std::move(atom));
  e.overflow_ = lhs.overflow_ || rhs.overflow_;
  return e;
}

SymExpr SymExpr::FloorDiv(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> ca = a.AsConstant(), cb = b.AsConstant();
  if (cb.has_value() && *cb != 0 && !a.overflow_ && !b.overflow_) {
    if (ca.has_value()) {
      if (!DivisionDefined(*ca, *cb)) {
        SymExpr e(0);
        e.overflow_ = true;
        return e;
      }
      return SymExpr(runtime::FloorDiv(*ca, *cb));
    }
    if (*cb == 1) return a;
    if (*cb > 0) {
      // (c*q + r) // c == q + r // c for integer q.
      SymExpr q, r;
      a.SplitByDivisor(*cb, &q, &r);
      if (r.IsConstant()) return q + SymExpr(runtime::FloorDiv(*r.AsConstant(), *cb));
      return q + MakeAtom(Atom::kFloorDiv, r, b);
    }
  }
  return MakeAtom(Atom::kFloorDiv, a, b);
}

SymExpr SymExpr::Mod(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> ca = a.AsConstant(), cb = b.AsConstant();
  if (cb.has_value() && *cb != 0 && !a.overflow_ && !b.overflow_) {
    if (ca.has_value()) {
      if (!DivisionDefined(*ca, *cb)) {
        SymExpr e(0);
        e.overflow_ = true;
        return e;
      }
      return SymExpr(runtime::FloorMod(*ca, *cb));
    }
    if (*cb == 1 || *cb == -1) return SymExpr(0);
    if (*cb > 0) {
      // (c*q + r) % c == r % c.
      SymExpr q, r;
      a.SplitByDivisor(*cb, &q, &r);
      if (r.IsConstant()) return SymExpr(runtime::FloorMod(*r.AsConstant(), *cb));
      return MakeAtom(Atom::kMod, r, b);
    }
  }
  return MakeAtom(Atom::kMod, a, b);
}

SymExpr SymExpr::Min(const SymExpr& a, const SymExpr& b) {
  SymExpr diff = a - b;
  if (std::optional<int64_t> d = diff.AsConstant(); d && diff.Representable()) {
    return *d <= 0 ? a : b;
  }
  return MakeAtom(Atom::kMin, a, b);
}

SymExpr SymExpr::Max(const SymExpr& a, const SymExpr& b) {
  SymExpr diff = a - b;
  if (std::optional<int64_t> d = diff.AsConstant(); d && diff.Representable()) {
    return *d >= 0 ? a : b;
  }
  return MakeAtom(Atom::kMax, a, b);
}

SymExpr SymExpr::Compare(pto::v1::DimOp op, const SymExpr& a, const SymExpr& b) {
  const Atom::Kind kind = CompareKind(op);
  std::optional<int64_t> ca = a.AsConstant(), cb = b.AsConstant();
  if (ca && cb && a.Representable() && b.Representable()) {
    return SymExpr(CompareInt(kind, *ca, *cb));
  }
  if (kind != Atom::kAnd && kind != Atom::kOr) {
    SymExpr diff = a - b;
    if (std::optional<int64_t> d = diff.AsConstant(); d && diff.Representable()) {
      return SymExpr(CompareInt(kind, *d, 0));
    }
  }
  return MakeAtom(kind, a, b);
}

SymExpr SymExpr::Select(const SymExpr& c, const SymExpr& a, const SymExpr& b) {
  if (std::optional<int64_t> k = c.AsConstant(); k && c.Representable()) {
    return *k != 0 ? a : b;
  }
  if (a == b && a.Representable() && b.Representable()) return a;
  auto atom = std::make_shared<Atom>();
  atom->kind = Atom::kSelect;
  atom->cond = c;
  atom->lhs = a;
  atom->rhs = b;
  atom->key = AtomKey(*atom);
  SymExpr e = FromAtom(std::move(atom));
  e.overflow_ = c.overflow_ || a.overflow_ || b.overflow_;
  return e;
}

SymExpr SymExpr::CeilDiv(const SymExpr& a, const SymExpr& b) {
  return FloorDiv(a + b - SymExpr(1), b);
}

std::optional<int64_t> SymExpr::AsConstant() const {
  if (!terms_.empty()) return std::nullopt;
  return constant_;
}

std::optional<std::string> SymExpr::AsSymbol() const {
  if (constant_ != 0 || terms_.size() != 1) return std::nullopt;
  const Term& t = terms_[0];
  if (t.coeff != 1 || t.factors.size() != 1 ||
      t.factors[0]->kind != Atom::kSymbol) {
    return std::nullopt;
  }
  return t.factors[0]->name;
}

std::optional<int64_t> SymExpr::ConstantUpperBound() const {
  if (IsConstant()) return constant_;
  if (terms_.size() != 1 || terms_[0].coeff != 1 || terms_[0].factors.size() != 1) {
    return std::nullopt;
  }
  const Atom& a = *terms_[0].factors[0];
  std::optional<int64_t> l = a.lhs.ConstantUpperBound(), r = a.rhs.ConstantUpperBound();
  std::optional<int64_t> bound;
  if (a.kind == Atom::kMin && (l || r)) bound = l && r ? std::min(*l, *r) : l ? *l : *r;
  if ((a.kind == Atom::kMax || a.kind == Atom::kSelect) && l && r) {
    bound = std::max(*l, *r);
  }
  if (CompareOp(a.kind) != pto::v1::DIM_OP_UNSPECIFIED) bound = 1;
  int64_t out;
  if (!bound || __builtin_add_overflow(*bound, constant_, &out)) return std::nullopt;
  return out;
}

namespace {

void CollectSymbols(const SymExpr& e, std::set<std::string>* out);

void CollectAtomSymbols(const Atom& a, std::set<std::string>* out) {
  if (a.kind == Atom::kSymbol) {
    out->insert(a.name);
  } else {
    if (a.kind == Atom::kSelect) CollectSymbols(a.cond, out);
    CollectSymbols(a.lhs, out);
    CollectSymbols(a.rhs, out);
  }
}

}  // namespace

std::set<std::string> SymExpr::Symbols() const {
  std::set<std::string> out;
  for (const Term& t : terms_) {
    for (const AtomPtr& f : t.factors) CollectAtomSymbols(*f, &out);
  }
  return out;
}

namespace {
void CollectSymbols(const SymExpr& e, std::set<std::string>* out) {
  std::set<std::string> s = e.Symbols();
  out->insert(s.begin(), s.end());
}

absl::Status Overflow(const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("evaluating ", what, " overflows int64"));
}
}  // namespace

absl::StatusOr<int64_t> SymExpr::Evaluate(const SymBindings& bindings) const {
  if (overflow_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expression ", ToString(), " is not representable (int64 overflow or "
        "more than ", kMaxTerms, " terms)"));
  }
  int64_t sum = constant_;
  for (const Term& t : terms_) {
    int64_t product = t.coeff;
    for (const AtomPtr& f : t.factors) {
      int64_t v;
      if (f->kind == Atom::kSymbol) {
        auto it = bindings.find(f->name);
        if (it == bindings.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("symbol ", f->name, " is not bound"));
        }
        v = it->second;
      } else if (f->kind == Atom::kSelect) {
        absl::StatusOr<int64_t> c = f->cond.Evaluate(bindings);
        if (!c.ok()) return c.status();
        absl::StatusOr<int64_t> chosen = (*c != 0 ? f->lhs : f->rhs).Evaluate(bindings);
        if (!chosen.ok()) return chosen.status();
        v = *chosen;
      } else {
        absl::StatusOr<int64_t> l = f->lhs.Evaluate(bindings);
        if (!l.ok()) return l.status();
        absl::StatusOr<int64_t> r = f->rhs.Evaluate(bindings);
        if (!r.ok()) return r.status();
        if (!runtime::ApplyDimOp(AtomOp(f->kind), *l, *r, &v)) {
          if ((f->kind == Atom::kFloorDiv || f->kind == Atom::kMod) && *r == 0) {
            return absl::InvalidArgumentError(
                absl::StrCat(f->key, ": division by zero"));
          }
          return Overflow(f->key);
        }
      }
      if (!MulOk(product, v, &product)) return Overflow(ToString());
    }
    if (!AddOk(sum, product, &sum)) return Overflow(ToString());
  }
  return sum;
}

SymExpr SymExpr::Rename(const std::map<std::string, std::string>& names) const {
  SymExpr out(constant_);
  for (const Term& t : terms_) {
    SymExpr m(t.coeff);
    for (const AtomPtr& f : t.factors) {
      SymExpr a;
      switch (f->kind) {
        case Atom::kSymbol: {
          auto it = names.find(f->name);
          a = Symbol(it == names.end() ? f->name : it->second);
          break;
        }
        case Atom::kFloorDiv:
          a = FloorDiv(f->lhs.Rename(names), f->rhs.Rename(names));
          break;
        case Atom::kMod: a = Mod(f->lhs.Rename(names), f->rhs.Rename(names)); break;
        case Atom::kMin: a = Min(f->lhs.Rename(names), f->rhs.Rename(names)); break;
        case Atom::kMax: a = Max(f->lhs.Rename(names), f->rhs.Rename(names)); break;
        case Atom::kSelect:
          a = Select(f->cond.Rename(names), f->lhs.Rename(names), f->rhs.Rename(names));
          break;
        default:
          a = Compare(CompareOp(f->kind), f->lhs.Rename(names), f->rhs.Rename(names));
          break;
      }
      m = m * a;
    }
    out = out + m;
  }
  out.overflow_ = out.overflow_ || overflow_;
  return out;
}

std::string SymExpr::ToString() const {
  std::string out;
  for (const Term& t : terms_) {
    const bool single = t.factors.size() == 1;
    std::string product;
    for (const AtomPtr& f : t.factors) {
      if (!product.empty()) product += "*";
      // a*b//c would parse as (a*b)//c: parenthesize // and % in products.
      // -a//b would parse as (-a)//b: and in negated terms too.
      const bool wrap = (f->kind == Atom::kFloorDiv || f->kind == Atom::kMod) &&
                        (!single || t.coeff != 1);
      product += wrap ? absl::StrCat("(", f->key, ")") : f->key;
    }
    const uint64_t mag = t.coeff < 0 ? 0 - static_cast<uint64_t>(t.coeff)
                                     : static_cast<uint64_t>(t.coeff);
    if (mag != 1) absl::StrAppend(&product, "*", mag);
    if (out.empty()) {
      out = t.coeff < 0 ? absl::StrCat("-", product) : product;
    } else {
      absl::StrAppend(&out, t.coeff < 0 ? "-" : "+", product);
    }
  }
  if (out.empty()) return absl::StrCat(constant_);
  if (constant_ > 0) absl::StrAppend(&out, "+", constant_);
  if (constant_ < 0) {
    absl::StrAppend(&out, "-", constant_ == INT64_MIN
                                   ? std::string("9223372036854775808")
                                   : absl::StrCat(-constant_));
  }
  return out;
}

namespace {

pto::v1::DimExpr ConstantProto(int64_t c) {
  pto::v1::DimExpr e;
  e.set_constant(c);
  return e;
}

pto::v1::DimExpr BinaryProto(pto::v1::DimOp op, pto::v1::DimExpr lhs,
                             pto::v1::DimExpr rhs) {
  pto::v1::DimExpr e;
  pto::v1::DimBinary* b = e.mutable_binary();
  b->set_op(op);
  *b->mutable_lhs() = std::move(lhs);
  *b->mutable_rhs() = std::move(rhs);
  return e;
}

}  // namespace

pto::v1::DimExpr SymExpr::ToProto() const {
  std::optional<pto::v1::DimExpr> sum;
  for (const Term& t : terms_) {
    std::optional<pto::v1::DimExpr> product;
    for (const AtomPtr& f : t.factors) {
      pto::v1::DimExpr a;
      switch (f->kind) {
        case Atom::kSymbol: a.set_symbol(f->name); break;
        case Atom::kFloorDiv:
          a = BinaryProto(pto::v1::DIM_OP_FLOORDIV, f->lhs.ToProto(), f->rhs.ToProto());
          break;
        case Atom::kMod:
          a = BinaryProto(pto::v1::DIM_OP_MOD, f->lhs.ToProto(), f->rhs.ToProto());
          break;
        case Atom::kMin:
          a = BinaryProto(pto::v1::DIM_OP_MIN, f->lhs.ToProto(), f->rhs.ToProto());
          break;
        case Atom::kMax:
          a = BinaryProto(pto::v1::DIM_OP_MAX, f->lhs.ToProto(), f->rhs.ToProto());
          break;
        case Atom::kSelect: {
          pto::v1::DimSelect* sel = a.mutable_select();
          *sel->mutable_cond() = f->cond.ToProto();
          *sel->mutable_if_true() = f->lhs.ToProto();
          *sel->mutable_if_false() = f->rhs.ToProto();
          break;
        }
        default:
          a = BinaryProto(CompareOp(f->kind), f->lhs.ToProto(), f->rhs.ToProto());
          break;
      }
      product = product ? BinaryProto(pto::v1::DIM_OP_MUL, *product, a) : a;
    }
    // (INT64_MIN has no negation: that term is added with its sign.)
    const bool negate = sum.has_value() && t.coeff < 0 && t.coeff != INT64_MIN;
    const int64_t coeff = negate ? -t.coeff : t.coeff;
    if (coeff != 1) {
      product = BinaryProto(pto::v1::DIM_OP_MUL, *product, ConstantProto(coeff));
    }
    if (!sum) {
      sum = *product;
    } else {
      sum = BinaryProto(negate ? pto::v1::DIM_OP_SUB : pto::v1::DIM_OP_ADD,
                        *sum, *product);
    }
  }
  if (!sum) return ConstantProto(constant_);
  if (constant_ > 0) {
    return BinaryProto(pto::v1::DIM_OP_ADD, *sum, ConstantProto(constant_));
  }
  if (constant_ < 0 && constant_ != INT64_MIN) {
    return BinaryProto(pto::v1::DIM_OP_SUB, *sum, ConstantProto(-constant_));
  }
  if (constant_ < 0) {
    return BinaryProto(pto::v1::DIM_OP_ADD, *sum, ConstantProto(constant_));
  }
  return *sum;
}

std::string FormatSymShape(absl::Span<const SymExpr> shape) {
  std::vector<std::string> dims;
  for (const SymExpr& d : shape) dims.push_back(d.ToString());
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::optional<std::vector<int64_t>> StaticDims(absl::Span<const SymExpr> shape) {
  std::vector<int64_t> out;
  for (const SymExpr& d : shape) {
    std::optional<int64_t> c = d.AsConstant();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

SymShape ToSymShape(absl::Span<const int64_t> dims) {
  return SymShape(dims.begin(), dims.end());
}

bool IsSymbolName(const std::string& name) {
  if (name.empty() || name.size() > static_cast<size_t>(kMaxSymbolLength)) {
    return false;
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

namespace {

absl::StatusOr<SymExpr> Parse(const pto::v1::DimExpr& p, int depth, int* nodes) {
  if (depth > kMaxDimExprDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expression is deeper than ", kMaxDimExprDepth, " levels (the limit)"));
  }
  if (++*nodes > kMaxDimExprNodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expression has more than ", kMaxDimExprNodes, " nodes (the limit)"));
  }
  switch (p.kind_case()) {
    case pto::v1::DimExpr::kConstant: return SymExpr(p.constant());
    case pto::v1::DimExpr::kSymbol:
      if (!IsSymbolName(p.symbol())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "symbol ", Quote(p.symbol(), 80), " is not an identifier "
            "([A-Za-z_][A-Za-z0-9_]*, at most ", kMaxSymbolLength, " chars)"));
      }
      return SymExpr::Symbol(p.symbol());
    case pto::v1::DimExpr::kBinary: {
      absl::StatusOr<SymExpr> l = Parse(p.binary().lhs(), depth + 1, nodes);
      if (!l.ok()) return l.status();
      absl::StatusOr<SymExpr> r = Parse(p.binary().rhs(), depth + 1, nodes);
      if (!r.ok()) return r.status();
      switch (p.binary().op()) {
        case pto::v1::DIM_OP_ADD: return *l + *r;
        case pto::v1::DIM_OP_SUB: return *l - *r;
        case pto::v1::DIM_OP_MUL: return *l * *r;
        case pto::v1::DIM_OP_FLOORDIV:
        case pto::v1::DIM_OP_MOD:
          if (r->AsConstant() == std::optional<int64_t>(0)) {
            return absl::InvalidArgumentError(absl::StrCat(
                l->ToString(),
                p.binary().op() == pto::v1::DIM_OP_MOD ? " % " : " // ",
                "0: the divisor is 0"));
          }
          return p.binary().op() == pto::v1::DIM_OP_MOD ? SymExpr::Mod(*l, *r)
                                                        : SymExpr::FloorDiv(*l, *r);
        case pto::v1::DIM_OP_MIN: return SymExpr::Min(*l, *r);
        case pto::v1::DIM_OP_MAX: return SymExpr::Max(*l, *r);
        default:
          if (IsCompareOp(p.binary().op())) {
            return SymExpr::Compare(p.binary().op(), *l, *r);
          }
          return absl::InvalidArgumentError(absl::StrCat(
              "binary op ", static_cast<int>(p.binary().op()),
              " is not a DimOp (add sub mul floordiv mod min max, comparisons, "
              "and/or)"));
      }
    }
    case pto::v1::DimExpr::kSelect: {
      absl::StatusOr<SymExpr> c = Parse(p.select().cond(), depth + 1, nodes);
      if (!c.ok()) return c.status();
      absl::StatusOr<SymExpr> a = Parse(p.select().if_true(), depth + 1, nodes);
      if (!a.ok()) return a.status();
      absl::StatusOr<SymExpr> b = Parse(p.select().if_false(), depth + 1, nodes);
      if (!b.ok()) return b.status();
      return SymExpr::Select(*c, *a, *b);
    }
    default:
      return absl::InvalidArgumentError("expression node is not set");
  }
}

// Whether `p` is within the bounds Parse applies (depth from `depth`).
bool WithinBounds(const pto::v1::DimExpr& p, int depth, int* nodes) {
  if (depth > kMaxDimExprDepth || ++*nodes > kMaxDimExprNodes) return false;
  if (p.kind_case() == pto::v1::DimExpr::kSelect) {
    return WithinBounds(p.select().cond(), depth + 1, nodes) &&
           WithinBounds(p.select().if_true(), depth + 1, nodes) &&
           WithinBounds(p.select().if_false(), depth + 1, nodes);
  }
  if (p.kind_case() != pto::v1::DimExpr::kBinary) return true;
  return WithinBounds(p.binary().lhs(), depth + 1, nodes) &&
         WithinBounds(p.binary().rhs(), depth + 1, nodes);
}

}  // namespace

absl::StatusOr<SymExpr> SymExprFromProto(const pto::v1::DimExpr& proto) {
  int nodes = 0;
  absl::StatusOr<SymExpr> e = Parse(proto, 1, &nodes);
  if (!e.ok()) return e;
  if (!e->Representable()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expression ", e->ToString(), " is not representable (int64 overflow "
        "or more than ", kMaxTerms, " terms)"));
  }
  // The compiler writes the canonical form into kernels (parameter shapes,
  // buffers, templates) and reads it back: it must be within the same
  // bounds as what was sent ((n+1)*...*(n+7) multiplies out to far more).
  int canonical_nodes = 0;
  if (!WithinBounds(e->ToProto(), 1, &canonical_nodes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expression multiplies out to ", e->ToString(), ", deeper than ",
        kMaxDimExprDepth, " levels or more than ", kMaxDimExprNodes,
        " nodes (the limits)"));
  }
  return e;
}

absl::StatusOr<SymExpr> SymExprFromDim(const pto::v1::Dim& dim) {
  switch (dim.kind_case()) {
    case pto::v1::Dim::kSize:
      if (dim.size() <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("is ", dim.size(), " (must be positive)"));
      }
      return SymExpr(dim.size());
    case pto::v1::Dim::kSymbol: {
      pto::v1::DimExpr e;
      e.set_symbol(dim.symbol());
      return SymExprFromProto(e);
    }
    case pto::v1::Dim::kExpr: {
      absl::StatusOr<SymExpr> e = SymExprFromProto(dim.expr());
      if (e.ok() && e->AsConstant() && *e->AsConstant() <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "is the expression ", e->ToString(), " (must be positive)"));
      }
      return e;
    }
    default: return absl::InvalidArgumentError("is not set");
  }
}

pto::v1::Dim SymExprToDim(const SymExpr& e) {
  pto::v1::Dim d;
  if (std::optional<int64_t> c = e.AsConstant()) {
    d.set_size(*c);
  } else if (std::optional<std::string> s = e.AsSymbol()) {
    d.set_symbol(*s);
  } else {
    *d.mutable_expr() = e.ToProto();
  }
  return d;
}

}  // namespace pto::compiler
