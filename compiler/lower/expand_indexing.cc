#include "compiler/lower/expand_indexing.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/ops/infer.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

int64_t Elements(const std::vector<int64_t>& tile) {
  int64_t n = 1;
  for (int64_t d : tile) n *= d;
  return n;
}

int64_t StorageBytes(pto::v1::DataType dtype) {
  return UbStorageType(dtype) == pto::v1::DT_FP32 ? 4 : 8;
}

std::vector<int64_t> Clamped(const std::vector<int64_t>& tile,
                             const std::vector<int64_t>& space) {
  std::vector<int64_t> out = tile;
  for (size_t d = 0; d < out.size() && d < space.size(); ++d) {
    out[d] = std::min(out[d], space[d]);
  }
  return out;
}

// A TLOAD of value v into tile `dst`, in a space of rank `rank`; `along`
// >= 0: v is rank 1 and follows space dim `along` (an index_select index).
TileInstr LoadOf(const TensorGraph& g, const LayoutPlan& layout,
                 const std::vector<int>& gm_of_value, int v, int rank, int dst,
                 int along = -1) {
  TileInstr load;
  load.op = PtoOpcode::kTLoad;
  load.dst = dst;
  load.gm = gm_of_value[layout.Root(v)];
  load.dtype = g.values[v].dtype;
  load.view_shape = layout.ViewShape(v);
  if (along < 0) {
    load.index = layout.LoadIndex(g, v, rank);
  } else {
    load.index = layout.LoadIndex(g, v, 1);
    for (GmIndex& x : load.index) {
      if (x.space_dim == 0) x.space_dim = along;
    }
  }
  return load;
}

TileInstr StoreOf(int gm, pto::v1::DataType dtype, int src, int rank) {
  TileInstr store;
  store.op = PtoOpcode::kTStore;
  store.gm = gm;
  store.dtype = dtype;
  store.srcs = {src};
  store.index = OffsetIndex(std::vector<int64_t>(rank, 0));
  return store;
}

absl::Status CheckUb(int i, const TensorOp& op, const std::vector<int64_t>& tile,
                     int64_t bytes_per_element, int64_t ub_bytes) {
  const int64_t bytes = Elements(tile) * bytes_per_element;
  if (bytes > ub_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op #", i, " ", Quote(op.info->kind), ": vec_tile ", FormatDims(op.vec_tile),
        " needs ", bytes, " bytes of UB tiles; a block may use ", ub_bytes,
        " bytes (use a smaller tile)"));
  }
  return absl::OkStatus();
}

// A GM tensor holding v densely: its own, or (an alias) a workspace that a
// copy group appended here fills.
absl::StatusOr<int> DenseGm(const TensorGraph& g, const LayoutPlan& layout, int i, int v,
                            const std::vector<int>& gm_of_value, int64_t ub_bytes,
                            TileGraph* out) {
  if (!layout.IsAlias(v) && layout.ViewShape(v).empty() && gm_of_value[v] >= 0) {
    return gm_of_value[v];
  }
  const TensorOp& op = g.ops[i];
  const std::vector<int64_t>& shape = g.values[v].shape;
  const int rank = static_cast<int>(shape.size());
  GmBuffer buf;
  buf.dtype = g.values[v].dtype;
  buf.shape = shape;
  out->buffers.push_back(std::move(buf));
  const int gm = static_cast<int>(out->gm.size());
  out->gm.push_back({v, static_cast<int>(out->buffers.size()) - 1});
  TileGroup grp;
  grp.ops = {i};
  grp.space = shape;
  grp.tile = Clamped(op.vec_tile, shape);
  if (absl::Status s = CheckUb(i, op, grp.tile, StorageBytes(buf.dtype), ub_bytes); !s.ok()) {
    return s;
  }
  grp.body = {LoadOf(g, layout, gm_of_value, v, rank, 0),
              StoreOf(gm, g.values[v].dtype, 0, rank)};
  grp.num_ub_tiles = 1;
  grp.ub_types = {UbStorageType(g.values[v].dtype)};
  out->groups.push_back(std::move(grp));
  return gm;
}

