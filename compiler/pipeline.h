// The lowering pipeline: one ordered list of passes (kPasses in
// pipeline.cc, the whole truth; compiler/README.md shows it as a table),
// grouped into stages, each stage timed and, on request, dumped.
//
//   proto Graph --verify--> VerifiedGraph --import--> TensorGraph
//     --tensor_to_tile--> TileGraph
//     --tile_to_block--> BlockGraph --block_to_execute--> ExecuteGraph
//     --codegen--> PTO program + target source --native_compile--> payload
//
// After import the graph takes one of two routes. The static route (no
// loops, no symbolic dims) runs the tiling passes (lower/expand_to_tiles.h),
// PartitionBlocks and BuildExecuteGraph, one level per stage. The dynamic
// route (loops, ifs or symbolic dims) flattens the graph and lowers it into
// task templates with a driver over the static passes (LowerSymbolic: the
// tiling passes and PartitionBlocks at two probe sizes), which makes the
// Tile, Block and Execute levels in the tensor_to_tile stage; its
// tile_to_block stage has no pass, and its block_to_execute stage builds
// the program tree (lower/build_program.h).
#ifndef PTO_COMPILER_PIPELINE_H_
#define PTO_COMPILER_PIPELINE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/block_graph.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/ir/verified_graph.h"
#include "compiler/lower/flatten_regions.h"
#include "compiler/options.h"
#include "compiler/pto/pto_program.h"
#include "compiler/stage_time.h"
#include "compiler/targets/memory_model.h"
#include "compiler/targets/target.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// Everything the passes read and produce, level by level.
struct LoweringState {
  // Inputs.
  const pto::v1::Graph* graph = nullptr;
  std::string target;  // resolved
  ParsedOptions options;
  CompileSettings settings;
  bool fuse = true;
  // Outputs, in pipeline order.
  std::optional<VerifiedGraph> verified;  // refers to *graph
  TensorGraph tensor;
  MemoryModel memory;             // the target's buffers: they bound its tiles
  std::optional<FlatGraph> flat;  // the dynamic route's flattened graph
  TileGraph tile;
  BlockGraph block;
  pto::v1::ExecuteGraph execute;
  PtoProgram pto;
  std::string source;
  std::string payload;
};

// Runs the stages from the first through `last_stage` (inclusive; every
// stage when empty), appending their times to `stages` and, when
// state->settings.keep_dumps, their printed output to `dumps` ("tensor",
// "tile", "block", "execute", "pto", "cpp").
absl::Status RunPipeline(LoweringState* state, std::vector<StageTime>* stages,
                         std::map<std::string, std::string>* dumps,
                         const std::string& last_stage = "");

// Stage names in order (for tools' --dump_after).
std::vector<std::string> PipelineStages();

// One line of the pass list, as kPasses holds it.
struct PassInfo {
  std::string stage;
  std::string route;  // "all", "static" or "dynamic"
  std::string name;
  // A pass that runs a list of its own: that list's names, in order.
  std::vector<std::string> steps;
};

// The pass list in order.
std::vector<PassInfo> PipelinePasses();

}  // namespace pto::compiler

#endif  // PTO_COMPILER_PIPELINE_H_
