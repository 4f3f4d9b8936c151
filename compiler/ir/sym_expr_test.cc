#include "compiler/ir/sym_expr.h"

#include <cstdint>

#include "compiler/ir/cond_expr.h"
#include "gtest/gtest.h"
#include "runtime/dim_expr.h"

namespace pto::compiler {
namespace {

SymExpr S(const char* name) { return SymExpr::Symbol(name); }

TEST(SymExprTest, ConstantsFold) {
  EXPECT_EQ((SymExpr(3) + 4) * 2, SymExpr(14));
  EXPECT_EQ(SymExpr::FloorDiv(-7, 2), SymExpr(-4));  // Python's //
  EXPECT_EQ(SymExpr::Mod(-7, 2), SymExpr(1));         // Python's %
  EXPECT_EQ(SymExpr::Min(3, 5), SymExpr(3));
  EXPECT_EQ(SymExpr::Max(3, 5), SymExpr(5));
  EXPECT_EQ(SymExpr(14).AsConstant(), 14);
  EXPECT_TRUE(SymExpr(14).IsConstant());
}

TEST(SymExprTest, IdentitiesAndLikeTerms) {
  SymExpr x = S("x"), y = S("y");
  EXPECT_EQ(x + 0, x);
  EXPECT_EQ(x * 1, x);
  EXPECT_EQ(x * 0, SymExpr(0));
  EXPECT_EQ(SymExpr::FloorDiv(x, 1), x);
  EXPECT_EQ(SymExpr::Mod(x, 1), SymExpr(0));
  EXPECT_EQ(x + x - x * 2, SymExpr(0));
  EXPECT_EQ(x + y, y + x);  // ordering
  EXPECT_EQ(x * y, y * x);
  EXPECT_EQ((x + 1) * (x - 1), x * x - 1);  // distributes
  EXPECT_EQ(SymExpr::Min(x, x), x);
  EXPECT_EQ(SymExpr::Min(x, x + 1), x);
  EXPECT_EQ(SymExpr::Max(x, x + 1), x + 1);
  EXPECT_EQ(SymExpr::Min(x, y), SymExpr::Min(y, x));  // commutative
  EXPECT_NE(x, y);
  EXPECT_NE(x, x + 1);
  EXPECT_EQ(x.AsSymbol(), "x");
  EXPECT_FALSE((x * 2).AsSymbol().has_value());
}

TEST(SymExprTest, DivisionSplitsMultiples) {
  SymExpr bs = S("bs"), s = S("s");
  EXPECT_EQ(SymExpr::FloorDiv(bs * 64, 64), bs);
  EXPECT_EQ(SymExpr::FloorDiv(bs * 64 + 63, 64), bs);
  EXPECT_EQ(SymExpr::FloorDiv(bs * 64 + 65, 64), bs + 1);
  EXPECT_EQ(SymExpr::Mod(bs * 64 + 65, 64), SymExpr(1));
  EXPECT_EQ(SymExpr::CeilDiv(bs * 128, 64), bs * 2);
  EXPECT_EQ(SymExpr::CeilDiv(s, 64).ToString(), "(s+63)//64");
  EXPECT_EQ(SymExpr::FloorDiv(s * 128 + bs, 64).ToString(), "bs//64+s*2");
}

TEST(SymExprTest, Printing) {
  SymExpr bs = S("bs"), n = S("n");
  EXPECT_EQ((bs * 4).ToString(), "bs*4");
  EXPECT_EQ((3 - n).ToString(), "-n+3");
  EXPECT_EQ((bs * n - 2).ToString(), "bs*n-2");
  EXPECT_EQ((n - bs * 2).ToString(), "-bs*2+n");
  EXPECT_EQ(SymExpr::Min(n, 8).ToString(), "min(8, n)");
  EXPECT_EQ(SymExpr::Max(bs * 2, n).ToString(), "max(bs*2, n)");
  EXPECT_EQ((SymExpr::FloorDiv(n, 4) * 2).ToString(), "(n//4)*2");
  EXPECT_EQ((-SymExpr::FloorDiv(n, 4)).ToString(), "-(n//4)");
  EXPECT_EQ(SymExpr::Mod(n + 1, bs).ToString(), "(n+1)%bs");
  EXPECT_EQ(SymExpr(-5).ToString(), "-5");
  EXPECT_EQ(FormatSymShape({bs, 128}), "[bs,128]");
}

TEST(SymExprTest, Evaluation) {
  SymExpr bs = S("bs"), s = S("s");
  SymExpr e = SymExpr::CeilDiv(s, 64) * bs + SymExpr::Mod(s, 7) -
              SymExpr::Min(bs, s) + SymExpr::Max(bs, 3);
  SymBindings b{{"bs", 5}, {"s", 100}};
  // ceil(100/64)=2 -> 10, 100%7=2, min=5, max=5
  EXPECT_EQ(e.Evaluate(b).value(), 10 + 2 - 5 + 5);
  absl::StatusOr<int64_t> unbound = e.Evaluate({{"bs", 5}});
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.status().message().find("symbol s is not bound"),
            std::string::npos);
  absl::StatusOr<int64_t> zero = SymExpr::FloorDiv(s, bs).Evaluate({{"s", 1}, {"bs", 0}});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("division by zero"), std::string::npos);
  absl::StatusOr<int64_t> big =
      (bs * bs).Evaluate({{"bs", int64_t{1} << 40}});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("overflows"), std::string::npos);
}

