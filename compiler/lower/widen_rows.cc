#include "compiler/lower/widen_rows.h"

#include <map>
#include <optional>
#include <utility>

namespace pto::compiler {
namespace {

// Row widening (ExpandOptions::widen_rows): the tiles of `g` to lower with,
// or nullopt when none changes. Each reduction over a static last dim that
// its clamped tile T splits (T.back() < extent) names a class (its space S,
// T); every op of that class (the same space and clamped tile: the ops
// that would fuse with it) gets T with the last dim widened to S's extent,
// when that tile has at most MaxWidenedTileElements elements. Ops of other
// spaces (the [..., 1] row values) keep theirs: a row tile already spans
// its one-element last dim.
std::optional<TensorGraph> WidenedRowTiles(const TensorGraph& g,
                                     const ExpandOptions& options) {
  std::map<RowClass, int64_t> widened;  // (space, tile) -> the last dim's extent
  for (const TensorOp& op : g.ops) {
    if (!IsReduce(op)) continue;
    if (!ReducesLastDim(g, op)) continue;
    const std::vector<int64_t>& space = OpSpace(g, op);
    const int rank = static_cast<int>(space.size());
    const int v_in = op.inputs[0];
    if (!options.symbolic.empty() && options.symbolic[v_in].size() == space.size() &&
        options.symbolic[v_in][rank - 1]) {
      continue;  // the accumulating form (AppendAccumulation)
    }
    std::vector<int64_t> tile = ClampedTile(g, op);
    if (tile.back() >= space.back()) continue;
    std::vector<int64_t> wide = tile;
    wide.back() = space.back();
    if (TileElements(wide) > MaxWidenedTileElements(options.memory.ub_bytes)) continue;
    widened[{space, tile}] = space.back();
  }
  if (widened.empty()) return std::nullopt;
  return WithRowTiles(g, widened);
}

}  // namespace

TensorGraph WithRowTiles(const TensorGraph& g, const std::map<RowClass, int64_t>& last_dims) {
  TensorGraph out = g;
  for (TensorOp& op : out.ops) {
    if (op.vec_tile.empty() || op.vec_tile.size() != OpSpace(out, op).size()) continue;
    auto it = last_dims.find({OpSpace(out, op), ClampedTile(out, op)});
    if (it == last_dims.end()) continue;
    op.vec_tile = it->first.second;
    op.vec_tile.back() = it->second;
  }
  return out;
}

bool ReducesLastDim(const TensorGraph& g, const TensorOp& op) {
  const int rank = static_cast<int>(OpSpace(g, op).size());
  if (rank == 0 || static_cast<int>(op.vec_tile.size()) != rank) return false;
  int64_t dim = 0;
  if (auto it = op.attrs.find("dim"); it != op.attrs.end()) {
    dim = std::get<int64_t>(it->second);
  }
  return (dim < 0 ? dim + rank : dim) == rank - 1;
}


absl::Status WidenRows(TilingState* s) {
  if (s->options.fuse && s->options.widen_rows) {
    s->widened = WidenedRowTiles(*s->input, s->options);
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
