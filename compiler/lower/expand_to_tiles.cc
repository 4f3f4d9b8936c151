#include "compiler/lower/expand_to_tiles.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/lower/expand_indexing.h"
#include "compiler/lower/expand_matmul.h"
#include "compiler/lower/layout.h"
#include "compiler/lower/softmax_exp.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

// Longest fused run: keeps block functions (and the quadratic UB planning
// while a group grows) small.
constexpr size_t kMaxOpsPerGroup = 256;

bool IsReduce(const TensorOp& op) {
  return op.info->category == OpCategory::kReduce;
}

bool IsMatmul(const TensorOp& op) {
  return op.info->category == OpCategory::kMatmul;
}

// The space an op iterates: its output, or a reduction's (assemble's) input.
const std::vector<int64_t>& OpSpace(const TensorGraph& g, const TensorOp& op) {
  return g.values[IsReduce(op) || IsAssemble(op) ? op.inputs[0] : op.outputs[0]]
      .shape;
}

std::vector<int64_t> ClampedTile(const TensorGraph& g, const TensorOp& op) {
  const std::vector<int64_t>& space = OpSpace(g, op);
  std::vector<int64_t> tile = op.vec_tile;
  for (size_t d = 0; d < tile.size(); ++d) tile[d] = std::min(tile[d], space[d]);
  return tile;
}

int64_t TileElements(const std::vector<int64_t>& tile) {
  int64_t n = 1;
  for (int64_t d : tile) n *= d;
  return n;
}

// UB bytes per element of a tile of storage type `storage` (UbStorageType).
int64_t StorageBytes(pto::v1::DataType storage) {
  return storage == pto::v1::DT_FP32 ? 4 : 8;
}

// Row fusion. A reduction over the last dim whose tile spans that dim needs
// no partial results: it runs inside the elementwise group around it (space
// S = its input's shape, one block per tile of rows), its result kept in a
// row tile (one value per row, extent 1 in the last dim). Values of the
// row shape ([..., 1], or anything broadcasting as one value per row) live
// in row tiles; elementwise ops on them run per row; a binary arithmetic op
// repeats a row tile's value along the row of its other, full operand.

bool Keepdim(const TensorOp& op) {
  auto it = op.attrs.find("keepdim");
  return it != op.attrs.end() && std::get<bool>(it->second);
}

// Whether reduction `op` reduces a symbolic last dim that this lowering runs
// as a row group (ExpandOptions::symbolic_rows: its tile is the row's cap,
// and rows longer than that take the other branch).
bool CappedRow(const TensorOp& op, const ExpandOptions& options) {
  return options.symbolic_rows && options.fuse && !options.symbolic.empty() &&
         !options.symbolic[op.inputs[0]].empty() && options.symbolic[op.inputs[0]].back();
}

// A sum/amax/amin/prod over the last dim in one tile (or a capped symbolic
// row), in f32 storage.
bool IsRowReduction(const TensorGraph& g, const TensorOp& op,
                    const ExpandOptions& options) {
  if (!IsReduce(op) || op.info->kind == "argmax" || op.info->kind == "argmin") {
    return false;
  }
  const std::vector<int64_t>& space = OpSpace(g, op);
  const int rank = static_cast<int>(space.size());
  int64_t dim = 0;
  if (auto it = op.attrs.find("dim"); it != op.attrs.end()) {
    dim = std::get<int64_t>(it->second);
  }
  if (rank == 0 || (dim < 0 ? dim + rank : dim) != rank - 1) return false;
  return (ClampedTile(g, op).back() == space.back() || CappedRow(op, options)) &&
         UbStorageType(g.values[op.inputs[0]].dtype) == pto::v1::DT_FP32 &&
         UbStorageType(g.values[op.outputs[0]].dtype) == pto::v1::DT_FP32;
}

// `shape` with its last dim 1.
std::vector<int64_t> RowShape(std::vector<int64_t> shape) {
  if (!shape.empty()) shape.back() = 1;
  return shape;
}

// Whether a value of `shape` broadcasts over space S as one value per row.
bool IsRowShaped(const std::vector<int64_t>& shape,
                 const std::vector<int64_t>& space) {
  return !space.empty() && space.back() > 1 && shape.size() <= space.size() &&
         (shape.empty() || shape.back() == 1);
}

// Whether `ops` (program order) can run as one row-fused group over space
// S: every reduction is a row reduction, row values are f32-stored, a full
// result reads row values only through PtoHasRowsForm instructions, and no
// op reads a keepdim=false reduction's result (it would broadcast along
// the row, not down it).
bool RowGroupOk(const TensorGraph& g, const std::vector<int>& ops,
                const std::vector<int64_t>& space, const ExpandOptions& options) {
  std::vector<int> flat;  // results of keepdim=false reductions
  for (int i : ops) {
    const TensorOp& op = g.ops[i];
    for (int v : op.inputs) {
      if (std::find(flat.begin(), flat.end(), v) != flat.end()) return false;
    }
    if (IsReduce(op)) {
      if (!IsRowReduction(g, op, options) || OpSpace(g, op) != space) return false;
      if (!Keepdim(op)) flat.push_back(op.outputs[0]);
      continue;
    }
    const int v_out = op.outputs[0];
    const bool row_out = IsRowShaped(g.values[v_out].shape, space);
    if (row_out && UbStorageType(g.values[v_out].dtype) != pto::v1::DT_FP32) {
      return false;
    }
    for (int v : op.inputs) {
      if (!IsRowShaped(g.values[v].shape, space)) continue;
      if (UbStorageType(g.values[v].dtype) != pto::v1::DT_FP32) return false;
      if (!row_out && !PtoHasRowsForm(op.info->pto)) return false;
    }
  }
  return true;
}

// Where input `k` of concat `op` goes in its result: the sizes of the inputs
// before it along the concat dim.
std::vector<int64_t> ConcatOffsets(const TensorGraph& g, const TensorOp& op,
                                   size_t k) {
  const int rank = static_cast<int>(g.values[op.outputs[0]].shape.size());
  int64_t dim = std::get<int64_t>(op.attrs.at("dim"));
  if (dim < 0) dim += rank;
  std::vector<int64_t> offsets(rank, 0);
  for (size_t j = 0; j < k; ++j) offsets[dim] += g.values[op.inputs[j]].shape[dim];
  return offsets;
}

// The tile instructions of a group with UB tiles allocated by liveness: all
// loads first (an inout buffer is read before the group overwrites it), then
// the ops, then the stores. A tile is reused once its value is dead; a
// destination never shares a tile with a source of the same instruction
// (the tile functions take __restrict pointers). `stored(v)` says whether a
// result must reach GM (kept live to the end); `gm_of(v)` is its GM tensor.
struct GroupBody {
  std::vector<TileInstr> body;
  int num_tiles = 0;
  std::vector<pto::v1::DataType> tile_types;  // storage type per tile
  std::vector<bool> tile_rows;  // row tile (extent 1 in the last dim)

