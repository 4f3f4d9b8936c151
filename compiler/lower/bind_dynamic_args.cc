#include "compiler/lower/bind_dynamic_args.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

// Dynamic-arg slots from here on are interned expressions: GM strides, a
// cube's K, scalar operands (below: offsets).
constexpr int kStrideSlots = 1 << 24;

// K of matmul `op` when it depends on a loop index (a tail of K) or on a
// parameter's symbol (a DYNAMIC K): the cube takes it as a dynamic arg; or
// nullopt. `values`: the flattened graph's (symbolic dims kept).
absl::StatusOr<std::optional<SymExpr>> CubeK(const TensorOp& op,
                                             const std::map<int, SymShape>& runtime_shape,
                                             const std::vector<TensorValue>& values,
                                             const std::string& where) {
  auto trans = [&op](const char* name) {
    auto it = op.attrs.find(name);
    return it != op.attrs.end() && std::get<bool>(it->second);
  };
  std::optional<SymExpr> k_expr;
  for (int k = 0; k < 2; ++k) {
    auto it = runtime_shape.find(op.inputs[k]);
    const SymShape& shape =
        it != runtime_shape.end() ? it->second : values[op.inputs[k]].sym_shape;
    const int r = static_cast<int>(shape.size());
    // A's K is its last dim (a_trans: the one before), B's the one before.
    const int k_dim = (k == 0) != trans(k == 0 ? "a_trans" : "b_trans") ? r - 1 : r - 2;
    const SymExpr& e = shape[k_dim];
    if (e.IsConstant()) continue;
    if (k_expr && *k_expr != e) {
      return RegionsUnimplemented(where, absl::StrCat("its inputs' K dims are ", k_expr->ToString(),
                                               " and ", e.ToString()));
    }
    k_expr = e;
  }
  return k_expr;
}

// TemplateAccess.stride_arg of `t`'s accesses (one per TLOAD/TSTORE and
// MGATHER/MSCATTER/MSORT of `group`, in order: ExpandAccessesOf) from
// TileInstr::stride_dynamic. A
// load through a reshape also declares the shape it reads the buffer as
// (TemplateAccess.view_shape): its strides are that shape's, one per view
// dim, and the runtime checks them against it.
absl::Status DeclareStrideArgs(const TileGroup& group, pto::v1::TaskTemplate* t) {
  int access = 0;
  for (const TileInstr& in : group.body) {
    const bool indexed = PtoAddressesWholeBuffer(in.op);
    if (!indexed && in.op != PtoOpcode::kTLoad && in.op != PtoOpcode::kTStore &&
        in.op != PtoOpcode::kTImg2Col) {
      continue;
    }
    if (access < t->accesses_size()) {
      pto::v1::TemplateAccess* a = t->mutable_accesses(access);
      for (int k : in.stride_dynamic) a->add_stride_arg(static_cast<uint32_t>(k + 1));
      if (!in.view_shape.empty()) {
        const SymShape shape =
            in.sym_view_shape.empty() ? ToSymShape(in.view_shape) : in.sym_view_shape;
        for (const SymExpr& d : shape) *a->add_view_shape() = SymExprToDim(d);
      }
    }
    ++access;
  }
  if (access != t->accesses_size()) {
    return absl::InternalError(absl::StrCat("template ", t->label(), " has ",
                                            t->accesses_size(), " accesses for ", access,
                                            " loads and stores"));
  }
  return absl::OkStatus();
}

// Per buffer of `execute`: each dim's GM stride as an expression.
absl::StatusOr<std::vector<SymShape>> BufferStrides(const pto::v1::ExecuteGraph& execute) {
  std::vector<SymShape> strides(execute.buffers_size());
  for (int b = 0; b < execute.buffers_size(); ++b) {
    const auto& dims = execute.buffers(b).shape().dims();
    SymExpr stride(1);
    strides[b].resize(dims.size());
    for (int j = dims.size() - 1; j >= 0; --j) {
      strides[b][j] = stride;
      absl::StatusOr<SymExpr> dim = SymExprFromDim(dims[j]);
      if (!dim.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer ", Quote(execute.buffers(b).name()), " dim ", j, " ",
            dim.status().message()));
      }
      stride = stride * *dim;
      if (!stride.Representable()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer ", Quote(execute.buffers(b).name()), ": the GM stride of dim ", j,
            " is not representable (int64 overflow or more than ", kMaxTerms,
            " terms)"));
      }
    }
  }
  return strides;
}

}  // namespace

