// Symbolic integer expressions for tensor dims: constants and named symbols
// combined with + - * floordiv mod min max (floordiv and mod round toward
// negative infinity, as in Python), comparisons and and/or (1 when true, 0
// when false) and select (c ? a : b).
//
//   SymExpr bs = SymExpr::Symbol("bs");
//   SymExpr tiles = SymExpr::FloorDiv(bs * 4 + 63, 64);
//   tiles.ToString();                      // "(bs*4+63)//64"
//   tiles.Evaluate({{"bs", 100}});         // 7
//   (bs + bs - bs * 2).IsConstant();       // true: 0
//
// Every value is kept in a canonical form, so two expressions are equal
// exactly when their canonical forms are (operator==): a sum of terms, each
// an integer coefficient times a product of atoms (symbols, and floordiv/mod/
// min/max nodes whose operands are canonical in turn), like terms combined,
// terms, factors and commutative operands ordered by their printed form,
// constants folded, x+0 / x*1 / x//1 / x%1 / min(x,x) simplified and
// (64*a+b)//64 split into a + b//64. The form is not complete (min(x, x*2)
// is x for positive x but stays as written), so callers treat "different
// forms" as "not provably equal".
//
// Arithmetic that overflows int64, or a product with more than kMaxTerms
// terms, gives an expression that is not representable (Representable()
// false); SymExprFromProto reports it.
// A static dim is a constant expression, so static shapes take the same path.
#ifndef PTO_COMPILER_IR_SYM_EXPR_H_
#define PTO_COMPILER_IR_SYM_EXPR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler {

class SymExpr;

// Symbol name -> value, as bound at launch.
using SymBindings = std::map<std::string, int64_t>;

class SymExpr {
 public:
  SymExpr() = default;                 // the constant 0
  SymExpr(int64_t value);              // NOLINT: constants convert implicitly
  static SymExpr Symbol(const std::string& name);

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  SymExpr operator-() const;
  static SymExpr FloorDiv(const SymExpr& a, const SymExpr& b);
  static SymExpr Mod(const SymExpr& a, const SymExpr& b);
  static SymExpr Min(const SymExpr& a, const SymExpr& b);
  static SymExpr Max(const SymExpr& a, const SymExpr& b);
  // a op b for a comparison or and/or DimOp (DIM_OP_EQ .. DIM_OP_OR): 1
  // when true, 0 when false (and/or: nonzero is true).
  static SymExpr Compare(pto::v1::DimOp op, const SymExpr& a, const SymExpr& b);
  // a where c is nonzero, else b.
  static SymExpr Select(const SymExpr& c, const SymExpr& a, const SymExpr& b);
  // ceil(a / b) for b > 0, as (a+b-1)//b.
  static SymExpr CeilDiv(const SymExpr& a, const SymExpr& b);

  bool IsConstant() const { return terms_.empty(); }
  bool Representable() const { return !overflow_; }
  // The value when IsConstant(), else nullopt.
  std::optional<int64_t> AsConstant() const;
  // The symbol's name when this is exactly one symbol, else nullopt.
  std::optional<std::string> AsSymbol() const;
  // A constant c with value <= c for every binding, when the form shows one
  // (a constant; min(c, x) + k; max of two bounded operands); else nullopt.
  std::optional<int64_t> ConstantUpperBound() const;
  // Every symbol the expression mentions, sorted.
  std::set<std::string> Symbols() const;

  // The value for `bindings`; INVALID_ARGUMENT naming an unbound symbol, a
  // division or modulo by zero, or an int64 overflow.
  absl::StatusOr<int64_t> Evaluate(const SymBindings& bindings) const;
  // The expression with symbols renamed by `names` (others kept), in
  // canonical form again.
  SymExpr Rename(const std::map<std::string, std::string>& names) const;

  // Canonical, readable form: "bs*4", "(s+63)//64", "min(a, 8)", "-n+3".
  std::string ToString() const;

  // As a pto.v1.DimExpr tree (constants, symbols, binary nodes).
  pto::v1::DimExpr ToProto() const;

  friend bool operator==(const SymExpr& a, const SymExpr& b) {
    return a.constant_ == b.constant_ && a.key() == b.key();
  }
  friend bool operator!=(const SymExpr& a, const SymExpr& b) {
    return !(a == b);
  }

  struct Atom;
  using AtomPtr = std::shared_ptr<const Atom>;
  struct Term {
    std::vector<AtomPtr> factors;  // sorted by key; repeats are powers
    int64_t coeff = 1;             // never 0
  };

 private:
  // The key of the non-constant part (terms in canonical order).
  const std::string& key() const;
  static SymExpr FromTerms(std::vector<Term> terms, int64_t constant);
  static SymExpr FromAtom(AtomPtr atom);
  static SymExpr MakeAtom(int kind, const SymExpr& lhs, const SymExpr& rhs);
  // *this == c*q + r where c divides every coefficient of q's part and r's
  // constant is FloorMod(constant, c).
  void SplitByDivisor(int64_t c, SymExpr* q, SymExpr* r) const;
  // The term as an expression.
  static SymExpr TermExpr(const Term& t);

  std::vector<Term> terms_;   // sorted by monomial key, coefficients != 0
  int64_t constant_ = 0;
  bool overflow_ = false;
  std::shared_ptr<const std::string> key_;  // cached key of terms_
};

// A leaf of a term: a symbol, or an operation the sum-of-products form does
// not distribute over.
struct SymExpr::Atom {
  enum Kind { kSymbol, kFloorDiv, kMod, kMin, kMax, kEq, kNe, kLt, kLe, kGt, kGe,
              kAnd, kOr, kSelect };
  Kind kind = kSymbol;
  std::string name;           // kSymbol
  SymExpr lhs, rhs;           // the others (kSelect: the values when true, false)
  SymExpr cond;               // kSelect
  std::string key;            // printed form, used for ordering
};

// A shape of symbolic dims, outermost first.
using SymShape = std::vector<SymExpr>;

// "[bs,128]" (constants as numbers, like FormatDims of a static shape).
std::string FormatSymShape(absl::Span<const SymExpr> shape);

// The static dims when every dim is constant, else nullopt.
std::optional<std::vector<int64_t>> StaticDims(absl::Span<const SymExpr> shape);
SymShape ToSymShape(absl::Span<const int64_t> dims);

// Bounds on untrusted expression trees (pto.v1.DimExpr).
inline constexpr int kMaxDimExprDepth = 16;
inline constexpr int kMaxDimExprNodes = 64;
inline constexpr int kMaxSymbolLength = 64;
inline constexpr int kMaxTerms = 256;

// Parses a DimExpr: INVALID_ARGUMENT naming what is wrong (an unset node,
// an unknown operator, a symbol that is not an identifier, too deep or too
// many nodes as sent or in the canonical form it multiplies out to, which
// the compiler writes into kernels, a constant divisor of 0, an int64
// overflow).
absl::StatusOr<SymExpr> SymExprFromProto(const pto::v1::DimExpr& proto);
// A shape dim (size, symbol or expr) as an expression; the same errors, and
// a static size that is not positive.
absl::StatusOr<SymExpr> SymExprFromDim(const pto::v1::Dim& dim);
// A dim for a shape: `size` when constant, `symbol` for one symbol, else
// `expr`.
pto::v1::Dim SymExprToDim(const SymExpr& e);

// Whether `name` is a symbol name: [A-Za-z_][A-Za-z0-9_]*, 1..64 chars.
bool IsSymbolName(const std::string& name);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_SYM_EXPR_H_
