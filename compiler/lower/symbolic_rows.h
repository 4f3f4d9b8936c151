// Rows over a symbolic last dim (ExpandOptions::symbolic_rows): a
// sum/amax/amin/prod over a symbolic last dim n is lowered twice into one
// Tile Graph, as a fused row group whose tile along the row is a cap
// (SymbolicRowCap) and in the accumulating form for any n
// (expand_reduction.h). ExpandToTiles (expand_to_tiles.h) drives it: the
// tiling passes over CapSymbolicRows' graph and over the graph as it is,
// then MergeBranches; the program picks a branch at launch by the row
// lengths (build_program.h).
#ifndef PTO_COMPILER_LOWER_SYMBOLIC_ROWS_H_
#define PTO_COMPILER_LOWER_SYMBOLIC_ROWS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/tiling.h"

namespace pto::compiler {

// The largest tile (elements) of a row group over a symbolic last dim with
// `ub_bytes` of UB: its row values are f32 (fuse_groups.h), and 8 f32 tiles
// of it fit (6144 with 192 KiB); fusion still checks each group's UB (a
// group that does not fit splits; the lowering keeps the accumulating form
// alone when the row form fails). Larger than row widening's bound: the
// generic function holds one row of it at a time.
constexpr int64_t MaxSymbolicRowTileElements(int64_t ub_bytes) { return ub_bytes / (4 * 8); }

// The row length up to which a row group over a symbolic last dim with vec
// tile `tile` holds a whole row in one tile: the largest power of two with
// the tile's other dims within MaxSymbolicRowTileElements(ub_bytes) (1024
// for tiles of 4 rows with an AI core's UB; a power of two keeps the probe
// sizes' least common multiple small, lower_symbolic.h), and at least the
// tile's own last dim.
int64_t SymbolicRowCap(const std::vector<int64_t>& tile, int64_t ub_bytes);

// The graph with the tile of each sum/amax/amin/prod over a symbolic last
// dim, and of every op with the same space and tile (the ops that would fuse
// with it), widened along the last dim to SymbolicRowCap, and the rows'
// caps in `caps`; or nullopt when there is no such reduction. (At the probe
// sizes a symbolic row is longer than its cap, lower_symbolic.h: the group's
// tiles along it are the cap's, and the generic function runs the row of
// n <= cap.)
std::optional<TensorGraph> CapSymbolicRows(const TensorGraph& g, const ExpandOptions& options,
                                           std::vector<RowCap>* caps);

// Whether the lowering of CapSymbolicRows' graph formed a row group over a
// capped row (else the branch is not worth it).
bool FormsCappedRowGroup(const TileGraph& rows);

// One Tile Graph holding both lowerings of a graph with capped symbolic
// rows: `rows`' groups (branch 1) run when every row is within its cap,
// `rest`'s (branch 2) otherwise. Parameters' buffers (the first ones, in
// order, in both) are shared; each keeps its own workspaces.
TileGraph MergeBranches(TileGraph rows, TileGraph rest, std::vector<RowCap> caps);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_SYMBOLIC_ROWS_H_
