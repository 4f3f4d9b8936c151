#include "compiler/lower/layout.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

const std::vector<int64_t>& Ints(const TensorOp& op, const char* name) {
  static const std::vector<int64_t> kNone;
  auto it = op.attrs.find(name);
  if (it == op.attrs.end()) return kNone;
  return std::get<std::vector<int64_t>>(it->second);
}

int64_t Int(const TensorOp& op, const char* name) {
  auto it = op.attrs.find(name);
  return it == op.attrs.end() ? 0 : std::get<int64_t>(it->second);
}

int Normalize(int64_t dim, int rank) {
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

bool Is(const TensorOp& op, const char* kind) { return op.info->kind == kind; }

// For a reshape that only inserts or removes size-1 dims: per input dim, the
// output dim holding it (-1 for a removed size-1 dim). Empty when the
// reshape merges or splits dims.
std::vector<int> SqueezeMap(const std::vector<int64_t>& in,
                            const std::vector<int64_t>& out) {
  std::vector<int> map(in.size(), -1);
  size_t o = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == 1) continue;
    while (o < out.size() && out[o] == 1) ++o;
    if (o == out.size() || out[o] != in[i]) return {};
    map[i] = static_cast<int>(o++);
  }
  while (o < out.size() && out[o] == 1) ++o;
  if (o != out.size()) return {};
  return map;
}

}  // namespace

bool IsAssemble(const TensorOp& op) { return Is(op, "assemble"); }
bool IsConcat(const TensorOp& op) { return Is(op, "concat"); }

std::vector<GmIndex> OffsetIndex(const std::vector<int64_t>& offsets) {
  const int rank = static_cast<int>(offsets.size());
  std::vector<GmIndex> index = AlignedIndex(rank, rank);
  for (int d = 0; d < rank; ++d) index[d].offset = offsets[d];
  return index;
}

