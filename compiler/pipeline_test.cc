// The pass list: its order and compiler/README.md's table of it.
#include "compiler/pipeline.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

// The rows of the Markdown tables in `text` whose first cell is quoted
// (`name`), as cells without backticks, after the line starting with
// `heading`; a table ends at the first line that is not a row.
std::vector<std::vector<std::vector<std::string>>> Tables(const std::string& text,
                                                          const std::string& heading) {
  std::vector<std::vector<std::vector<std::string>>> tables;
  std::istringstream in(text);
  std::string line;
  bool after = false, in_table = false;
  while (std::getline(in, line)) {
    if (!after) {
      after = absl::StartsWith(line, heading);
      continue;
    }
    if (absl::StartsWith(line, "## ")) break;
    if (!absl::StartsWith(line, "|")) {
      in_table = false;
      continue;
    }
    if (!in_table) tables.emplace_back();
    in_table = true;
    if (!absl::StartsWith(line, "| `")) continue;  // header and rule
    std::vector<std::string> cells;
    for (absl::string_view c : absl::StrSplit(line, '|')) {
      std::string cell(absl::StripAsciiWhitespace(c));
      cell.erase(std::remove(cell.begin(), cell.end(), '`'), cell.end());
      cells.push_back(cell);
    }
    // (StrSplit gives an empty cell before the first | and after the last.)
    tables.back().emplace_back(cells.begin() + 1, cells.end() - 1);
  }
  return tables;
}

TEST(PipelineTest, PassesRunStageByStageInOrder) {
  const std::vector<std::string> stages = PipelineStages();
  size_t at = 0;
  for (const PassInfo& p : PipelinePasses()) {
    auto it = std::find(stages.begin() + at, stages.end(), p.stage);
    ASSERT_NE(it, stages.end()) << p.name << ": stage " << p.stage << " out of order";
    at = it - stages.begin();
    EXPECT_TRUE(p.route == "all" || p.route == "static" || p.route == "dynamic") << p.route;
  }
}

TEST(PipelineTest, EveryStageAfterImportHasAPassOnEachRouteOrSaysWhy) {
  // The dynamic route makes the Block level in tensor_to_tile
  // (lower_symbolic): tile_to_block is the one stage it has no pass in.
  for (const std::string& stage : PipelineStages()) {
    if (stage == "verify" || stage == "import") continue;
    bool on_static = false, on_dynamic = false;
    for (const PassInfo& p : PipelinePasses()) {
      if (p.stage != stage) continue;
      on_static = on_static || p.route != "dynamic";
      on_dynamic = on_dynamic || p.route != "static";
    }
    EXPECT_TRUE(on_static) << stage;
    EXPECT_EQ(on_dynamic, stage != "tile_to_block") << stage;
  }
}

// A state lowered through `last_stage` for host-x86_64.
struct Lowered {
  pto::v1::Graph graph;
  LoweringState state;
  absl::Status status;
};

std::unique_ptr<Lowered> LowerThrough(pto::v1::Graph graph, const std::string& last_stage) {
  auto out = std::make_unique<Lowered>();
  out->graph = std::move(graph);
  out->state.graph = &out->graph;
  out->state.target = "host-x86_64";
  out->status = RunPipeline(&out->state, nullptr, nullptr, last_stage);
  return out;
}

TEST(PipelineTest, AGraphWithoutLoopsOrSymbolsTakesTheStaticRoute) {
  auto tile = LowerThrough(testing::ExpAddGraph(), "tensor_to_tile");
  ASSERT_TRUE(tile->status.ok()) << tile->status;
  EXPECT_FALSE(tile->state.flat.has_value());
  EXPECT_FALSE(tile->state.tile.groups.empty());
  EXPECT_TRUE(tile->state.block.functions.empty());  // partition_blocks is next

  auto execute = LowerThrough(testing::ExpAddGraph(), "block_to_execute");
  ASSERT_TRUE(execute->status.ok()) << execute->status;
  EXPECT_GT(execute->state.execute.tasks_size(), 0);
  EXPECT_EQ(execute->state.execute.templates_size(), 0);
}

TEST(PipelineTest, AGraphWithALoopTakesTheDynamicRoute) {
  // tensor_to_tile makes the Tile, Block and Execute levels (templates);
  // block_to_execute adds the program tree.
  auto tile = LowerThrough(testing::SoftmaxLoopGraph(), "tensor_to_tile");
  ASSERT_TRUE(tile->status.ok()) << tile->status;
  ASSERT_TRUE(tile->state.flat.has_value());
  EXPECT_FALSE(tile->state.flat->loops.empty());
  EXPECT_FALSE(tile->state.block.functions.empty());
  EXPECT_GT(tile->state.execute.templates_size(), 0);
  EXPECT_EQ(tile->state.execute.program_size(), 0);

  auto execute = LowerThrough(testing::SoftmaxLoopGraph(), "block_to_execute");
  ASSERT_TRUE(execute->status.ok()) << execute->status;
  EXPECT_EQ(execute->state.execute.tasks_size(), 0);
  ASSERT_GT(execute->state.execute.program_size(), 0);
  EXPECT_TRUE(execute->state.execute.program(0).has_loop());
}

TEST(PipelineTest, ReadmeTablesAreThePassList) {
  std::ifstream file("compiler/README.md");
  ASSERT_TRUE(file) << "compiler/README.md";
  std::stringstream text;
  text << file.rdbuf();
  const auto tables = Tables(text.str(), "## Pipeline");
  ASSERT_EQ(tables.size(), 2u) << "the pass table and the tiling pass table";

  const std::vector<PassInfo> passes = PipelinePasses();
  ASSERT_EQ(tables[0].size(), passes.size());
  for (size_t i = 0; i < passes.size(); ++i) {
    ASSERT_GE(tables[0][i].size(), 3u);
    EXPECT_EQ(tables[0][i][0], passes[i].stage) << "row " << i;
    EXPECT_EQ(tables[0][i][1], passes[i].route) << "row " << i;
    EXPECT_EQ(tables[0][i][2], passes[i].name) << "row " << i;
  }

  std::vector<std::string> tiling;
  for (const TilingPass& p : TilingPasses()) tiling.push_back(p.name);
  std::vector<std::string> rows;
  for (const std::vector<std::string>& row : tables[1]) rows.push_back(row[0]);
  EXPECT_EQ(rows, tiling);
  for (const PassInfo& p : passes) {
    if (p.name == "expand_to_tiles") {
      EXPECT_EQ(p.steps, tiling);
    }
  }
}

}  // namespace
}  // namespace pto::compiler
