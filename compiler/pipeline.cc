#include "compiler/pipeline.h"

#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/ir/execute_graph.h"
#include "compiler/ir/import.h"
#include "compiler/key/fingerprint.h"
#include "compiler/lower/bind_dynamic_args.h"
#include "compiler/lower/build_execute_graph.h"
#include "compiler/lower/build_program.h"
#include "compiler/lower/emit_pto.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/lower/flatten_regions.h"
#include "compiler/lower/lower_regions.h"
#include "compiler/lower/lower_symbolic.h"
#include "compiler/lower/partition_blocks.h"
#include "compiler/lower/tail_functions.h"
#include "compiler/verify/verify.h"

namespace pto::compiler {
namespace {

using Dumps = std::map<std::string, std::string>;

// The passes. Each fills or refines a level of the state; the stage's
// level is printed after its last pass (kStages).

absl::Status Verify(LoweringState* s) {
  absl::StatusOr<VerifiedGraph> v = Verified(*s->graph);
  if (!v.ok()) return v.status();
  s->verified.emplace(*v);
  return absl::OkStatus();
}

absl::Status Import(LoweringState* s) {
  absl::StatusOr<TensorGraph> g = ImportGraph(*s->verified);
  if (!g.ok()) return g.status();
  s->tensor = *std::move(g);
  return absl::OkStatus();
}

absl::Status ReadMemoryModel(LoweringState* s) {
  absl::StatusOr<MemoryModel> memory = TargetMemoryModel(s->target);
  if (!memory.ok()) return memory.status();
  s->memory = *memory;
  return absl::OkStatus();
}

absl::Status ExpandTiles(LoweringState* s) {
  ExpandOptions options;
  options.fuse = s->fuse;
  options.memory = s->memory;
  absl::StatusOr<TileGraph> g = ExpandToTiles(s->tensor, options);
  if (!g.ok()) return g.status();
  s->tile = *std::move(g);
  return absl::OkStatus();
}

absl::Status Flatten(LoweringState* s) {
  absl::StatusOr<FlatGraph> flat = FlattenRegions(s->tensor);
  if (!flat.ok()) return flat.status();
  s->flat.emplace(*std::move(flat));
  return absl::OkStatus();
}

absl::Status LowerAtProbes(LoweringState* s) {
  return LowerSymbolic(s->flat->graph, TemplateOptions(*s->flat, s->fuse, s->memory),
                       &s->tile, &s->block, &s->execute);
}

absl::Status BindArgs(LoweringState* s) {
  return BindDynamicArgs(*s->flat, &s->tile, &s->block, &s->execute);
}

absl::Status AddTails(LoweringState* s) {
  return AddTailFunctions(*s->flat, &s->tile, &s->block, &s->execute);
}

absl::Status Partition(LoweringState* s) {
  absl::StatusOr<BlockGraph> g = PartitionBlocks(s->tensor, s->tile);
  if (!g.ok()) return g.status();
  s->block = *std::move(g);
  return absl::OkStatus();
}

absl::Status BuildExecute(LoweringState* s) {
  absl::StatusOr<pto::v1::ExecuteGraph> g = BuildExecuteGraph(s->block);
  if (!g.ok()) return g.status();
  s->execute = *std::move(g);
  return absl::OkStatus();
}

absl::Status Program(LoweringState* s) { return BuildProgram(*s->flat, s->tile, &s->execute); }

absl::Status Emit(LoweringState* s) {
  absl::StatusOr<PtoProgram> p = EmitPto(s->block, s->target);
  if (!p.ok()) return p.status();
  s->pto = *std::move(p);
  return absl::OkStatus();
}

absl::Status GenerateSource(LoweringState* s) {
  absl::StatusOr<std::unique_ptr<Target>> target = MakeTarget(s->target);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::string> source = (*target)->GenerateSource(s->pto);
  if (!source.ok()) return source.status();
  s->source = *std::move(source);
  // The target's launch checks go first in a templated kernel's program.
  std::vector<pto::v1::RegionCheck> checks = (*target)->LaunchChecks(s->pto);
  if (!checks.empty() && s->execute.templates_size() > 0) {
    google::protobuf::RepeatedPtrField<pto::v1::ExecNode> program;
    for (pto::v1::RegionCheck& c : checks) *program.Add()->mutable_check() = std::move(c);
    if (s->execute.program().empty()) {  // the templates in order
      for (int t = 0; t < s->execute.templates_size(); ++t) {
        program.Add()->set_template_index(static_cast<uint32_t>(t));
      }
    }
    for (pto::v1::ExecNode& n : *s->execute.mutable_program()) *program.Add() = std::move(n);
    *s->execute.mutable_program() = std::move(program);
  }
  return absl::OkStatus();
}

absl::Status BuildPayload(LoweringState* s) {
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

std::vector<std::string> TilingPassNames() {
  std::vector<std::string> names;
  for (const TilingPass& p : TilingPasses()) names.push_back(p.name);
  return names;
}

// The static passes LowerSymbolic drives at each probe size.
std::vector<std::string> LowerSymbolicSteps() {
  std::vector<std::string> names = TilingPassNames();
  names.push_back("partition_blocks");
  return names;
}

// Which graphs a pass runs for: every one, or one route after import.
enum class Route { kAll, kStatic, kDynamic };

// The dynamic route: loops, ifs or symbolic dims.
bool TakesDynamicRoute(const LoweringState& s) {
  return s.tensor.HasRegions() || s.tensor.HasSymbolicDims();
}

struct Pass {
  const char* stage;
  Route route;
  const char* name;
  absl::Status (*run)(LoweringState*);
  // A pass that runs a list of its own: that list's names.
  std::vector<std::string> (*steps)() = nullptr;
};

// The pipeline, in order (stage by stage; a graph runs the passes of its
// route and those for all).
const Pass kPasses[] = {
    // untrusted proto -> VerifiedGraph (verify/verify.h)
    {"verify", Route::kAll, "verify", Verify},
    // VerifiedGraph -> Tensor Graph (ir/import.h)
    {"import", Route::kAll, "import", Import},
    // the target's UB, L1 and L0 sizes (targets/memory_model.h)
    {"tensor_to_tile", Route::kAll, "memory_model", ReadMemoryModel},
    // Tensor -> Tile: the tiling passes (lower/expand_to_tiles.h)
    {"tensor_to_tile", Route::kStatic, "expand_to_tiles", ExpandTiles, TilingPassNames},
    // loops and ifs inlined once, markers (lower/flatten_regions.h)
    {"tensor_to_tile", Route::kDynamic, "flatten_regions", Flatten},
    // the driver over the static passes: Tile, Block and Execute levels
    // (templates) from two probe lowerings (lower/lower_symbolic.h)
    {"tensor_to_tile", Route::kDynamic, "lower_symbolic", LowerAtProbes, LowerSymbolicSteps},
    // markers, run-time strides, K and scalars -> dynamic args
    // (lower/bind_dynamic_args.h)
    {"tensor_to_tile", Route::kDynamic, "bind_dynamic_args", BindArgs},
    // generic functions for run-time extents (lower/tail_functions.h)
    {"tensor_to_tile", Route::kDynamic, "add_tail_functions", AddTails},
    // Tile -> Block: blocks, shared block functions (lower/partition_blocks.h)
    {"tile_to_block", Route::kStatic, "partition_blocks", Partition},
    // Block -> Execute: tasks and dependencies (lower/build_execute_graph.h)
    {"block_to_execute", Route::kStatic, "build_execute_graph", BuildExecute},
    // the program tree of templates, loops, ifs, checks (lower/build_program.h)
    {"block_to_execute", Route::kDynamic, "build_program", Program},
    // Block -> PTO program (lower/emit_pto.h)
    {"codegen", Route::kAll, "emit_pto", Emit},
    // PTO program -> target source (targets/target.h)
    {"codegen", Route::kAll, "generate_source", GenerateSource},
    // target source -> payload (targets/target.h)
    {"native_compile", Route::kAll, "build_payload", BuildPayload},
};

// The stages, in order, and what each prints after its last pass.
struct Stage {
  const char* name;
  void (*dump)(const LoweringState&, Dumps*);
};

constexpr Stage kStages[] = {
    {"verify", nullptr},
    {"import", [](const LoweringState& s, Dumps* d) { (*d)["tensor"] = PrintTensorGraph(s.tensor); }},
    {"tensor_to_tile", [](const LoweringState& s, Dumps* d) { (*d)["tile"] = PrintTileGraph(s.tile); }},
    {"tile_to_block", [](const LoweringState& s, Dumps* d) { (*d)["block"] = PrintBlockGraph(s.block); }},
    {"block_to_execute",
     [](const LoweringState& s, Dumps* d) { (*d)["execute"] = PrintExecuteGraph(s.execute); }},
    {"codegen",
     [](const LoweringState& s, Dumps* d) {
       (*d)["pto"] = PrintPto(s.pto);
       (*d)["cpp"] = s.source;
     }},
    {"native_compile", nullptr},
};

const char* RouteName(Route r) {
  switch (r) {
    case Route::kAll:
      return "all";
    case Route::kStatic:
      return "static";
    case Route::kDynamic:
      return "dynamic";
  }
  return "?";
}

bool Runs(const Pass& p, const LoweringState& s) {
  return p.route == Route::kAll || (p.route == Route::kDynamic) == TakesDynamicRoute(s);
}

}  // namespace

std::vector<std::string> PipelineStages() {
  std::vector<std::string> out;
  for (const Stage& s : kStages) out.push_back(s.name);
  return out;
}

std::vector<PassInfo> PipelinePasses() {
  std::vector<PassInfo> out;
  for (const Pass& p : kPasses) {
    out.push_back({p.stage, RouteName(p.route), p.name,
                   p.steps ? p.steps() : std::vector<std::string>{}});
  }
  return out;
}

absl::Status RunPipeline(LoweringState* state, std::vector<StageTime>* stages,
                         std::map<std::string, std::string>* dumps,
                         const std::string& last_stage) {
  Dumps* d = state->settings.keep_dumps ? dumps : nullptr;
  const Pass* pass = std::begin(kPasses);
  for (const Stage& stage : kStages) {
    const absl::Time start = absl::Now();
    absl::Status s;
    for (; s.ok() && pass != std::end(kPasses) && pass->stage == std::string(stage.name);
         ++pass) {
      if (Runs(*pass, *state)) s = pass->run(state);
    }
    if (s.ok() && d && stage.dump) stage.dump(*state, d);
    if (stages) stages->push_back({stage.name, absl::Now() - start});
    if (!s.ok()) return s;
    if (last_stage == stage.name) return absl::OkStatus();
  }
  if (pass != std::end(kPasses)) {
    return absl::InternalError(absl::StrCat("pass ", pass->name, " of stage ", pass->stage,
                                            " is out of stage order"));
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
