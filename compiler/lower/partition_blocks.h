// Tile Graph -> Block Graph: one block function per distinct tile extent
// combination of each group (isomorphic-block dedup).
#ifndef PTO_COMPILER_LOWER_PARTITION_BLOCKS_H_
#define PTO_COMPILER_LOWER_PARTITION_BLOCKS_H_

#include "absl/status/statusor.h"
#include "compiler/ir/block_graph.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"

namespace pto::compiler {

// `tensors` names the functions after their ops; the result points at
// `tiles`, which must outlive it.
absl::StatusOr<BlockGraph> PartitionBlocks(const TensorGraph& tensors,
                                           const TileGraph& tiles);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_PARTITION_BLOCKS_H_
