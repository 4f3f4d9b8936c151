// Tensor Graph -> Tile Graph.
//
// Drops dead ops (whose results reach no out/inout parameter), splits each
// op's iteration space by its vec tile shape (tail tiles where a
// dim is not a multiple), fuses runs of consecutive elementwise ops with the
// same space and tile shape into one group (intermediates stay in UB), places
// values in GM or UB, and inserts TLOAD/TSTORE. A group's UB tiles must fit in
// the target's UB (ExpandOptions::memory, targets/memory_model.h); an op
// whose tiles alone do not fit is INVALID_ARGUMENT naming the op, its
// vec_tile, the UB and both sizes. A matmul is a cube group of its own
// (expand_matmul.h), its operands and result in GM; its cube tile must fit
// the model's L1, L0A, L0B and L0C.
#ifndef PTO_COMPILER_LOWER_EXPAND_TO_TILES_H_
#define PTO_COMPILER_LOWER_EXPAND_TO_TILES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/targets/memory_model.h"

namespace pto::compiler {

struct ExpandOptions {
  bool fuse = true;  // false: one group per op (every value in GM)
  // The target's buffers (TargetMemoryModel): UB bounds every group's tiles
  // and the row tiles below, L1/L0 a matmul's cube tile.
  MemoryModel memory = kAiCoreMemoryModel;
  // Per op (empty: no constraint): ops fuse only with ops of the same class
  // (lower_regions.h: the loop body instance an op came from).
  std::vector<int> fusion_class;
  // Per value, per dim (empty: none): the dim is symbolic (the graph is a
  // probe lowering, lower_symbolic.h). A reduction over such a dim takes the
  // accumulating form, whose structure does not depend on the size.
  std::vector<std::vector<bool>> symbolic;
  // Row widening (with fuse): a reduction over a static last dim that its
  // tile splits into several tiles is lowered over whole rows instead, when
  // a whole-row tile stays within MaxWidenedTileElements: the reduction's
  // tile, and that of every op with the same space and tile, is widened
  // along the last dim to the dim's extent (the other dims keep the user's
  // granularity), so the row group fuses as for a full-row tile: no partial
  // results in GM workspaces, no combine step. The vec tile bounds a block's
  // UB use, as in PyPTO; it is not a request to spill partial results. The
  // order of a row's sum changes (one pass over the row instead of per-tile
  // partials combined). false: the user's tiles as given (tests).
  bool widen_rows = true;
  // Rows over a symbolic last dim (with fuse and `symbolic`): a
  // sum/amax/amin/prod over a symbolic last dim is lowered twice: as a row
  // group whose tile along the row is the cap SymbolicRowCap(tile) (the
  // ops with its space and tile widened to it, as row widening does; a
  // row of n <= cap values is one tile, and its generic function runs the
  // row code with n from its args), and in the accumulating form for any
  // n. The Tile Graph holds both: TileGroup::branch says which, and
  // TileGraph::row_caps the condition (every such row within its cap)
  // that picks the row groups at launch (lower_regions.h). Set by
  // LowerRegions for graphs without loops.
  bool symbolic_rows = false;
};

// The largest whole-row tile (elements) row widening makes with `ub_bytes`
// of UB: at 8 bytes per stored element, 6 UB tiles of it live in one op's
// block (4096 with an AI core's 192 KiB). FormGroups still checks each
// group's UB.
constexpr int64_t MaxWidenedTileElements(int64_t ub_bytes) { return ub_bytes / (8 * 6); }

// The largest tile (elements) of a row group over a symbolic last dim with
// `ub_bytes` of UB: its row values are f32 (RowGroupOk), and 8 f32 tiles of
// it fit (6144 with 192 KiB); FormGroups still checks each group's UB (a
// group that does not fit splits; the lowering keeps the accumulating form
// alone when the row form fails). Larger than row widening's bound: the
// generic function holds one row of it at a time.
constexpr int64_t MaxSymbolicRowTileElements(int64_t ub_bytes) { return ub_bytes / (4 * 8); }

// The row length up to which a row group over a symbolic last dim with vec
// tile `tile` holds a whole row in one tile (ExpandOptions::symbolic_rows):
// the largest power of two with the tile's other dims within
// MaxSymbolicRowTileElements(ub_bytes) (1024 for tiles of 4 rows with an AI
// core's UB; a power of two keeps the probe sizes' least common multiple
// small, lower_symbolic.h), and at least the tile's own last dim.
int64_t SymbolicRowCap(const std::vector<int64_t>& tile, int64_t ub_bytes);

absl::StatusOr<TileGraph> ExpandToTiles(const TensorGraph& graph,
                                        const ExpandOptions& options = {});

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_EXPAND_TO_TILES_H_
