#include "compiler/lower/fuse_groups.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/lower/allocate_ub.h"
#include "compiler/lower/expand_indexing.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

// Longest fused run: keeps block functions (and the quadratic UB planning
// while a group grows) small.
constexpr size_t kMaxOpsPerGroup = 256;

// `shape` with its last dim 1.
std::vector<int64_t> RowShape(std::vector<int64_t> shape) {
  if (!shape.empty()) shape.back() = 1;
  return shape;
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

// Per op: whether anything reaches an out/inout parameter from it (dead
// ops are dropped).
std::vector<bool> LiveOps(const TensorGraph& g) {
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
  return live_op;
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

  const std::vector<bool> live_op = LiveOps(g);

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

}  // namespace

absl::Status FuseGroups(TilingState* s) {
  absl::StatusOr<std::vector<std::vector<int>>> groups =
      FormGroups(s->graph(), *s->layout, s->options, &s->concat_fused);
  if (!groups.ok()) return groups.status();
  s->groups = *std::move(groups);
  return absl::OkStatus();
}

}  // namespace pto::compiler
