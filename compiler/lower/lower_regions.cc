#include "compiler/lower/lower_regions.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
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

// The run-time extents of matmul `op`'s cube group: its result's dims that
// depend on a loop index (rows and columns of a tail).
absl::Status CubeExtents(const TensorOp& op, const std::map<int, SymShape>& runtime_shape,
                         std::vector<std::optional<SymExpr>>* extent) {
  auto it = runtime_shape.find(op.outputs[0]);
  if (it == runtime_shape.end()) return absl::OkStatus();
  for (size_t d = 0; d < extent->size() && d < it->second.size(); ++d) {
    if (!it->second[d].IsConstant()) (*extent)[d] = it->second[d];
  }
  return absl::OkStatus();
}

// TemplateAccess.stride_arg of `t`'s accesses (one per TLOAD/TSTORE of
// `group`, in order: ExpandAccessesOf) from TileInstr::stride_dynamic. A
// load through a reshape also declares the shape it reads the buffer as
// (TemplateAccess.view_shape): its strides are that shape's, one per view
// dim, and the runtime checks them against it.
absl::Status DeclareStrideArgs(const TileGroup& group, pto::v1::TaskTemplate* t) {
  int access = 0;
  for (const TileInstr& in : group.body) {
    if (in.op == PtoOpcode::kMGather || in.op == PtoOpcode::kMScatter) {
      ++access;  // a whole buffer of static shape: no stride args
      continue;
    }
    if (in.op != PtoOpcode::kTLoad && in.op != PtoOpcode::kTStore) continue;
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

}  // namespace

absl::Status CheckTemplatable(const TensorGraph& graph) {
  // Index ops address whole buffers with compile-time strides and extents
  // (expand_indexing.h): static shapes only (loops and branches are fine).
  std::function<const TensorOp*(const std::vector<TensorOp>&)> index_op =
      [&](const std::vector<TensorOp>& ops) -> const TensorOp* {
    for (const TensorOp& op : ops) {
      if (op.info != nullptr && op.info->category == OpCategory::kIndex) return &op;
      for (const TensorRegion& r : op.regions) {
        if (const TensorOp* found = index_op(r.ops)) return found;
      }
    }
    return nullptr;
  };
  if (const TensorOp* op = graph.HasSymbolicDims() ? index_op(graph.ops) : nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "op ", Quote(op->info->kind),
        ": gather/scatter ops need static shapes (this kernel has symbolic dims or "
        "valid regions that depend on sizes or loop indices)"));
  }
  return absl::OkStatus();
}

ExpandOptions TemplateOptions(const FlatGraph& flat, bool fuse, const MemoryModel& memory) {
  ExpandOptions options;
  options.fuse = fuse;
  options.memory = memory;
  options.fusion_class = flat.fusion_class;
  // Rows over a symbolic last dim as row groups when they fit (an if on
  // the row lengths at launch, BuildProgram); graphs with loops keep the
  // accumulating form.
  options.symbolic_rows = flat.loops.empty();
  // Dims whose extents depend on loop indices: a reduction over one takes
  // the accumulating form (its tiles along the dim fold into one slot, the
  // tail through the generic function), never partial + combine over
  // slots that a short iteration would leave unwritten.
  options.symbolic.assign(flat.graph.values.size(), {});
  for (const auto& [v, shape] : flat.runtime_shape) {
    for (const SymExpr& d : shape) options.symbolic[v].push_back(!d.IsConstant());
  }
  return options;
}

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
  // Per buffer: each dim's GM stride as an expression.
  std::vector<SymShape> strides(execute->buffers_size());
  for (int b = 0; b < execute->buffers_size(); ++b) {
    const auto& dims = execute->buffers(b).shape().dims();
    SymExpr stride(1);
    strides[b].resize(dims.size());
    for (int j = dims.size() - 1; j >= 0; --j) {
      strides[b][j] = stride;
      absl::StatusOr<SymExpr> dim = SymExprFromDim(dims[j]);
      if (!dim.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer ", Quote(execute->buffers(b).name()), " dim ", j, " ",
            dim.status().message()));
      }
      stride = stride * *dim;
      if (!stride.Representable()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer ", Quote(execute->buffers(b).name()), ": the GM stride of dim ", j,
            " is not representable (int64 overflow or more than ", kMaxTerms,
            " terms)"));
      }
    }
  }

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

