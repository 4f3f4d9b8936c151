// GM placement: which Tensor Graph values live in GM buffers.
//
// The Tile Graph's buffers are the parameters', in order, then one
// workspace per value that crosses groups (read by a group that does not
// compute it, read from GM whatever its group: layout.h GmReads, an index
// op's result, a concat's result and the inputs it copies). An alias has no
// buffer of its own (its readers load its root). An assemble's result
// shares its dst's buffer: one buffer per owner (LayoutPlan::Owner), a
// parameter's when one of the owner's values is bound to one; an assemble
// into an IN parameter, or into one parameter as the result of another, is
// UNIMPLEMENTED naming the op. The reductions' workspaces come later, with
// their groups (expand_reduction.h).
#ifndef PTO_COMPILER_LOWER_PLACE_IN_GM_H_
#define PTO_COMPILER_LOWER_PLACE_IN_GM_H_

#include "absl/status/status.h"
#include "compiler/lower/tiling.h"

namespace pto::compiler {

// The pass: fills state->out's name, buffers and GM tensors and
// state->gm_of_value from the graph, state->layout and state->groups.
absl::Status PlaceInGm(TilingState* state);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_PLACE_IN_GM_H_
