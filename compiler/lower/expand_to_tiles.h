// Tensor Graph -> Tile Graph.
//
// Drops dead ops (whose results reach no out/inout parameter), splits each
// op's iteration space by its vec tile shape (tail tiles where a
// dim is not a multiple), fuses runs of consecutive elementwise ops with the
// same space and tile shape into one group (intermediates stay in UB), places
// values in GM or UB, and inserts TLOAD/TSTORE. A group's UB tiles must fit in
// kMaxUbBytesPerBlock; an op whose tiles alone do not fit is INVALID_ARGUMENT
// naming the op and its vec_tile. A matmul is a cube group of its own
// (expand_matmul.h), its operands and result in GM.
#ifndef PTO_COMPILER_LOWER_EXPAND_TO_TILES_H_
#define PTO_COMPILER_LOWER_EXPAND_TO_TILES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"

namespace pto::compiler {

struct ExpandOptions {
  bool fuse = true;  // false: one group per op (every value in GM)
  // Per op (empty: no constraint): ops fuse only with ops of the same class
  // (lower_regions.h: the loop body instance an op came from).
  std::vector<int> fusion_class;
  // Per value, per dim (empty: none): the dim is symbolic (the graph is a
  // probe lowering, lower_symbolic.h). A reduction over such a dim takes the
  // accumulating form, whose structure does not depend on the size.
  std::vector<std::vector<bool>> symbolic;
};

absl::StatusOr<TileGraph> ExpandToTiles(const TensorGraph& graph,
                                        const ExpandOptions& options = {});

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_EXPAND_TO_TILES_H_