absl::Status BindDynamicArgs(const FlatGraph& flat, TileGraph* tile, BlockGraph* block,
                             pto::v1::ExecuteGraph* execute) {
  // Dynamic offsets: the markers', then GM strides of buffers with dynamic
  // inner dims (added below).
  std::vector<SymExpr> dynamic = flat.dynamic_offsets;
  auto intern = [&dynamic](const SymExpr& e) {
    for (size_t k = 0; k < dynamic.size(); ++k) {
      if (dynamic[k] == e) return static_cast<int>(k);
    }
    dynamic.push_back(e);
    return static_cast<int>(dynamic.size()) - 1;
  };
  absl::StatusOr<std::vector<SymShape>> buffer_strides = BufferStrides(*execute);
  if (!buffer_strides.ok()) return buffer_strides.status();
  const std::vector<SymShape>& strides = *buffer_strides;

  // Markers -> dynamic args, per group (= template).
  for (size_t g = 0; g < tile->groups.size(); ++g) {
    TileGroup& group = tile->groups[g];
    const std::vector<int>& nest = flat.op_nest[group.ops.front()];
    for (int op : group.ops) {
      if (flat.op_nest[op] != nest) {
        return absl::InternalError(absl::StrCat("group of op #", group.ops.front(),
                                                " spans a loop boundary"));
      }
    }
    std::vector<int> slots;  // marker per dynamic arg position
    auto position = [&slots](int marker) {
      for (size_t k = 0; k < slots.size(); ++k) {
        if (slots[k] == marker) return static_cast<int>(k);
      }
      slots.push_back(marker);
      return static_cast<int>(slots.size()) - 1;
    };
    // Per dynamic arg position: what the code uses it for (the dumps).
    std::map<int, std::vector<std::string>> uses;
    auto use = [&uses](int k, const std::string& what) {
      std::vector<std::string>& u = uses[k];
      if (std::find(u.begin(), u.end(), what) == u.end()) u.push_back(what);
    };
    for (TileInstr& in : group.body) {
      for (GmIndex& x : in.index) {
        absl::StatusOr<std::pair<int, int64_t>> d = DecodeMarker(x.offset);
        if (!d.ok()) {
          return absl::UnimplementedError(absl::StrCat(
              flat.labels[group.ops.front()], ": ", d.status().message()));
        }
        if (d->first < 0) continue;
        absl::StatusOr<int> k = flat.MarkerAt(d->first, nest);
        if (!k.ok()) return k.status();
        x.dynamic = position(*k);
        x.offset = d->second;
      }
    }
    // Scalar operands over symbols: dynamic args, read as int64 and
    // converted by the code (the same function serves every value).
    for (TileInstr& in : group.body) {
      for (size_t j = 0; j < in.scalars.size(); ++j) {
        const int k = ScalarMarkerIndex(in.scalars[j]);
        if (k < 0) continue;
        if (k >= static_cast<int>(flat.dynamic_scalars.size())) {
          return absl::InternalError(absl::StrCat("scalar marker ", k, " out of range"));
        }
        // (One equal to a loop-dependent offset, x[i] * i, shares its arg.)
        const int e = intern(flat.dynamic_scalars[k]);
        const bool offset = e < static_cast<int>(flat.dynamic_offsets.size());
        in.scalar_dynamic.resize(in.scalars.size(), -1);
        in.scalar_dynamic[j] = position(offset ? e : kStrideSlots + e);
        in.scalars[j] = 0;
      }
    }
    // A buffer with a dynamic inner dim: its strides are dynamic args.
    // (A cube's leading dimensions and batch strides too: cube_codegen.)
    // A load through a reshape reads the buffer as its view shape: the
    // strides are that shape's ([B*S, H] of [B, S, H]: static H).
    for (TileInstr& in : group.body) {
      if (in.gm < 0) continue;
      const int b = tile->gm[in.gm].buffer;
      SymShape view_strides;
      if (!in.view_shape.empty()) {
        SymShape shape = in.sym_view_shape;
        if (shape.empty()) shape = ToSymShape(in.view_shape);
        view_strides.resize(shape.size());
        SymExpr stride(1);
        for (int j = static_cast<int>(shape.size()) - 1; j >= 0; --j) {
          view_strides[j] = stride;
          stride = stride * shape[j];
        }
      }
      const SymShape& of = in.view_shape.empty() ? strides[b] : view_strides;
      bool any = false;
      std::vector<int> dims(of.size(), -1);
      for (size_t j = 0; j < of.size(); ++j) {
        if (of[j].IsConstant()) continue;
        dims[j] = position(kStrideSlots + intern(of[j]));
        any = true;
      }
      if (!any) continue;
      for (size_t j = 0; j < dims.size(); ++j) {
        if (dims[j] >= 0) use(dims[j], absl::StrCat("stride(%", b, ", ", j, ")"));
      }
      in.stride_dynamic = std::move(dims);
    }
    // MGATHER/MSCATTER/MSORT of a buffer with a symbolic extent along the
    // indexed dim: that extent (the bound of a valid index; MSORT: the
    // length of the rows it sorts) is one more dynamic arg.
    for (TileInstr& in : group.body) {
      if (!PtoAddressesWholeBuffer(in.op) || in.gm < 0) continue;
      const int b = tile->gm[in.gm].buffer;
      const auto& dims = execute->buffers(b).shape().dims();
      if (in.index_dim < 0 || in.index_dim >= dims.size()) {
        return absl::InternalError(absl::StrCat(flat.labels[group.ops.front()],
                                                ": its index dim is outside buffer ", b));
      }
      absl::StatusOr<SymExpr> n = SymExprFromDim(dims[in.index_dim]);
      if (!n.ok()) return n.status();
      if (n->IsConstant()) continue;
      in.extent_dynamic = position(kStrideSlots + intern(*n));
      use(in.extent_dynamic, absl::StrCat("extent(%", b, ", ", in.index_dim, ")"));
    }
    if (group.is_cube) {
      // A K that depends on a loop index (a tail of K) is one more dynamic
      // arg; the cube code walks that much of K (c.k is its bound).
      const std::string& where = flat.labels[group.ops.front()];
      absl::StatusOr<std::optional<SymExpr>> k =
          CubeK(flat.graph.ops[group.ops.front()], flat.runtime_shape,
                flat.graph.values, where);
      if (!k.ok()) return k.status();
      if (k->has_value()) {
        group.cube.k_dynamic = position(kStrideSlots + intern(**k));
        use(group.cube.k_dynamic, "K");
        // The runtime checks the K each task reads against the operands.
        execute->mutable_templates(static_cast<int>(g))
            ->set_cube_k_arg(static_cast<uint32_t>(group.cube.k_dynamic + 1));
      }
    }
    pto::v1::TaskTemplate* t = execute->mutable_templates(static_cast<int>(g));
    for (pto::v1::TemplateAccess& a : *t->mutable_accesses()) {
      for (pto::v1::AccessIndex& x : *a.mutable_index()) {
        absl::StatusOr<std::pair<int, int64_t>> d = DecodeMarker(x.offset());
        if (!d.ok()) return d.status();
        if (d->first < 0) continue;
        absl::StatusOr<int> k = flat.MarkerAt(d->first, nest);
        if (!k.ok()) return k.status();
        x.set_dynamic(static_cast<uint32_t>(position(*k) + 1));
        x.set_offset(d->second);
      }
    }
    // Slots below kStrideSlots are dynamic offsets by number, the rest
    // strides (interned after them).
    for (int s : slots) {
      t->add_dynamic_args(static_cast<uint32_t>(s >= kStrideSlots ? s - kStrideSlots : s));
      group.dynamic_args.push_back(
          {dynamic[t->dynamic_args(t->dynamic_args_size() - 1)],
           uses[static_cast<int>(group.dynamic_args.size())]});
    }
    // Which dynamic arg holds each run-time GM stride, per access (the
    // runtime checks them against the buffer's shape at launch).
    if (absl::Status s = DeclareStrideArgs(group, t); !s.ok()) return s;
    for (size_t f = 0; f < block->functions.size(); ++f) {
      if (block->functions[f].group != static_cast<int>(g)) continue;
      block->functions[f].num_args =
          static_cast<int>(group.tile.size() + slots.size());
      execute->mutable_functions(static_cast<int>(f))
          ->set_num_args(static_cast<uint32_t>(block->functions[f].num_args));
    }
  }

  for (const SymExpr& e : dynamic) *execute->add_dynamic_offsets() = e.ToProto();

  return absl::OkStatus();
}

}  // namespace pto::compiler
