// The program tree: the last templating step of the pipeline's dynamic
// route (compiler/pipeline.cc), in its block_to_execute stage. The runtime
// expands the tree at launch in program order (runtime/expand_regions.h).
//
// Templates in order, inside the loops and if branches they came from,
// each scope's region checks first; the checks of views and
// assembles outside loops at the top, before any task. Rows over a
// symbolic last dim (graphs without loops, symbolic_rows.h): the Tile Graph
// holds two forms, and the program is one IfNode: `n <= cap` for each such
// row length n runs the fused row groups, else the accumulating form. In
// loop bodies a reduction over a symbolic or loop-dependent last dim keeps
// the accumulating form.
#ifndef PTO_COMPILER_LOWER_BUILD_PROGRAM_H_
#define PTO_COMPILER_LOWER_BUILD_PROGRAM_H_

#include "absl/status/status.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/flatten_regions.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// The Execute Graph's program tree (ExecNode: templates, loop nodes, if
// nodes, region checks).
absl::Status BuildProgram(const FlatGraph& flat, const TileGraph& tile,
                          pto::v1::ExecuteGraph* execute);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_BUILD_PROGRAM_H_
