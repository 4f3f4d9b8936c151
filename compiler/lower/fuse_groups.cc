#include "compiler/lower/fuse_groups.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/lower/allocate_ub.h"
#include "compiler/lower/expand_indexing.h"
#include "compiler/lower/expand_scan.h"
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

// What GroupFormer reads about each value of the graph, computed once.
struct ValueFacts {
  std::vector<int> definer;       // the op writing it, or -1
  std::vector<int> last_reader;   // the last op reading it, or -1
  std::vector<int> num_reads;     // how many op inputs read it
  std::vector<bool> is_param_out; // an out/inout parameter's final value
  std::vector<int> param_of;      // per layout owner: its parameter, or -1
};

ValueFacts FactsOf(const TensorGraph& g, const LayoutPlan& layout) {
  ValueFacts f;
  f.definer.assign(g.values.size(), -1);
  f.last_reader.assign(g.values.size(), -1);
  f.num_reads.assign(g.values.size(), 0);
  f.is_param_out.assign(g.values.size(), false);
  f.param_of.assign(g.values.size(), -1);
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
    for (int v : g.ops[i].inputs) {
      f.last_reader[v] = i;
      ++f.num_reads[v];
    }
    for (int v : g.ops[i].outputs) f.definer[v] = i;
  }
  for (const TensorParam& p : g.params) {
    if (p.out_value >= 0) f.is_param_out[p.out_value] = true;
  }
  for (size_t p = 0; p < g.params.size(); ++p) {
    for (int v : {g.params[p].in_value, g.params[p].out_value}) {
      if (v >= 0) f.param_of[layout.Owner(v)] = static_cast<int>(p);
    }
  }
  return f;
}

// Splits the program into fusion groups (op index lists): runs of
// consecutive ops with the same space and clamped tile whose UB tiles fit.
// A concat joins the groups that compute its inputs (each stores its
// inputs' tiles into their regions: PlanGroup) where the input has the
// group's space and the tiles fit; `concat_fused` (per op, per input) says
// which; a concat with other inputs (parameters, views, results of
// reductions) also gets a group of its own copying those. A matmul's group
// may hold the assemble or concat that alone reads its result (CubeStore):
// the cube stores into that region.
class GroupFormer {
 public:
  GroupFormer(const TensorGraph& g, const LayoutPlan& layout,
              const ExpandOptions& options,
              std::vector<std::vector<bool>>* concat_fused)
      : g_(g),
        layout_(layout),
        options_(options),
        facts_(FactsOf(g, layout)),
        concat_fused_(concat_fused) {
    concat_fused_->assign(g.ops.size(), {});
  }

  absl::StatusOr<std::vector<std::vector<int>>> Run() {
    const std::vector<bool> live_op = LiveOps(g_);
    for (int i = 0; i < static_cast<int>(g_.ops.size()); ++i) {
      // An alias (view, transpose, ...) is read through its root: no group.
      if (!live_op[i] || layout_.IsAliasOp(i)) continue;
      const TensorOp& op = g_.ops[i];
      if (IsConcat(op)) {
        AddConcat(i);
        continue;
      }
      if (IsAssemble(op)) {
        if (const int gi = CubeStore(i, op.inputs[0], op.inputs[1]); gi >= 0) {
          groups_[gi].push_back(i);
          continue;
        }
      }
      if (IsIndexOp(op) || IsScanOp(op) || NeedsOwnGroup(op)) {
        // Its own group(s): AppendIndexing, AppendScan, AppendReduction, AppendMatmul.
        AddClosedGroup(i);
        continue;
      }
      if (absl::Status s = AddFusable(i); !s.ok()) return s;
    }
    return std::move(groups_);
  }

 private:
  // The UB bytes the tiles of `ops` need over `space` in `tile`s; while a
  // group is open, a result counts as stored when anything outside the ops
  // seen so far may need it: a parameter, or a later reader.
  int64_t PeakBytes(const std::vector<int>& ops, const std::vector<int64_t>& space,
                    const std::vector<int64_t>& tile, bool rows) const {
    const int last = ops.back();
    return PlanGroup(
               g_, layout_, ops,
               [&](int v) {
                 return facts_.is_param_out[v] || facts_.last_reader[v] > last;
               },
               [](int) { return -1; }, space, rows)
        .Bytes(tile);
  }