TEST(SymExprTest, Rename) {
  SymExpr e = S("b") * 2 + S("a");
  SymExpr r = e.Rename({{"a", "z"}, {"b", "a"}});
  EXPECT_EQ(r, S("a") * 2 + S("z"));
  EXPECT_EQ(e.Symbols(), (std::set<std::string>{"a", "b"}));
}

// The compiler's proto form evaluates to the same value in the runtime's
// evaluator and parses back to the same canonical form.
TEST(SymExprTest, ProtoRoundTripAndRuntimeEvaluation) {
  SymExpr bs = S("bs"), s = S("s");
  const SymExpr exprs[] = {
      SymExpr(7),
      bs,
      bs * 4 - 3,
      3 - bs * s,
      SymExpr::CeilDiv(s, 64),
      SymExpr::Mod(s * 3 + 1, bs) * 2,
      SymExpr::Min(bs, s) + SymExpr::Max(bs * 2, 9),
      SymExpr(int64_t{-9223372036854775807} - 1) + bs,
  };
  const runtime::SymbolValues values{{"bs", 6}, {"s", 200}};
  const SymBindings bindings{{"bs", 6}, {"s", 200}};
  for (const SymExpr& e : exprs) {
    SCOPED_TRACE(e.ToString());
    pto::v1::DimExpr proto = e.ToProto();
    absl::StatusOr<SymExpr> back = SymExprFromProto(proto);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, e);
    EXPECT_EQ(runtime::EvaluateDimExpr(proto, values).value(),
              e.Evaluate(bindings).value());
    EXPECT_EQ(runtime::EvaluateDim(SymExprToDim(e), values).value(),
              e.Evaluate(bindings).value());
  }
  EXPECT_EQ(SymExprToDim(bs).symbol(), "bs");
  EXPECT_EQ(SymExprToDim(SymExpr(5)).size(), 5);
  EXPECT_TRUE(SymExprToDim(bs * 2).has_expr());
}

TEST(SymExprTest, ComparisonsAreZeroOrOneInArithmetic) {
  SymExpr n = S("n"), i = S("i");
  EXPECT_EQ(SymExpr::Compare(pto::v1::DIM_OP_LT, 3, 5), SymExpr(1));
  EXPECT_EQ(SymExpr::Compare(pto::v1::DIM_OP_GE, n + 1, n), SymExpr(1));  // n+1-n is 1
  EXPECT_EQ(SymExpr::Compare(pto::v1::DIM_OP_AND, 2, 0), SymExpr(0));
  const SymExpr lt = SymExpr::Compare(pto::v1::DIM_OP_LT, i, n);
  EXPECT_EQ(lt.ToString(), "(i<n)");
  EXPECT_EQ(lt.ConstantUpperBound(), 1);
  const SymExpr rows = lt * 8 + 1;
  EXPECT_EQ(rows.Evaluate({{"i", 2}, {"n", 5}}).value(), 9);
  EXPECT_EQ(rows.Evaluate({{"i", 5}, {"n", 5}}).value(), 1);
  const SymExpr both = SymExpr::Compare(
      pto::v1::DIM_OP_AND, lt, SymExpr::Compare(pto::v1::DIM_OP_NE, i, 0));
  EXPECT_EQ(both.Evaluate({{"i", 0}, {"n", 5}}).value(), 0);
  EXPECT_EQ(both.Evaluate({{"i", 1}, {"n", 5}}).value(), 1);
}