  int64_t Bytes(const std::vector<int64_t>& tile) const {
    const int64_t full = TileElements(tile);
    const int64_t row = tile.empty() || tile.back() == 0 ? full : full / tile.back();
    int64_t bytes = 0;
    for (int t = 0; t < num_tiles; ++t) {
      bytes += StorageBytes(tile_types[t]) * (tile_rows[t] ? row : full);
    }
    return bytes;
  }
};

// `space` is the group's iteration space; `rows`: the group holds row
// reductions (see RowGroupOk), so row values get row tiles.
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

// Splits the program into fusion groups (op index lists): runs of
// consecutive ops with the same space and clamped tile whose UB tiles fit.
// A concat joins the groups that compute its inputs (each stores its
// inputs' tiles into their regions: PlanGroup) where the input has the
// group's space and the tiles fit; `*concat_fused` (per op, per input)
// says which; a concat with other inputs (parameters, views, results of
// reductions) also gets a group of its own copying those. A matmul's group
// may hold the assemble or concat that alone reads its result (see
// cube_store): the cube stores into that region.
absl::StatusOr<std::vector<std::vector<int>>> FormGroups(
    const TensorGraph& g, const LayoutPlan& layout, const ExpandOptions& options,
    std::vector<std::vector<bool>>* concat_fused) {
  concat_fused->assign(g.ops.size(), {});
  // While a group is open, a result counts as stored when anything outside
  // the ops seen so far may need it: a parameter, or a later reader.
  std::vector<int> last_reader(g.values.size(), -1);
  std::vector<bool> is_param_out(g.values.size(), false);
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
    for (int v : g.ops[i].inputs) last_reader[v] = i;
  }
  for (const TensorParam& p : g.params) {
    if (p.out_value >= 0) is_param_out[p.out_value] = true;
  }
  auto peak_bytes = [&](const std::vector<int>& ops,
                        const std::vector<int64_t>& space,
                        const std::vector<int64_t>& tile, bool rows) {
    const int last = ops.back();
    return PlanGroup(
               g, layout, ops,
               [&](int v) { return is_param_out[v] || last_reader[v] > last; },
               [](int) { return -1; }, space, rows)
        .Bytes(tile);
  };

  // Dead ops (nothing reaches a parameter from them) are dropped.
  std::vector<bool> live_value(g.values.size(), false);
  for (const TensorParam& p : g.params) {
    if (p.out_value >= 0) live_value[p.out_value] = true;
  }
  std::vector<bool> live_op(g.ops.size(), false);
  for (int i = static_cast<int>(g.ops.size()) - 1; i >= 0; --i) {
    for (int v : g.ops[i].outputs) live_op[i] = live_op[i] || live_value[v];
    if (live_op[i]) {
      for (int v : g.ops[i].inputs) live_value[v] = true;
    }
  }

  std::vector<int> definer(g.values.size(), -1);
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
    for (int v : g.ops[i].outputs) definer[v] = i;
  }
  std::vector<std::vector<int>> groups;
  // A matmul's result read only by an assemble or a concat is stored by the
  // cube group straight into its region (the op joins the matmul's group):
  // not when the region's buffer is an operand's (its tasks would race), nor
  // when an assemble's dst is computed after the matmul (that write would
  // land after the cube's). Returns the matmul's group, or -1.
  std::vector<int> num_reads(g.values.size(), 0), param_of(g.values.size(), -1);
  for (const TensorOp& op : g.ops) {
    for (int v : op.inputs) ++num_reads[v];
  }
  for (size_t p = 0; p < g.params.size(); ++p) {
    for (int v : {g.params[p].in_value, g.params[p].out_value}) {
      if (v >= 0) param_of[layout.Owner(v)] = static_cast<int>(p);
    }
  }
  auto same_buffer = [&](int a, int b) {
    a = layout.Owner(a);
    b = layout.Owner(b);
    return a == b || (param_of[a] >= 0 && param_of[a] == param_of[b]);
  };
  auto cube_store = [&](int i, int v, int dst) {
    const int d = definer[v];
    if (!options.fuse || d < 0 || !IsMatmul(g.ops[d]) || num_reads[v] != 1 ||
        is_param_out[v] || (dst >= 0 && definer[dst] > d)) {
      return -1;
    }
    for (int x : g.ops[d].inputs) {
      if (same_buffer(layout.Root(x), g.ops[i].outputs[0])) return -1;
    }
    for (int gi = static_cast<int>(groups.size()) - 1; gi >= 0; --gi) {
      if (groups[gi].front() == d) return gi;
    }
    return -1;
  };
  std::vector<int64_t> space, tile;  // the open group's
  // Whether the last group is open to later ops (a reduction's or matmul's
  // own group is not; an empty space is a rank-0 group's, not "none").
  bool open = false;
  bool rows = false;  // the open group holds a row reduction
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
    // An alias (view, transpose, ...) is read through its root: no group.
    if (!live_op[i] || layout.IsAliasOp(i)) continue;
    const TensorOp& op = g.ops[i];
    if (IsConcat(op)) {
      std::vector<bool>& fused = (*concat_fused)[i];
      fused.assign(op.inputs.size(), false);
      for (size_t k = 0; k < op.inputs.size() && options.fuse; ++k) {
        const int v = op.inputs[k], d = definer[v];
        if (const int gi = cube_store(i, v, -1); gi >= 0) {
          groups[gi].push_back(i);
          fused[k] = true;
          continue;
        }
        if (layout.IsAlias(v) || layout.GmOnly(v) || d < 0 || IsReduce(g.ops[d]) ||
            IsMatmul(g.ops[d]) || IsConcat(g.ops[d]) || IsIndexOp(g.ops[d])) {
          continue;
        }
        int gi = static_cast<int>(groups.size()) - 1;
        while (gi >= 0 && std::find(groups[gi].begin(), groups[gi].end(), d) ==
                              groups[gi].end()) {
          --gi;
        }
        if (gi < 0) continue;
        std::vector<int>& grp = groups[gi];
        const TensorOp& front = g.ops[grp.front()];
        const bool has_rows = std::any_of(grp.begin(), grp.end(), [&](int j) {
          return IsReduce(g.ops[j]);
        });
        if (has_rows || OpSpace(g, front) != g.values[v].shape) continue;
        std::vector<int> candidate = grp;
        if (candidate.back() != i) candidate.push_back(i);
        if (peak_bytes(candidate, OpSpace(g, front), ClampedTile(g, front), false) >
            options.memory.ub_bytes) {
          continue;
        }
        grp = std::move(candidate);
        fused[k] = true;
      }
      if (std::find(fused.begin(), fused.end(), false) != fused.end()) {
        groups.push_back({i});  // copies the other inputs, see AppendConcat
        open = false;
        rows = false;
      }
      continue;
    }
    if (IsAssemble(op)) {
      if (const int gi = cube_store(i, op.inputs[0], op.inputs[1]); gi >= 0) {
        groups[gi].push_back(i);
        continue;
      }
    }
    if (IsIndexOp(op)) {  // its own group(s): AppendIndexing
      groups.push_back({i});
      open = false;
      rows = false;
      continue;
    }
    const std::vector<int64_t>& op_space = OpSpace(g, op);
    const std::vector<int64_t> op_tile = ClampedTile(g, op);
    const bool reduce = IsReduce(op);
    // (A row whose length is symbolic cannot be one tile: no row group.)
    const bool symbolic_row =
        reduce && !options.symbolic.empty() &&
        !options.symbolic[op.inputs[0]].empty() && options.symbolic[op.inputs[0]].back() &&
        !CappedRow(op, options);
    if ((reduce && !(options.fuse && IsRowReduction(g, op, options) && !symbolic_row)) ||
        IsMatmul(op)) {
      groups.push_back({i});  // its own group(s): AppendReduction/AppendMatmul
      open = false;
      rows = false;
      continue;
    }
    const int64_t alone = reduce ? 0 : peak_bytes({i}, op_space, op_tile, false);
    if (alone > options.memory.ub_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op #", i, " ", Quote(op.info->kind), ": vec_tile ",
          FormatDims(op.vec_tile), " needs ", alone,
          " bytes of UB tiles; a block may use ", options.memory.ub_bytes,
          " bytes (use a smaller tile)"));
    }
    // An op joins the open group over the group's whole space, or (row
    // groups) over one value per row of it.
    const bool whole = op_space == space && op_tile == tile;
    const bool per_row = rows && !reduce && op_space == RowShape(space) &&
                         op_tile == RowShape(tile);
    bool join = options.fuse && open && (whole || per_row) &&
                groups.back().size() < kMaxOpsPerGroup &&
                (options.fusion_class.empty() ||
                 options.fusion_class[i] == options.fusion_class[groups.back().front()]);
    // What op i reads from GM must be computed by an earlier group.
    for (int v : layout.GmReads(g, i)) {
      const int d = definer[v];
      if (join && d >= 0 &&
          std::find(groups.back().begin(), groups.back().end(), d) !=
              groups.back().end()) {
        join = false;
      }
    }
    std::vector<int> candidate;
    if (join) {
      candidate = groups.back();
      candidate.push_back(i);
      const bool row_group = rows || reduce;
      join = (!row_group || RowGroupOk(g, candidate, space, options)) &&
             peak_bytes(candidate, space, tile, row_group) <= options.memory.ub_bytes;
    }
    if (join) {
      groups.back().push_back(i);
      rows = rows || reduce;
    } else {
      groups.push_back({i});
      open = true;
      space = op_space;
      tile = op_tile;
      rows = reduce;
    }
  }
  return groups;
}