absl::Status AddTailFunctions(const FlatGraph& flat, TileGraph* tile, BlockGraph* block,
                              pto::v1::ExecuteGraph* execute) {
  // Groups over dims whose extents depend on loop indices: the template's
  // space is that expression, and a generic function (extents from the
  // task's args) runs the tails; the full-tile function stays static.
  const size_t num_groups = tile->groups.size();
  for (size_t g = 0; g < num_groups; ++g) {
    const TileGroup& group = tile->groups[g];
    const int rank = static_cast<int>(group.space.size());
    std::vector<std::optional<SymExpr>> extent(rank);
    const std::string& where = flat.labels[group.ops.front()];
    if (group.is_cube) {
      // A cube group's space is its result's: rows and columns of a tail
      // are run-time extents (K, not a space dim, is a dynamic arg).
      absl::Status s =
          CubeExtents(flat.graph.ops[group.ops.front()], flat.runtime_shape, &extent);
      if (!s.ok()) return s;
    }
    for (int op : group.is_cube ? std::vector<int>{} : group.ops) {
      const TensorOp& t = flat.graph.ops[op];
      std::vector<int> values = t.outputs;
      values.insert(values.end(), t.inputs.begin(), t.inputs.end());
      for (int v : values) {
        auto it = flat.runtime_shape.find(v);
        if (it == flat.runtime_shape.end() ||
            flat.graph.values[v].shape != group.space) {
          continue;
        }
        for (int d = 0; d < rank; ++d) {
          if (it->second[d].IsConstant()) continue;
          if (extent[d] && *extent[d] != it->second[d]) {
            return RegionsUnimplemented(where, absl::StrCat(
                "dim ", d, " of its space is both ", extent[d]->ToString(), " and ",
                it->second[d].ToString()));
          }
          extent[d] = it->second[d];
        }
      }
    }
    bool any = false;
    for (const auto& e : extent) any = any || e.has_value();
    // A parameter's symbolic dim split into tiles of more than one element
    // has tails of any extent too (lower_symbolic.h dropped the probe's).
    for (int d = 0; d < rank; ++d) {
      absl::StatusOr<SymExpr> space_d =
          SymExprFromDim(execute->templates(static_cast<int>(g)).space(d));
      any = any || !space_d.ok() || (!space_d->IsConstant() && group.tile[d] > 1);
    }
    if (!any) continue;
    for (const TileInstr& in : group.body) {
      if (in.op == PtoOpcode::kMGather || in.op == PtoOpcode::kMScatter) {
        return RegionsUnimplemented(where, "a gather/scatter over a dim whose extent depends on a "
                                    "loop index");
      }
      const bool rows = !group.ub_rows.empty() && extent[rank - 1].has_value();
      // (The accumulating form's tiles along its dim fold in order, tails
      // padded with the identity: any extent works.)
      if ((in.reduce_dim >= 0 && extent[in.reduce_dim].has_value() &&
           in.reduce_dim != group.serial_dim) ||
          rows) {
        return RegionsUnimplemented(where, "a reduction over a dim whose extent depends "
                                    "on a loop index");
      }
    }
    pto::v1::TaskTemplate* t = execute->mutable_templates(static_cast<int>(g));
    for (int d = 0; d < rank; ++d) {
      if (!extent[d]) continue;
      *t->mutable_space(d) = SymExprToDim(*extent[d]);
      TileGroup& printed = tile->groups[g];  // (the dumps show the extent)
      if (printed.sym_space.empty()) {
        for (int64_t x : printed.space) printed.sym_space.push_back(SymExpr(x));
      }
      printed.sym_space[d] = *extent[d];
    }
    t->set_extents_in_args(true);
    int model = -1;
    for (size_t f = 0; f < block->functions.size(); ++f) {
      if (block->functions[f].group != static_cast<int>(g)) continue;
      block->functions[f].num_args += rank;
      execute->mutable_functions(static_cast<int>(f))
          ->set_num_args(static_cast<uint32_t>(block->functions[f].num_args));
      if (block->functions[f].extent == group.tile) model = static_cast<int>(f);
    }
    if (model < 0) return absl::InternalError(absl::StrCat(where, ": no full-tile function"));
    BlockFunction generic = block->functions[model];
    generic.runtime_extents = true;
    generic.name += "_n";
    const int f = static_cast<int>(block->functions.size());
    block->functions.push_back(generic);
    pto::v1::BlockFunction* desc = execute->add_functions();
    *desc = execute->functions(model);
    desc->set_index(static_cast<uint32_t>(f));
    desc->set_name(generic.name);
    // A row group over a capped symbolic row (its probe row is longer than
    // its tile: expand_to_tiles.h symbolic_rows) runs every tile on the
    // generic function, the per-row code with c from the args: at c = the
    // cap the static function's whole-tile code (run-time strides keep it
    // from the per-row form) took 8x the generic one's time.
    if (group.branch == 1 && !group.ub_rows.empty() && group.tile.back() < group.space.back()) {
      t->clear_functions();
    }
    pto::v1::ExtentFunction* entry = t->add_functions();
    for (int d = 0; d < rank; ++d) entry->add_extent(0);
    entry->set_function(static_cast<uint32_t>(f));
  }

  return absl::OkStatus();
}