TEST(SymExprTest, SelectPicksOneOperand) {
  SymExpr n = S("n"), k = S("k");
  const SymExpr big = SymExpr::Compare(pto::v1::DIM_OP_GT, n, 4);
  EXPECT_EQ(SymExpr::Select(1, n, k), n);
  EXPECT_EQ(SymExpr::Select(0, n, k), k);
  EXPECT_EQ(SymExpr::Select(big, n * 2, n * 2), n * 2);
  const SymExpr rows = SymExpr::Select(big, SymExpr::Min(n, 8), 2);
  EXPECT_EQ(rows.ToString(), "select((n>4), min(8, n), 2)");
  EXPECT_EQ(rows.ConstantUpperBound(), 8);
  EXPECT_EQ(rows.Symbols(), (std::set<std::string>{"n"}));
  EXPECT_EQ(rows.Evaluate({{"n", 3}}).value(), 2);
  EXPECT_EQ(rows.Evaluate({{"n", 6}}).value(), 6);
  EXPECT_EQ(rows.Evaluate({{"n", 20}}).value(), 8);
  EXPECT_EQ(rows.Rename({{"n", "m"}}).ToString(), "select((m>4), min(8, m), 2)");
  // Only the operand selected is evaluated: n // k where k != 0, else 0.
  const SymExpr safe = SymExpr::Select(SymExpr::Compare(pto::v1::DIM_OP_NE, k, 0),
                                       SymExpr::FloorDiv(n, k), 0);
  EXPECT_EQ(safe.Evaluate({{"n", 9}, {"k", 0}}).value(), 0);
  EXPECT_EQ(safe.Evaluate({{"n", 9}, {"k", 2}}).value(), 4);
  // Nested selects (if / elif / else) stay one node each, not multiplied out.
  const SymExpr nested = SymExpr::Select(big, 2, SymExpr::Select(
      SymExpr::Compare(pto::v1::DIM_OP_LE, n, 2), 1, SymExpr::Min(n, 3)));
  const runtime::SymbolValues values{{"n", 3}};
  for (const SymExpr& e : {rows, safe, nested, rows * 4 + nested}) {
    SCOPED_TRACE(e.ToString());
    pto::v1::DimExpr proto = e.ToProto();
    absl::StatusOr<SymExpr> back = SymExprFromProto(proto);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, e);
    for (int64_t v : {0, 1, 3, 7}) {
      const runtime::SymbolValues vals{{"n", v}, {"k", v % 3}};
      EXPECT_EQ(runtime::EvaluateDimExpr(proto, vals).value(),
                e.Evaluate({{"n", v}, {"k", v % 3}}).value());
    }
  }
  EXPECT_EQ(nested.Evaluate({{"n", 2}}).value(), 1);
  EXPECT_EQ(nested.Evaluate({{"n", 3}}).value(), 3);
  EXPECT_EQ(runtime::EvaluateDimExpr(nested.ToProto(), values).value(), 3);
  EXPECT_EQ(runtime::DimToString(SymExprToDim(nested)),
            "select((n>4), 2, select((n<=2), 1, min(3, n)))");
}

TEST(SymExprTest, ConditionsMayCompareComparisonsAndSelects) {
  SymExpr n = S("n");
  // not (n > 4), as Python writes it: (n > 4) == 0.
  const SymExpr gt = SymExpr::Compare(pto::v1::DIM_OP_GT, n, 4);
  absl::StatusOr<CondExpr> c =
      CondExprFromProto(SymExpr::Compare(pto::v1::DIM_OP_EQ, gt, 0).ToProto());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->Evaluate({{"n", 3}}).value());
  EXPECT_FALSE(c->Evaluate({{"n", 5}}).value());
  // A select of sizes compared: rows > 1 with rows = n > 4 ? 2 : 1.
  pto::v1::DimExpr rows_gt_1;
  rows_gt_1.mutable_binary()->set_op(pto::v1::DIM_OP_GT);
  *rows_gt_1.mutable_binary()->mutable_lhs() = SymExpr::Select(gt, 2, 1).ToProto();
  rows_gt_1.mutable_binary()->mutable_rhs()->set_constant(1);
  c = CondExprFromProto(rows_gt_1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->Evaluate({{"n", 5}}).value());
  EXPECT_FALSE(c->Evaluate({{"n", 4}}).value());
}