// sort over its result's space: a tile spans the whole of dim (all k
// positions, so each row is sorted once) where its INT64 positions fit the
// UB, the other dims shrinking first; a longer k is cut into chunks, each
// task sorting its rows again. Along a symbolic dim (`symbolic`) the tile
// is the vec_tile's, whatever the probe's size: a row longer than it is
// sorted once per tile.
std::vector<int64_t> SortTile(const std::vector<int64_t>& vec_tile,
                              const std::vector<int64_t>& space, int dim, bool symbolic,
                              int64_t ub_bytes) {
  std::vector<int64_t> tile = Clamped(vec_tile, space);
  if (!symbolic) tile[dim] = space[dim];
  const int64_t fit = std::max<int64_t>(1, ub_bytes / 8);
  for (;;) {
    if (Elements(tile) <= fit) return tile;
    int widest = -1;
    for (int d = 0; d < static_cast<int>(tile.size()); ++d) {
      if (d != dim && tile[d] > 1 && (widest < 0 || tile[d] > tile[widest])) widest = d;
    }
    if (widest < 0) break;
    tile[widest] = (tile[widest] + 1) / 2;
  }
  tile[dim] = std::min(tile[dim], fit);
  return tile;
}

absl::Status AppendSort(const TensorGraph& g, const LayoutPlan& layout, int i, int dim,
                        const std::vector<int>& gm_of_value, int64_t ub_bytes,
                        const std::vector<std::vector<bool>>& symbolic, TileGraph* out) {
  const TensorOp& op = g.ops[i];
  const int x = op.inputs[0], result = op.outputs[0];
  const int rank = static_cast<int>(g.values[x].shape.size());
  absl::StatusOr<int> src = DenseGm(g, layout, i, x, gm_of_value, ub_bytes, out);
  if (!src.ok()) return src.status();
  TileGroup grp;
  grp.ops = {i};
  grp.space = g.values[result].shape;
  const bool symbolic_dim = result < static_cast<int>(symbolic.size()) &&
                            dim < static_cast<int>(symbolic[result].size()) &&
                            symbolic[result][dim];
  grp.tile = SortTile(op.vec_tile, grp.space, dim, symbolic_dim, ub_bytes);
  TileInstr sort = MakeInstr(PtoOpcode::kMSort, 0, {}, pto::v1::DT_INT64);
  sort.gm = *src;
  sort.index_dim = dim;
  if (auto it = op.attrs.find("descending"); it != op.attrs.end()) {
    sort.descending = std::get<bool>(it->second);
  }
  grp.body = {std::move(sort), StoreOf(gm_of_value[result], pto::v1::DT_INT64, 0, rank)};
  grp.num_ub_tiles = 1;
  grp.ub_types = {pto::v1::DT_INT64};
  out->groups.push_back(std::move(grp));
  return absl::OkStatus();
}

}  // namespace

bool IsIndexOp(const TensorOp& op) { return op.info->category == OpCategory::kIndex; }

