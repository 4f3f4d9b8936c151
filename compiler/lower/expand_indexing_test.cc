// The index ops' lowering (expand_indexing.h) and their tasks
// (BuildExecuteGraph): one group per gather with TLOAD, MGATHER, TSTORE; a
// view copied first; a scatter as a copy group and a group of MSCATTER
// tasks that run one after another after every copy task, with later
// readers after the last; an in-place scatter without the copy; the
// printed forms; the shape rules' errors.
#include "compiler/lower/expand_indexing.h"

#include <set>
#include <string>

#include "compiler/ir/import.h"
#include "compiler/lower/build_execute_graph.h"
#include "compiler/lower/emit_pto.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/lower/partition_blocks.h"
#include "compiler/ops/infer.h"
#include "compiler/ops/op_registry.h"
#include "compiler/pto/pto_program.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using ::testing::HasSubstr;
using testing::GraphBuilder;

struct Lowered {
  TensorGraph tensor;
  TileGraph tile;
  BlockGraph block;
  pto::v1::ExecuteGraph execute;
};

absl::Status Lower(const pto::v1::Graph& g, Lowered* out) {
  absl::StatusOr<TensorGraph> t = testing::VerifyAndImport(g);
  if (!t.ok()) return t.status();
  out->tensor = *std::move(t);
  absl::StatusOr<TileGraph> tile = ExpandToTiles(out->tensor, {});
  if (!tile.ok()) return tile.status();
  out->tile = *std::move(tile);
  absl::StatusOr<BlockGraph> block = PartitionBlocks(out->tensor, out->tile);
  if (!block.ok()) return block.status();
  out->block = *std::move(block);
  absl::StatusOr<pto::v1::ExecuteGraph> e = BuildExecuteGraph(out->block);
  if (!e.ok()) return e.status();
  out->execute = *std::move(e);
  return absl::OkStatus();
}

// Op `kind` along `dim` (the builder's reduction form, its "keepdim"
// dropped); `reduce` sets scatter's attribute.
uint32_t IndexOp(GraphBuilder& b, const std::string& kind, const std::vector<uint32_t>& in,
                 const std::vector<int64_t>& tile, int64_t dim,
                 const std::string& reduce = "") {
  const uint32_t out = b.Op(kind, in, tile, dim, false);
  pto::v1::Op* op = b.graph().mutable_ops(b.graph().ops_size() - 1);
  op->mutable_attrs()->erase("keepdim");
  if (!reduce.empty()) (*op->mutable_attrs())["reduce"].set_s(reduce);
  return out;
}

std::set<uint32_t> Deps(const Lowered& l, int task) {
  const auto& t = l.execute.tasks(task);
  return {t.deps().begin(), t.deps().end()};
}

TEST(ExpandIndexingTest, GatherIsOneGroupOfLoadGatherStore) {
  GraphBuilder b;
  const uint32_t x = b.Input("x", pto::v1::DT_FP16, {10, 12});
  const uint32_t i = b.Input("i", pto::v1::DT_INT32, {6, 12});
  b.Output("o", IndexOp(b, "gather", {x, i}, {4, 8}, 0));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 1u);
  const TileGroup& g = l.tile.groups[0];
  EXPECT_EQ(g.space, (std::vector<int64_t>{6, 12}));
  ASSERT_EQ(g.body.size(), 3u);
  EXPECT_EQ(g.body[0].op, PtoOpcode::kTLoad);
  EXPECT_EQ(g.body[1].op, PtoOpcode::kMGather);
  EXPECT_EQ(g.body[1].index_dim, 0);
  EXPECT_EQ(g.body[1].srcs, std::vector<int>{0});
  EXPECT_EQ(g.ub_types[0], pto::v1::DT_INT64);
  EXPECT_EQ(g.body[2].op, PtoOpcode::kTStore);
  EXPECT_FALSE(g.serial_all);
  EXPECT_THAT(PrintTileGraph(l.tile), HasSubstr("MGATHER %t1:ub.f16, %0:gm[dim=0], %t0:ub"));
  absl::StatusOr<PtoProgram> p = EmitPto(l.block, "host");
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(PrintPto(*p), HasSubstr("MGATHER %t1:ub.f16[4,8], %0[dim=0], %t0"));
  // Every task reads the whole of x: no dependencies among them.
  for (int t = 0; t < l.execute.tasks_size(); ++t) EXPECT_TRUE(Deps(l, t).empty());
}

TEST(ExpandIndexingTest, IndexSelectLoadsTheIndexAlongItsDim) {
  GraphBuilder b;
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {10, 12});
  const uint32_t i = b.Input("i", pto::v1::DT_INT64, {5});
  b.Output("o", IndexOp(b, "index_select", {x, i}, {4, 8}, 1));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 1u);
  const TileInstr& load = l.tile.groups[0].body[0];
  ASSERT_EQ(load.index.size(), 1u);
  EXPECT_EQ(load.index[0].space_dim, 1);
  EXPECT_EQ(l.tile.groups[0].space, (std::vector<int64_t>{10, 5}));
}