TEST(SymExprTest, SelectProtoBoundsAndErrors) {
  // A select whose operands together exceed the node bound is refused.
  pto::v1::DimExpr wide;
  pto::v1::DimExpr* at = &wide;
  for (int k = 0; k < 15; ++k) {
    pto::v1::DimSelect* sel = at->mutable_select();
    sel->mutable_cond()->set_symbol("n");
    pto::v1::DimBinary* sum = sel->mutable_if_true()->mutable_binary();
    sum->set_op(pto::v1::DIM_OP_ADD);
    sum->mutable_lhs()->set_symbol("n");
    sum->mutable_rhs()->set_constant(k);
    at = sel->mutable_if_false();
  }
  at->set_constant(1);
  absl::StatusOr<SymExpr> e = SymExprFromProto(wide);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("more than 64 nodes"), std::string::npos);
  // An operand that is not set is an error naming it.
  pto::v1::DimExpr unset;
  unset.mutable_select()->mutable_cond()->set_symbol("n");
  unset.mutable_select()->mutable_if_true()->set_constant(1);
  e = SymExprFromProto(unset);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("not set"), std::string::npos);
}

TEST(SymExprTest, ProtoBounds) {
  // Depth: x+1+1+... nested 20 deep.
  pto::v1::DimExpr deep;
  deep.set_symbol("x");
  for (int i = 0; i < 20; ++i) {
    pto::v1::DimExpr next;
    next.mutable_binary()->set_op(pto::v1::DIM_OP_ADD);
    *next.mutable_binary()->mutable_lhs() = deep;
    next.mutable_binary()->mutable_rhs()->set_constant(1);
    deep = next;
  }
  absl::StatusOr<SymExpr> e = SymExprFromProto(deep);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("deeper than 16"), std::string::npos);

  pto::v1::DimExpr bad_symbol;
  bad_symbol.set_symbol("1x");
  e = SymExprFromProto(bad_symbol);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("\"1x\" is not an identifier"),
            std::string::npos);

  pto::v1::DimExpr div0;
  div0.mutable_binary()->set_op(pto::v1::DIM_OP_FLOORDIV);
  div0.mutable_binary()->mutable_lhs()->set_symbol("x");
  div0.mutable_binary()->mutable_rhs()->set_constant(0);
  e = SymExprFromProto(div0);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("divisor is 0"), std::string::npos);

  pto::v1::DimExpr unset_op = div0;
  unset_op.mutable_binary()->set_op(pto::v1::DIM_OP_UNSPECIFIED);
  e = SymExprFromProto(unset_op);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("not a DimOp"), std::string::npos);

  e = SymExprFromProto(pto::v1::DimExpr());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("not set"), std::string::npos);

  pto::v1::DimExpr overflow;
  overflow.mutable_binary()->set_op(pto::v1::DIM_OP_MUL);
  overflow.mutable_binary()->mutable_lhs()->set_constant(int64_t{1} << 62);
  overflow.mutable_binary()->mutable_rhs()->set_constant(4);
  e = SymExprFromProto(overflow);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("not representable"), std::string::npos);

  pto::v1::Dim dim;
  *dim.mutable_expr() = SymExpr(0).ToProto();
  absl::StatusOr<SymExpr> d = SymExprFromDim(dim);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("must be positive"), std::string::npos);
}

