// Tensor Graph -> Tile Graph for the ops addressed by an index tensor or by
// data (OpCategory::kIndex: gather, index_select, scatter, index_copy,
// index_add, sort; op_registry.cc). Each is a group of its own
// (fuse_groups.h), whose source (MGATHER, MSORT) or destination (MSCATTER)
// is a whole GM buffer:
//
//   gather / index_select, over the result's space:
//     TLOAD   %t0:ub.i64, index            (index_select: along dim)
//     MGATHER %t1, x[dim=d], %t0           dst[p] = x[p with p[d] = t0[p]]
//     TSTORE  out, %t1
//   scatter / index_copy / index_add: a copy group x -> out (none when
//   they share a buffer: an in-place update), then over index's space
//   (index_copy, index_add: src's space, the index along dim):
//     TLOAD    %t0:ub.i64, index
//     TLOAD    %t1, src
//     MSCATTER out[dim=d reduce], %t1, %t0 out[p with p[d] = t0[p]] (op)= t1[p]
//   with its tasks in order (TileGroup::serial_all): they may write the
//   same elements.
//   sort (attrs dim, k, descending), over its result's space:
//     MSORT  %t0:ub.i64, x[dim=d desc]     t0[p] = position of rank p[d]
//     TSTORE out, %t0
// A source seen through an alias (a view, a transpose) is first copied into
// a workspace of its own, so MGATHER and MSORT address a dense buffer. Over symbolic
// dims the groups are templates like any other: the buffer's GM strides and
// its extent along dim become dynamic args (bind_dynamic_args.h) and tails
// run the generic function (tail_functions.h).
#ifndef PTO_COMPILER_LOWER_EXPAND_INDEXING_H_
#define PTO_COMPILER_LOWER_EXPAND_INDEXING_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/layout.h"

namespace pto::compiler {

bool IsIndexOp(const TensorOp& op);

// Appends the groups of index op `i` to `out`; `gm_of_value` maps a value
// with a GM tensor to it (out->gm); `symbolic`: ExpandOptions::symbolic
// (a probe lowering's symbolic dims, per value; empty: none).
// INVALID_ARGUMENT (naming the op) when its tiles exceed `ub_bytes`.
absl::Status AppendIndexing(const TensorGraph& g, const LayoutPlan& layout, int i,
                            const std::vector<int>& gm_of_value, int64_t ub_bytes,
                            const std::vector<std::vector<bool>>& symbolic, TileGraph* out);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_EXPAND_INDEXING_H_
