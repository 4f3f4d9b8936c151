#include "compiler/lower/allocate_ub.h"

#include <algorithm>
#include <map>
#include <utility>

#include "compiler/ir/dtype.h"
#include "compiler/lower/softmax_exp.h"

namespace pto::compiler {

int64_t GroupBody::Bytes(const std::vector<int64_t>& tile) const {
  const int64_t full = TileElements(tile);
  const int64_t row = tile.empty() || tile.back() == 0 ? full : full / tile.back();
  int64_t bytes = 0;
  for (int t = 0; t < num_tiles; ++t) {
    bytes += StorageBytes(tile_types[t]) * (tile_rows[t] ? row : full);
  }
  return bytes;
}

GroupBody PlanGroup(const TensorGraph& g, const LayoutPlan& layout,
                    const std::vector<int>& ops,
                    const std::function<bool(int)>& stored,
                    const std::function<int(int)>& gm_of,
                    const std::vector<int64_t>& space, bool rows) {
  const int rank = static_cast<int>(space.size());
  std::vector<int> reduced;  // results of the group's reductions
  for (int i : ops) {
    if (IsReduce(g.ops[i])) reduced.push_back(g.ops[i].outputs[0]);
  }
  auto is_reduced = [&](int v) {
    return std::find(reduced.begin(), reduced.end(), v) != reduced.end();
  };
  auto is_row = [&](int v) {
    return rows && !space.empty() && space.back() > 1 &&
           (is_reduced(v) || IsRowShaped(g.values[v].shape, space));
  };
  std::map<int, int> def_pos;   // value -> position in ops defining it
  std::map<int, int> last_use;  // value -> last position reading it
  for (int k = 0; k < static_cast<int>(ops.size()); ++k) {
    for (int v : g.ops[ops[k]].outputs) def_pos[v] = k;
  }
  for (int k = 0; k < static_cast<int>(ops.size()); ++k) {
    const TensorOp& op = g.ops[ops[k]];
    for (int v : op.inputs) {
      // A concat reads only the inputs the group computes.
      if (!IsConcat(op) || def_pos.count(v)) last_use[v] = k;
    }
  }
  GroupBody out;
  // Free tiles per storage type and shape: a tile is reused only for values
  // stored the same way (f32, int64, double; full or row).
  std::map<std::pair<pto::v1::DataType, bool>, std::vector<int>> free_tiles;
  auto alloc = [&](int value) {
    const pto::v1::DataType storage = UbStorageType(g.values[value].dtype);
    std::vector<int>& free = free_tiles[{storage, is_row(value)}];
    if (free.empty()) {
      out.tile_types.push_back(storage);
      out.tile_rows.push_back(is_row(value));
      return out.num_tiles++;
    }
    int t = free.back();
    free.pop_back();
    return t;
  };
  auto release = [&](int value, int tile) {
    free_tiles[{UbStorageType(g.values[value].dtype), is_row(value)}].push_back(tile);
  };
  std::map<int, int> ub;  // value -> tile
  for (int k = 0; k < static_cast<int>(ops.size()); ++k) {
    const TensorOp& op = g.ops[ops[k]];
    if (layout.IsLoadOp(ops[k])) {  // a materialized view/transpose
      const int v = op.outputs[0];
      TileInstr load;
      load.op = PtoOpcode::kTLoad;
      load.dst = alloc(v);
      load.gm = gm_of(layout.LoadOpRoot(ops[k]));
      load.dtype = g.values[v].dtype;
      load.index = layout.LoadOpIndex(g, ops[k]);
      load.view_shape = layout.LoadOpViewShape(ops[k]);
      ub[v] = load.dst;
      out.body.push_back(std::move(load));
      continue;
    }
    // An assemble reads its src only (dst is the buffer it writes); a
    // concat only stores the inputs the group computes.
    const size_t num_read = IsConcat(op) ? 0 : IsAssemble(op) ? 1 : op.inputs.size();
    for (size_t i = 0; i < num_read; ++i) {
      const int v = op.inputs[i];
      if (ub.count(v) || def_pos.count(v)) continue;
      TileInstr load;
      load.op = PtoOpcode::kTLoad;
      load.dst = alloc(v);
      load.gm = gm_of(layout.Root(v));
      load.dtype = g.values[v].dtype;
      load.index = layout.LoadIndex(g, v, rank);
      load.view_shape = layout.ViewShape(v);
      ub[v] = load.dst;
      out.body.push_back(std::move(load));
    }
  }
  std::vector<int> results;
  for (int k = 0; k < static_cast<int>(ops.size()); ++k) {
    const TensorOp& op = g.ops[ops[k]];
    const int v_out = op.outputs[0];
    if (layout.IsLoadOp(ops[k])) {  // loaded above
      results.push_back(v_out);
      if (!last_use.count(v_out) && !stored(v_out)) release(v_out, ub.at(v_out));
      continue;
    }
    if (IsAssemble(op)) {  // src's tile into its region of dst's buffer
      const int src = op.inputs[0];
      TileInstr store;
      store.op = PtoOpcode::kTStore;
      store.gm = gm_of(v_out);
      store.dtype = g.values[v_out].dtype;
      store.index = OffsetIndex(std::get<std::vector<int64_t>>(op.attrs.at("offsets")));
      store.srcs.push_back(ub.at(src));
      out.body.push_back(std::move(store));
      if (last_use.at(src) == k && !(def_pos.count(src) && stored(src))) {
        release(src, ub.at(src));
      }
      continue;
    }
    if (IsConcat(op)) {  // the inputs computed here into their regions
      std::vector<int> dead;
      for (size_t j = 0; j < op.inputs.size(); ++j) {
        const int v = op.inputs[j];
        if (!def_pos.count(v)) continue;  // copied by the concat's own group
        TileInstr store;
        store.op = PtoOpcode::kTStore;
        store.gm = gm_of(v_out);
        store.dtype = g.values[v].dtype;
        store.index = OffsetIndex(ConcatOffsets(g, op, j));
        store.srcs.push_back(ub.at(v));
        out.body.push_back(std::move(store));
        if (last_use.at(v) == k && !stored(v) &&
            std::find(dead.begin(), dead.end(), v) == dead.end()) {
          dead.push_back(v);
        }
      }
      for (int v : dead) release(v, ub.at(v));
      continue;
    }
    TileInstr instr;
    // Softmax's exp(x - max(x)) takes the softmax exp (softmax_exp.h).
    instr.op = IsSoftmaxExp(g, ops[k]) ? PtoOpcode::kTExpSoftmax : op.info->pto;
    for (int v : op.inputs) instr.srcs.push_back(ub.at(v));
    instr.scalars = TensorGraph::Scalars(op);
    instr.dst = alloc(v_out);
    instr.dtype = g.values[v_out].dtype;
    if (IsReduce(op)) instr.reduce_dim = rank - 1;  // a row reduction
    ub[v_out] = instr.dst;
    out.body.push_back(std::move(instr));
    results.push_back(v_out);
    // Free sources read for the last time (once each: add(x, x)).
    std::vector<int> dead;
    for (int v : op.inputs) {
      if (last_use.at(v) == k && !(def_pos.count(v) && stored(v)) &&
          std::find(dead.begin(), dead.end(), v) == dead.end()) {
        dead.push_back(v);
      }
    }
    if (!last_use.count(v_out) && !stored(v_out)) dead.push_back(v_out);
    for (int v : dead) release(v, ub.at(v));
  }
  for (int v : results) {
    if (!stored(v)) continue;
    TileInstr store;
    store.op = PtoOpcode::kTStore;
    store.gm = gm_of(v);
    store.dtype = g.values[v].dtype;
    const int v_rank = static_cast<int>(g.values[v].shape.size());
    if (is_reduced(v) && v_rank < rank) {  // keepdim=false: skip the last dim
      for (int d = 0; d < v_rank; ++d) store.index.push_back({d, 1});
    } else {
      store.index = AlignedIndex(v_rank, rank);
    }
    if (is_row(v) || is_reduced(v)) store.reduce_dim = rank - 1;
    store.srcs.push_back(ub.at(v));
    out.body.push_back(std::move(store));
  }
  return out;
}

absl::Status AllocateUb(TilingState* s) {
  const TensorGraph& g = s->graph();
  for (int k : s->unallocated) {
    TileGroup& grp = s->out.groups[k];
    const std::vector<int>& ops = grp.ops;
    const bool rows = std::any_of(ops.begin(), ops.end(),
                                  [&](int i) { return IsReduce(g.ops[i]); });
    GroupBody body = PlanGroup(
        g, *s->layout, ops, [&](int v) { return s->gm_of_value[v] >= 0; },
        [&](int v) { return s->gm_of_value[v]; }, grp.space, rows);
    grp.body = std::move(body.body);
    grp.num_ub_tiles = body.num_tiles;
    grp.ub_types = std::move(body.tile_types);
    if (rows) grp.ub_rows = std::move(body.tile_rows);
    if (absl::Status st = CheckGroupRegions(s->out, grp, g); !st.ok()) return st;
  }
  s->unallocated.clear();
  return absl::OkStatus();
}

}  // namespace pto::compiler
