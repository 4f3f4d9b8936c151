// Untrusted sizes: tile dims, shapes and symbolic dims at the edges of int64
// must be rejected with INVALID_ARGUMENT naming the op and the field (or
// lower cleanly), never crash the compiler. Each graph runs through every
// stage up to code generation, as ptod's requests do.
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/pipeline.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using ::testing::HasSubstr;
using testing::GraphBuilder;
using testing::SevenFactorProduct;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

absl::Status Lower(const pto::v1::Graph& g) {
  LoweringState state;
  state.graph = &g;
  state.target = "host-x86_64";
  std::map<std::string, std::string> dumps;
  return RunPipeline(&state, nullptr, &dumps, "codegen");
}

TEST(UntrustedSizesTest, VecTileNearInt64MaxIsInvalid) {
  GraphBuilder b("big_tile");
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {6, 10});
  b.Output("out", b.Op("exp", {a}, {4, kInt64Max}));
  absl::Status s = Lower(b.Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("op #0 \"exp\""));
  EXPECT_THAT(s.message(), HasSubstr("vec_tile dim 1 is 9223372036854775807"));
}

// A tile larger than its dim is clamped to it (valid); one above the
// element limit is rejected before any arithmetic uses it.
TEST(UntrustedSizesTest, LargeVecTilesAreClampedOrRejected) {
  for (int64_t t : {int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 40}) {
    GraphBuilder b("big_tile");
    uint32_t a = b.Input("a", pto::v1::DT_FP32, {6, 10});
    b.Output("out", b.Op("exp", {a}, {t, t}));
    EXPECT_TRUE(Lower(b.Build()).ok()) << t;
  }
  for (int64_t t : {(int64_t{1} << 40) + 1, int64_t{1} << 62, kInt64Max - 1, kInt64Max}) {
    GraphBuilder b("big_tile");
    uint32_t a = b.Input("a", pto::v1::DT_FP32, {6, 10});
    b.Output("out", b.Op("exp", {a}, {t, t}));
    absl::Status s = Lower(b.Build());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << t << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("vec_tile dim 0 is ", t)));
  }
}

// Symbolic dims: a tile over them is not clamped, so the element limit
// bounds the tile itself.
TEST(UntrustedSizesTest, VecTileOverSymbolicDimsIsBounded) {
  GraphBuilder b("sym_tile");
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {SymExpr::Symbol("n"), SymExpr::Symbol("m")});
  b.Output("out", b.Op("exp", {x}, {int64_t{1} << 30, int64_t{1} << 30}));
  absl::Status s = Lower(b.Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("vec_tile [1073741824,1073741824] has more than"));
}

void SetDimExpr(pto::v1::Graph& g, uint32_t id, int d, const pto::v1::DimExpr& e) {
  for (pto::v1::Value& v : *g.mutable_values()) {
    if (v.id() == id) *v.mutable_shape()->mutable_dims(d)->mutable_expr() = e;
  }
}

void ExpectCleanStatus(const absl::Status& s) {
  EXPECT_TRUE(s.ok() || s.code() == absl::StatusCode::kInvalidArgument ||
              s.code() == absl::StatusCode::kUnimplemented)
      << s;
  if (!s.ok()) EXPECT_FALSE(s.message().empty());
}

TEST(UntrustedSizesTest, ProductOfSevenSymbolicFactorsIsCleanlyHandled) {
  GraphBuilder b("sym_product");
  const SymExpr n = SymExpr::Symbol("n");
  b.SymInput("bind", pto::v1::DT_FP32, {n});
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, 8});
  uint32_t y = b.Op("exp", {x}, {4, 8});
  b.Output("out", y);
  pto::v1::Graph g = b.Build();
  SetDimExpr(g, x, 0, SevenFactorProduct("n"));
  SetDimExpr(g, y, 0, SevenFactorProduct("n"));
  absl::Status s = Lower(g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("value id 2: shape dim 0 expression multiplies out to"));
}

TEST(UntrustedSizesTest, ProductOfSevenSymbolicFactorsAsLoopStop) {
  GraphBuilder b("sym_product_loop");
  const SymExpr n = SymExpr::Symbol("n"), i = SymExpr::Symbol("i");
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, 8});
  uint32_t out = b.SymValue(pto::v1::DT_FP32, {n, 8}, "out");
  auto outs = b.Loop("i", 0, n, 1, {out}, [&](const std::vector<uint32_t>& args) {
    const uint32_t v = b.View(x, {i, 0}, {1, 8}, {1, 8});
    return std::vector<uint32_t>{
        b.Assemble(b.Op("exp", {v}, {1, 8}), args[0], {i, 0}, {1, 8})};
  });
  b.InOut("out", out, outs[0]);
  pto::v1::Graph g = b.Build();
  for (pto::v1::Op& op : *g.mutable_ops()) {
    if (op.kind() == "loop") {
      *(*op.mutable_attrs())["stop"].mutable_expr() = SevenFactorProduct("n");
    }
  }
  ExpectCleanStatus(Lower(g));
}

