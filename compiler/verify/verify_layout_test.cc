// The verifier on layout ops: each bad attribute or operand is an error
// naming the op, the attribute or input, and the valid range.
#include <string>
#include <vector>

#include "compiler/testing/graph_builder.h"
#include "compiler/verify/verify.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using ::testing::HasSubstr;
using testing::GraphBuilder;

constexpr auto kF32 = pto::v1::DT_FP32;

void ExpectInvalid(const pto::v1::Graph& g, const std::vector<std::string>& parts) {
  absl::Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  for (const std::string& p : parts) EXPECT_THAT(s.message(), HasSubstr(p));
}

TEST(VerifyLayoutTest, AcceptsEveryLayoutOp) {
  GraphBuilder b("ok");
  const uint32_t x = b.Input("x", kF32, {4, 6});
  const uint32_t y = b.Input("y", kF32, {2, 6});
  const uint32_t v = b.Layout("view", {x}, {2, 3}, {2, 3}, {{"shape", {2, 3}}, {"offsets", {2, 3}}});
  const uint32_t a = b.Layout("assemble", {y, b.Op("exp", {x}, {4, 6})}, {4, 6}, {2, 6},
                              {{"offsets", {1, 0}}});
  const uint32_t t = b.Layout("transpose", {a}, {6, 4}, {2, 2}, {}, {{"dim0", 1}, {"dim1", -2}});
  const uint32_t p = b.Layout("permute", {t}, {4, 6}, {2, 2}, {{"dims", {1, 0}}});
  const uint32_t u = b.Layout("unsqueeze", {p}, {4, 1, 6}, {2, 1, 2}, {}, {{"dim", 1}});
  const uint32_t r = b.Layout("reshape", {u}, {24}, {8}, {{"shape", {24}}});
  const uint32_t c = b.Layout("concat", {v, v, v}, {2, 9}, {2, 3}, {}, {{"dim", -1}});
  b.Output("r", r);
  b.Output("c", c);
  EXPECT_TRUE(VerifyGraph(b.Build()).ok()) << VerifyGraph(b.Build());
}

TEST(VerifyLayoutTest, ViewOutOfBounds) {
  GraphBuilder b("view");
  const uint32_t x = b.Input("x", kF32, {4, 6});
  b.Output("y", b.Layout("view", {x}, {2, 4}, {2, 4}, {{"shape", {2, 4}}, {"offsets", {1, 3}}}));
  ExpectInvalid(b.Build(), {"op #0 \"view\"", "view [2,4] at offsets [1,3] does not fit in input [4,6]",
                            "dim 1 covers [3, 7)", "valid offsets[1]: 0..2"});
}

TEST(VerifyLayoutTest, ViewRankAndOffsetsCount) {
  GraphBuilder b("view");
  const uint32_t x = b.Input("x", kF32, {4, 6});
  b.Output("y", b.Layout("view", {x}, {2, 4}, {2, 4}, {{"shape", {2, 4}}, {"offsets", {1}}}));
  ExpectInvalid(b.Build(), {"op #0 \"view\"", "attrs[\"offsets\"]: [1] has 1 dims"});
}

TEST(VerifyLayoutTest, AssembleOutOfBoundsAndDtype) {
  {
    GraphBuilder b("assemble");
    const uint32_t x = b.Input("x", kF32, {4, 6});
    const uint32_t y = b.Input("y", kF32, {3, 6});
    b.Output("o", b.Layout("assemble", {y, b.Op("exp", {x}, {4, 6})}, {4, 6}, {3, 6},
                           {{"offsets", {2, 0}}}));
    ExpectInvalid(b.Build(), {"op #1 \"assemble\"", "src [3,6] at offsets [2,0] does not fit in dst [4,6]",
                              "valid offsets[0]: 0..1"});
  }
  {
    GraphBuilder b("assemble_dtype");
    const uint32_t x = b.Input("x", kF32, {4, 6});
    const uint32_t y = b.Input("y", pto::v1::DT_FP16, {3, 6});
    b.Output("o", b.Layout("assemble", {y, b.Op("exp", {x}, {4, 6})}, {4, 6}, {3, 6},
                           {{"offsets", {0, 0}}}));
    ExpectInvalid(b.Build(), {"op #1 \"assemble\"", "input 0 (src) has dtype DT_FP16 and input 1 (dst) DT_FP32"});
  }
}

TEST(VerifyLayoutTest, ReshapeCount) {
  GraphBuilder b("reshape");
  const uint32_t x = b.Input("x", kF32, {4, 6});
  b.Output("y", b.Layout("reshape", {x}, {5, 5}, {5, 5}, {{"shape", {5, 5}}}));
  ExpectInvalid(b.Build(), {"op #0 \"reshape\"", "attrs[\"shape\"]: [5,5] has 25 elements; the input [4,6] has 24"});
}

TEST(VerifyLayoutTest, PermuteNotAPermutation) {
  GraphBuilder b("permute");
  const uint32_t x = b.Input("x", kF32, {4, 6, 2});
  b.Output("y", b.Layout("permute", {x}, {4, 6, 2}, {4, 6, 2}, {{"dims", {0, 2, 0}}}));
  ExpectInvalid(b.Build(), {"op #0 \"permute\"", "[0,2,0] is not a permutation of 0..2", "entry 2 is 0, repeated"});
}

TEST(VerifyLayoutTest, DimOutOfRange) {
  {
    GraphBuilder b("transpose");
    const uint32_t x = b.Input("x", kF32, {4, 6});
    b.Output("y", b.Layout("transpose", {x}, {6, 4}, {2, 2}, {}, {{"dim0", 0}, {"dim1", 2}}));
    ExpectInvalid(b.Build(), {"op #0 \"transpose\"", "attrs[\"dim1\"]: dim 2 is out of range for rank 2 (valid: -2..1)"});
  }
  {
    GraphBuilder b("unsqueeze");
    const uint32_t x = b.Input("x", kF32, {4, 6});
    b.Output("y", b.Layout("unsqueeze", {x}, {4, 6, 1}, {2, 2, 1}, {}, {{"dim", 4}}));
    ExpectInvalid(b.Build(), {"op #0 \"unsqueeze\"", "attrs[\"dim\"]: dim 4 is out of range for rank 3 (valid: -3..2)"});
  }
}

TEST(VerifyLayoutTest, ConcatMismatch) {
  GraphBuilder b("concat");
  const uint32_t x = b.Input("x", kF32, {4, 6});
  const uint32_t y = b.Input("y", kF32, {3, 5});
  b.Output("y2", b.Layout("concat", {x, y}, {4, 11}, {2, 2}, {}, {{"dim", 1}}));
  ExpectInvalid(b.Build(), {"op #0 \"concat\"", "input 1 [3,5] and input 0 [4,6] differ outside the concat dim 1"});
}

TEST(VerifyLayoutTest, ConcatWithoutInputs) {
  GraphBuilder b("concat");
  b.Input("x", kF32, {4, 6});
  const uint32_t out = b.Value(kF32, {4, 6});
  pto::v1::Op* op = b.graph().add_ops();
  op->set_kind("concat");
  op->add_outputs(out);
  (*op->mutable_attrs())["dim"].set_i(0);
  op->mutable_vec_tile()->add_dims(2);
  op->mutable_vec_tile()->add_dims(2);
  b.Output("y", out);
  ExpectInvalid(b.Build(), {"op #0 \"concat\"", "inputs: expected one or more, got 0"});
}

}  // namespace
}  // namespace pto::compiler
