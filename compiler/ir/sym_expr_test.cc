#include "compiler/ir/sym_expr.h"

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
