// Row widening (ExpandOptions::widen_rows, with fuse): the first tiling
// pass, a rewrite of the ops' tiles.
//
// Each reduction over a static last dim that its clamped tile T splits
// (T.back() < extent) names a class (its space S, T); every op of that
// class (the same space and clamped tile: the ops that would fuse with it)
// gets T with the last dim widened to S's extent, when that tile has at most
// MaxWidenedTileElements elements. Ops of other spaces (the [..., 1] row
// values) keep theirs: a row tile already spans its one-element last dim.
// The row group then fuses as for a full-row tile (fuse_groups.h): no
// partial results in GM workspaces, no combine step. A reduction over a
// symbolic last dim keeps the accumulating form (expand_reduction.h).
#ifndef PTO_COMPILER_LOWER_WIDEN_ROWS_H_
#define PTO_COMPILER_LOWER_WIDEN_ROWS_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/lower/tiling.h"

namespace pto::compiler {

// The largest whole-row tile (elements) row widening makes with `ub_bytes`
// of UB: at 8 bytes per stored element, 6 UB tiles of it live in one op's
// block (4096 with an AI core's 192 KiB). Fusion still checks each group's
// UB.
constexpr int64_t MaxWidenedTileElements(int64_t ub_bytes) { return ub_bytes / (8 * 6); }

// The pass: state->widened is the input with the widened tiles, or nullopt
// when none changes (or without fuse and widen_rows).
absl::Status WidenRows(TilingState* state);

// A class of ops with one space and one clamped tile: the ops that would
// fuse with a row reduction of that space (row widening, symbolic rows).
using RowClass = std::pair<std::vector<int64_t>, std::vector<int64_t>>;

// `g` with every op of a class in `last_dims` tiled by the class's tile with
// its last dim set to the class's value.
TensorGraph WithRowTiles(const TensorGraph& g, const std::map<RowClass, int64_t>& last_dims);

// Whether reduction `op` reduces the last dim of its space with a tile of
// the space's rank.
bool ReducesLastDim(const TensorGraph& g, const TensorOp& op);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_WIDEN_ROWS_H_