// The accumulating form of reduction `i` over the symbolic dim `d` of its
// input (see AppendReduction), with accumulator type `acc`; `in_gm` and
// `out_gm` are its input's and result's GM tensors, `out_index` the result's
// index from a space whose dim d has one slot.
absl::Status AppendAccumulation(const TensorGraph& g, int i, int d,
                                pto::v1::DataType acc, int in_gm, int out_gm,
                                const std::vector<GmIndex>& out_index,
                                int64_t ub_bytes, TileGraph* out) {
  const TensorOp& op = g.ops[i];
  const std::string& kind = op.info->kind;
  const std::string where = absl::StrCat("op #", i, " ", Quote(kind));
  const int v_in = op.inputs[0], v_out = op.outputs[0];
  const std::vector<int64_t>& space = OpSpace(g, op);
  const std::vector<int64_t> tile = ClampedTile(g, op);
  const int rank = static_cast<int>(space.size());
  const pto::v1::DataType in_dtype = g.values[v_in].dtype;
  const pto::v1::DataType out_dtype = g.values[v_out].dtype;
  const pto::v1::DataType in_storage = UbStorageType(in_dtype);
  auto unimplemented = [&](const std::string& why) {
    return absl::UnimplementedError(absl::StrCat(
        where, ": reduces dim ", d, ", whose extent is symbolic, ", why,
        " (sum, prod, amax, amin, argmax and argmin have one)"));
  };
  const bool arg = kind == "argmax" || kind == "argmin";
  PtoOpcode fold = PtoOpcode::kTSel;  // arg*: picked by flags (below)
  double identity = 0;
  // The identity is the worst value: -inf/+inf, or for an int64 accumulator
  // (INT32/INT64 data) INT64_MIN/INT64_MAX. A slot still at it after the
  // fold keeps index 0, which is right: every value equals it.
  const bool max_like = kind == "argmax" || kind == "amax";
  if (arg) {
    identity = max_like ? -HUGE_VAL : HUGE_VAL;
  } else if (kind == "sum") {
    fold = PtoOpcode::kTAdd;
  } else if (kind == "prod") {
    fold = PtoOpcode::kTMul;
    identity = 1;
  } else if (kind == "amax" || kind == "amin") {
    fold = max_like ? PtoOpcode::kTMax : PtoOpcode::kTMin;
    identity = max_like ? -HUGE_VAL : HUGE_VAL;
  } else {
    return unimplemented("and this reduction has no accumulating form");
  }
  std::vector<int64_t> slots = space, slot_tile = tile;
  slots[d] = 1;
  slot_tile[d] = 1;
  const int64_t acc_bytes = StorageBytes(acc), in_bytes = StorageBytes(in_storage);
  const bool convert = acc != in_storage;
  if (TileElements(tile) * (in_bytes + acc_bytes * (convert ? 4 : 3) + (arg ? 8 * 3 + 4 * 5 : 0)) >
      ub_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": tile ", FormatDims(tile), " needs more than ", ub_bytes,
        " bytes of UB; use a smaller vec_tile"));
  }
  auto access = [&](PtoOpcode opcode, int tile_index, int gm, pto::v1::DataType dtype,
                    std::vector<GmIndex> index, int reduce_dim) {
    TileInstr t = opcode == PtoOpcode::kTLoad
                      ? MakeInstr(opcode, tile_index, {}, dtype, reduce_dim)
                      : MakeInstr(opcode, -1, {tile_index}, dtype, reduce_dim);
    t.gm = gm;
    t.index = std::move(index);
    return t;
  };
  auto add_workspace = [&](pto::v1::DataType dtype) {
    GmBuffer ws;
    ws.dtype = dtype;
    ws.shape = slots;
    out->buffers.push_back(std::move(ws));
    out->gm.push_back({-1, static_cast<int>(out->buffers.size()) - 1});
    return static_cast<int>(out->gm.size()) - 1;
  };
  const int acc_gm = add_workspace(acc);
  const int index_gm = arg ? add_workspace(pto::v1::DT_INT64) : -1;  // arg*: its index

  // init: the identity into every slot.
  TileGroup init;
  init.ops = {i};
  init.space = slots;
  init.tile = slot_tile;
  init.ub_types = {acc};
  if (acc != pto::v1::DT_INT64 || std::isfinite(identity)) {
    TileInstr fill = MakeInstr(PtoOpcode::kTFill, 0, {}, acc, -1);
    fill.scalars = {identity};
    init.body.push_back(std::move(fill));
  } else {
    // An int64 max/min starts from INT64_MIN/INT64_MAX. Fill's scalar is a
    // double, which holds INT64_MIN (-2^63) exactly but not INT64_MAX: that
    // one is -1 - INT64_MIN in tiles 1 and 2, an int64 TSUB (no overflow).
    TileInstr lowest = MakeInstr(PtoOpcode::kTFill, max_like ? 0 : 2, {}, acc, -1);
    lowest.scalars = {-0x1p63};
    init.body.push_back(std::move(lowest));
    if (!max_like) {
      TileInstr minus_one = MakeInstr(PtoOpcode::kTFill, 1, {}, acc, -1);
      minus_one.scalars = {-1};
      init.body.push_back(std::move(minus_one));
      init.body.push_back(MakeInstr(PtoOpcode::kTSub, 0, {1, 2}, acc, -1));
      init.ub_types.insert(init.ub_types.end(), {acc, acc});
    }
  }
  init.body.push_back(access(PtoOpcode::kTStore, 0, acc_gm, acc, AlignedIndex(rank, rank), -1));
  if (arg) {
    const int zero_tile = static_cast<int>(init.ub_types.size());
    TileInstr zero = MakeInstr(PtoOpcode::kTFill, zero_tile, {}, pto::v1::DT_INT64, -1);
    zero.scalars = {0};
    init.body.push_back(std::move(zero));
    init.body.push_back(access(PtoOpcode::kTStore, zero_tile, index_gm, pto::v1::DT_INT64,
                               AlignedIndex(rank, rank), -1));
    init.ub_types.push_back(pto::v1::DT_INT64);
  }
  init.num_ub_tiles = static_cast<int>(init.ub_types.size());
  out->groups.push_back(std::move(init));

  // accumulate: tiles 0 the input, 1 its reduction, 2 the slot, 3 the sum
  // of both, 4 the input converted to acc (integer sums).
  TileGroup fold_group;
  fold_group.ops = {i};
  fold_group.space = space;
  fold_group.tile = tile;
  fold_group.serial_dim = d;
  std::vector<GmIndex> slot = AlignedIndex(rank, rank);
  slot[d] = {-1, 1};  // every tile along d folds into slot 0
  fold_group.body.push_back(access(PtoOpcode::kTLoad, 0, in_gm, in_dtype,
                                   AlignedIndex(static_cast<int>(g.values[v_in].shape.size()),
                                                rank),
                                   -1));
  fold_group.ub_types = {in_storage, acc, acc, acc};
  int src = 0;
  if (convert) {
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTCvt, 4, {0}, acc, -1));
    fold_group.ub_types.push_back(acc);
    src = 4;
  }
  fold_group.body.push_back(MakeInstr(op.info->pto, 1, {src}, acc, d));
  fold_group.body.push_back(access(PtoOpcode::kTLoad, 2, acc_gm, acc, slot, d));
  if (!arg) {
    fold_group.body.push_back(MakeInstr(fold, 3, {2, 1}, acc, -1));
  } else {
    // The tile's value (1) and first index (5) replace the slot's (2, 6)
    // where the value is better, or NaN where the slot's is not (torch:
    // the first NaN wins); ties keep the earlier tile's index.
    const pto::v1::DataType i64 = pto::v1::DT_INT64, f32 = pto::v1::DT_FP32,
                            flag = pto::v1::DT_BOOL;
    const int base = static_cast<int>(fold_group.ub_types.size());
    const int index = base, slot_index = base + 1, better = base + 2, nan = base + 3,
              slot_ok = base + 4, nan_first = base + 5, take = base + 6, new_index = base + 7;
    fold_group.ub_types.insert(fold_group.ub_types.end(),
                               {i64, i64, f32, f32, f32, f32, f32, i64});
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTArgFirst, index, {0, 1}, i64, d));
    fold_group.body.push_back(access(PtoOpcode::kTLoad, slot_index, index_gm, i64, slot, d));
    fold_group.body.push_back(MakeInstr(kind == "argmax" ? PtoOpcode::kTCmpGt : PtoOpcode::kTCmpLt,
                                    better, {1, 2}, flag, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTCmpNe, nan, {1, 1}, flag, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTCmpEq, slot_ok, {2, 2}, flag, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTMul, nan_first, {nan, slot_ok}, f32, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTMax, take, {better, nan_first}, f32, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTSel, 3, {take, 1, 2}, acc, -1));
    fold_group.body.push_back(MakeInstr(PtoOpcode::kTSel, new_index, {take, index, slot_index}, i64, -1));
    fold_group.body.push_back(access(PtoOpcode::kTStore, new_index, index_gm, i64, slot, d));
  }
  fold_group.body.push_back(access(PtoOpcode::kTStore, 3, acc_gm, acc, slot, d));
  fold_group.num_ub_tiles = static_cast<int>(fold_group.ub_types.size());
  out->groups.push_back(std::move(fold_group));

  // finish: the slot reduced once more (one element) into the result's dtype.
  TileGroup finish;
  finish.ops = {i};
  finish.space = slots;
  finish.tile = slot_tile;
  if (arg) {  // the index as it is
    finish.body.push_back(access(PtoOpcode::kTLoad, 0, index_gm, pto::v1::DT_INT64,
                                 AlignedIndex(rank, rank), -1));
    finish.body.push_back(access(PtoOpcode::kTStore, 0, out_gm, out_dtype, out_index, d));
    finish.ub_types = {pto::v1::DT_INT64};
  } else {
    finish.body.push_back(access(PtoOpcode::kTLoad, 0, acc_gm, acc, AlignedIndex(rank, rank), -1));
    finish.body.push_back(MakeInstr(op.info->pto, 1, {0}, out_dtype, d));
    finish.body.push_back(access(PtoOpcode::kTStore, 1, out_gm, out_dtype, out_index, d));
    finish.ub_types = {acc, acc};
  }
  finish.num_ub_tiles = static_cast<int>(finish.ub_types.size());
  out->groups.push_back(std::move(finish));
  return absl::OkStatus();
}

