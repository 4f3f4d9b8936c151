#include "compiler/lower/build_execute_graph.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/ir/import.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/lower/partition_blocks.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using testing::GraphBuilder;

struct Lowered {
  TensorGraph tensor;
  TileGraph tile;
  BlockGraph block;
  pto::v1::ExecuteGraph execute;
};

absl::Status Lower(const pto::v1::Graph& g, Lowered* out,
                   const ExpandOptions& options = {}) {
  absl::StatusOr<TensorGraph> t = testing::VerifyAndImport(g);
  if (!t.ok()) return t.status();
  out->tensor = *std::move(t);
  absl::StatusOr<TileGraph> tile = ExpandToTiles(out->tensor, options);
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

bool Overlap(const TileBox& a, const TileBox& b) {
  for (size_t d = 0; d < a.offset.size(); ++d) {
    if (a.offset[d] + a.extent[d] <= b.offset[d] ||
        b.offset[d] + b.extent[d] <= a.offset[d]) {
      return false;
    }
  }
  return true;
}

// A broadcast operand made by an earlier group: each reader task depends on
// exactly the producer tasks that wrote the part of the operand it reads
// (the projection of its tile onto the operand's shape).
std::vector<std::set<uint32_t>> DepsOfGroup(const Lowered& l, int group) {
  int64_t first = 0;
  for (int g = 0; g < group; ++g) {
    int64_t n = 1;
    for (int64_t k : TileGrid(l.tile.groups[g].space, l.tile.groups[g].tile)) n *= k;
    first += n;
  }
  int64_t n = 1;
  for (int64_t k : TileGrid(l.tile.groups[group].space, l.tile.groups[group].tile)) n *= k;
  std::vector<std::set<uint32_t>> deps;
  for (int64_t t = first; t < first + n; ++t) {
    const auto& task = l.execute.tasks(static_cast<int>(t));
    deps.emplace_back(task.deps().begin(), task.deps().end());
  }
  return deps;
}

TEST(BuildExecuteGraphTest, BroadcastRowDependsOnTheTasksThatWroteIt) {
  GraphBuilder b;
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {6, 8});
  uint32_t r = b.Input("r", pto::v1::DT_FP32, {8});
  uint32_t e = b.Op("exp", {r}, {3});             // tasks 0..2: [0,3) [3,6) [6,8)
  b.Output("o", b.Op("sub", {x, e}, {2, 4}));     // 3x2 tasks
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 2u);
  const std::vector<std::set<uint32_t>> deps = DepsOfGroup(l, 1);
  ASSERT_EQ(deps.size(), 6u);
  for (int row = 0; row < 3; ++row) {
    EXPECT_EQ(deps[row * 2], (std::set<uint32_t>{0, 1})) << row;      // cols [0,4)
    EXPECT_EQ(deps[row * 2 + 1], (std::set<uint32_t>{1, 2})) << row;  // cols [4,8)
  }
}

TEST(BuildExecuteGraphTest, BroadcastColumnDependsOnTheTasksThatWroteIt) {
  GraphBuilder b;
  uint32_t x = b.Input("x", pto::v1::DT_FP32, {6, 8});
  uint32_t c = b.Input("c", pto::v1::DT_FP32, {6, 1});
  uint32_t e = b.Op("exp", {c}, {2, 1});          // tasks 0..2: rows [0,2) [2,4) [4,6)
  b.Output("o", b.Op("add", {x, e}, {3, 4}));     // 2x2 tasks
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  const std::vector<std::set<uint32_t>> deps = DepsOfGroup(l, 1);
  ASSERT_EQ(deps.size(), 4u);
  EXPECT_EQ(deps[0], (std::set<uint32_t>{0, 1}));  // rows [0,3)
  EXPECT_EQ(deps[1], (std::set<uint32_t>{0, 1}));
  EXPECT_EQ(deps[2], (std::set<uint32_t>{1, 2}));  // rows [3,6)
  EXPECT_EQ(deps[3], (std::set<uint32_t>{1, 2}));
}