TEST(ExpandIndexingTest, GatherOfAViewCopiesTheViewFirst) {
  GraphBuilder b;
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {10, 12});
  const uint32_t i = b.Input("i", pto::v1::DT_INT64, {4, 6});
  const uint32_t v = b.View(x, {SymExpr(2), SymExpr(3)}, {SymExpr(4), SymExpr(6)}, {4, 8});
  b.Output("o", IndexOp(b, "gather", {v, i}, {4, 8}, 1));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 2u);
  EXPECT_EQ(l.tile.groups[0].body[1].op, PtoOpcode::kTStore);
  EXPECT_EQ(l.tile.gm[l.tile.groups[1].body[1].gm].buffer,
            l.tile.gm[l.tile.groups[0].body[1].gm].buffer);
  EXPECT_EQ(l.tile.buffers.back().param, -1);  // a workspace
}

TEST(ExpandIndexingTest, ScatterCopiesThenScattersInOrderAndReadersWaitForTheLast) {
  GraphBuilder b;
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {8, 8});
  const uint32_t i = b.Input("i", pto::v1::DT_INT64, {8, 8});
  const uint32_t s = b.Input("s", pto::v1::DT_FP32, {8, 8});
  const uint32_t y = IndexOp(b, "scatter", {x, i, s}, {4, 4}, 0, "add");
  b.Output("o", b.Op("exp", {y}, {4, 4}));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 3u);  // copy, scatter, exp
  EXPECT_EQ(l.tile.groups[1].body.back().op, PtoOpcode::kMScatter);
  EXPECT_EQ(l.tile.groups[1].body.back().scatter, ScatterReduce::kAdd);
  EXPECT_TRUE(l.tile.groups[1].serial_all);
  EXPECT_THAT(PrintTileGraph(l.tile), HasSubstr("MSCATTER %3:gm[dim=0 add], %t1:ub, %t0:ub"));
  ASSERT_EQ(l.execute.tasks_size(), 12);  // 4 copy, 4 scatter, 4 exp
  EXPECT_EQ(Deps(l, 4), (std::set<uint32_t>{0, 1, 2, 3}));
  for (int t = 5; t < 8; ++t) EXPECT_TRUE(Deps(l, t).count(t - 1)) << t;
  for (int t = 8; t < 12; ++t) EXPECT_TRUE(Deps(l, t).count(7)) << t;
}

TEST(ExpandIndexingTest, InPlaceScatterHasNoCopy) {
  GraphBuilder b;
  const uint32_t x = b.InOut("x", pto::v1::DT_FP32, {8, 8});
  const uint32_t i = b.Input("i", pto::v1::DT_INT64, {3});
  const uint32_t s = b.Input("s", pto::v1::DT_FP32, {8, 3});
  b.Output("x", IndexOp(b, "index_add", {x, i, s}, {4, 4}, 1));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 1u);
  EXPECT_EQ(l.tile.groups[0].space, (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(l.tile.groups[0].body.back().scatter, ScatterReduce::kAdd);
}

absl::Status Infer(const std::string& kind, const std::vector<SymValueType>& in, int64_t dim,
                   const std::string& reduce = "") {
  InferAttrs attrs;
  attrs.dim = dim;
  attrs.reduce = reduce;
  return InferSymResult(*FindOp(kind), in, attrs).status();
}

SymValueType T(pto::v1::DataType dtype, const std::vector<int64_t>& shape) {
  return {dtype, ToSymShape(shape)};
}

TEST(ExpandIndexingTest, ShapeRulesAreCheckedWithClearErrors) {
  using pto::v1::DT_FP32;
  using pto::v1::DT_INT64;
  absl::StatusOr<SymValueType> ok =
      InferSymResult(*FindOp("index_select"), {T(DT_FP32, {4, 6}), T(DT_INT64, {9})},
                     [] { InferAttrs a; a.dim = -1; return a; }());
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->shape, ToSymShape({4, 9}));
  EXPECT_THAT(Infer("gather", {T(DT_FP32, {4, 6}), T(DT_FP32, {4, 6})}, 1).message(),
              HasSubstr("DT_INT32 or DT_INT64 index"));
  EXPECT_THAT(Infer("gather", {T(DT_FP32, {4, 6}), T(DT_INT64, {5, 6})}, 1).message(),
              HasSubstr("index dim 0 is larger"));
  EXPECT_THAT(Infer("gather", {T(DT_FP32, {4, 6}), T(DT_INT64, {4})}, 1).message(),
              HasSubstr("of the input's rank"));
  EXPECT_THAT(Infer("gather", {T(DT_FP32, {4, 6}), T(DT_INT64, {4, 6})}, 2).message(),
              HasSubstr("out of range"));
  EXPECT_THAT(Infer("scatter", {T(DT_FP32, {4, 6}), T(DT_INT64, {4, 6}), T(DT_FP32, {4, 5})},
                    1).message(),
              HasSubstr("larger than src's"));
  EXPECT_THAT(Infer("scatter", {T(DT_FP32, {4, 6}), T(DT_INT64, {4, 6}), T(DT_FP32, {4, 6})},
                    1, "max").message(),
              HasSubstr("\"max\""));
  EXPECT_THAT(Infer("index_add", {T(DT_FP32, {4, 6}), T(DT_INT64, {3}), T(DT_FP32, {4, 6})},
                    1).message(),
              HasSubstr("dim 1 of the index's length"));
  EXPECT_THAT(Infer("index_add", {T(pto::v1::DT_BOOL, {4, 6}), T(DT_INT64, {3}),
                                  T(pto::v1::DT_BOOL, {4, 3})}, 1).message(),
              HasSubstr("index_add takes"));
}