// Untrusted edges: constants at INT64_MAX/INT64_MIN, products that
// overflow, division by zero at launch, and a product that parses within the
// bounds but multiplies out beyond them.
// Every operator means the same folded at compile time, evaluated by
// SymExpr with a symbol bound, and evaluated by the runtime from the proto
// (runtime/dim_ops.h is the one definition).
TEST(SymExprTest, EveryOperatorMeansTheSameInTheCompilerAndTheRuntime) {
  const int64_t values[] = {INT64_MIN, INT64_MIN + 1, -7, -2, -1, 0, 1, 2, 3, 7,
                            INT64_MAX - 1, INT64_MAX};
  for (int op = pto::v1::DIM_OP_ADD; op <= pto::v1::DIM_OP_OR; ++op) {
    const auto dim_op = static_cast<pto::v1::DimOp>(op);
    for (int64_t a : values) {
      for (int64_t b : values) {
        SCOPED_TRACE(testing::Message() << "op " << op << ": " << a << ", " << b);
        const SymExpr x = S("x");
        SymExpr folded, symbolic;
        switch (dim_op) {
          case pto::v1::DIM_OP_ADD: folded = SymExpr(a) + SymExpr(b); symbolic = x + SymExpr(b); break;
          case pto::v1::DIM_OP_SUB: folded = SymExpr(a) - SymExpr(b); symbolic = x - SymExpr(b); break;
          case pto::v1::DIM_OP_MUL: folded = SymExpr(a) * SymExpr(b); symbolic = x * SymExpr(b); break;
          case pto::v1::DIM_OP_FLOORDIV:
            folded = SymExpr::FloorDiv(a, b); symbolic = SymExpr::FloorDiv(x, S("y")); break;
          case pto::v1::DIM_OP_MOD:
            folded = SymExpr::Mod(a, b); symbolic = SymExpr::Mod(x, S("y")); break;
          case pto::v1::DIM_OP_MIN: folded = SymExpr::Min(a, b); symbolic = SymExpr::Min(x, S("y")); break;
          case pto::v1::DIM_OP_MAX: folded = SymExpr::Max(a, b); symbolic = SymExpr::Max(x, S("y")); break;
          default:
            folded = SymExpr::Compare(dim_op, a, b);
            symbolic = SymExpr::Compare(dim_op, x, S("y"));
            break;
        }
        pto::v1::DimExpr proto;
        proto.mutable_binary()->set_op(dim_op);
        proto.mutable_binary()->mutable_lhs()->set_constant(a);
        proto.mutable_binary()->mutable_rhs()->set_constant(b);
        absl::StatusOr<int64_t> runtime = runtime::EvaluateDimExpr(proto, {});
        absl::StatusOr<int64_t> evaluated = symbolic.Evaluate({{"x", a}, {"y", b}});
        absl::StatusOr<int64_t> constant = folded.Evaluate({});
        // Where the runtime has no value, neither has the compiler; where the
        // compiler has one, it is the runtime's. Only at the int64 edges may
        // the compiler refuse what the runtime computes (x - INT64_MIN is
        // x + -INT64_MIN in its normal form).
        if (!runtime.ok()) {
          EXPECT_FALSE(evaluated.ok()) << *evaluated;
          EXPECT_FALSE(constant.ok()) << *constant;
          continue;
        }
        if (evaluated.ok()) EXPECT_EQ(*evaluated, *runtime);
        if (constant.ok()) EXPECT_EQ(*constant, *runtime);
        const auto small = [](int64_t v) { return v > -(int64_t{1} << 31) && v < (int64_t{1} << 31); };
        if (small(a) && small(b)) {
          EXPECT_TRUE(evaluated.ok()) << evaluated.status();
          EXPECT_TRUE(constant.ok()) << constant.status();
        }
      }
    }
  }
}

TEST(SymExprTest, EdgesOfInt64AreErrorsNotCrashes) {
  const int64_t max = INT64_MAX, min = INT64_MIN;
  EXPECT_FALSE((SymExpr(max) + 1).Representable());
  EXPECT_FALSE((SymExpr(min) - 1).Representable());
  EXPECT_FALSE((-SymExpr(min)).Representable());
  EXPECT_FALSE(SymExpr::FloorDiv(min, -1).Representable());
  EXPECT_FALSE(SymExpr::Mod(min, -1).Representable());
  EXPECT_FALSE((S("n") * max * 2).Representable());

  // A term with coefficient INT64_MIN prints and round-trips.
  const SymExpr e = S("a") + S("b") * min;
  ASSERT_TRUE(e.Representable());
  absl::StatusOr<SymExpr> back = SymExprFromProto(e.ToProto());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, e);

  // Values that overflow or divide by zero only at launch.
  const SymExpr big = S("n") * S("n") * S("n");
  absl::StatusOr<int64_t> v = big.Evaluate({{"n", int64_t{1} << 22}});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("overflows"), std::string::npos);
  v = SymExpr::FloorDiv(S("n"), S("m") - 5).Evaluate({{"n", 7}, {"m", 5}});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("division by zero"), std::string::npos);

  // (n+1)*(n+2)*...*(n+7): 27 nodes, multiplied out far more.
  pto::v1::DimExpr p;
  for (int64_t k = 1; k <= 7; ++k) {
    pto::v1::DimExpr f;
    f.mutable_binary()->set_op(pto::v1::DIM_OP_ADD);
    f.mutable_binary()->mutable_lhs()->set_symbol("n");
    f.mutable_binary()->mutable_rhs()->set_constant(k);
    if (k == 1) {
      p = f;
      continue;
    }
    pto::v1::DimExpr q;
    q.mutable_binary()->set_op(pto::v1::DIM_OP_MUL);
    *q.mutable_binary()->mutable_lhs() = p;
    *q.mutable_binary()->mutable_rhs() = f;
    p = q;
  }
  absl::StatusOr<SymExpr> product = SymExprFromProto(p);
  ASSERT_FALSE(product.ok());
  EXPECT_NE(product.status().message().find("multiplies out to"), std::string::npos);
}

}  // namespace
}  // namespace pto::compiler