  bool SameBuffer(int a, int b) const {
    a = layout_.Owner(a);
    b = layout_.Owner(b);
    return a == b || (facts_.param_of[a] >= 0 && facts_.param_of[a] == facts_.param_of[b]);
  }

  // A matmul's result `v` read only by op `i`, an assemble (into `dst`) or
  // a concat (dst -1), is stored by the cube group straight into its region
  // (the op joins the matmul's group): not when the region's buffer is an
  // operand's (its tasks would race), nor when an assemble's dst is
  // computed after the matmul (that write would land after the cube's).
  // Returns the matmul's group, or -1.
  int CubeStore(int i, int v, int dst) const {
    const int d = facts_.definer[v];
    if (!options_.fuse || d < 0 || !IsMatmul(g_.ops[d]) || facts_.num_reads[v] != 1 ||
        facts_.is_param_out[v] || (dst >= 0 && facts_.definer[dst] > d)) {
      return -1;
    }
    for (int x : g_.ops[d].inputs) {
      if (SameBuffer(layout_.Root(x), g_.ops[i].outputs[0])) return -1;
    }
    for (int gi = static_cast<int>(groups_.size()) - 1; gi >= 0; --gi) {
      if (groups_[gi].front() == d) return gi;
    }
    return -1;
  }

  // Whether concat `i`'s input `v` joins the elementwise group computing
  // it (without row reductions, over v's shape, its tiles still fitting).
  bool JoinDefiningGroup(int i, int v) {
    const int d = facts_.definer[v];
    if (layout_.IsAlias(v) || layout_.GmOnly(v) || d < 0 || IsReduce(g_.ops[d]) ||
        IsMatmul(g_.ops[d]) || IsConcat(g_.ops[d]) || IsIndexOp(g_.ops[d]) ||
        IsScanOp(g_.ops[d])) {
      return false;
    }
    int gi = static_cast<int>(groups_.size()) - 1;
    while (gi >= 0 &&
           std::find(groups_[gi].begin(), groups_[gi].end(), d) == groups_[gi].end()) {
      --gi;
    }
    if (gi < 0) return false;
    std::vector<int>& grp = groups_[gi];
    const TensorOp& front = g_.ops[grp.front()];
    const bool has_rows =
        std::any_of(grp.begin(), grp.end(), [&](int j) { return IsReduce(g_.ops[j]); });
    if (has_rows || OpSpace(g_, front) != g_.values[v].shape) return false;
    std::vector<int> candidate = grp;
    if (candidate.back() != i) candidate.push_back(i);
    if (PeakBytes(candidate, OpSpace(g_, front), ClampedTile(g_, front), false) >
        options_.memory.ub_bytes) {
      return false;
    }
    grp = std::move(candidate);
    return true;
  }

  // Concat `i`: each input joins the group that computes it where it can;
  // the others are copied by a group of the concat's own (AppendConcat).
  void AddConcat(int i) {
    const TensorOp& op = g_.ops[i];
    std::vector<bool>& fused = (*concat_fused_)[i];
    fused.assign(op.inputs.size(), false);
    for (size_t k = 0; k < op.inputs.size() && options_.fuse; ++k) {
      const int v = op.inputs[k];
      if (const int gi = CubeStore(i, v, -1); gi >= 0) {
        groups_[gi].push_back(i);
        fused[k] = true;
        continue;
      }
      fused[k] = JoinDefiningGroup(i, v);
    }
    if (std::find(fused.begin(), fused.end(), false) != fused.end()) {
      AddClosedGroup(i);
    }
  }

  // Whether op (neither concat nor index op) runs in a group of its own: a
  // matmul, or a reduction that is not fused as a row reduction (a row
  // whose length is symbolic cannot be one tile).
  bool NeedsOwnGroup(const TensorOp& op) const {
    if (IsMatmul(op)) return true;
    if (!IsReduce(op)) return false;
    const bool symbolic_row =
        !options_.symbolic.empty() && !options_.symbolic[op.inputs[0]].empty() &&
        options_.symbolic[op.inputs[0]].back() && !CappedRow(op, options_);
    return !(options_.fuse && IsRowReduction(g_, op, options_) && !symbolic_row);
  }

