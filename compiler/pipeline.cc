#include "compiler/pipeline.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/ir/execute_graph.h"
#include "compiler/ir/import.h"
#include "compiler/key/fingerprint.h"
#include "compiler/lower/build_execute_graph.h"
#include "compiler/lower/emit_pto.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/lower/lower_regions.h"
#include "compiler/lower/partition_blocks.h"
#include "compiler/targets/memory_model.h"
#include "compiler/verify/verify.h"

namespace pto::compiler {
namespace {

using Dumps = std::map<std::string, std::string>;

// Each pass fills the next level of the state; when dumps is non-null it
// also prints what it made.
absl::Status Verify(LoweringState* s, Dumps*) {
  absl::StatusOr<VerifiedGraph> v = Verified(*s->graph);
  if (!v.ok()) return v.status();
  s->verified.emplace(*v);
  return absl::OkStatus();
}

absl::Status Import(LoweringState* s, Dumps* dumps) {
  absl::StatusOr<TensorGraph> g = ImportGraph(*s->verified);
  if (!g.ok()) return g.status();
  s->tensor = *std::move(g);
  if (dumps) (*dumps)["tensor"] = PrintTensorGraph(s->tensor);
  return absl::OkStatus();
}

absl::Status TensorToTile(LoweringState* s, Dumps* dumps) {
  // The target's buffers bound its tiles.
  absl::StatusOr<MemoryModel> memory = TargetMemoryModel(s->target);
  if (!memory.ok()) return memory.status();
  if (s->tensor.HasRegions() || s->tensor.HasSymbolicDims()) {
    // Loops or symbolic dims: Tile, Block and Execute levels at once, task
    // templates under a program tree (lower_regions.h; a graph without loops
    // is a program of templates in order).
    absl::Status st = LowerRegions(s->tensor, s->fuse, *memory, &s->tile, &s->block,
                                   &s->execute);
    if (!st.ok()) return st;
    if (dumps) (*dumps)["tile"] = PrintTileGraph(s->tile);
    return absl::OkStatus();
  }
  ExpandOptions options;
  options.fuse = s->fuse;
  options.memory = *memory;
  absl::StatusOr<TileGraph> g = ExpandToTiles(s->tensor, options);
  if (!g.ok()) return g.status();
  s->tile = *std::move(g);
  if (dumps) (*dumps)["tile"] = PrintTileGraph(s->tile);
  return absl::OkStatus();
}

absl::Status TileToBlock(LoweringState* s, Dumps* dumps) {
  if (s->tensor.HasSymbolicDims() || s->tensor.HasRegions()) {  // by TensorToTile
    if (dumps) (*dumps)["block"] = PrintBlockGraph(s->block);
    return absl::OkStatus();
  }
  absl::StatusOr<BlockGraph> g = PartitionBlocks(s->tensor, s->tile);
  if (!g.ok()) return g.status();
  s->block = *std::move(g);
  if (dumps) (*dumps)["block"] = PrintBlockGraph(s->block);
  return absl::OkStatus();
}

absl::Status BlockToExecute(LoweringState* s, Dumps* dumps) {
  if (s->tensor.HasSymbolicDims() || s->tensor.HasRegions()) {  // templates
    if (dumps) (*dumps)["execute"] = PrintExecuteGraph(s->execute);
    return absl::OkStatus();
  }
  absl::StatusOr<pto::v1::ExecuteGraph> g = BuildExecuteGraph(s->block);
  if (!g.ok()) return g.status();
  s->execute = *std::move(g);
  if (dumps) (*dumps)["execute"] = PrintExecuteGraph(s->execute);
  return absl::OkStatus();
}

absl::Status Codegen(LoweringState* s, Dumps* dumps) {
  absl::StatusOr<PtoProgram> p = EmitPto(s->block, s->target);
  if (!p.ok()) return p.status();
  s->pto = *std::move(p);
  absl::StatusOr<std::unique_ptr<Target>> target = MakeTarget(s->target);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::string> source = (*target)->GenerateSource(s->pto);
  if (!source.ok()) return source.status();
  s->source = *std::move(source);
  if (dumps) {
    (*dumps)["pto"] = PrintPto(s->pto);
    (*dumps)["cpp"] = s->source;
  }
  return absl::OkStatus();
}

absl::Status NativeCompile(LoweringState* s, Dumps*) {
  absl::StatusOr<std::unique_ptr<Target>> target = MakeTarget(s->target);
  if (!target.ok()) return target.status();
  NativeBuildOptions build;
  build.opt_level = s->options.opt_level;
  build.cxx = s->settings.cxx;
  build.cxx_name = s->settings.cxx_name;
  build.timeout = s->settings.native_compile_timeout;
  build.work_dir = s->settings.work_dir;
  build.pch_dir = s->settings.pch_dir;
  // The compiler the cache key names (ptod runs a limits wrapper, written
  // anew at each start, around the compiler cxx_name names).
  build.compiler_fingerprint =
      FingerprintFor(s->settings.cxx_name.empty() ? s->settings.cxx : s->settings.cxx_name);
  build.canceller = s->settings.canceller.get();
  absl::StatusOr<std::string> payload = (*target)->BuildPayload(s->source, build);
  if (!payload.ok()) return payload.status();
  s->payload = *std::move(payload);
  return absl::OkStatus();
}

struct Pass {
  const char* stage;
  absl::Status (*run)(LoweringState*, Dumps*);
};

// The pipeline, in order.
constexpr Pass kPasses[] = {
    {"verify", Verify},                      // untrusted proto -> VerifiedGraph
    {"import", Import},                      // VerifiedGraph -> Tensor Graph
    {"tensor_to_tile", TensorToTile},        // ExpandToTiles
    {"tile_to_block", TileToBlock},          // PartitionBlocks
    {"block_to_execute", BlockToExecute},    // BuildExecuteGraph
    {"codegen", Codegen},                    // EmitPto + target source
    {"native_compile", NativeCompile},       // target source -> payload
};

}  // namespace

std::vector<std::string> PipelineStages() {
  std::vector<std::string> out;
  for (const Pass& p : kPasses) out.push_back(p.stage);
  return out;
}

absl::Status RunPipeline(LoweringState* state, std::vector<StageTime>* stages,
                         std::map<std::string, std::string>* dumps,
                         const std::string& last_stage) {
  Dumps* d = state->settings.keep_dumps ? dumps : nullptr;
  for (const Pass& pass : kPasses) {
    const absl::Time start = absl::Now();
    absl::Status s = pass.run(state, d);
    if (stages) stages->push_back({pass.stage, absl::Now() - start});
    if (!s.ok()) return s;
    if (last_stage == pass.stage) break;
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