// A reduction of op `i` over dim d of its input (space S, tile T):
//   partial: per tile of S, reduce along d (TRED*), store one slot per tile
//            into workspace(s) of shape S with dim d = n (tiles along d);
//            argmax/argmin also store the global index (TARGFIRST);
//   combine: per tile of that workspace with all n slots along d, reduce
//            again (TARGSEL picks the index) and store the result.
// With n == 1 the partial step stores the result directly. Partial values
// are of the accumulator's type (see below).
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
absl::Status AppendReduction(const TensorGraph& g, int i,
                             const std::vector<int>& gm_of_value,
                             const ExpandOptions& options, TileGraph* out) {
  const TensorOp& op = g.ops[i];
  const std::vector<int64_t>& space = OpSpace(g, op);
  const std::vector<int64_t> tile = ClampedTile(g, op);
  const int rank = static_cast<int>(space.size());
  int64_t dim = 0;
  if (auto it = op.attrs.find("dim"); it != op.attrs.end()) {
    dim = std::get<int64_t>(it->second);
  }
  const int d = static_cast<int>(dim < 0 ? dim + rank : dim);
  bool keepdim = false;
  if (auto it = op.attrs.find("keepdim"); it != op.attrs.end()) {
    keepdim = std::get<bool>(it->second);
  }
  const bool arg = op.info->kind == "argmax" || op.info->kind == "argmin";
  const int v_in = op.inputs[0], v_out = op.outputs[0];
  const pto::v1::DataType out_dtype = g.values[v_out].dtype;
  const int64_t n = (space[d] + tile[d] - 1) / tile[d];

  // The output's index from the final step's space (dim d has one slot).
  std::vector<GmIndex> out_index;
  for (int s = 0; s < rank; ++s) {
    if (s == d) {
      if (keepdim) out_index.push_back({-1, 1});
    } else {
      out_index.push_back({s, 1});
    }
  }
  // A step's UB need: its whole tiles (the loaded input, a converted copy)
  // of `full_bytes` per element of t, and its result tiles (the reduced
  // values, their indices), which hold t's elements over t[d], of
  // `reduced_bytes` per element.
  auto ub_need = [&](const std::vector<int64_t>& t, int64_t full_bytes, int64_t reduced_bytes) {
    return TileElements(t) * full_bytes + TileElements(t) / t[d] * reduced_bytes;
  };
  auto check_ub = [&](const std::vector<int64_t>& t, int64_t full_bytes, int64_t reduced_bytes) {
    const int64_t bytes = ub_need(t, full_bytes, reduced_bytes);
    if (bytes > options.memory.ub_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op #", i, " ", Quote(op.info->kind), ": tile ", FormatDims(t),
          " needs ", bytes, " bytes of UB; a block may use ",
          options.memory.ub_bytes, " bytes (use a smaller vec_tile, or a larger one "
          "along the reduced dim so fewer partial results are combined)"));
    }
    return absl::OkStatus();
  };
  auto add_workspace = [&](pto::v1::DataType dtype,
                           const std::vector<int64_t>& shape) {
    GmBuffer buf;
    buf.dtype = dtype;
    buf.shape = shape;
    out->buffers.push_back(std::move(buf));
    out->gm.push_back({-1, static_cast<int>(out->buffers.size()) - 1});
    return static_cast<int>(out->gm.size()) - 1;
  };
  auto load = [&](int dst, int gm, pto::v1::DataType dtype, int buffer_rank) {
    TileInstr t = MakeInstr(PtoOpcode::kTLoad, dst, {}, dtype, -1);
    t.gm = gm;
    t.index = AlignedIndex(buffer_rank, rank);
    return t;
  };
  auto store = [&](int src, int gm, pto::v1::DataType dtype,
                   std::vector<GmIndex> index) {
    TileInstr t = MakeInstr(PtoOpcode::kTStore, -1, {src}, dtype, d);
    t.gm = gm;
    t.index = std::move(index);
    return t;
  };
  const pto::v1::DataType in_dtype = g.values[v_in].dtype;
  const pto::v1::DataType i64 = pto::v1::DT_INT64;
  // Partial results are of the accumulator's type: f32 for float inputs
  // (FP16/BF16 sums do not round per tile) and for amax/amin/arg* of the
  // small integer types and BOOL (f32 holds them exactly), int64 for INT32
  // and INT64 inputs and for every integer sum/prod (the input converted
  // first; INT64 results wrap like torch's), double for DOUBLE.
  const pto::v1::DataType in_storage = UbStorageType(in_dtype);
  const pto::v1::DataType acc = out_dtype == i64 && !arg ? i64 : in_storage;
  const int64_t acc_bytes = StorageBytes(acc), in_bytes = StorageBytes(in_storage);
  const bool convert = acc != in_storage;

  if (!options.symbolic.empty() && options.symbolic[v_in][d]) {
    return AppendAccumulation(g, i, d, acc, gm_of_value[v_in], gm_of_value[v_out],
                              out_index, options.memory.ub_bytes, out);
  }

  // Partial step: tile 0 the input, 1 the reduced values, 2 the indices
  // (arg*) or the input converted to acc (integer sum/prod of a type that
  // f32 tiles hold; never both).
  TileGroup partial;
  partial.ops = {i};
  partial.space = space;
  partial.tile = tile;
  if (absl::Status s = check_ub(tile, in_bytes + (convert ? acc_bytes : 0),
                                acc_bytes + (arg ? 8 : 0));
      !s.ok()) {
    return s;
  }
  const pto::v1::DataType red_dtype = n == 1 && !arg ? out_dtype : acc;
  partial.body.push_back(load(0, gm_of_value[v_in], in_dtype,
                              static_cast<int>(g.values[v_in].shape.size())));
  partial.ub_types = {in_storage, acc};
  int src = 0;
  if (convert) {
    partial.ub_types.push_back(acc);
    partial.body.push_back(MakeInstr(PtoOpcode::kTCvt, 2, {0}, acc, -1));
    src = 2;
  }
  partial.body.push_back(MakeInstr(op.info->pto, 1, {src}, red_dtype, d));
  int value_ws = -1, index_ws = -1;
  std::vector<int64_t> ws_shape = space;
  ws_shape[d] = n;
  if (arg) {
    partial.body.push_back(MakeInstr(PtoOpcode::kTArgFirst, 2, {0, 1}, i64, d));
    partial.ub_types.push_back(i64);
  }
  if (n == 1) {
    partial.body.push_back(store(arg ? 2 : 1, gm_of_value[v_out], out_dtype, out_index));
  } else {
    std::vector<GmIndex> slot = AlignedIndex(rank, rank);
    slot[d].div = tile[d];
    value_ws = add_workspace(acc, ws_shape);
    partial.body.push_back(store(1, value_ws, acc, slot));
    if (arg) {
      index_ws = add_workspace(i64, ws_shape);
      partial.body.push_back(store(2, index_ws, i64, slot));
    }
  }
  partial.num_ub_tiles = static_cast<int>(partial.ub_types.size());
  out->groups.push_back(std::move(partial));
  if (n == 1) return absl::OkStatus();

  // Combine step.
  TileGroup combine;
  combine.ops = {i};
  combine.space = ws_shape;
  combine.tile = tile;
  combine.tile[d] = n;
  // Each result combines its own n slots, so the combine's tile need not
  // match the partials' along the other dims: where all n slots of the
  // partials' tile do not fit UB, those dims shrink (halved, leading dims
  // first) until they do. The results are the same; only the combine's work
  // is split finer.
  // Loaded: the partial values (and indices); results: the combined ones.
  const int64_t combine_full = acc_bytes + (arg ? 8 : 0);
  const int64_t combine_reduced = arg ? acc_bytes + 8 : acc_bytes;
  for (int s = 0; s < rank; ++s) {
    while (s != d && combine.tile[s] > 1 &&
           ub_need(combine.tile, combine_full, combine_reduced) > options.memory.ub_bytes) {
      combine.tile[s] = (combine.tile[s] + 1) / 2;
    }
  }
  if (absl::Status s = check_ub(combine.tile, combine_full, combine_reduced); !s.ok()) return s;
  combine.body.push_back(load(0, value_ws, acc, rank));
  combine.body.push_back(MakeInstr(op.info->pto, 1, {0}, arg ? acc : out_dtype, d));
  combine.ub_types = {acc, acc};
  if (arg) {
    combine.body.push_back(load(2, index_ws, i64, rank));
    combine.body.push_back(MakeInstr(PtoOpcode::kTArgSel, 3, {0, 2, 1}, i64, d));
    combine.ub_types.push_back(i64);
    combine.ub_types.push_back(i64);
  }
  combine.body.push_back(store(arg ? 3 : 1, gm_of_value[v_out], out_dtype, out_index));
  combine.num_ub_tiles = static_cast<int>(combine.ub_types.size());
  out->groups.push_back(std::move(combine));
  return absl::OkStatus();
}