// sort: one group of MSORT and TSTORE over the result's space, its tile
// spanning all k positions (the other dims as the vec_tile allows), its
// tasks reading x whole; a k too long for the UB is cut into chunks.
TEST(ExpandIndexingTest, SortIsOneGroupOfSortStore) {
  GraphBuilder b;
  const uint32_t x = b.Input("x", pto::v1::DT_FP16, {6, 10});
  b.Output("o", b.Sort(x, -1, 7, true, {4, 4}));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 1u);
  const TileGroup& g = l.tile.groups[0];
  EXPECT_EQ(g.space, (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(g.tile, (std::vector<int64_t>{4, 7}));
  ASSERT_EQ(g.body.size(), 2u);
  EXPECT_EQ(g.body[0].op, PtoOpcode::kMSort);
  EXPECT_EQ(g.body[0].index_dim, 1);
  EXPECT_TRUE(g.body[0].descending);
  EXPECT_EQ(g.body[1].op, PtoOpcode::kTStore);
  EXPECT_THAT(PrintTileGraph(l.tile), HasSubstr("MSORT  %t0:ub.i64, %0:gm[dim=1 desc]"));
  absl::StatusOr<PtoProgram> p = EmitPto(l.block, "host");
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(PrintPto(*p), HasSubstr("MSORT  %t0:ub.i64[4,7], %0[dim=1 desc]"));

  GraphBuilder c;
  const uint32_t y = c.Input("y", pto::v1::DT_FP32, {2, 65536});
  c.Output("o", c.Sort(y, 1, 65536, false, {2, 4096}));
  ASSERT_TRUE(Lower(c.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 1u);
  EXPECT_EQ(l.tile.groups[0].tile, (std::vector<int64_t>{1, 24576}));  // 192 KiB of i64
}

TEST(ExpandIndexingTest, SortRulesAreClearErrors) {
  using pto::v1::DT_FP32;
  auto sort = [](const SymValueType& x, int64_t dim, int64_t k) {
    InferAttrs a;
    a.dim = dim;
    a.k = k;
    return InferSymResult(*FindOp("sort"), {x}, a);
  };
  absl::StatusOr<SymValueType> ok = sort(T(DT_FP32, {4, 6}), 0, 3);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->dtype, pto::v1::DT_INT64);
  EXPECT_EQ(ok->shape, ToSymShape({3, 6}));
  absl::StatusOr<SymValueType> all = sort(T(DT_FP32, {4, 6}), 1, 0);  // k 0: all of it
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->shape, ToSymShape({4, 6}));
  EXPECT_THAT(sort(T(DT_FP32, {4, 6}), 1, -1).status().message(),
              HasSubstr("attrs[\"k\"]: -1 is out of range [0, 6] for dim 1"));
  EXPECT_THAT(sort(T(DT_FP32, {4, 6}), 1, 7).status().message(),
              HasSubstr("out of range [0, 6]"));
  EXPECT_THAT(sort(T(DT_FP32, {4, 6}), 2, 1).status().message(), HasSubstr("out of range"));
  EXPECT_THAT(sort(T(pto::v1::DT_BOOL, {4, 6}), 1, 2).status().message(),
              HasSubstr("sort takes numbers, not DT_BOOL"));
  // Along a symbolic dim: k positions (checked at launch), or all of them.
  const SymExpr n = SymExpr::Symbol("n");
  absl::StatusOr<SymValueType> top = sort({DT_FP32, {SymExpr(4), n}}, 1, 2);
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(top->shape, ToSymShape({4, 2}));
  absl::StatusOr<SymValueType> order = sort({DT_FP32, {SymExpr(4), n}}, 1, 0);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(order->shape, (SymShape{SymExpr(4), n}));
  EXPECT_THAT(sort({DT_FP32, {SymExpr(4), n}}, 1, -2).status().message(),
              HasSubstr("-2 is out of range [0, n]"));
}

}  // namespace
}  // namespace pto::compiler