absl::Status BuildProgram(const FlatGraph& flat, const TileGraph& tile,
                          pto::v1::ExecuteGraph* execute) {
  // Views and assembles outside loops are checked before any task.
  for (const pto::v1::RegionCheck& c : flat.top_checks) {
    *execute->add_program()->mutable_check() = c;
  }

  // Rows over symbolic last dims lowered both ways (no loops): the row
  // groups when every row is within its cap, else the accumulating form.
  if (!tile.row_caps.empty()) {
    std::map<std::string, std::pair<SymExpr, int64_t>> caps;  // per row length
    for (const RowCap& c : tile.row_caps) {
      const SymExpr& n = flat.graph.values[c.value].sym_shape.back();
      auto [it, added] = caps.emplace(n.ToString(), std::make_pair(n, c.cap));
      if (!added) it->second.second = std::min(it->second.second, c.cap);
    }
    std::optional<CondExpr> fits;
    for (const auto& [text, cap] : caps) {
      const CondExpr one = CondExpr::Compare(CondExpr::kLe, cap.first, SymExpr(cap.second));
      fits = fits ? CondExpr::Logic(CondExpr::kAnd, *fits, one) : one;
    }
    pto::v1::IfNode* node = execute->mutable_program()->Add()->mutable_if_node();
    *node->mutable_cond() = fits->ToProto();
    for (size_t g = 0; g < tile.groups.size(); ++g) {
      (tile.groups[g].branch == 1 ? node->mutable_then_body() : node->mutable_else_body())
          ->Add()
          ->set_template_index(static_cast<uint32_t>(g));
    }
    return absl::OkStatus();
  }

  // The program: templates in order, inside the loops they came from.
  std::vector<google::protobuf::RepeatedPtrField<pto::v1::ExecNode>*> open = {
      execute->mutable_program()};
  std::vector<int> path;
  // Per node list: the if whose node was added to it last.
  std::map<const void*, int> last_if;
  for (size_t g = 0; g < tile.groups.size(); ++g) {
    const std::vector<int>& nest = flat.op_nest[tile.groups[g].ops.front()];
    size_t common = 0;
    while (common < path.size() && common < nest.size() && path[common] == nest[common]) {
      ++common;
    }
    path.resize(common);
    open.resize(common + 1);
    for (size_t k = common; k < nest.size(); ++k) {
      const LoopInfo& info = flat.loops[nest[k]];
      google::protobuf::RepeatedPtrField<pto::v1::ExecNode>* body = nullptr;
      if (info.kind == LoopInfo::kLoop) {
        pto::v1::LoopNode* loop = open.back()->Add()->mutable_loop();
        loop->set_index(info.index);
        *loop->mutable_start() = info.start.ToProto();
        *loop->mutable_stop() = info.stop.ToProto();
        loop->set_step(info.step);
        body = loop->mutable_body();
      } else {
        // The else branch joins its if's node when that is the last node
        // here (the then branch had tasks); otherwise a node of its own.
        pto::v1::IfNode* node = nullptr;
        if (info.kind == LoopInfo::kElse && !open.back()->empty() &&
            open.back()->rbegin()->has_if_node() &&
            last_if[open.back()] == info.if_id) {
          node = open.back()->rbegin()->mutable_if_node();
        } else {
          node = open.back()->Add()->mutable_if_node();
          *node->mutable_cond() = info.cond;
          last_if[open.back()] = info.if_id;
        }
        body = info.kind == LoopInfo::kThen ? node->mutable_then_body()
                                            : node->mutable_else_body();
      }
      for (const pto::v1::RegionCheck& c : info.checks) *body->Add()->mutable_check() = c;
      path.push_back(nest[k]);
      open.push_back(body);
    }
    open.back()->Add()->set_template_index(static_cast<uint32_t>(g));
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
