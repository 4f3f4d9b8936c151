// A reduction that does not fuse (not a row reduction, fuse_groups.h) as
// groups of its own in the Tile Graph.
//
// A reduction of op `i` over dim d of its input (space S, tile T):
//   partial: per tile of S, reduce along d (TRED*), store one slot per tile
//            into workspace(s) of shape S with dim d = n (tiles along d);
//            argmax/argmin also store the global index (TARGFIRST);
//   combine: per tile of that workspace with all n slots along d, reduce
//            again (TARGSEL picks the index) and store the result.
// With n == 1 the partial step stores the result directly. Partial values
// are of the accumulator's type (f32, int64 or double: AppendReduction
// says which). The combine's tile holds all n slots
// along d and, where that does not fit UB at the partials' width, fewer
// values along the other dims (halved, leading dims first).
//
// Over a symbolic dim (ExpandOptions::symbolic) the number of tiles along d
// is not known at compile time, so the accumulating form instead, the same
// at every size:
//   init:       per tile of S with dim d = 1, fill one slot of an
//               accumulator workspace with the reduction's identity;
//   accumulate: per tile of S, reduce along d and fold the result into the
//               slot (load, TADD/TMUL/TMAX/TMIN, store); the tiles along d
//               run one after another (TileGroup::serial_dim), the other
//               dims in parallel;
//   finish:     the combine step with one slot: the result in its dtype.
//
// A step whose tiles do not fit UB is INVALID_ARGUMENT naming the op, the
// tile and both sizes.
#ifndef PTO_COMPILER_LOWER_EXPAND_REDUCTION_H_
#define PTO_COMPILER_LOWER_EXPAND_REDUCTION_H_

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/layout.h"
#include "compiler/lower/tiling.h"

namespace pto::compiler {

// Appends the groups of reduction op `i` of `g` to `out`; `gm_of_value`
// gives each value's GmTensor (its input and result live in GM).
absl::Status AppendReduction(const TensorGraph& g, int i,
                             const std::vector<int>& gm_of_value,
                             const ExpandOptions& options, TileGraph* out);

// A reduction of an alias (x.T.sum(-1)) loads the alias's root through its
// index: AppendReduction addresses its input as a GM tensor of its own, and
// this points the loads of the groups from `first_new` on at the root.
void ReadAliasInput(const TensorGraph& g, const LayoutPlan& layout, int i,
                    const std::vector<int>& gm_of_value, size_t first_new,
                    TileGraph* out);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_EXPAND_REDUCTION_H_
