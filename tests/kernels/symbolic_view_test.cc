// Views and assembles outside loops whose offsets or extents are
// expressions of a parameter's symbol (x[:, 1:] and x[:, :n//2] of x
// [4, n]), and reshapes of tensors with a symbolic dim (a
// matmul's operand included): compiled once, run at several sizes against
// the reference evaluator on the graph built at that size; a region that
// leaves its tensor at run time is an error at launch naming the op and the
// values. A concat of tensors with a symbolic dim compiles once too, its
// inputs at static offsets or at symbolic ones (after an input with a
// symbolic extent in the concat dim).
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using compiler::SymExpr;
using compiler::SymShape;
using compiler::testing::GraphBuilder;
using pto::v1::DT_FP32;

// out[:, :bs-1] = exp(in[:, 1:]) over in, out [4, bs] (tiles of 16 along
// bs: tails of every extent).
pto::v1::Graph ShiftLeft(const SymExpr& bs) {
  GraphBuilder b("shift_left");
  const uint32_t in = b.SymInput("in", DT_FP32, {4, bs});
  const uint32_t out = b.SymValue(DT_FP32, {4, bs}, "out");
  const uint32_t x = b.View(in, {0, 1}, {4, bs - 1}, {4, 16});
  const uint32_t y = b.Op("exp", {x}, {4, 16});
  b.InOut("out", out, b.Assemble(y, out, {0, 0}, {4, 16}));
  return b.Build();
}

TEST(SymbolicViewTest, ShiftedViewAndAssembleCompileOnce) {
  auto kernel = CompileOverBs(ShiftLeft);
  ASSERT_NE(kernel, nullptr);
  RunSizes(ShiftLeft, *kernel, {2, 7, 17, 64, 1000});
  EXPECT_EQ(kernel->plans_expanded(), 5);
}

// out = sum(in[:, bs - bs//2:], -1) + first[:, :4] over in [4, bs]: a
// symbolic offset and a floor-divided extent, next to a static view of the
// symbolic tensor.
pto::v1::Graph HalfSum(const SymExpr& bs) {
  GraphBuilder b("half_sum");
  const uint32_t in = b.SymInput("in", DT_FP32, {4, bs});
  const SymExpr half = SymExpr::FloorDiv(bs, 2);
  const uint32_t x = b.View(in, {0, bs - half}, {4, half}, {4, 8});
  const uint32_t s = b.Op("sum", {x}, {4, 8});  // over the last dim, keepdim
  const uint32_t first = b.View(in, {0, 0}, {4, 4}, {4, 4});
  b.Output("out", b.Op("add", {s, first}, {4, 4}));
  return b.Build();
}

TEST(SymbolicViewTest, SymbolicOffsetAndFloorDividedExtentCompileOnce) {
  CompileAndRunSizes(HalfSum, {4, 7, 17, 64, 1000});
}

