// Tensor Graph -> Tile Graph: the tiling passes, in order (TilingPasses(),
// each in its own file, all sharing TilingState: tiling.h):
//
//   widen_rows   widen_rows.h    a reduction's row split by its tile is
//                                lowered over whole rows (op tiles widened)
//   layout       layout.h        aliases (views, transposes, ...) and the
//                                buffers assembles and concats write into
//   fuse         fuse_groups.h   dead ops dropped; fusion groups, row fusion
//   place_in_gm  place_in_gm.h   which values live in GM buffers
//   tile         tile_groups.h   each group's space and tile; matmuls,
//                                reductions, index ops and concats expanded
//                                (expand_matmul.h, expand_reduction.h,
//                                expand_indexing.h)
//   allocate_ub  allocate_ub.h   fused groups' bodies: TLOAD, compute,
//                                TSTORE over UB tiles allocated by liveness
//
// A group's UB tiles must fit the target's UB (ExpandOptions::memory,
// targets/memory_model.h); an op whose tiles alone do not fit is
// INVALID_ARGUMENT naming the op, its vec_tile, the UB and both sizes. A
// matmul's cube tile must fit the model's L1, L0A, L0B and L0C.
//
// The static route of the pipeline (compiler/pipeline.cc) runs them once;
// the dynamic route's driver (lower_symbolic.h) at each probe size, where
// ExpandOptions::symbolic_rows also lowers rows over a symbolic last dim
// both ways (symbolic_rows.h).
#ifndef PTO_COMPILER_LOWER_EXPAND_TO_TILES_H_
#define PTO_COMPILER_LOWER_EXPAND_TO_TILES_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/tiling.h"

namespace pto::compiler {

// One tiling pass: its name and what it runs.
struct TilingPass {
  const char* name;
  absl::Status (*run)(TilingState*);
};

// The tiling passes, in order.
const std::vector<TilingPass>& TilingPasses();

// Runs the tiling passes over `graph`; with options.symbolic_rows, twice
// (the capped rows and the graph as it is) into one Tile Graph of two
// branches when a capped row group forms (symbolic_rows.h).
absl::StatusOr<TileGraph> ExpandToTiles(const TensorGraph& graph,
                                        const ExpandOptions& options = {});

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_EXPAND_TO_TILES_H_