absl::Status AppendIndexing(const TensorGraph& g, const LayoutPlan& layout, int i,
                            const std::vector<int>& gm_of_value, int64_t ub_bytes,
                            const std::vector<std::vector<bool>>& symbolic, TileGraph* out) {
  const TensorOp& op = g.ops[i];
  const std::string& kind = op.info->kind;
  const int x = op.inputs[0], result = op.outputs[0];
  const int rank = static_cast<int>(g.values[x].shape.size());
  absl::StatusOr<int> dim = NormalizeDim(std::get<int64_t>(op.attrs.at("dim")), rank);
  if (!dim.ok()) return dim.status();
  if (gm_of_value[result] < 0) {
    return absl::InternalError(absl::StrCat("op #", i, " ", Quote(kind),
                                            ": its result has no GM tensor"));
  }
  if (kind == "sort") {
    return AppendSort(g, layout, i, *dim, gm_of_value, ub_bytes, symbolic, out);
  }
  const int index = op.inputs[1];
  const bool one_d = g.values[index].shape.size() == 1 && kind != "gather" &&
                     kind != "scatter";
  const pto::v1::DataType dtype = g.values[x].dtype;
  const int64_t pair_bytes = 8 + StorageBytes(dtype);
  if (kind == "gather" || kind == "index_select") {
    absl::StatusOr<int> src = DenseGm(g, layout, i, x, gm_of_value, ub_bytes, out);
    if (!src.ok()) return src.status();
    TileGroup grp;
    grp.ops = {i};
    grp.space = g.values[result].shape;
    grp.tile = Clamped(op.vec_tile, grp.space);
    if (absl::Status s = CheckUb(i, op, grp.tile, pair_bytes, ub_bytes); !s.ok()) return s;
    TileInstr gather = MakeInstr(PtoOpcode::kMGather, 1, {0}, dtype);
    gather.gm = *src;
    gather.index_dim = *dim;
    grp.body = {LoadOf(g, layout, gm_of_value, index, rank, 0, one_d ? *dim : -1),
                std::move(gather), StoreOf(gm_of_value[result], dtype, 1, rank)};
    grp.num_ub_tiles = 2;
    grp.ub_types = {pto::v1::DT_INT64, UbStorageType(dtype)};
    out->groups.push_back(std::move(grp));
    return absl::OkStatus();
  }
  // scatter, index_copy, index_add: out = x, then the scatter.
  const int src = op.inputs[2];
  const int out_gm = gm_of_value[result];
  const bool in_place = !layout.IsAlias(x) && layout.ViewShape(x).empty() &&
                        gm_of_value[x] >= 0 &&
                        out->gm[gm_of_value[x]].buffer == out->gm[out_gm].buffer;
  if (!in_place) {
    TileGroup copy;
    copy.ops = {i};
    copy.space = g.values[x].shape;
    copy.tile = Clamped(op.vec_tile, copy.space);
    if (absl::Status s = CheckUb(i, op, copy.tile, StorageBytes(dtype), ub_bytes); !s.ok()) {
      return s;
    }
    copy.body = {LoadOf(g, layout, gm_of_value, x, rank, 0), StoreOf(out_gm, dtype, 0, rank)};
    copy.num_ub_tiles = 1;
    copy.ub_types = {UbStorageType(dtype)};
    out->groups.push_back(std::move(copy));
  }
  TileGroup grp;
  grp.ops = {i};
  grp.space = one_d ? g.values[src].shape : g.values[index].shape;
  grp.tile = Clamped(op.vec_tile, grp.space);
  if (absl::Status s = CheckUb(i, op, grp.tile, pair_bytes, ub_bytes); !s.ok()) return s;
  TileInstr scatter = MakeInstr(PtoOpcode::kMScatter, -1, {1, 0}, dtype);
  scatter.gm = out_gm;
  scatter.index_dim = *dim;
  if (kind == "index_add") scatter.scatter = ScatterReduce::kAdd;
  if (auto it = op.attrs.find("reduce"); kind == "scatter" && it != op.attrs.end()) {
    const std::string& r = std::get<std::string>(it->second);
    scatter.scatter = r == "add"        ? ScatterReduce::kAdd
                      : r == "multiply" ? ScatterReduce::kMultiply
                                        : ScatterReduce::kNone;
  }
  grp.body = {LoadOf(g, layout, gm_of_value, index, rank, 0, one_d ? *dim : -1),
              LoadOf(g, layout, gm_of_value, src, rank, 1), std::move(scatter)};
  grp.num_ub_tiles = 2;
  grp.ub_types = {pto::v1::DT_INT64, UbStorageType(dtype)};
  grp.serial_all = true;
  out->groups.push_back(std::move(grp));
  return absl::OkStatus();
}

}  // namespace pto::compiler