// View offsets and shapes, as ints or constant exprs, and reshape shapes
// are held to the element limit before the region checks add them.
TEST(UntrustedSizesTest, LayoutAttrsOverTheLimitAreInvalid) {
  {
    GraphBuilder b("view_ints");
    uint32_t x = b.Input("x", pto::v1::DT_FP32, {6, 8});
    b.Output("out", b.Layout("view", {x}, {2, 4}, {2, 4},
                             {{"shape", {2, 4}}, {"offsets", {kInt64Max, 0}}}));
    absl::Status s = Lower(b.Build());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("attrs[\"offsets\"] entry 0 is 9223372036854775807"));
  }
  {
    GraphBuilder b("view_exprs");
    uint32_t x = b.Input("x", pto::v1::DT_FP32, {6, 8});
    b.Output("out", b.View(x, {0, std::numeric_limits<int64_t>::min()}, {2, 4}, {2, 4}));
    absl::Status s = Lower(b.Build());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("attrs[\"offsets\"] entry 1 is -9223372036854775808"));
  }
  {
    // 2^32 * 2^32 * 2^8 wraps to 0 in int64 arithmetic.
    GraphBuilder b("reshape");
    uint32_t x = b.Input("x", pto::v1::DT_FP32, {4, 6});
    b.Output("out", b.Layout("reshape", {x}, {24}, {8},
                             {{"shape", {int64_t{1} << 32, int64_t{1} << 32, 256}}}));
    absl::Status s = Lower(b.Build());
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("op #0 \"reshape\""));
  }
}

// In a loop body, constant offsets beside loop-dependent ones are packed
// with the loop offsets' markers: they are held to the limit too.
TEST(UntrustedSizesTest, ConstantOffsetBesideALoopIndexOverTheLimitIsInvalid) {
  GraphBuilder b("loop_offsets");
  const SymExpr n = SymExpr::Symbol("n"), i = SymExpr::Symbol("i");
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, 8});
  uint32_t out = b.SymValue(pto::v1::DT_FP32, {n, 8}, "out");
  auto outs = b.Loop("i", 0, n, 1, {out}, [&](const std::vector<uint32_t>& args) {
    const uint32_t v = b.View(x, {i, int64_t{1} << 40}, {1, 8}, {1, 8});
    return std::vector<uint32_t>{
        b.Assemble(b.Op("exp", {v}, {1, 8}), args[0], {i, 0}, {1, 8})};
  });
  b.InOut("out", out, outs[0]);
  absl::Status s = Lower(b.Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("attrs[\"offsets\"] entry 1 is 1099511627776"));
}

// A matmul takes no vec_tile (its tiles are the cube tile's), so the
// verifier does not check one; one of another rank than the result's
// (pypto attaches the current tile to every op) is left out, not read.
TEST(UntrustedSizesTest, MatmulVecTileOfAnotherRankIsIgnored) {
  for (const std::vector<int64_t>& tile :
       std::vector<std::vector<int64_t>>{{1, 1, 1}, {0}, {kInt64Max, -1}}) {
    GraphBuilder b("matmul_tile");
    const SymExpr n = SymExpr::Symbol("n");
    uint32_t a = b.SymInput("a", pto::v1::DT_FP32, {n, 8});
    uint32_t w = b.Input("w", pto::v1::DT_FP32, {8, 6});
    uint32_t y = b.Matmul(a, w, {4, 6}, pto::v1::DT_FP32, false, false, {4, 4}, {8, 8}, {8, 8});
    b.SetShape(y, {n, 6});
    b.Output("out", b.Op("relu", {y}, {4, 6}));
    pto::v1::Graph g = b.Build();
    g.mutable_ops(0)->mutable_vec_tile()->mutable_dims()->Assign(tile.begin(), tile.end());
    absl::Status s = Lower(g);
    EXPECT_TRUE(s.ok()) << s;
  }
}

// A loop-dependent dim min(c, n - i) is lowered at its bound c: a bound over
// the element limit is invalid.
TEST(UntrustedSizesTest, LoopDependentDimBoundOverTheLimitIsInvalid) {
  GraphBuilder b("loop_bound");
  const SymExpr n = SymExpr::Symbol("n"), i = SymExpr::Symbol("i");
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, 8});
  uint32_t out = b.SymValue(pto::v1::DT_FP32, {n, 8}, "out");
  const int64_t big = int64_t{1} << 62;
  auto outs = b.Loop("i", 0, n, big, {out}, [&](const std::vector<uint32_t>& args) {
    const uint32_t v = b.View(x, {i, 0}, {SymExpr::Min(big, n - i), 8}, {2, 8});
    return std::vector<uint32_t>{
        b.Assemble(b.Op("exp", {v}, {2, 8}), args[0], {i, 0}, {2, 8})};
  });
  b.InOut("out", out, outs[0]);
  absl::Status s = Lower(b.Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("is bounded by 4611686018427387904"));
}

}  // namespace
}  // namespace pto::compiler
