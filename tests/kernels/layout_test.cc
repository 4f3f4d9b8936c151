// End to end: layout ops (view, assemble, transpose, permute, unsqueeze,
// reshape, clone, concat) alone, feeding and fed by elementwise ops and
// reductions, with tail tiles, in FP32 and FP16, checked against the
// reference evaluator; and the errors for what is not supported.
#include <map>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/ir/import.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/compile_run_check.h"

namespace pto {
namespace {

using pto::v1::DataType;
using ::testing::HasSubstr;

using Builder = compiler::testing::GraphBuilder;
constexpr int kSeeds = 2;
constexpr DataType kTypes[] = {pto::v1::DT_FP32, pto::v1::DT_FP16};

std::string Name(const char* what, DataType t) {
  return std::string(what) + (t == pto::v1::DT_FP16 ? "_f16" : "_f32");
}

// y = x[3:20, 5:60] * 2: a view feeding a mul is a TLOAD at an offset.
TEST(LayoutTest, ViewFeedsElementwise) {
  for (DataType t : kTypes) {
    Builder b(Name("view_mul", t));
    const uint32_t x = b.Input("x", t, {37, 70});
    const uint32_t v = b.Layout("view", {x}, {8, 16}, {{"shape", {17, 55}}, {"offsets", {3, 5}}});
    b.Output("y", b.Op("muls", {v}, {8, 16}, {{"scalar", 2}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// y = x[2:9, 4] (a view of size 1 in dim 1, then that dim removed).
TEST(LayoutTest, ViewWithFixedIndexAndSqueeze) {
  Builder b("view_index");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {12, 9});
  const uint32_t v = b.Layout("view", {x}, {4, 1}, {{"shape", {7, 1}}, {"offsets", {2, 4}}});
  const uint32_t s = b.Layout("reshape", {v}, {4}, {{"shape", {7}}});
  b.Output("y", b.Op("exp", {s}, {4}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// out[:, 64:128] = x[:, :64] * 2 into an inout parameter (the rest keeps
// the caller's data), with tails.
TEST(LayoutTest, AssembleIntoRegion) {
  for (DataType t : kTypes) {
    Builder b(Name("assemble", t));
    const uint32_t x = b.Input("x", t, {37, 130});
    const uint32_t out = b.InOut("out", t, {37, 150});
    const uint32_t v = b.Layout("view", {x}, {16, 16}, {{"shape", {37, 64}}, {"offsets", {0, 0}}});
    const uint32_t m = b.Op("muls", {v}, {16, 16}, {{"scalar", 2}});
    b.Output("out", b.Layout("assemble", {m, out}, {16, 16}, {{"offsets", {0, 64}}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// Two assembles into a fresh result (concat by hand), then the result read
// by an add: the add waits for both writes.
TEST(LayoutTest, AssemblesThenRead) {
  Builder b("assemble_twice");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {10, 20});
  const uint32_t y = b.Input("y", pto::v1::DT_FP32, {10, 20});
  const uint32_t z = b.Op("muls", {b.Input("w", pto::v1::DT_FP32, {20, 20})}, {8, 8},
                          {{"scalar", 0.5}});
  const uint32_t a1 = b.Layout("assemble", {b.Op("exp", {x}, {4, 8}), z}, {4, 8}, {{"offsets", {0, 0}}});
  const uint32_t a2 = b.Layout("assemble", {y, a1}, {4, 8}, {{"offsets", {10, 0}}});
  b.Output("out", b.Op("adds", {a2}, {8, 8}, {{"scalar", 1}}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// y = x.transpose(0, 1) + bias: the transpose is a strided load in the add.
TEST(LayoutTest, TransposeFeedsAdd) {
  for (DataType t : kTypes) {
    Builder b(Name("transpose_add", t));
    const uint32_t x = b.Input("x", t, {45, 33});
    const uint32_t bias = b.Input("bias", t, {45});
    const uint32_t xt = b.Layout("transpose", {x}, {8, 16}, {}, {{"dim0", 0}, {"dim1", 1}});
    b.Output("y", b.Op("add", {xt, bias}, {8, 16}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// out = x.T (bound to the output: a copy group), and permute of rank 3 and
// 4, unsqueeze, clone.
TEST(LayoutTest, MaterializedTransposePermuteUnsqueezeClone) {
  {
    Builder b("transpose_out");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {19, 40});
    b.Output("y", b.Layout("transpose", {x}, {16, 8}, {}, {{"dim0", -1}, {"dim1", 0}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  {
    Builder b("permute3");
    const uint32_t x = b.Input("x", pto::v1::DT_FP16, {5, 6, 7});
    const uint32_t p = b.Layout("permute", {x}, {2, 4, 4}, {{"dims", {2, 0, 1}}});
    b.Output("y", b.Op("muls", {p}, {2, 4, 4}, {{"scalar", 3}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  {
    Builder b("permute4_out");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {2, 3, 4, 5});
    b.Output("y", b.Layout("permute", {x}, {1, 2, 2, 2}, {{"dims", {3, 1, 0, 2}}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  {
    Builder b("unsqueeze_clone");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {6, 10});
    const uint32_t u = b.Layout("unsqueeze", {x}, {2, 1, 4}, {}, {{"dim", 1}});
    const uint32_t c = b.Op("clone", {u}, {2, 1, 4});
    b.Output("y", c);
    b.Output("z", b.Layout("unsqueeze", {x}, {1, 4, 4}, {}, {{"dim", -1}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// A reduction of a transposed view: x.T.sum(-1) (x's column sums).
TEST(LayoutTest, ReduceTransposed) {
  Builder b("sum_transposed");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {50, 21});
  const uint32_t xt = b.Layout("transpose", {x}, {8, 16}, {}, {{"dim0", 0}, {"dim1", 1}});
  b.Output("y", b.Op("sum", {xt}, {8, 16}, -1, false));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// softmax(x.T, -1) with tiles spanning the row: the row-fused group loads
// x transposed.
TEST(LayoutTest, RowFusedSoftmaxOfTransposed) {
  Builder b("softmax_t");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {40, 13});
  const std::vector<int64_t> tile = {4, 64};
  const uint32_t xt = b.Layout("transpose", {x}, tile, {}, {{"dim0", 0}, {"dim1", 1}});
  const uint32_t m = b.Op("amax", {xt}, tile, -1, true);
  const uint32_t e = b.Op("exp", {b.Op("sub", {xt, m}, tile)}, tile);
  const uint32_t s = b.Op("sum", {e}, tile, -1, true);
  b.Output("out", b.Op("div", {e, s}, tile));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// Reshapes that merge and split dims read the buffer as the new shape:
// flatten then exp, split a computed value, a transpose of a reshape, and a
// reshape bound to an output (FP16).
TEST(LayoutTest, ReshapeMergeAndSplit) {
  {
    Builder b("flatten");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {6, 10});
    const uint32_t f = b.Layout("reshape", {x}, {16}, {{"shape", {60}}});
    b.Output("y", b.Op("exp", {f}, {16}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  {
    Builder b("split_transpose");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {4, 30});
    const uint32_t e = b.Op("exp", {x}, {2, 16});  // a workspace
    const uint32_t r = b.Layout("reshape", {e}, {2, 4, 8}, {{"shape", {4, 5, 6}}});
    const uint32_t t = b.Layout("transpose", {r}, {2, 4, 8}, {}, {{"dim0", 1}, {"dim1", 2}});
    b.Output("y", b.Op("muls", {t}, {2, 4, 8}, {{"scalar", 2}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  {
    Builder b("reshape_out_f16");
    const uint32_t x = b.Input("x", pto::v1::DT_FP16, {3, 4, 5});
    b.Output("y", b.Layout("reshape", {x}, {4, 8}, {{"shape", {12, 5}}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  {
    // Of a view and of a transpose (not contiguous): each is copied first.
    Builder b("reshape_of_view");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {9, 14});
    const uint32_t v = b.Layout("view", {x}, {4, 8}, {{"shape", {6, 10}}, {"offsets", {2, 3}}});
    const uint32_t t = b.Layout("transpose", {x}, {4, 8}, {}, {{"dim0", 0}, {"dim1", 1}});
    b.Output("y", b.Op("exp", {b.Layout("reshape", {v}, {16}, {{"shape", {60}}})}, {16}));
    b.Output("z", b.Op("neg", {b.Layout("reshape", {t}, {2, 4, 8}, {{"shape", {2, 7, 9}}})},
                       {2, 4, 8}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// A load through a reshape depends on every task that wrote the buffer:
// exp over [4,30] in 8 tiles, then a flatten read in 4 tiles of 30.
TEST(LayoutTest, ReshapeLoadWaitsForEveryWriter) {
  Builder b("reshape_deps");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {4, 30});
  const uint32_t e = b.Op("exp", {x}, {2, 8});
  const uint32_t f = b.Layout("reshape", {e}, {30}, {{"shape", {120}}});
  b.Output("y", b.Op("muls", {f}, {30}, {{"scalar", 2}}));
  auto compiled = compiler::Compile(b.graph(), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const pto::v1::ExecuteGraph& eg = compiled->binary.execute_graph();
  ASSERT_EQ(eg.tasks_size(), 8 + 4);
  for (int t = 8; t < 12; ++t) EXPECT_EQ(eg.tasks(t).deps_size(), 8) << "task " << t;
}

// concat of three inputs along dim 1 (one a view, one computed), and along
// dim 0 in FP16.
TEST(LayoutTest, Concat) {
  {
    Builder b("concat1");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {9, 20});
    const uint32_t y = b.Input("y", pto::v1::DT_FP32, {9, 7});
    const uint32_t v = b.Layout("view", {x}, {4, 8}, {{"shape", {9, 5}}, {"offsets", {0, 15}}});
    const uint32_t e = b.Op("exp", {y}, {4, 8});
    const uint32_t c = b.Layout("concat", {x, v, e}, {4, 8}, {}, {{"dim", 1}});
    b.Output("out", b.Op("muls", {c}, {4, 8}, {{"scalar", 2}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  {
    Builder b("concat0_f16");
    const uint32_t x = b.Input("x", pto::v1::DT_FP16, {3, 4, 20});
    const uint32_t y = b.Input("y", pto::v1::DT_FP16, {5, 4, 20});
    b.Output("out", b.Layout("concat", {x, y}, {2, 4, 16}, {}, {{"dim", 0}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// concat([a * 2, b + 1], dim) stores each input's tile into its region
// straight from the group computing it: no copy groups, one pass over GM
// for the result (dims 0 and 1, tails, FP32 and FP16); with a parameter
// input, only that one is copied; unfused (fuse off) gives the same bits.
TEST(LayoutTest, ConcatStoresFromProducers) {
  for (DataType t : kTypes) {
    for (int64_t dim : {0, 1}) {
      Builder b(Name(dim == 0 ? "concat_fused0" : "concat_fused1", t));
      const uint32_t x = b.Input("x", t, {9, 20});
      const uint32_t y = b.Input("y", t, {9, 20});
      const uint32_t a = b.Op("muls", {x}, {4, 8}, {{"scalar", 2}});
      const uint32_t c = b.Op("adds", {y}, {4, 16}, {{"scalar", 1}});
      b.Output("out", b.Layout("concat", {a, c}, {4, 8}, {}, {{"dim", dim}}));
      SCOPED_TRACE(b.graph().name());
      testing::CompileRunAndCheck(b.graph(), kSeeds);
      compiler::CompileSettings settings;
      settings.keep_dumps = true;
      auto r = compiler::Compile(b.graph(), "host", {}, settings);
      ASSERT_TRUE(r.ok()) << r.status();
      const std::string& tile = r->dumps["tile"];
      // Two groups (the tiles differ), each ending in its part's TSTORE.
      EXPECT_THAT(tile, HasSubstr("ops=[0,2]"));
      EXPECT_THAT(tile, HasSubstr("ops=[1,2]"));
      EXPECT_THAT(tile, ::testing::Not(HasSubstr("group #2")));
      EXPECT_THAT(tile, HasSubstr(dim == 0 ? "gm[a0+9, a1]" : "gm[a0, a1+20]"));
    }
  }
  {
    Builder b("concat_param_and_computed");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {9, 20});
    const uint32_t e = b.Op("exp", {x}, {4, 8});
    const uint32_t c = b.Layout("concat", {x, e, e}, {4, 8}, {}, {{"dim", 1}});
    b.Output("out", b.Op("muls", {c}, {4, 8}, {{"scalar", 2}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
    compiler::CompileSettings settings;
    settings.keep_dumps = true;
    auto r = compiler::Compile(b.graph(), "host", {}, settings);
    ASSERT_TRUE(r.ok()) << r.status();
    // exp's group stores both of e's parts; x is copied by concat's group.
    EXPECT_THAT(r->dumps["tile"], HasSubstr("ops=[0,1] space=[9,20]"));
    EXPECT_THAT(r->dumps["tile"], HasSubstr("group #1 ops=[1] space=[9,20]"));
  }
}

absl::Status CompileStatus(const pto::v1::Graph& g) {
  return compiler::Compile(g, "host", {}).status();
}

// What is not supported is an error naming the op.
TEST(LayoutTest, UnsupportedIsNamed) {
  {
    Builder b("assemble_into_in");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {4, 6});
    const uint32_t y = b.Input("y", pto::v1::DT_FP32, {2, 6});
    b.Output("out", b.Layout("assemble", {y, x}, {2, 6}, {{"offsets", {1, 0}}}));
    const absl::Status s = CompileStatus(b.graph());
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_THAT(s.message(), HasSubstr("op #0 \"assemble\""));
  }
}

// out[:, 0:4] = out[:, 4:8] * 2 reads and writes disjoint regions of one
// buffer; out[:, 1:5] = out[:, 0:4] * 2 would race and is an error.
TEST(LayoutTest, AssembleFromItsOwnBuffer) {
  for (int64_t from : {4, 0}) {
    Builder b(from == 4 ? "shift_ok" : "shift_race");
    const uint32_t out = b.InOut("out", pto::v1::DT_FP32, {6, 8});
    const uint32_t v = b.Layout("view", {out}, {4, 2}, {{"shape", {6, 4}}, {"offsets", {0, from}}});
    const uint32_t m = b.Op("muls", {v}, {4, 2}, {{"scalar", 2}});
    b.Output("out", b.Layout("assemble", {m, out}, {4, 2}, {{"offsets", {0, from == 4 ? 0 : 1}}}));
    if (from == 4) {
      testing::CompileRunAndCheck(b.graph(), kSeeds);
    } else {
      const absl::Status s = CompileStatus(b.graph());
      EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
      EXPECT_THAT(s.message(), HasSubstr("its tasks would race"));
    }
  }
}

}  // namespace
}  // namespace pto
