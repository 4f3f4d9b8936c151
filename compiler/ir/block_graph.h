// The Block Graph: the work of one tile on one core, as block functions.
//
// Tiles of a group that differ only in their offsets are isomorphic and share
// one block function: the full tiles share one, and each combination of tail
// extents gets its own (a group whose space splits with tails in k dims has
// 2^k functions). Which function a tile uses follows from its grid position,
// so tiles are not stored.
#ifndef PTO_COMPILER_IR_BLOCK_GRAPH_H_
#define PTO_COMPILER_IR_BLOCK_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/tile_graph.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

struct BlockFunction {
  int group = -1;               // the TileGroup whose body it runs
  std::vector<int64_t> extent;  // the tile extents it is specialised for
  std::string name;             // e.g. "g0_exp_add_2x4" ([A-Za-z0-9_] only)
  pto::v1::CoreType core = pto::v1::CORE_TYPE_VECTOR;
  int num_args = 0;             // one tile offset per dim
  // The tile's extents are read
  // from the last `rank` args at run time; `extent` is the UB tile shape.
  bool runtime_extents = false;
};

struct BlockGroup {
  std::vector<int64_t> grid;  // tiles per dim
  // Function index per tail mask: bit d set = the tile is the tail in dim d.
  // -1 for masks that cannot occur (dims without a tail).
  std::vector<int> function_of_mask;
};

struct BlockGraph {
  const TileGraph* tiles = nullptr;  // the level below (not owned)
  std::vector<BlockFunction> functions;
  std::vector<BlockGroup> groups;  // parallel to tiles->groups

  // The function that runs tile `linear` (row-major) of group `group`.
  int FunctionOf(int group, int64_t linear) const;
};

std::string PrintBlockGraph(const BlockGraph& graph);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_BLOCK_GRAPH_H_