TEST(BuildExecuteGraphTest, MismatchedTilesDependOnExactlyTheOverlappingTasks) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {7, 10});
  uint32_t e = b.Op("exp", {a}, {2, 4});     // group 0: 4x3 tiles
  b.Output("o", b.Op("neg", {e}, {3, 3}));   // group 1: 3x4 tiles
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 2u);
  const TileGroup& g0 = l.tile.groups[0];
  const TileGroup& g1 = l.tile.groups[1];
  const int n0 = 12, n1 = 12;
  ASSERT_EQ(l.execute.tasks_size(), n0 + n1);
  for (int t = 0; t < n0; ++t) EXPECT_EQ(l.execute.tasks(t).deps_size(), 0);
  for (int t = 0; t < n1; ++t) {
    const TileBox box = TileAt(g1.space, g1.tile, t);
    std::set<uint32_t> expected;
    for (int s = 0; s < n0; ++s) {
      if (Overlap(box, TileAt(g0.space, g0.tile, s))) expected.insert(s);
    }
    const pto::v1::Task& task = l.execute.tasks(n0 + t);
    std::set<uint32_t> actual(task.deps().begin(), task.deps().end());
    EXPECT_EQ(actual, expected) << "task " << n0 + t;
    EXPECT_EQ(std::vector<int64_t>(task.args().begin(), task.args().end()),
              box.offset);
  }
}

TEST(BuildExecuteGraphTest, WriteToInoutWaitsForEarlierReaders) {
  GraphBuilder b;
  uint32_t x = b.Value(pto::v1::DT_FP32, {8}, "x");
  uint32_t y = b.Op("exp", {x}, {2});  // group 0 reads x: 4 tasks
  uint32_t r = b.Op("abs", {x}, {4});  // group 1 overwrites x: 2 tasks
  b.InOut("x", x, r);
  b.Output("y", y);
  Lowered l;
  absl::Status s = Lower(b.Build(), &l);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(l.execute.tasks_size(), 6);
  EXPECT_THAT(l.execute.tasks(4).deps(), ::testing::ElementsAre(0, 1));
  EXPECT_THAT(l.execute.tasks(5).deps(), ::testing::ElementsAre(2, 3));
  // Buffers: the two params only (no value crosses groups through a
  // workspace).
  EXPECT_EQ(l.execute.buffers_size(), 2);
}

TEST(BuildExecuteGraphTest, IntermediatesCrossingGroupsGetWorkspaces) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP16, {4, 6});
  uint32_t e = b.Op("exp", {a}, {4, 6});
  b.Output("o", b.Op("neg", {e}, {2, 6}));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.execute.buffers_size(), 3);
  EXPECT_EQ(l.execute.buffers(0).workspace_bytes(), 0);
  EXPECT_EQ(l.execute.buffers(1).workspace_bytes(), 0);
  EXPECT_EQ(l.execute.buffers(2).workspace_bytes(), 4 * 6 * 2);
  for (int t = 0; t < l.execute.tasks_size(); ++t) {
    for (uint32_t d : l.execute.tasks(t).deps()) EXPECT_LT(d, static_cast<uint32_t>(t));
  }
}

TEST(BuildExecuteGraphTest, FusedChainKeepsIntermediatesInUb) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {64});
  uint32_t x = b.Op("muls", {a}, {16}, 2.0);
  x = b.Op("exp", {x}, {16});
  x = b.Op("rsubs", {x}, {16}, 1.0);
  b.Output("o", b.Op("add", {x, a}, {16}));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 1u);
  EXPECT_EQ(l.execute.buffers_size(), 2);  // no workspace
  EXPECT_EQ(l.execute.functions_size(), 1);  // no tails: one block function
  EXPECT_EQ(l.execute.tasks_size(), 4);
}

TEST(BuildExecuteGraphTest, TooManyDependenciesIsAnError) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {8192, 4096});
  uint32_t e = b.Op("exp", {a}, {1, 4096});
  b.Output("o", b.Op("neg", {e}, {8192, 1}));
  Lowered l;
  absl::Status s = Lower(b.Build(), &l);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("dependencies"));
}

