// End to end: the sort instruction (MSORT) through compiled kernels against
// the reference evaluator: topk's form (the first k positions, then a
// gather of the values through them) and argsort's (every position) along
// the last dim and along dim 0, a transposed input (copied to a workspace
// first), FP32, FP16 and INT32, with tail tiles.
#include <cstdint>
#include <vector>

#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/kernels/compile_run_check.h"

namespace pto {
namespace {

using Builder = compiler::testing::GraphBuilder;
constexpr int kSeeds = 2;

TEST(SortTest, TopkAndArgsortAlongEitherDim) {
  for (pto::v1::DataType t : {pto::v1::DT_FP32, pto::v1::DT_FP16, pto::v1::DT_INT32}) {
    Builder b(t == pto::v1::DT_FP32 ? "sort_f32" : t == pto::v1::DT_FP16 ? "sort_f16" : "sort_i32");
    const uint32_t x = b.Input("x", t, {13, 300});
    const uint32_t top = b.Sort(x, -1, 5, true, {4, 64});
    const uint32_t values = b.Op("gather", {x, top}, {4, 64}, 1, false);
    b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs()->erase("keepdim");
    b.Output("values", values);
    b.Output("indices", top);
    b.Output("order", b.Sort(x, -1, 300, false, {4, 64}));
    b.Output("columns", b.Sort(x, 0, 13, true, {4, 64}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

TEST(SortTest, OfATransposedInput) {
  Builder b("sort_transposed");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {40, 9});
  const uint32_t xt = b.Layout("transpose", {x}, {8, 16}, {}, {{"dim0", 0}, {"dim1", 1}});
  b.Output("order", b.Sort(xt, -1, 40, true, {8, 16}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

}  // namespace
}  // namespace pto
