#include "compiler/lower/tile_groups.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/lower/expand_indexing.h"
#include "compiler/lower/expand_matmul.h"
#include "compiler/lower/expand_reduction.h"
#include "compiler/lower/expand_scan.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

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

// A matmul operand `v`: read in place from its root's GM tensor through the
// alias's index (AppendMatmul checks that the cube can stride it).
MatmulOperand MatmulOperandOf(const TensorGraph& g, const LayoutPlan& layout,
                              int v) {
  return MatmulOperand{v, layout.Root(v), layout.RootDims(g, v), layout.ViewShape(v)};
}

}  // namespace

absl::Status TileGroups(TilingState* s) {
  const TensorGraph& g = s->graph();
  const std::vector<int>& gm_of_value = s->gm_of_value;
  for (const std::vector<int>& ops : s->groups) {
    if (IsMatmul(g.ops[ops.front()])) {
      const std::vector<int>& in = g.ops[ops.front()].inputs;
      MatmulStore into;  // an assemble's or concat's region (fuse_groups.h)
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
      if (absl::Status st = AppendMatmul(g, ops.front(), MatmulOperandOf(g, *s->layout, in[0]),
                                        MatmulOperandOf(g, *s->layout, in[1]),
                                        gm_of_value, s->options.memory, &s->out,
                                        ops.size() > 1 ? &into : nullptr);
          !st.ok()) {
        return st;
      }
      s->out.groups.back().ops = ops;
      continue;
    }
    if (ops.size() == 1 && IsReduce(g.ops[ops.front()])) {
      const size_t first_new = s->out.groups.size();
      if (absl::Status st = AppendReduction(g, ops.front(), gm_of_value, s->options, &s->out);
          !st.ok()) {
        return st;
      }
      ReadAliasInput(g, *s->layout, ops.front(), gm_of_value, first_new, &s->out);
      continue;
    }
    if (IsScanOp(g.ops[ops.front()])) {
      const size_t first_new = s->out.groups.size();
      if (absl::Status st = AppendScan(g, ops.front(), gm_of_value, s->options.memory.ub_bytes,
                                      &s->out);
          !st.ok()) {
        return st;
      }
      ReadAliasInput(g, *s->layout, ops.front(), gm_of_value, first_new, &s->out);
      continue;
    }
    if (IsIndexOp(g.ops[ops.front()])) {
      if (absl::Status st = AppendIndexing(g, *s->layout, ops.front(), gm_of_value,
                                          s->options.memory.ub_bytes, s->options.symbolic,
                                          &s->out);
          !st.ok()) {
        return st;
      }
      continue;
    }
    if (IsConcat(g.ops[ops.front()])) {
      if (absl::Status st = AppendConcat(g, *s->layout, ops.front(),
                                        s->concat_fused[ops.front()], gm_of_value,
                                        s->options.memory.ub_bytes, &s->out);
          !st.ok()) {
        return st;
      }
      continue;
    }
    // A fused group: its body and UB tiles come from allocate_ub.
    TileGroup grp;
    grp.ops = ops;
    const TensorOp& first = g.ops[ops.front()];
    grp.space = OpSpace(g, first);
    grp.tile = ClampedTile(g, first);
    s->unallocated.push_back(static_cast<int>(s->out.groups.size()));
    s->out.groups.push_back(std::move(grp));
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
