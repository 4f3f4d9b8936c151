// Lowering a Tensor Graph with symbolic dims into task templates (issue 4,
// phase 1): the kernel compiles once and the runtime expands the templates
// into tasks for each binding of the symbols at launch.
//
// How: the static passes (ExpandToTiles, PartitionBlocks) run twice, with the
// symbols replaced by two different probe sizes. Everything that must not
// depend on the sizes (groups, ops, tile shapes, tile bodies, GM indices,
// buffers) is compared between the two and must be identical; every space
// and buffer dim that differs is matched back to an expression of one symbol
// (the symbol itself, or ceil(symbol / tile)) that gives both probe values.
// The probes are multiples of every tile size plus one and larger than every
// static dim, so no tile is clamped and no symbolic dim coincides with a
// static one (a matmul's cube tile sizes count as tile sizes, so no probe
// clamps its tiles). The block bodies are exactly the static path's (the fast path
// stays fast).
//
// Tails along symbolic dims: with `inner_dims` (what LowerRegions, the one
// caller, passes) the probe's tail functions along symbolic dims are dropped
// and the caller adds one generic function per group, cube groups included
// (lower_regions.h);
// without it, one static function per tail extent 1..tile (phase 1).
//
// A reduction over a symbolic dim takes the accumulating form in both probe
// lowerings (ExpandOptions::symbolic; expand_to_tiles.cc AppendAccumulation):
// its accumulate template's tasks along that dim run in order
// (TaskTemplate.serial_dim).
// With ExpandOptions::symbolic_rows, a row over a symbolic last dim is also
// lowered as a fused row group whose tile along it is its cap (both forms
// in one Tile Graph, lower_regions.h picks at launch); the caps count as
// tile sizes for the probes, so a probe's row is longer than its cap.
//
// Limits (UNIMPLEMENTED naming the value or op): a symbolic dim must be a
// plain symbol (without `inner_dims` also the outermost dim of its value).
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
// templates; no tasks). `block->tiles` points at `tile`.
absl::Status LowerSymbolic(const TensorGraph& graph, bool fuse, TileGraph* tile,
                           BlockGraph* block, pto::v1::ExecuteGraph* execute);
// The same with the tiling options (lower_regions.h: fusion classes).
// `inner_dims`: a plain symbol may be any dim of a value (the caller makes
// the GM strides run-time args and adds the generic tail functions,
// lower_regions.h).
absl::Status LowerSymbolic(const TensorGraph& graph, const ExpandOptions& options,
                           TileGraph* tile, BlockGraph* block,
                           pto::v1::ExecuteGraph* execute, bool inner_dims = false);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_LOWER_SYMBOLIC_H_
