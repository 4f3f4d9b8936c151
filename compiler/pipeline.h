// The lowering pipeline: one table of passes (pipeline.cc), run in order,
// each timed and, on request, dumped.
//
//   proto Graph --verify--> VerifiedGraph --import--> TensorGraph
//     --tensor_to_tile--> TileGraph
//     --tile_to_block--> BlockGraph --block_to_execute--> ExecuteGraph
//     --codegen--> PTO program + target source --native_compile--> payload
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
#include "compiler/options.h"
#include "compiler/stage_time.h"
#include "compiler/pto/pto_program.h"
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
  TileGraph tile;
  BlockGraph block;
  pto::v1::ExecuteGraph execute;
  PtoProgram pto;
  std::string source;
  std::string payload;
};

// Runs the passes from the first through `last_stage` (inclusive; every
// pass when empty), appending their times to `stages` and, when
// state->settings.keep_dumps, their printed output to `dumps` ("tensor",
// "tile", "block", "execute", "pto", "cpp").
absl::Status RunPipeline(LoweringState* state, std::vector<StageTime>* stages,
                         std::map<std::string, std::string>* dumps,
                         const std::string& last_stage = "");

// Stage names in order (for tools' --dump_after).
std::vector<std::string> PipelineStages();

}  // namespace pto::compiler

#endif  // PTO_COMPILER_PIPELINE_H_