TEST(ExpandToTilesTest, LongChainsReuseUbTilesAndFuse) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {64, 64});
  uint32_t x = a;
  for (int i = 0; i < 200; ++i) x = b.Op(i % 2 ? "neg" : "adds", {x}, {64, 64},
                                           i % 2 ? std::nullopt : std::optional<double>(1.0));
  b.Output("o", b.Op("add", {x, a}, {64, 64}));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 1u);
  // a stays live for the final add; the chain ping-pongs between two tiles.
  EXPECT_EQ(l.tile.groups[0].num_ub_tiles, 3);
  // No instruction writes a tile it reads (tile functions use __restrict).
  for (const TileInstr& in : l.tile.groups[0].body) {
    for (int s : in.srcs) {
      if (in.op != PtoOpcode::kTStore) {
        EXPECT_NE(s, in.dst);
      }
    }
  }
}

TEST(ExpandToTilesTest, VeryLongChainsSplitIntoBoundedGroups) {
  GraphBuilder b;
  uint32_t x = b.Input("a", pto::v1::DT_FP32, {16});
  for (int i = 0; i < 1000; ++i) x = b.Op("neg", {x}, {16});
  b.Output("o", x);
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 4u);
  for (const TileGroup& g : l.tile.groups) EXPECT_LE(g.ops.size(), 256u);
  // Each group boundary goes through one workspace.
  EXPECT_EQ(l.execute.buffers_size(), 2 + 3);
}

TEST(ExpandToTilesTest, StoredResultsAndLaterReadsKeepTheirTiles) {
  // e is both an output and read by the last op: its tile must survive the
  // ops in between.
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {32});
  uint32_t e = b.Op("exp", {a}, {32});
  uint32_t n = b.Op("neg", {a}, {32});
  n = b.Op("abs", {n}, {32});
  b.Output("e", e);
  b.Output("o", b.Op("mul", {n, e}, {32}));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 1u);
  const std::vector<TileInstr>& body = l.tile.groups[0].body;
  // Replay the body tracking which value each tile holds.
  std::map<int, std::string> holds;
  std::vector<std::string> stored;
  for (const TileInstr& in : body) {
    switch (in.op) {
      case PtoOpcode::kTLoad: holds[in.dst] = "a"; break;
      case PtoOpcode::kTExp: holds[in.dst] = "exp(" + holds[in.srcs[0]] + ")"; break;
      case PtoOpcode::kTNeg: holds[in.dst] = "neg(" + holds[in.srcs[0]] + ")"; break;
      case PtoOpcode::kTAbs: holds[in.dst] = "abs(" + holds[in.srcs[0]] + ")"; break;
      case PtoOpcode::kTMul:
        holds[in.dst] = "mul(" + holds[in.srcs[0]] + "," + holds[in.srcs[1]] + ")";
        break;
      case PtoOpcode::kTStore: stored.push_back(holds[in.srcs[0]]); break;
      default: FAIL() << "unexpected instruction";
    }
  }
  EXPECT_THAT(stored, ::testing::ElementsAre("exp(a)", "mul(abs(neg(a)),exp(a))"));
}

TEST(ExpandToTilesTest, DeadOpsAreDropped) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {32});
  uint32_t unused = b.Op("exp", {a}, {8});       // read by nothing live
  b.Op("neg", {unused}, {16});                   // dead, other tiling
  b.Output("o", b.Op("abs", {a}, {32}));
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 1u);
  EXPECT_THAT(l.tile.groups[0].ops, ::testing::ElementsAre(2));
  EXPECT_EQ(l.execute.buffers_size(), 2);  // no workspace for dead values
  EXPECT_EQ(l.execute.tasks_size(), 1);
}

TEST(PartitionBlocksTest, BoundsTheNumberOfBlockFunctions) {
  // 400 groups (alternating tilings) with 8 or 16 tail combinations > 4096.
  GraphBuilder b;
  uint32_t x = b.Input("a", pto::v1::DT_FP32, {3, 3, 3, 3});
  for (int i = 0; i < 400; ++i) {
    x = b.Op("neg", {x}, i % 2 ? std::vector<int64_t>{2, 2, 2, 2}
                               : std::vector<int64_t>{2, 2, 2, 1});
  }
  b.Output("o", x);
  Lowered l;
  absl::Status s = Lower(b.Build(), &l);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("block functions"));
}