// A region that leaves its tensor, or is empty, at the launch's sizes.
void ExpectLaunchError(const runtime::Kernel& kernel, const std::vector<int64_t>& in_shape,
                       const std::vector<int64_t>& out_shape,
                       const std::vector<std::string>& parts) {
  auto in = ptoc::HostTensor::Create(DT_FP32, in_shape);
  auto out = ptoc::HostTensor::Create(DT_FP32, out_shape);
  ASSERT_TRUE(in.ok() && out.ok());
  absl::Status s = kernel.Run({in->AsArg(), out->AsArg()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  for (const std::string& p : parts) EXPECT_THAT(s.message(), HasSubstr(p)) << s;
}

TEST(SymbolicViewTest, ARegionOutsideItsTensorIsAnErrorAtLaunch) {
  auto kernel = CompileOverBs(HalfSum);
  ASSERT_NE(kernel, nullptr);
  // in[:, :4] of in [4, 3].
  ExpectLaunchError(*kernel, {4, 3}, {4, 4},
                    {"op #2 \"view\"", "offsets [0,0] of extent [4,4]",
                     "tensor of shape [4,3]", "bs=3"});
  // in[:, 1:] is empty at bs = 1.
  auto shift = CompileOverBs(ShiftLeft);
  ASSERT_NE(shift, nullptr);
  ExpectLaunchError(*shift, {4, 1}, {4, 1},
                    {"op #0 \"view\"", "extent [4,0] is empty in dim 1", "bs=1",
                     "empty tensors are not supported"});
}

// reshape(x, shape) with `shape` written as exprs (over bs for the compiled
// graph, constants for the reference).
uint32_t Reshape(GraphBuilder& b, uint32_t x, const SymShape& shape,
                 const std::vector<int64_t>& tile) {
  const uint32_t out = b.Layout("reshape", {x}, {1}, tile, {{"shape", {1}}});
  b.SetShape(out, shape);
  pto::v1::Attribute& attr = (*b.graph().mutable_ops()->rbegin()->mutable_attrs())["shape"];
  attr.Clear();
  for (const SymExpr& d : shape) *attr.mutable_exprs()->add_values() = d.ToProto();
  return out;
}

// out = (x.reshape(2*bs, 32) @ w).reshape(2, bs, 16) over x [2, bs, 32]: the
// matmul's A is a reshape of a tensor with a symbolic inner dim (its rows
// are 32 apart whatever bs is), M = 2*bs with tails.
pto::v1::Graph MatmulOfAReshape(const SymExpr& bs) {
  GraphBuilder b("mm_reshape");
  const uint32_t x = b.SymInput("x", DT_FP32, {2, bs, 32});
  const uint32_t w = b.Input("w", DT_FP32, {32, 16});
  const uint32_t a = Reshape(b, x, {bs * 2, 32}, {16, 32});
  const uint32_t m = b.Matmul(a, w, {1, 16}, DT_FP32, false, false, {16, 16}, {32, 32},
                              {16, 16});
  b.SetShape(m, {bs * 2, 16});
  b.Output("out", Reshape(b, m, {2, bs, 16}, {1, 16, 16}));
  return b.Build();
}

TEST(SymbolicViewTest, MatmulOfAReshapeOverASymbolicInnerDimCompilesOnce) {
  CompileAndRunSizes(MatmulOfAReshape, {1, 7, 9, 64, 100});
}

// out = exp(x.reshape(2, 2, bs)).reshape(4, bs) over x [4, bs]: the load
// through the reshape has strides [2*bs, bs, 1], run-time args.
pto::v1::Graph SplitRows(const SymExpr& bs) {
  GraphBuilder b("split_rows");
  const uint32_t x = b.SymInput("x", DT_FP32, {4, bs});
  const uint32_t r = Reshape(b, x, {2, 2, bs}, {2, 2, 16});
  const uint32_t e = b.Op("exp", {r}, {2, 2, 16});
  b.Output("out", Reshape(b, e, {4, bs}, {4, 16}));
  return b.Build();
}

TEST(SymbolicViewTest, ReshapeWithRunTimeStridesCompilesOnce) {
  CompileAndRunSizes(SplitRows, {1, 7, 17, 100});
}

// A load through a reshape declares the shape it reads the buffer as and
// which dynamic args are that shape's strides (TemplateAccess.view_shape,
// stride_arg): a binary whose stride or view shape disagrees with the
// buffer at the launch's sizes (a corrupt or crafted cache entry) is
// refused at launch, naming the template, the access and the values; one
// that does not say which arg is a stride it needs is refused at load.
TEST(SymbolicViewTest, StridesOfALoadThroughAReshapeAreChecked) {
  auto compiled = compiler::Compile(SplitRows(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const pto::v1::KernelBinary good = compiled->binary;
  const pto::v1::ExecuteGraph& eg = good.execute_graph();
  int ti = -1, ai = -1;
  for (int t = 0; t < eg.templates_size() && ti < 0; ++t) {
    for (int a = 0; a < eg.templates(t).accesses_size() && ti < 0; ++a) {
      if (eg.templates(t).accesses(a).view_shape_size() > 0) {
        ti = t;
        ai = a;
      }
    }
  }
  ASSERT_GE(ti, 0) << "no access through a reshape";
  const pto::v1::TaskTemplate& t = eg.templates(ti);
  const pto::v1::TemplateAccess& a = t.accesses(ai);
  // x [4, bs] read as [2, 2, bs]: strides 2*bs and bs are dynamic args.
  ASSERT_EQ(a.view_shape_size(), 3);
  EXPECT_EQ(a.view_shape(0).size(), 2);
  EXPECT_EQ(a.view_shape(2).symbol(), "bs");
  ASSERT_EQ(a.stride_arg_size(), 3);
  EXPECT_GT(a.stride_arg(0), 0u);
  EXPECT_GT(a.stride_arg(1), 0u);
  EXPECT_EQ(a.stride_arg(2), 0u);
  const int outer = static_cast<int>(t.dynamic_args(static_cast<int>(a.stride_arg(0)) - 1));
  auto outer_expr = compiler::SymExprFromProto(eg.dynamic_offsets(outer));
  ASSERT_TRUE(outer_expr.ok());
  EXPECT_EQ(*outer_expr, kBs * 2);
  const std::string access = absl::StrCat("template ", t.label(), ": access #", ai,
                                          " (a load of buffer ", a.buffer(),
                                          " of shape [4,7] read as [2,2,7])");
  auto refused_at_launch = [&](const pto::v1::KernelBinary& bad,
                               const std::vector<std::string>& parts) {
    auto kernel = runtime::Kernel::Load(bad);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    auto report = ptoc::RunAndCheck(SplitRows(SymExpr(7)), **kernel, {});
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument) << report.status();
    for (const std::string& p : parts) EXPECT_THAT(report.status().message(), HasSubstr(p));
  };
  // The outer stride 2*bs replaced by 1000 (only this access reads it).
  pto::v1::KernelBinary bad = good;
  bad.mutable_execute_graph()->mutable_dynamic_offsets(outer)->set_constant(1000);
  refused_at_launch(bad, {access, "addresses dim 0 with stride 1000",
                          "the view's row-major stride there is 14"});
  // A view shape with more elements than the buffer.
  bad = good;
  bad.mutable_execute_graph()->mutable_templates(ti)->mutable_accesses(ai)->mutable_view_shape(
      0)->set_size(3);
  refused_at_launch(bad, {"read as [3,2,7]", "the view has 42 elements and the buffer 28"});

  auto refused_at_load = [&](const std::function<void(pto::v1::TemplateAccess*)>& edit,
                             const std::string& what) {
    pto::v1::KernelBinary worse = good;
    edit(worse.mutable_execute_graph()->mutable_templates(ti)->mutable_accesses(ai));
    auto k = runtime::Kernel::Load(worse);
    ASSERT_FALSE(k.ok()) << what;
    EXPECT_THAT(k.status().message(), HasSubstr(what));
  };
  refused_at_load([](pto::v1::TemplateAccess* x) { x->clear_stride_arg(); },
                  "read as [2,2,bs] names no dynamic arg for the stride of dim 1");
  refused_at_load([](pto::v1::TemplateAccess* x) { x->clear_view_shape(); },
                  "names stride args for 3 of its 2 dims");
  refused_at_load(
      [](pto::v1::TemplateAccess* x) {
        x->clear_view_shape();
        x->clear_stride_arg();
      },
      "of shape [4,bs] names no dynamic arg for the stride of dim 0");
  refused_at_load([](pto::v1::TemplateAccess* x) { x->mutable_index(0)->set_space_dim(0); },
                  "has a view shape but does not read the whole buffer");
  EXPECT_TRUE(runtime::Kernel::Load(good).ok());
}

TEST(SymbolicViewTest, AReshapeThatChangesTheElementCountIsAnError) {
  GraphBuilder b("bad_reshape");
  const uint32_t x = b.SymInput("x", DT_FP32, {4, kBs});
  b.Output("out", Reshape(b, x, {kBs * 2, 4}, {4, 4}));
  auto compiled = compiler::Compile(b.Build(), "host", {});
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument) << compiled.status();
  EXPECT_THAT(compiled.status().message(),
              AllOf(HasSubstr("op #0 \"reshape\""), HasSubstr("has bs*8 elements"),
                    HasSubstr("the input [4,bs] has bs*4")));
}

// concat([x * 2, y], dim=1) over x, y [bs, 8]: the first input stored by
// the group computing it, the parameter copied by a group of its own; both
// at static offsets in the [bs, 16] result.
pto::v1::Graph ConcatColumns(const SymExpr& bs) {
  GraphBuilder b("concat_columns");
  const uint32_t x = b.SymInput("x", DT_FP32, {bs, 8});
  const uint32_t y = b.SymInput("y", DT_FP32, {bs, 8});
  const uint32_t m = b.Op("muls", {x}, {4, 8}, 2.0);
  b.Output("out", b.Layout("concat", {m, y}, {4, 8}, {}, {{"dim", 1}}));
  return b.Build();
}

TEST(SymbolicViewTest, ConcatAlongAStaticDimCompilesOnce) {
  CompileAndRunSizes(ConcatColumns, {1, 7, 17, 64});
}

// concat([y, exp(x)], dim=0) over y [4, 8], x [bs, 8]: the symbolic input
// last, so its offset (4) is static; the result is [bs+4, 8].
pto::v1::Graph ConcatRows(const SymExpr& bs) {
  GraphBuilder b("concat_rows");
  const uint32_t y = b.Input("y", DT_FP32, {4, 8});
  const uint32_t x = b.SymInput("x", DT_FP32, {bs, 8});
  const uint32_t e = b.Op("exp", {x}, {4, 8});
  b.Output("out", b.Layout("concat", {y, e}, {4, 8}, {}, {{"dim", 0}}));
  return b.Build();
}

TEST(SymbolicViewTest, ConcatAlongASymbolicDimWithTheSymbolicInputLastCompilesOnce) {
  CompileAndRunSizes(ConcatRows, {1, 7, 17, 64});
}

// concat([x * 2, y, x], dim=0) over x [bs, 8], y [4, 8]: y at row bs and
// the second x at bs + 4, symbolic offsets (lowered as assembles: the first
// stored by the group computing it, the parameters copied by groups of
// their own); the result is [2*bs+4, 8].
pto::v1::Graph ConcatRowsAtSymbolicOffsets(const SymExpr& bs) {
  GraphBuilder b("concat_symbolic_rows");
  const uint32_t x = b.SymInput("x", DT_FP32, {bs, 8});
  const uint32_t y = b.Input("y", DT_FP32, {4, 8});
  const uint32_t m = b.Op("muls", {x}, {4, 8}, 2.0);
  b.Output("out", b.Layout("concat", {m, y, x}, {4, 8}, {}, {{"dim", 0}}));
  return b.Build();
}

TEST(SymbolicViewTest, ConcatAtSymbolicOffsetsCompilesOnce) {
  auto kernel = CompileOverBs(ConcatRowsAtSymbolicOffsets);
  ASSERT_NE(kernel, nullptr);
  RunSizes(ConcatRowsAtSymbolicOffsets, *kernel, {1, 7, 17, 64});
  EXPECT_EQ(kernel->plans_expanded(), 4);
}

// concat([x, exp(y)], dim=1) * 2 over x [4, bs], y [4, 8]: exp(y) at
// column bs of the [4, bs+8] concat (run-time strides too), which the muls
// reads back.
pto::v1::Graph ConcatColumnsAtASymbolicOffset(const SymExpr& bs) {
  GraphBuilder b("concat_symbolic_columns");
  const uint32_t x = b.SymInput("x", DT_FP32, {4, bs});
  const uint32_t y = b.Input("y", DT_FP32, {4, 8});
  const uint32_t e = b.Op("exp", {y}, {4, 8});
  const uint32_t c = b.Layout("concat", {x, e}, {4, 16}, {}, {{"dim", 1}});
  b.Output("out", b.Op("muls", {c}, {4, 16}, 2.0));
  return b.Build();
}

TEST(SymbolicViewTest, ConcatAlongAnInnerDimAtASymbolicOffsetCompilesOnce) {
  CompileAndRunSizes(ConcatColumnsAtASymbolicOffset, {1, 7, 17, 100});
}

// sum(concat([x, y], dim=1), -1) over x [4, bs], y [4, 8]: a row over the
// symbolic bs+8, lowered as a row group up to its cap (4096) and in the
// accumulating form above; the probes must tell bs+8 from bs in ceil(./4096)
// too (a remainder near 4096).
pto::v1::Graph SumOfConcatColumns(const SymExpr& bs) {
  GraphBuilder b("sum_concat_columns");
  const uint32_t x = b.SymInput("x", DT_FP32, {4, bs});
  const uint32_t y = b.Input("y", DT_FP32, {4, 8});
  const uint32_t c = b.Layout("concat", {x, y}, {4, 16}, {}, {{"dim", 1}});
  b.Output("out", b.Op("sum", {c}, {4, 16}));
  return b.Build();
}

TEST(SymbolicViewTest, ARowOverAConcatAtASymbolicOffsetCompilesOnce) {
  CompileAndRunSizes(SumOfConcatColumns, {1, 7, 100, 4089, 5000});
}

}  // namespace
}  // namespace pto::testing