absl::StatusOr<LayoutPlan> LayoutPlan::Make(const TensorGraph& g) {
  LayoutPlan p;
  const int n = static_cast<int>(g.values.size());
  p.op_kind_.assign(g.ops.size(), kOther);
  p.load_root_.assign(g.ops.size(), -1);
  p.load_map_.resize(g.ops.size());
  p.load_view_shape_.resize(g.ops.size());
  p.view_shape_.resize(n);
  p.root_.resize(n);
  p.map_.resize(n);
  p.owner_.resize(n);
  p.gm_only_.assign(n, false);
  for (int v = 0; v < n; ++v) p.root_[v] = p.owner_[v] = v;
  std::vector<int> definer(n, -1);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (int v : g.ops[i].outputs) definer[v] = static_cast<int>(i);
  }
  std::vector<bool> bound(n, false);  // an out/inout parameter's final value
  for (const TensorParam& param : g.params) {
    if (param.out_value >= 0) bound[param.out_value] = true;
  }
  // The map of a value that is not an alias: buffer dim j is its dim j.
  auto identity = [&](int v) {
    std::vector<DimMap> m(g.values[v].shape.size());
    for (size_t j = 0; j < m.size(); ++j) m[j].dim = static_cast<int>(j);
    return m;
  };
  // Layout op i's result `out` reads `in`'s root through `map`, as
  // `view_shape`: a TLOAD into out's own buffer when out is a parameter's
  // final value, else an alias of that root.
  auto place = [&](int i, int in, int out, std::vector<DimMap> map,
                   std::vector<int64_t> view_shape) {
    if (bound[out]) {
      p.op_kind_[i] = kLoad;
      p.load_root_[i] = p.Root(in);
      p.load_map_[i] = std::move(map);
      p.load_view_shape_[i] = std::move(view_shape);
    } else {
      p.op_kind_[i] = kAlias;
      p.root_[out] = p.Root(in);
      p.map_[out] = std::move(map);
      p.view_shape_[out] = std::move(view_shape);
    }
  };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const TensorOp& op = g.ops[i];
    if (op.info->category != OpCategory::kLayout) continue;
    const std::string where = absl::StrCat("op #", i, " ", Quote(op.info->kind));
    const int out = op.outputs[0];
    if (IsAssemble(op) || IsConcat(op)) {
      p.gm_only_[out] = true;
      if (IsAssemble(op)) {
        const int dst = op.inputs[1];
        if (p.IsAlias(dst)) {
          return absl::UnimplementedError(absl::StrCat(
              where, ": input 1 (dst) is a view or transpose of another "
                     "tensor; assembling into it is not supported (clone it "
                     "first)"));
        }
        p.owner_[out] = p.Owner(dst);
        // dst and the result share a buffer: nothing may read dst later.
        for (size_t j = i + 1; j < g.ops.size(); ++j) {
          for (int v : g.ops[j].inputs) {
            if (p.Root(v) == dst) {
              return absl::UnimplementedError(absl::StrCat(
                  "op #", j, " ", Quote(g.ops[j].info->kind),
                  " reads input 1 (dst) of ", where,
                  " after the assemble wrote into it; reading the tensor "
                  "before the write after it is not supported (clone it "
                  "before the assemble)"));
            }
          }
        }
      }
      continue;
    }
    const int in = op.inputs[0];
    const std::vector<int64_t>& in_shape = g.values[in].shape;
    const std::vector<int64_t>& out_shape = g.values[out].shape;
    const int in_rank = static_cast<int>(in_shape.size());
    // Per input dim: the output dim it becomes (-1: dropped), and the
    // offset a view adds.
    std::vector<int> to_out(in_rank);
    std::vector<int64_t> add(in_rank, 0);
    for (int d = 0; d < in_rank; ++d) to_out[d] = d;
    if (Is(op, "view")) {
      add = Ints(op, "offsets");
    } else if (Is(op, "transpose")) {
      const int a = Normalize(Int(op, "dim0"), in_rank);
      const int b = Normalize(Int(op, "dim1"), in_rank);
      std::swap(to_out[a], to_out[b]);
    } else if (Is(op, "permute")) {
      const std::vector<int64_t>& dims = Ints(op, "dims");
      for (int k = 0; k < in_rank; ++k) to_out[Normalize(dims[k], in_rank)] = k;
    } else if (Is(op, "unsqueeze")) {
      const int at = Normalize(Int(op, "dim"), in_rank + 1);
      for (int d = at; d < in_rank; ++d) to_out[d] = d + 1;
    } else if (Is(op, "reshape")) {
      to_out = SqueezeMap(in_shape, out_shape);
      if (to_out.empty()) {
        // Merging or splitting dims: the root's buffer read as out_shape.
        if (p.IsAlias(in) && !p.Contiguous(g, in)) {
          // A view or transpose is not in row-major order in memory: its op
          // becomes a copy into a buffer of its own (a TLOAD through its
          // index in a group, then TSTORE), which the reshape reads.
          const int d = definer[in];
          p.op_kind_[d] = kLoad;
          p.load_root_[d] = p.root_[in];
          p.load_map_[d] = std::move(p.map_[in]);
          p.load_view_shape_[d] = std::move(p.view_shape_[in]);
          p.root_[in] = in;
          p.map_[in].clear();
          p.view_shape_[in].clear();
        }
        place(static_cast<int>(i), in, out, identity(out), out_shape);
        continue;
      }
    } else {
      return absl::InternalError(absl::StrCat(where, ": unknown layout op"));
    }
    const std::vector<DimMap> in_map = p.IsAlias(in) ? p.map_[in] : identity(in);
    std::vector<DimMap> m = in_map;
    for (DimMap& x : m) {
      if (x.dim < 0) continue;
      x.offset += add[x.dim];
      x.dim = to_out[x.dim];
    }
    place(static_cast<int>(i), in, out, std::move(m), p.view_shape_[in]);
  }
  return p;
}

bool LayoutPlan::Contiguous(const TensorGraph& g, int v) const {
  if (!IsAlias(v)) return true;
  const std::vector<int64_t>& under =
      view_shape_[v].empty() ? g.values[Root(v)].shape : view_shape_[v];
  const std::vector<int64_t>& shape = g.values[v].shape;
  int last = -1;
  for (size_t j = 0; j < map_[v].size(); ++j) {
    const DimMap& x = map_[v][j];
    if (x.offset != 0) return false;
    if (x.dim < 0) {
      if (under[j] != 1) return false;  // a fixed index into a longer dim
      continue;
    }
    if (x.dim <= last || shape[x.dim] != under[j]) return false;
    last = x.dim;
  }
  return true;
}

int LayoutPlan::Owner(int v) const {
  while (owner_[v] != v) v = owner_[v];
  return v;
}