TEST(ExpandToTilesTest, TileTooLargeForUbNamesTheOp) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {1024, 1024});
  b.Output("o", b.Op("add", {a, a}, {512, 512}));
  Lowered l;
  absl::Status s = Lower(b.Build(), &l);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("op #0 \"add\": vec_tile [512,512]"));
  // The buffer and both sizes: 2 f32 tiles of 512 x 512.
  EXPECT_THAT(s.message(), ::testing::HasSubstr(
      "needs 2097152 bytes of UB tiles; a block may use 196608 bytes"));
}

// UB is an AI core's 192 KiB, not the 512 KiB the host
// once allowed. Two f32 tiles of 256 x 256 (512 KiB) fit the old bound; two
// of 256 x 128 (256 KiB) do not fit 192 KiB either; two of 128 x 128 do.
TEST(ExpandToTilesTest, UbIsAnAiCores192KiB) {
  EXPECT_EQ(kAiCoreMemoryModel.ub_bytes, 192 * 1024);
  for (int64_t cols : {256, 128}) {
    GraphBuilder b;
    uint32_t a = b.Input("a", pto::v1::DT_FP32, {512, 512});
    b.Output("o", b.Op("add", {a, a}, {256, cols}));
    Lowered l;
    absl::Status s = Lower(b.Build(), &l);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), ::testing::HasSubstr(absl::StrCat(
        "op #0 \"add\": vec_tile [256,", cols, "] needs ", 2 * 256 * cols * 4,
        " bytes of UB tiles; a block may use 196608 bytes")));
  }
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {512, 512});
  b.Output("o", b.Op("add", {a, a}, {128, 128}));
  Lowered l;
  EXPECT_TRUE(Lower(b.Build(), &l).ok());
}

// The model comes from the options (the target's): a smaller UB refuses a
// tile the default accepts, naming the op, the tile, UB and both sizes.
TEST(ExpandToTilesTest, SmallerUbRefusesWhatTheDefaultAccepts) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {256, 256});
  b.Output("o", b.Op("exp", {a}, {64, 64}));  // 2 f32 tiles: 32 KiB
  const pto::v1::Graph g = b.Build();
  Lowered l;
  ASSERT_TRUE(Lower(g, &l).ok());
  ExpandOptions small;
  small.memory.ub_bytes = 16 * 1024;
  absl::Status s = Lower(g, &l, small);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr(
      "op #0 \"exp\": vec_tile [64,64] needs 32768 bytes of UB tiles; a block "
      "may use 16384 bytes"));
}

// A fused chain splits where its tiles stop fitting the UB: a UB one tile
// smaller than the fused group's splits it into more groups.
TEST(ExpandToTilesTest, ChainSplitsWhereUbRunsOut) {
  GraphBuilder b;
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {64, 64});
  uint32_t c = b.Input("c", pto::v1::DT_FP32, {64, 64});
  uint32_t d = b.Input("d", pto::v1::DT_FP32, {64, 64});
  uint32_t e = b.Input("e", pto::v1::DT_FP32, {64, 64});
  uint32_t x = b.Op("add", {a, c}, {64, 64});
  x = b.Op("mul", {x, d}, {64, 64});
  x = b.Op("sub", {x, e}, {64, 64});
  b.Output("o", x);
  const pto::v1::Graph g = b.Build();
  Lowered big, small;
  ASSERT_TRUE(Lower(g, &big).ok());
  ASSERT_EQ(big.tile.groups.size(), 1u);
  const int64_t tiles = static_cast<int64_t>(big.tile.groups[0].ub_types.size());
  ASSERT_GT(tiles, 3);  // more than one binary op's three
  ExpandOptions options;
  options.memory.ub_bytes = (tiles - 1) * 64 * 64 * 4;
  ASSERT_TRUE(Lower(g, &small, options).ok());
  EXPECT_GT(small.tile.groups.size(), 1u);
}