  // A group holding op `i` alone, closed to later ops.
  void AddClosedGroup(int i) {
    groups_.push_back({i});
    open_ = false;
    rows_ = false;
  }

  // Op `i` (elementwise, or a row reduction) joins the open group or opens
  // a new one; INVALID_ARGUMENT when its tiles alone do not fit the UB.
  absl::Status AddFusable(int i) {
    const TensorOp& op = g_.ops[i];
    const std::vector<int64_t>& op_space = OpSpace(g_, op);
    const std::vector<int64_t> op_tile = ClampedTile(g_, op);
    const bool reduce = IsReduce(op);
    const int64_t alone = reduce ? 0 : PeakBytes({i}, op_space, op_tile, false);
    if (alone > options_.memory.ub_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op #", i, " ", Quote(op.info->kind), ": vec_tile ",
          FormatDims(op.vec_tile), " needs ", alone,
          " bytes of UB tiles; a block may use ", options_.memory.ub_bytes,
          " bytes (use a smaller tile)"));
    }
    if (JoinsOpenGroup(i, op_space, op_tile, reduce)) {
      groups_.back().push_back(i);
      rows_ = rows_ || reduce;
    } else {
      groups_.push_back({i});
      open_ = true;
      space_ = op_space;
      tile_ = op_tile;
      extent_ = ExtentClass(op);
      rows_ = reduce;
    }
    return absl::OkStatus();
  }

  // The extent class (ExpandOptions::extent_class) of the value whose shape
  // is op's space.
  int ExtentClass(const TensorOp& op) const {
    const int v = IsReduce(op) || IsAssemble(op) ? op.inputs[0] : op.outputs[0];
    return v < static_cast<int>(options_.extent_class.size()) ? options_.extent_class[v] : 0;
  }

  // Whether op `i` joins the open group: over the group's whole space and
  // extent, or (row groups) over one value per row of it; with the group's
  // fusion class, reading from GM nothing the group computes, and the
  // group's tiles still fitting the UB.
  bool JoinsOpenGroup(int i, const std::vector<int64_t>& op_space,
                      const std::vector<int64_t>& op_tile, bool reduce) const {
    const bool whole = op_space == space_ && op_tile == tile_ &&
                       ExtentClass(g_.ops[i]) == extent_;
    const bool per_row = rows_ && !reduce && op_space == RowShape(space_) &&
                         op_tile == RowShape(tile_);
    if (!options_.fuse || !open_ || !(whole || per_row) ||
        groups_.back().size() >= kMaxOpsPerGroup ||
        !(options_.fusion_class.empty() ||
          options_.fusion_class[i] == options_.fusion_class[groups_.back().front()])) {
      return false;
    }
    for (int v : layout_.GmReads(g_, i)) {
      const int d = facts_.definer[v];
      if (d >= 0 && std::find(groups_.back().begin(), groups_.back().end(), d) !=
                        groups_.back().end()) {
        return false;
      }
    }
    std::vector<int> candidate = groups_.back();
    candidate.push_back(i);
    const bool row_group = rows_ || reduce;
    return (!row_group || RowGroupOk(g_, candidate, space_, options_)) &&
           PeakBytes(candidate, space_, tile_, row_group) <= options_.memory.ub_bytes;
  }

  const TensorGraph& g_;
  const LayoutPlan& layout_;
  const ExpandOptions& options_;
  const ValueFacts facts_;
  std::vector<std::vector<bool>>* concat_fused_;
  std::vector<std::vector<int>> groups_;
  std::vector<int64_t> space_, tile_;  // the open group's
  int extent_ = 0;                     // the open group's extent class
  // Whether the last group is open to later ops (a reduction's or matmul's
  // own group is not; an empty space is a rank-0 group's, not "none").
  bool open_ = false;
  bool rows_ = false;  // the open group holds a row reduction
};

}  // namespace

absl::Status FuseGroups(TilingState* s) {
  absl::StatusOr<std::vector<std::vector<int>>> groups =
      GroupFormer(s->graph(), *s->layout, s->options, &s->concat_fused).Run();
  if (!groups.ok()) return groups.status();
  s->groups = *std::move(groups);
  return absl::OkStatus();
}

}  // namespace pto::compiler
