// Tail functions: a templating step of the pipeline's dynamic route
// (compiler/pipeline.cc), after BindDynamicArgs (bind_dynamic_args.h).
//
// A group over a dim whose extent is known only at launch (a dim of
// FlatGraph::runtime_shape, or a parameter's symbolic dim split into tiles
// of more than one element) gets a generic function (BlockFunction::
// runtime_extents) that reads its extents from the task's args, used for
// every tail; the template's space keeps the expression, and the full-tile
// function stays static. Tails along M or N of a cube group run the generic
// cube function (m and n from the args, tiles sized at the bounds). A
// reduction over a dim whose extent depends on a loop index takes the
// accumulating form (ExpandOptions::symbolic); any other reduction over
// such a dim, a scatter with an operand that has one, or a gather/sort
// with an operand that has one along the dim it indexes or sorts, is
// UNIMPLEMENTED naming the op (a gather's or sort's other dims take it as
// a tail like any other). A gather/scatter/sort over a parameter's
// symbolic dim runs its tails on the generic function (MGATHER/MSCATTER/
// MSORT over the task's extents only).
#ifndef PTO_COMPILER_LOWER_TAIL_FUNCTIONS_H_
#define PTO_COMPILER_LOWER_TAIL_FUNCTIONS_H_

#include "absl/status/status.h"
#include "compiler/ir/block_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/flatten_regions.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// Each group with run-time extents gets its generic function, its
// template's space the extents' expressions.
absl::Status AddTailFunctions(const FlatGraph& flat, TileGraph* tile, BlockGraph* block,
                              pto::v1::ExecuteGraph* execute);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_TAIL_FUNCTIONS_H_