// A reduction of an alias (x.T.sum(-1)) loads the alias's root through its
// index: AppendReduction addresses its input as a GM tensor of its own.
void ReadAliasInput(const TensorGraph& g, const LayoutPlan& layout, int i,
                    const std::vector<int>& gm_of_value, size_t first_new,
                    TileGraph* out) {
  const int v = g.ops[i].inputs[0];
  if (!layout.IsAlias(v)) return;
  for (size_t k = first_new; k < out->groups.size(); ++k) {  // the partial or accumulate step
    TileGroup& partial = out->groups[k];
    for (TileInstr& in : partial.body) {
      if (in.op == PtoOpcode::kTLoad && in.gm < 0) {
        in.gm = gm_of_value[layout.Root(v)];
        in.index = layout.LoadIndex(g, v, static_cast<int>(partial.space.size()));
        in.view_shape = layout.ViewShape(v);
      }
    }
  }
}

// concat(x0, x1, ...) along dim d: per input not `fused` (stored by the
// group computing it), a group over its space that loads it and stores it
// at its offset along d in the result.
absl::Status AppendConcat(const TensorGraph& g, const LayoutPlan& layout, int i,
                          const std::vector<bool>& fused,
                          const std::vector<int>& gm_of_value, int64_t ub_bytes,
                          TileGraph* out) {
  const TensorOp& op = g.ops[i];
  const int v_out = op.outputs[0];
  const int rank = static_cast<int>(g.values[v_out].shape.size());
  int64_t dim = std::get<int64_t>(op.attrs.at("dim"));
  if (dim < 0) dim += rank;
  int64_t at = 0;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const int v = op.inputs[k];
    if (fused[k]) {  // stored by the group computing it
      at += g.values[v].shape[dim];
      continue;
    }
    TileGroup grp;
    grp.ops = {i};
    grp.space = g.values[v].shape;
    grp.tile = op.vec_tile;
    for (int d = 0; d < rank; ++d) grp.tile[d] = std::min(grp.tile[d], grp.space[d]);
    const pto::v1::DataType dtype = g.values[v].dtype;
    const pto::v1::DataType storage = UbStorageType(dtype);
    const int64_t bytes = TileElements(grp.tile) * StorageBytes(storage);
    if (bytes > ub_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op #", i, " \"concat\": vec_tile ", FormatDims(op.vec_tile), " needs ",
          bytes, " bytes of UB tiles; a block may use ", ub_bytes,
          " bytes (use a smaller tile)"));
    }
    TileInstr load;
    load.op = PtoOpcode::kTLoad;
    load.dst = 0;
    load.gm = gm_of_value[layout.Root(v)];
    load.dtype = dtype;
    load.index = layout.LoadIndex(g, v, rank);
    load.view_shape = layout.ViewShape(v);
    TileInstr store;
    store.op = PtoOpcode::kTStore;
    store.gm = gm_of_value[v_out];
    store.dtype = dtype;
    std::vector<int64_t> offsets(rank, 0);
    offsets[dim] = at;
    store.index = OffsetIndex(offsets);
    store.srcs = {0};
    grp.body = {std::move(load), std::move(store)};
    grp.num_ub_tiles = 1;
    grp.ub_types = {storage};
    out->groups.push_back(std::move(grp));
    at += g.values[v].shape[dim];
  }
  return absl::OkStatus();
}