std::vector<int> LayoutPlan::GmReads(const TensorGraph& g, int i) const {
  std::vector<int> out;
  const TensorOp& op = g.ops[i];
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const int v = op.inputs[k];
    if (IsAlias(v) || gm_only_[v] || IsLoadOp(i) ||
        (IsAssemble(op) && k == 1)) {
      out.push_back(Root(v));
    }
  }
  return out;
}

std::vector<GmIndex> LayoutPlan::Compose(const std::vector<DimMap>& map,
                                         const std::vector<int64_t>& shape,
                                         int space_rank) {
  const int lead = space_rank - static_cast<int>(shape.size());
  std::vector<GmIndex> index;
  for (const DimMap& x : map) {
    GmIndex gi;
    gi.offset = x.offset;
    if (x.dim >= 0 && shape[x.dim] != 1) gi.space_dim = lead + x.dim;
    index.push_back(gi);
  }
  return index;
}

std::vector<GmIndex> LayoutPlan::LoadIndex(const TensorGraph& g, int v,
                                           int space_rank) const {
  const std::vector<int64_t>& shape = g.values[v].shape;
  if (!IsAlias(v)) return AlignedIndex(static_cast<int>(shape.size()), space_rank);
  return Compose(map_[v], shape, space_rank);
}

std::vector<LayoutPlan::DimMap> LayoutPlan::RootDims(const TensorGraph& g,
                                                    int v) const {
  if (IsAlias(v)) return map_[v];
  std::vector<DimMap> m(g.values[v].shape.size());
  for (size_t j = 0; j < m.size(); ++j) m[j].dim = static_cast<int>(j);
  return m;
}

std::vector<GmIndex> LayoutPlan::LoadOpIndex(const TensorGraph& g, int i) const {
  const std::vector<int64_t>& shape = g.values[g.ops[i].outputs[0]].shape;
  return Compose(load_map_[i], shape, static_cast<int>(shape.size()));
}

absl::Status CheckGroupRegions(const TileGraph& tiles, const TileGroup& group,
                               const TensorGraph& g) {
  // The box of buffer coordinates an access touches over the whole space.
  auto box = [&](const TileInstr& in, std::vector<int64_t>* lo,
                 std::vector<int64_t>* hi) {
    const std::vector<int64_t>& shape = tiles.buffers[tiles.gm[in.gm].buffer].shape;
    lo->clear();
    hi->clear();
    if (!in.view_shape.empty()) {  // through a reshape: the whole buffer
      lo->assign(shape.size(), 0);
      *hi = shape;
      return;
    }
    for (size_t j = 0; j < shape.size(); ++j) {
      const GmIndex& x = in.index[j];
      const bool spans = x.space_dim >= 0 && shape[j] != 1 && x.div <= 1;
      const int64_t first = shape[j] == 1 ? 0 : x.offset;
      lo->push_back(first);
      hi->push_back(first + (spans ? group.space[x.space_dim] : 1));
    }
  };
  auto same_index = [](const TileInstr& a, const TileInstr& b) {
    if (a.index.size() != b.index.size()) return false;
    for (size_t j = 0; j < a.index.size(); ++j) {
      if (a.index[j].space_dim != b.index[j].space_dim ||
          a.index[j].div != b.index[j].div || a.index[j].offset != b.index[j].offset) {
        return false;
      }
    }
    return true;
  };
  for (const TileInstr& st : group.body) {
    if (st.op != PtoOpcode::kTStore) continue;
    for (const TileInstr& ld : group.body) {
      if (ld.op != PtoOpcode::kTLoad ||
          tiles.gm[ld.gm].buffer != tiles.gm[st.gm].buffer || same_index(ld, st)) {
        continue;
      }
      std::vector<int64_t> slo, shi, llo, lhi;
      box(st, &slo, &shi);
      box(ld, &llo, &lhi);
      bool overlap = slo.size() == llo.size();
      for (size_t j = 0; overlap && j < slo.size(); ++j) {
        overlap = llo[j] < shi[j] && slo[j] < lhi[j];
      }
      if (overlap) {
        const int op = group.ops.front();
        return absl::UnimplementedError(absl::StrCat(
            "op #", op, " ", Quote(g.ops[op].info->kind), ": writes region ",
            FormatDims(slo), "..", FormatDims(shi), " of a buffer that the same ",
            "group reads at ", FormatDims(llo), "..", FormatDims(lhi),
            " (its tasks would race); clone the source first"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