// A cube tile whose blocks do not fit the target's L1, L0A,
// L0B or L0C is refused naming the op, the cube tile, the buffer and both
// sizes; a smaller model refuses what the default (an AI core's) accepts.
TEST(ExpandToTilesTest, CubeTileTooLargeNamesTheBuffer) {
  struct Case {
    std::vector<int64_t> cube;  // mL0, mL1, kL0, kL1, nL0, nL1
    const char* message;
  };
  const Case too_big[] = {
      // [256 x 256] f32 in L0C: 256 KiB > 128 KiB.
      {{256, 256, 8, 8, 256, 256},
       "op #0 \"matmul\": cube_tile m=[256,256] k=[8,8] n=[256,256] needs 262144 "
       "bytes of L0C ([mL0 x nL0] f32), which holds 131072 bytes"},
      // A [512 x 256] + B [256 x 64] f32 in L1: 589824 bytes > 512 KiB.
      {{16, 512, 16, 256, 32, 64},
       "needs 589824 bytes of L1 (A [mL1 x kL1] + B [kL1 x nL1]), which holds 524288 bytes"},
      // [128 x 256] f32 in L0A: 128 KiB > 64 KiB.
      {{128, 128, 256, 256, 16, 16}, "needs 131072 bytes of L0A ([mL0 x kL0] f32), which holds 65536 bytes"},
      {{16, 16, 256, 256, 128, 128}, "needs 131072 bytes of L0B ([kL0 x nL0] f32), which holds 65536 bytes"},
      // Sizes whose products overflow int64 (an untrusted graph): refused,
      // not wrapped around to a size that fits.
      {{int64_t{1} << 40, int64_t{1} << 40, int64_t{1} << 40, int64_t{1} << 40, 1, 1},
       "needs 9223372036854775807 bytes of L1"},
  };
  for (const Case& c : too_big) {
    GraphBuilder b;
    uint32_t x = b.Input("a", pto::v1::DT_FP32, {8, 5});
    uint32_t y = b.Input("b", pto::v1::DT_FP32, {5, 3});
    b.Output("o", b.Matmul(x, y, pto::v1::DT_FP32, false, false, c.cube));
    Lowered l;
    absl::Status s = Lower(b.Build(), &l);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), ::testing::HasSubstr(c.message));
  }
  GraphBuilder b;
  uint32_t x = b.Input("a", pto::v1::DT_FP32, {8, 5});
  uint32_t y = b.Input("b", pto::v1::DT_FP32, {5, 3});
  b.Output("o", b.Matmul(x, y, pto::v1::DT_FP32, false, false, {64, 64, 64, 64, 64, 64}));
  const pto::v1::Graph g = b.Build();
  Lowered l;
  ASSERT_TRUE(Lower(g, &l).ok());
  ExpandOptions small;
  small.memory.l0c_bytes = 8 * 1024;  // [64 x 64] f32 is 16 KiB
  absl::Status s = Lower(g, &l, small);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr(
      "needs 16384 bytes of L0C ([mL0 x nL0] f32), which holds 8192 bytes"));
}

// A scan's group (TileGroup::serial_dim, expand_scan.h): each task depends
// on the one before it along the scanned dim (it reads the carry that one
// wrote), and never on the tasks of other columns of tiles.
TEST(BuildExecuteGraphTest, ScanTilesAlongTheScannedDimRunInOrder) {
  GraphBuilder b;
  uint32_t x = b.Input("x", pto::v1::DT_DOUBLE, {6, 8});
  b.Output("o", b.Op("cumsum", {x}, {2, 4}));  // dim 0: 3 tiles down, 2 across
  (*b.graph().mutable_ops(b.graph().ops_size() - 1)->mutable_attrs())["dim"].set_i(0);
  Lowered l;
  ASSERT_TRUE(Lower(b.Build(), &l).ok());
  ASSERT_EQ(l.tile.groups.size(), 2u);  // init, scan
  EXPECT_EQ(l.tile.groups[1].serial_dim, 0);
  const std::vector<std::set<uint32_t>> deps = DepsOfGroup(l, 1);
  ASSERT_EQ(deps.size(), 6u);  // tasks 2..7 (after the init's two), row-major
  for (int t = 2; t < 6; ++t) {
    EXPECT_EQ(deps[t].count(static_cast<uint32_t>(t)), 1u) << "task " << t + 2;
    EXPECT_EQ(deps[t].count(static_cast<uint32_t>(t + 1 - 2 * (t % 2))), 0u)
        << "task " << t + 2;
  }
}

}  // namespace
}  // namespace pto::compiler
