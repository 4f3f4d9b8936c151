// UB allocation: the tile instructions of a fused group, with its values in
// UB tiles allocated by liveness.
//
// A group's body is all loads first (an inout buffer is read before the
// group overwrites it), then its ops in program order, then the stores of
// the results that must reach GM. A UB tile is reused once the value in it
// is dead, and only for a value stored the same way (storage type f32,
// int64 or double; full tile or row tile); a destination never shares a
// tile with a source of the same instruction (the tile functions take
// __restrict pointers). In a group holding row reductions (fuse_groups.h)
// the reductions' results and the values of the row shape get row tiles:
// one value per row, extent 1 in the last dim.
//
// Fusion sizes each candidate group with PlanGroup (the bytes its tiles
// take); the allocate_ub pass, the last tiling pass, gives every fused
// group its body.
#ifndef PTO_COMPILER_LOWER_ALLOCATE_UB_H_
#define PTO_COMPILER_LOWER_ALLOCATE_UB_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/layout.h"
#include "compiler/lower/tiling.h"

namespace pto::compiler {

// A planned group body and its UB tiles.
struct GroupBody {
  std::vector<TileInstr> body;
  int num_tiles = 0;
  std::vector<pto::v1::DataType> tile_types;  // storage type per tile
  std::vector<bool> tile_rows;  // row tile (extent 1 in the last dim)

  // The UB bytes of the tiles at tile shape `tile`.
  int64_t Bytes(const std::vector<int64_t>& tile) const;
};

// The body of the group of `ops` (program order) over `space`. `stored(v)`
// says whether result v must reach GM (it is kept live to the end);
// `gm_of(v)` is its GmTensor. `rows`: the group holds row reductions, so
// row values get row tiles.
GroupBody PlanGroup(const TensorGraph& g, const LayoutPlan& layout,
                    const std::vector<int>& ops,
                    const std::function<bool(int)>& stored,
                    const std::function<int(int)>& gm_of,
                    const std::vector<int64_t>& space, bool rows);

// The pass: every group in state->unallocated gets its body and UB tiles;
// a group storing into a region it also loads at another index is
// UNIMPLEMENTED (CheckGroupRegions, layout.h).
absl::Status AllocateUb(TilingState* state);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_ALLOCATE_UB_H_
