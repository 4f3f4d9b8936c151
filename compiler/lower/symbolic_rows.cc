#include "compiler/lower/symbolic_rows.h"

#include <algorithm>
#include <map>
#include <utility>

#include "compiler/lower/widen_rows.h"

namespace pto::compiler {

int64_t SymbolicRowCap(const std::vector<int64_t>& tile, int64_t ub_bytes) {
  int64_t others = 1;
  for (size_t d = 0; d + 1 < tile.size(); ++d) others *= std::max<int64_t>(tile[d], 1);
  int64_t cap = 1;
  while (cap * 2 * others <= MaxSymbolicRowTileElements(ub_bytes)) cap *= 2;
  return tile.empty() ? cap : std::max(cap, tile.back());
}

std::optional<TensorGraph> CapSymbolicRows(const TensorGraph& g, const ExpandOptions& options,
                                           std::vector<RowCap>* caps) {
  std::map<RowClass, int64_t> widened;  // (space, tile) -> the cap
  for (const TensorOp& op : g.ops) {
    if (!IsReduce(op) || op.info->kind == "argmax" || op.info->kind == "argmin" ||
        !CappedRow(op, options)) {
      continue;
    }
    if (!ReducesLastDim(g, op)) continue;
    const std::vector<int64_t>& space = OpSpace(g, op);
    const std::vector<int64_t> tile = ClampedTile(g, op);
    const int64_t cap = SymbolicRowCap(tile, options.memory.ub_bytes);
    if (cap >= space.back()) continue;  // (probes are longer than any cap)
    widened[{space, tile}] = cap;
    caps->push_back({op.inputs[0], cap});
  }
  if (widened.empty()) return std::nullopt;
  return WithRowTiles(g, widened);
}

bool FormsCappedRowGroup(const TileGraph& rows) {
  bool formed = false;
  for (const TileGroup& grp : rows.groups) {
    for (const TileInstr& in : grp.body) {
      formed = formed || (!grp.ub_rows.empty() && in.reduce_dim >= 0 && in.dst >= 0 &&
                          in.dst < static_cast<int>(grp.ub_rows.size()) &&
                          grp.ub_rows[in.dst] && grp.tile.back() < grp.space.back());
    }
  }
  return formed;
}

TileGraph MergeBranches(TileGraph rows, TileGraph rest, std::vector<RowCap> caps) {
  std::vector<int> buffer_of(rest.buffers.size());
  for (size_t b = 0; b < rest.buffers.size(); ++b) {
    if (rest.buffers[b].param >= 0) {
      buffer_of[b] = static_cast<int>(b);
      continue;
    }
    buffer_of[b] = static_cast<int>(rows.buffers.size());
    rows.buffers.push_back(std::move(rest.buffers[b]));
  }
  const int gm_base = static_cast<int>(rows.gm.size());
  for (GmTensor t : rest.gm) {
    t.buffer = buffer_of[t.buffer];
    rows.gm.push_back(t);
  }
  for (TileGroup& grp : rows.groups) grp.branch = 1;
  for (TileGroup& grp : rest.groups) {
    grp.branch = 2;
    for (TileInstr& in : grp.body) {
      if (in.gm >= 0) in.gm += gm_base;
    }
    rows.groups.push_back(std::move(grp));
  }
  // One cap per row value: the smallest of its reductions'.
  for (const RowCap& c : caps) {
    bool seen = false;
    for (RowCap& r : rows.row_caps) {
      if (r.value != c.value) continue;
      r.cap = std::min(r.cap, c.cap);
      seen = true;
    }
    if (!seen) rows.row_caps.push_back(c);
  }
  return rows;
}

}  // namespace pto::compiler
