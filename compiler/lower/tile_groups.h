// Tiling: each fusion group (fuse_groups.h) as groups of the Tile Graph, in
// order, each iterating its space in tiles of its clamped vec tile (tail
// tiles where a dim is not a multiple).
//
// By the group's first op: a matmul is a cube group (expand_matmul.h; an
// assemble or concat in its group redirects the cube's store into that
// region); a reduction of its own takes its partial and combine groups, or
// the accumulating form (expand_reduction.h); an index op its gather or
// scatter group (expand_indexing.h); a concat one copy group per input no
// other group stores (loaded from its root, stored at its offset along the
// concat dim; a copy tile that does not fit UB is INVALID_ARGUMENT naming
// the op). A fused group gets its space and tile here and its body from
// UB allocation (allocate_ub.h), the next pass.
#ifndef PTO_COMPILER_LOWER_TILE_GROUPS_H_
#define PTO_COMPILER_LOWER_TILE_GROUPS_H_

#include "absl/status/status.h"
#include "compiler/lower/tiling.h"

namespace pto::compiler {

// The pass: appends the groups to state->out (which place_in_gm made) and
// lists the fused ones in state->unallocated.
absl::Status TileGroups(TilingState* state);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_TILE_GROUPS_H_
