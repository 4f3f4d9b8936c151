// The dynamic route of the pipeline (compiler/pipeline.cc): a Tensor Graph
// with loops or symbolic dims compiles once into task templates, and the
// Execute Graph holds a program tree (kernel.proto ExecNode: templates,
// loop nodes, if nodes, region checks) that the runtime expands at launch
// in program order (runtime/expand_regions.h).
//
// Its steps are the lines of compiler/pipeline.cc's list on route
// "dynamic": TemplateOptions (here), FlattenRegions
// (flatten_regions.h), LowerSymbolic (lower_symbolic.h: the driver over
// the static passes that makes the Tile, Block and Execute levels from two
// probe lowerings, tiled with TemplateOptions), BindDynamicArgs
// (bind_dynamic_args.h), AddTailFunctions (tail_functions.h) and
// BuildProgram (build_program.h). A graph without loops is a program of
// templates in order: every graph with symbolic dims takes this route.
//
// Temporaries of a body that land in a workspace get per-iteration
// instances at launch (runtime/workspace_instances.h).
#ifndef PTO_COMPILER_LOWER_LOWER_REGIONS_H_
#define PTO_COMPILER_LOWER_LOWER_REGIONS_H_

#include "absl/status/status.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/lower/flatten_regions.h"
#include "compiler/lower/tiling.h"
#include "compiler/targets/memory_model.h"

namespace pto::compiler {

// The options LowerSymbolic tiles `flat` with: `fuse` and the target's
// `memory`, a fusion class per run of ops between loop boundaries, the
// dims whose extents are known only at launch marked symbolic, and
// symbolic_rows for a graph without loops.
ExpandOptions TemplateOptions(const FlatGraph& flat, bool fuse, const MemoryModel& memory);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_LOWER_REGIONS_H_
