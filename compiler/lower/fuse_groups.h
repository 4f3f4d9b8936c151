// Fusion: the Tile Graph's groups, as lists of Tensor Graph ops.
//
// Dead ops (whose results reach no out/inout parameter) are dropped, and an
// alias (view, transpose, ...: layout.h) is read through its root, in no
// group. The live ops are walked in program order with one group open: an
// op joins it when it iterates the same space with the same clamped tile
// and run-time extent (ExpandOptions::extent_class), reads nothing from GM
// that the group computes, has the group's fusion
// class (ExpandOptions::fusion_class) and the group's UB tiles still fit
// the target's UB (sized by UB allocation, allocate_ub.h); a group holds
// at most 256 ops. Otherwise the op opens a new group. An op whose tiles
// alone do not fit is INVALID_ARGUMENT naming the op, its vec_tile, the UB
// and both sizes.
//
// Row fusion: a reduction over the last dim whose tile spans that dim
// (IsRowReduction, tiling.h) needs no partial results, so it runs inside the
// elementwise group around it (space S = its input's shape, one block per
// tile of rows), its result kept in a row tile (one value per row). Values of
// the row shape ([..., 1], or anything broadcasting as one value per row)
// join per row; a binary arithmetic op repeats a row tile's value along the
// row of its other, full operand. Such a group holds only row reductions
// over S, f32-stored row values, full results that read row values only
// through PtoHasRowsForm instructions, and no reader of a keepdim=false
// reduction's result (it would broadcast along the row, not down it).
//
// Groups of their own: a reduction that is not a row reduction (partial
// and combine steps, or the accumulating form: expand_reduction.h), a
// matmul (a cube group: expand_matmul.h), an index op (expand_indexing.h).
// A concat joins the groups that compute its inputs where the input has
// the group's space and the tiles fit (each stores its tile into its
// region); a concat with other inputs also gets a copy group of its own. A
// matmul's result read only by an assemble or a concat is stored by the
// cube group straight into that region (the op joins the matmul's group),
// unless the region's buffer is an operand's or an assemble's dst is
// computed after the matmul.
#ifndef PTO_COMPILER_LOWER_FUSE_GROUPS_H_
#define PTO_COMPILER_LOWER_FUSE_GROUPS_H_

#include "absl/status/status.h"
#include "compiler/lower/tiling.h"

namespace pto::compiler {

// The pass: fills state->groups and state->concat_fused from the graph
// and state->layout.
absl::Status FuseGroups(TilingState* state);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_FUSE_GROUPS_H_