// Owners (LayoutPlan::Owner) whose values include a parameter's take that
// parameter's buffer for all of them; an owner with a value in GM puts them
// all in GM. An IN parameter's buffer is never written.
absl::Status ShareBuffers(const TensorGraph& g, const LayoutPlan& layout,
                          const std::vector<GmBuffer>& buffers,
                          std::vector<int>* buffer_of_value,
                          std::vector<bool>* crosses) {
  const int n = static_cast<int>(g.values.size());
  std::vector<bool> owner_in_gm(n, false);
  std::vector<int> written(n, -1);  // owner -> the op writing into it
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (IsAssemble(g.ops[i])) written[layout.Owner(g.ops[i].outputs[0])] = static_cast<int>(i);
  }
  for (int v = 0; v < n; ++v) {
    const int o = layout.Owner(v);
    if (o == v) continue;
    owner_in_gm[o] = true;
    const int b = (*buffer_of_value)[v], ob = (*buffer_of_value)[o];
    if (b >= 0 && ob >= 0 && b != ob) {
      return absl::UnimplementedError(absl::StrCat(
          "op #", written[o], " \"assemble\": writes into param ",
          Quote(buffers[ob].name), "'s data as the result for param ",
          Quote(buffers[b].name), "; assemble into a clone of it"));
    }
    if (b >= 0) (*buffer_of_value)[o] = b;
  }
  for (int v = 0; v < n; ++v) {
    const int o = layout.Owner(v);
    if (!owner_in_gm[o]) continue;
    (*crosses)[v] = true;
    const int b = (*buffer_of_value)[o];
    if (b >= 0 && buffers[b].role == pto::v1::PARAM_ROLE_IN) {
      return absl::UnimplementedError(absl::StrCat(
          "op #", written[o], " \"assemble\": its dst is param ",
          Quote(buffers[b].name), " (in), whose data a kernel does not "
          "overwrite; assemble into a clone of it"));
    }
  }
  return absl::OkStatus();
}

