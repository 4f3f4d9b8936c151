// Lowering a Tensor Graph with symbolic dims into task templates: the
// driver over the static passes on the pipeline's dynamic route
// (compiler/pipeline.cc). The kernel compiles once and the runtime expands
// the templates into tasks for each binding of the symbols at launch. The
// graph comes flattened (flatten_regions.h); the templating steps after it
// make GM strides that depend on symbols run-time args and add each group's
// generic tail function (bind_dynamic_args.h, tail_functions.h).
//
// How: the static passes (the tiling passes of ExpandToTiles, then
// PartitionBlocks) run twice, with the
// symbols replaced by two different probe sizes. Everything that must not
// depend on the sizes (groups, ops, tile shapes, tile bodies, GM indices,
// buffers) is compared between the two and must be identical; every space,
// buffer dim and shape a load reads through a reshape (TileInstr::
// sym_view_shape) that differs is matched back to an expression that gives
// both probe values: a symbol, a dim's expression of symbols (n-1 of
// x[:, 1:], n//2, a reshape's s*2) or ceil(either / tile). The probes are
// above every static dim and tile (no tile is clamped, no symbolic dim
// coincides with a static one; a matmul's cube tile sizes count as tile
// sizes), different for every expression and such that no two different
// expressions give the same pair of values; plain symbols get one more than
// a multiple of every tile (a tail in both probes). The block bodies are
// exactly the static path's (the fast path stays fast). The probe's tail
// functions along symbolic dims are dropped: the caller adds one generic
// function per group, cube groups included (tail_functions.h).
//
// A reduction over a symbolic dim takes the accumulating form in both probe
// lowerings (ExpandOptions::symbolic; expand_reduction.h):
// its accumulate template's tasks along that dim run in order
// (TaskTemplate.serial_dim).
// With ExpandOptions::symbolic_rows, a row over a symbolic last dim is also
// lowered as a fused row group whose tile along it is its cap (both forms
// in one Tile Graph, build_program.h picks at launch); the caps count as
// tile sizes for the probes, so a probe's row is longer than its cap.
//
// Limits (UNIMPLEMENTED naming the op, buffer or dims and why): a lowering
// whose structure differs between the probes; a dim that is not a symbol, a
// dim's expression or ceil(that / tile); expressions no two probes tell apart
// (n//4096: small for large sizes; dims with a constant bound, min(64, n),
// never get here: flattening lowers them at the bound); tile sizes whose
// least common multiple is above 2^16.
#ifndef PTO_COMPILER_LOWER_LOWER_SYMBOLIC_H_
#define PTO_COMPILER_LOWER_LOWER_SYMBOLIC_H_

#include "absl/status/status.h"
#include "compiler/ir/block_graph.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/expand_to_tiles.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// Fills `tile` and `block` (at the first probe sizes: what codegen sees; the
// Tile Graph's groups and buffers also keep their symbolic spaces and shapes
// for the dumps) and `execute` (buffers with shapes, functions, symbols and
// templates; no tasks). `block->tiles` points at `tile`. `options`: the
// tiling options (lower_regions.h TemplateOptions: fusion classes, dims
// marked symbolic).
absl::Status LowerSymbolic(const TensorGraph& graph, const ExpandOptions& options,
                           TileGraph* tile, BlockGraph* block,
                           pto::v1::ExecuteGraph* execute);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_LOWER_SYMBOLIC_H_