// A matmul operand `v`: read in place from its root's GM tensor through the
// alias's index (AppendMatmul checks that the cube can stride it).
MatmulOperand MatmulOperandOf(const TensorGraph& g, const LayoutPlan& layout,
                              int v) {
  return MatmulOperand{v, layout.Root(v), layout.RootDims(g, v), layout.ViewShape(v)};
}

// A class of ops with one space and one clamped tile: the ops that would
// fuse with a row reduction of that space (WidenRows, CapSymbolicRows).
using RowClass = std::pair<std::vector<int64_t>, std::vector<int64_t>>;

// `g` with every op of a class in `last_dims` tiled by the class's tile with
// its last dim set to the class's value.
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

// Whether reduction `op` reduces the last dim of its space with a tile of
// the space's rank (WidenRows, CapSymbolicRows).
bool ReducesLastDim(const TensorGraph& g, const TensorOp& op) {
  const int rank = static_cast<int>(OpSpace(g, op).size());
  if (rank == 0 || static_cast<int>(op.vec_tile.size()) != rank) return false;
  int64_t dim = 0;
  if (auto it = op.attrs.find("dim"); it != op.attrs.end()) {
    dim = std::get<int64_t>(it->second);
  }
  return (dim < 0 ? dim + rank : dim) == rank - 1;
}

// Row widening (ExpandOptions::widen_rows): the tiles of `g` to lower with,
// or nullopt when none changes. Each reduction over a static last dim that
// its clamped tile T splits (T.back() < extent) names a class (its space S,
// T); every op of that class (the same space and clamped tile: the ops
// that would fuse with it) gets T with the last dim widened to S's extent,
// when that tile has at most MaxWidenedTileElements elements. Ops of other
// spaces (the [..., 1] row values) keep theirs: a row tile already spans
// its one-element last dim.
std::optional<TensorGraph> WidenRows(const TensorGraph& g,
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

// Rows over a symbolic last dim (ExpandOptions::symbolic_rows): the graph
// with the tile of each sum/amax/amin/prod over a symbolic last dim, and of
// every op with the same space and tile (the ops that would fuse with it),
// widened along the last dim to SymbolicRowCap, and the rows' caps; or
// nullopt when there is no such reduction. (At the probe sizes a symbolic
// row is longer than its cap, lower_symbolic.h: the group's tiles along it
// are the cap's, and the generic function runs the row of n <= cap.)
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
    const int rank = static_cast<int>(space.size());
    const std::vector<int64_t> tile = ClampedTile(g, op);
    const int64_t cap = SymbolicRowCap(tile, options.memory.ub_bytes);
    if (cap >= space.back()) continue;  // (probes are longer than any cap)
    widened[{space, tile}] = cap;
    caps->push_back({op.inputs[0], cap});
  }
  if (widened.empty()) return std::nullopt;
  return WithRowTiles(g, widened);
}

// One Tile Graph holding both lowerings of a graph with capped symbolic
// rows: `rows`' groups (branch 1) run when every row is within its cap,
// `rest`'s (branch 2) otherwise. Parameters' buffers (the first ones, in
// order, in both) are shared; each keeps its own workspaces.
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

absl::StatusOr<TileGraph> ExpandTiles(const TensorGraph& g,
                                      const ExpandOptions& options) {
  absl::StatusOr<LayoutPlan> layout = LayoutPlan::Make(g);
  if (!layout.ok()) return layout.status();
  std::vector<std::vector<bool>> concat_fused;
  absl::StatusOr<std::vector<std::vector<int>>> groups =
      FormGroups(g, *layout, options, &concat_fused);
  if (!groups.ok()) return groups.status();

  // Which group defines each value (-1: a parameter's incoming data, or a
  // dead op's result).
  const int num_values = static_cast<int>(g.values.size());
  std::vector<int> group_of_op(g.ops.size(), -1);  // -1: dead
  std::vector<int> def_group(num_values, -1);
  for (size_t k = 0; k < groups->size(); ++k) {
    for (int i : (*groups)[k]) {
      group_of_op[i] = static_cast<int>(k);
      for (int v : g.ops[i].outputs) def_group[v] = static_cast<int>(k);
    }
  }

  // A value lives in GM when it is bound to a parameter or crosses groups.
  TileGraph out;
  out.name = g.name;
  std::vector<int> buffer_of_value(num_values, -1);
  for (size_t p = 0; p < g.params.size(); ++p) {
    const TensorParam& param = g.params[p];
    const int any = param.in_value >= 0 ? param.in_value : param.out_value;
    GmBuffer buf;
    buf.param = static_cast<int>(p);
    buf.role = param.role;
    buf.dtype = g.values[any].dtype;
    buf.shape = g.values[any].shape;
    buf.name = param.name;
    out.buffers.push_back(std::move(buf));
    if (param.in_value >= 0) buffer_of_value[param.in_value] = static_cast<int>(p);
    if (param.out_value >= 0) buffer_of_value[param.out_value] = static_cast<int>(p);
  }
  std::vector<bool> crosses(num_values, false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (group_of_op[i] < 0) continue;
    if (IsConcat(g.ops[i])) {  // the inputs it copies are read from GM
      for (size_t k = 0; k < g.ops[i].inputs.size(); ++k) {
        if (!concat_fused[i][k]) crosses[layout->Root(g.ops[i].inputs[k])] = true;
      }
      crosses[g.ops[i].outputs[0]] = true;
      continue;
    }
    for (int v : g.ops[i].inputs) {
      if (def_group[v] != group_of_op[i]) crosses[layout->Root(v)] = true;
    }
    if (IsIndexOp(g.ops[i])) {  // it addresses its result in GM
      for (int v : g.ops[i].outputs) crosses[v] = true;
    }
    for (int v : layout->GmReads(g, static_cast<int>(i))) crosses[v] = true;
    for (int v : g.ops[i].outputs) crosses[v] = crosses[v] || layout->GmOnly(v);
  }
  // An assemble's result shares its dst's buffer: one buffer per owner,
  // a parameter's when one of them is bound to one.
  if (absl::Status s = ShareBuffers(g, *layout, out.buffers, &buffer_of_value,
                                    &crosses);
      !s.ok()) {
    return s;
  }
  std::vector<int> gm_of_value(num_values, -1);
  for (int v = 0; v < num_values; ++v) {
    if (layout->IsAlias(v)) continue;
    const int owner = layout->Owner(v);
    if (buffer_of_value[v] < 0 && owner != v && buffer_of_value[owner] >= 0) {
      buffer_of_value[v] = buffer_of_value[owner];
    }
    if (buffer_of_value[v] < 0 && crosses[v]) {
      GmBuffer buf;
      buf.dtype = g.values[v].dtype;
      buf.shape = g.values[v].shape;
      buffer_of_value[v] = static_cast<int>(out.buffers.size());
      out.buffers.push_back(std::move(buf));
      if (buffer_of_value[owner] < 0) buffer_of_value[owner] = buffer_of_value[v];
    }
    if (buffer_of_value[v] >= 0) {
      gm_of_value[v] = static_cast<int>(out.gm.size());
      out.gm.push_back({v, buffer_of_value[v]});
    }
  }

  for (const std::vector<int>& ops : *groups) {
    if (IsMatmul(g.ops[ops.front()])) {
      const std::vector<int>& in = g.ops[ops.front()].inputs;
      MatmulStore into;  // an assemble's or concat's region (FormGroups)
      if (ops.size() > 1) {
        const TensorOp& user = g.ops[ops[1]];
        const int v = g.ops[ops.front()].outputs[0];
        into.gm = gm_of_value[user.outputs[0]];
        into.index = IsAssemble(user)
                         ? OffsetIndex(std::get<std::vector<int64_t>>(user.attrs.at("offsets")))
                         : OffsetIndex(ConcatOffsets(
                               g, user,
                               std::find(user.inputs.begin(), user.inputs.end(), v) -
                                   user.inputs.begin()));
      }
      if (absl::Status s = AppendMatmul(g, ops.front(), MatmulOperandOf(g, *layout, in[0]),
                                        MatmulOperandOf(g, *layout, in[1]),
                                        gm_of_value, options.memory, &out,
                                        ops.size() > 1 ? &into : nullptr);
          !s.ok()) {
        return s;
      }
      out.groups.back().ops = ops;
      continue;
    }
    if (ops.size() == 1 && IsReduce(g.ops[ops.front()])) {
      const size_t first_new = out.groups.size();
      if (absl::Status s = AppendReduction(g, ops.front(), gm_of_value, options, &out);
          !s.ok()) {
        return s;
      }
      ReadAliasInput(g, *layout, ops.front(), gm_of_value, first_new, &out);
      continue;
    }
    if (IsIndexOp(g.ops[ops.front()])) {
      if (absl::Status s = AppendIndexing(g, *layout, ops.front(), gm_of_value,
                                          options.memory.ub_bytes, &out);
          !s.ok()) {
        return s;
      }
      continue;
    }
    if (IsConcat(g.ops[ops.front()])) {
      if (absl::Status s = AppendConcat(g, *layout, ops.front(),
                                        concat_fused[ops.front()], gm_of_value,
                                        options.memory.ub_bytes, &out);
          !s.ok()) {
        return s;
      }
      continue;
    }
    TileGroup grp;
    grp.ops = ops;
    const TensorOp& first = g.ops[ops.front()];
    grp.space = OpSpace(g, first);
    grp.tile = ClampedTile(g, first);
    const bool rows = std::any_of(ops.begin(), ops.end(),
                                  [&](int i) { return IsReduce(g.ops[i]); });
    GroupBody body = PlanGroup(
        g, *layout, ops, [&](int v) { return gm_of_value[v] >= 0; },
        [&](int v) { return gm_of_value[v]; }, grp.space, rows);
    grp.body = std::move(body.body);
    grp.num_ub_tiles = body.num_tiles;
    grp.ub_types = std::move(body.tile_types);
    if (rows) grp.ub_rows = std::move(body.tile_rows);
    if (absl::Status st = CheckGroupRegions(out, grp, g); !st.ok()) return st;
    out.groups.push_back(std::move(grp));
  }
  return out;
}

}  // namespace

int64_t SymbolicRowCap(const std::vector<int64_t>& tile, int64_t ub_bytes) {
  int64_t others = 1;
  for (size_t d = 0; d + 1 < tile.size(); ++d) others *= std::max<int64_t>(tile[d], 1);
  int64_t cap = 1;
  while (cap * 2 * others <= MaxSymbolicRowTileElements(ub_bytes)) cap *= 2;
  return tile.empty() ? cap : std::max(cap, tile.back());
}

absl::StatusOr<TileGraph> ExpandToTiles(const TensorGraph& g,
                                        const ExpandOptions& options) {
  if (options.symbolic_rows) {
    ExpandOptions other = options;
    other.symbolic_rows = false;
    std::vector<RowCap> caps;
    std::optional<TensorGraph> capped = CapSymbolicRows(g, options, &caps);
    if (!capped) return ExpandToTiles(g, other);
    std::optional<TensorGraph> wide =
        options.widen_rows ? WidenRows(*capped, options) : std::nullopt;
    absl::StatusOr<TileGraph> rows = ExpandTiles(wide ? *wide : *capped, options);
    absl::StatusOr<TileGraph> rest = ExpandToTiles(g, other);
    if (!rest.ok()) return rest.status();
    if (!rows.ok()) return rest;  // (e.g. an op's capped tile alone exceeds UB)
    // Only worth a branch when a row group formed over a capped row.
    bool formed = false;
    for (const TileGroup& grp : rows->groups) {
      for (const TileInstr& in : grp.body) {
        formed = formed || (!grp.ub_rows.empty() && in.reduce_dim >= 0 && in.dst >= 0 &&
                            in.dst < static_cast<int>(grp.ub_rows.size()) &&
                            grp.ub_rows[in.dst] && grp.tile.back() < grp.space.back());
      }
    }
    if (!formed) return rest;
    return MergeBranches(*std::move(rows), *std::move(rest), std::move(caps));
  }
  if (options.fuse && options.widen_rows) {
    if (std::optional<TensorGraph> wide = WidenRows(g, options)) {
      return ExpandTiles(*wide, options);
    }
  }
  return ExpandTiles(g, options);
}

}  // namespace pto::compiler
