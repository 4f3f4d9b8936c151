#include "compiler/lower/flatten_regions.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/util/checked_math.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

constexpr int64_t kStaticMask = (int64_t{1} << kMarkerShift) - 1;
constexpr uint64_t kScalarMarker = 0x7E5CA1A000000000ULL;
constexpr uint64_t kScalarMarkerMask = 0xFFFFFFFF00000000ULL;

// Whether `prefix` is a prefix of `nest`.
bool IsPrefix(const std::vector<int>& prefix, const std::vector<int>& nest) {
  return prefix.size() <= nest.size() &&
         std::equal(prefix.begin(), prefix.end(), nest.begin());
}

}  // namespace

double ScalarMarker(int k) {
  const uint64_t bits = kScalarMarker | static_cast<uint32_t>(k);
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

int ScalarMarkerIndex(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits & kScalarMarkerMask) == kScalarMarker ? static_cast<int>(bits & ~kScalarMarkerMask)
                                                     : -1;
}

absl::Status RegionsUnimplemented(const std::string& where, const std::string& what) {
  return absl::UnimplementedError(absl::StrCat(
      where, ": ", what, " (loops are lowered when their bodies have static "
      "shapes and loop-dependent view/assemble offsets)"));
}

namespace {

// The flattened graph and what each of its ops came from.
class Flattener {
 public:
  explicit Flattener(const TensorGraph& g) : g_(g), alias_(g.values.size()) {
    for (size_t v = 0; v < alias_.size(); ++v) alias_[v] = static_cast<int>(v);
    dynamic_alias_.assign(g.values.size(), false);
    for (const TensorOp& op : g.ops) CollectIndices(op);
  }

  absl::Status Run() {
    flat_.name = g_.name;
    flat_.values = g_.values;
    flat_.params = g_.params;
    if (absl::Status s = Walk(g_.ops, "", {}); !s.ok()) return s;
    for (TensorParam& p : flat_.params) {
      if (p.out_value >= 0) p.out_value = Resolve(p.out_value);
    }
    return absl::OkStatus();
  }

  // The result (once, after Run).
  FlatGraph Take() {
    FlatGraph out;
    out.graph = std::move(flat_);
    out.op_nest = std::move(op_nest_);
    out.fusion_class = std::move(fusion_class_);
    out.labels = std::move(labels_);
    out.loops = std::move(loops_);
    out.top_checks = std::move(top_checks_);
    out.dynamic_offsets = std::move(dynamic_);
    out.offset_scope = std::move(scope_);
    out.offset_bit = std::move(bit_);
    out.dynamic_scalars = std::move(scalars_);
    out.runtime_shape = std::move(runtime_shape_);
    return out;
  }

 private:
  void CollectIndices(const TensorOp& op) {
    if (op.info->kind == "loop") indices_.insert(std::get<std::string>(op.attrs.at("index")));
    for (const TensorRegion& r : op.regions) {
      for (const TensorOp& inner : r.ops) CollectIndices(inner);
    }
  }

  bool UsesIndex(const SymExpr& e) const {
    for (const std::string& s : e.Symbols()) {
      if (indices_.count(s) > 0) return true;
    }
    return false;
  }

  // Whether a dim is an extent the tasks get at launch, lowered at its
  // constant bound: one that depends on a loop index (a tail, min(64, n - i))
  // or one with a constant bound (min(64, n), a select between sizes: a
  // clipped view, a valid shape), which two probe sizes could not tell
  // apart.
  bool RuntimeExtent(const SymExpr& e) const {
    if (e.IsConstant()) return false;
    return UsesIndex(e) || e.ConstantUpperBound().has_value();
  }

  // Whether `to` differs from `from` only in size-1 dims.
  static bool SqueezeOnly(const SymShape& to, const SymShape& from) {
    SymShape a, b;
    for (const SymExpr& e : to) {
      if (!(e == SymExpr(1))) a.push_back(e);
    }
    for (const SymExpr& e : from) {
      if (!(e == SymExpr(1))) b.push_back(e);
    }
    return a == b;
  }

  int Resolve(int v) const {
    while (alias_[v] != v) v = alias_[v];
    return v;
  }

  // The marker of `e` (interned), used at loop nest `nest`.
  absl::StatusOr<int64_t> Marker(const SymExpr& e, const std::string& where,
                                 const std::vector<int>& nest) {
    for (size_t k = 0; k < dynamic_.size(); ++k) {
      if (dynamic_[k] == e) return int64_t{1} << (kMarkerShift + bit_[k]);
    }
    std::vector<int> scope = nest;
    const std::set<std::string> symbols = e.Symbols();
    while (!scope.empty() && (loops_[scope.back()].kind != LoopInfo::kLoop ||
                              symbols.count(loops_[scope.back()].index) == 0)) {
      scope.pop_back();
    }
    std::vector<bool> taken(kMarkerBits, false);
    for (size_t k = 0; k < dynamic_.size(); ++k) {
      if (IsPrefix(scope_[k], scope) || IsPrefix(scope, scope_[k])) taken[bit_[k]] = true;
    }
    const int bit = static_cast<int>(std::find(taken.begin(), taken.end(), false) -
                                     taken.begin());
    if (bit >= kMarkerBits) {
      return RegionsUnimplemented(where, absl::StrCat(
          "more than ", kMarkerBits, " distinct loop-dependent offsets in one nest "
          "of loops (loops one after another do not add up)"));
    }
    dynamic_.push_back(e);
    scope_.push_back(std::move(scope));
    bit_.push_back(bit);
    return int64_t{1} << (kMarkerShift + bit);
  }

 private:
  absl::Status Walk(const std::vector<TensorOp>& ops, const std::string& prefix,
                    const std::vector<int>& nest) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const TensorOp& op = ops[i];
      const std::string label = absl::StrCat(prefix, "op #", i);
      const std::string where = absl::StrCat(label, " ", Quote(op.info->kind));
      if (op.info->kind == "if") {
        // Both branches are lowered, each in place on the carried buffers;
        // the runtime expands the one the condition picks.
        const int if_id = next_if_++;
        pto::v1::DimExpr cond;
        const AttrValue& c = op.attrs.at("cond");
        if (const int64_t* i = std::get_if<int64_t>(&c)) {
          cond.set_constant(*i);
        } else {
          cond = std::get<CondExpr>(c).ToProto();
        }
        std::vector<int> carried;
        for (int v : op.inputs) carried.push_back(Resolve(v));
        for (int r = 0; r < 2; ++r) {
          LoopInfo branch;
          branch.kind = r == 0 ? LoopInfo::kThen : LoopInfo::kElse;
          branch.if_id = if_id;
          branch.cond = cond;
          const int id = static_cast<int>(loops_.size());
          loops_.push_back(std::move(branch));
          const TensorRegion& region = op.regions[r];
          for (size_t k = 0; k < region.args.size(); ++k) alias_[region.args[k]] = carried[k];
          std::vector<int> inner = nest;
          inner.push_back(id);
          ++segment_;
          if (absl::Status s = Walk(region.ops, absl::StrCat(label, r == 0 ? " then " : " else "),
                                    inner);
              !s.ok()) {
            return s;
          }
          for (size_t k = 0; k < carried.size(); ++k) {
            absl::StatusOr<int> v = InPlace(where, Resolve(region.results[k]), carried[k], inner);
            if (!v.ok()) return v.status();
            carried[k] = *v;  // the else branch (and what follows) reads it
          }
          ++segment_;
        }
        for (size_t k = 0; k < op.outputs.size(); ++k) alias_[op.outputs[k]] = carried[k];
        continue;
      }
      if (op.info->kind == "loop") {
        LoopInfo loop;
        loop.index = std::get<std::string>(op.attrs.at("index"));
        loop.start = AttrExpr(op, "start");
        loop.stop = AttrExpr(op, "stop");
        loop.step = std::get<int64_t>(op.attrs.at("step"));
        const int id = static_cast<int>(loops_.size());
        loops_.push_back(std::move(loop));
        const TensorRegion& body = op.regions[0];
        for (size_t k = 0; k < body.args.size(); ++k) {
          alias_[body.args[k]] = Resolve(op.inputs[k]);
        }
        std::vector<int> inner = nest;
        inner.push_back(id);
        ++segment_;
        if (absl::Status s = Walk(body.ops, absl::StrCat(label, " body "), inner);
            !s.ok()) {
          return s;
        }
        for (size_t k = 0; k < op.outputs.size(); ++k) {
          absl::StatusOr<int> r =
              InPlace(where, Resolve(body.results[k]), Resolve(op.inputs[k]), inner);
          if (!r.ok()) return r.status();
          alias_[op.outputs[k]] = *r;
        }
        ++segment_;
        continue;
      }
      if (op.info->kind == "concat" && SymbolicConcatOffsets(op)) {
        if (absl::Status s = ConcatAsAssembles(op, where, nest); !s.ok()) return s;
        continue;
      }
      TensorOp copy = op;
      for (int& v : copy.inputs) v = Resolve(v);
      for (int o : op.outputs) {
        // A dim that depends on a loop index (a tail, min(64, n - i)) is
        // lowered at its constant bound; the tasks get the actual extent.
        const SymShape& shape = g_.values[o].sym_shape;
        bool dynamic_shape = false;
        for (size_t d = 0; d < shape.size(); ++d) {
          if (!RuntimeExtent(shape[d])) continue;
          std::optional<int64_t> bound = shape[d].ConstantUpperBound();
          if (!bound || *bound <= 0) {
            return RegionsUnimplemented(where, absl::StrCat(
                "its result's dim ", d, " (", shape[d].ToString(), ") depends on a "
                "loop index and has no constant bound (write it min(c, ...))"));
          }
          if (*bound > kMaxElements) {
            return absl::InvalidArgumentError(absl::StrCat(
                where, ": its result's dim ", d, " (", shape[d].ToString(),
                ") is bounded by ", *bound, ", more than ", kMaxElements,
                " (the limit of elements per tensor)"));
          }
          flat_.values[o].shape[d] = *bound;
          flat_.values[o].sym_shape[d] = SymExpr(*bound);
          dynamic_shape = true;
        }
        if (dynamic_shape) {
          // The bounded dims with the static ones: within the element limit.
          int64_t elements = 1;
          for (int64_t d : flat_.values[o].shape) {
            std::optional<int64_t> n = CheckedMul(elements, d > 0 ? d : 1);
            if (!n || *n > kMaxElements) {
              return absl::InvalidArgumentError(absl::StrCat(
                  where, ": its result ", FormatSymShape(shape), " at its dims' bounds ",
                  FormatDims(flat_.values[o].shape), " has more than ", kMaxElements,
                  " elements (the limit)"));
            }
            elements = *n;
          }
        }
        if (dynamic_shape) runtime_shape_[o] = shape;
      }
      if (absl::Status s = LowerAttrs(where, nest, &copy); !s.ok()) return s;
      flat_.ops.push_back(std::move(copy));
      op_nest_.push_back(nest);
      labels_.push_back(where);
      fusion_class_.push_back(segment_);
    }
    return absl::OkStatus();
  }

  // A carried tensor lives in its input's buffer: a body result that is the
  // arg, or assembled into it, already is; any other result (acc = acc + x:
  // a new value) is stored into that buffer at the end of the body (an
  // assemble at offset 0, fused after the result's producer). Returns the
  // value the loop's output stands for.
  absl::StatusOr<int> InPlace(const std::string& where, int result, int carried,
                              const std::vector<int>& nest) {
    for (int v = result;;) {
      if (v == carried) return result;
      const TensorOp* def = Definer(v);
      if (def == nullptr || def->info->kind != "assemble") break;
      v = def->inputs[1];
    }
    const TensorOp* producer = Definer(result);
    const std::vector<int64_t>& shape = flat_.values[result].shape;
    // A matmul's result: the cube group stores it into the carried buffer
    // (the assemble joins it); its tile is the cube's output block.
    const bool cube = producer != nullptr &&
                      producer->info->category == OpCategory::kMatmul &&
                      producer->cube_tile.size() == 6 && shape.size() >= 2;
    if (producer == nullptr ||
        (!cube && (!producer->info->needs_vec_tile ||
                   producer->info->category == OpCategory::kReduce ||
                   producer->vec_tile.size() != shape.size()))) {
      return RegionsUnimplemented(where, "a body result that is neither the carried "
                                  "arg, a value assembled into it, nor computed "
                                  "by an elementwise op or a matmul in the body");
    }
    std::vector<int64_t> tile = producer->vec_tile;
    if (cube) {
      tile.assign(shape.size(), 1);
      tile[shape.size() - 2] = producer->cube_tile[0];
      tile[shape.size() - 1] = producer->cube_tile[4];
    }
    TensorOp store;
    store.info = FindOp("assemble");
    store.name = "carry";
    store.inputs = {result, carried};
    store.attrs["offsets"] = std::vector<int64_t>(shape.size(), 0);
    for (size_t d = 0; d < shape.size(); ++d) {
      // (A symbolic dim, kSymbolicDim, keeps the producer's tile.)
      store.vec_tile.push_back(shape[d] > 0 ? std::min(tile[d], shape[d]) : tile[d]);
    }
    const int out = static_cast<int>(flat_.values.size());
    flat_.values.push_back(flat_.values[carried]);
    alias_.push_back(out);
    dynamic_alias_.push_back(false);
    store.outputs = {out};
    flat_.ops.push_back(std::move(store));
    op_nest_.push_back(nest);
    labels_.push_back(absl::StrCat(where, " (storing a carried result)"));
    fusion_class_.push_back(segment_);
    return out;
  }

  // The dim concat `op` joins along (normalized).
  int ConcatDim(const TensorOp& op) const {
    const int64_t rank = static_cast<int64_t>(g_.values[op.outputs[0]].sym_shape.size());
    const int64_t d = std::get<int64_t>(op.attrs.at("dim"));
    return static_cast<int>(d < 0 ? d + rank : d);
  }

  // Whether an input of concat `op` other than the last has a symbolic
  // extent in the concat dim: the offsets of those after it are symbolic.
  bool SymbolicConcatOffsets(const TensorOp& op) const {
    const int d = ConcatDim(op);
    for (size_t k = 0; k + 1 < op.inputs.size(); ++k) {
      if (!g_.values[op.inputs[k]].sym_shape[d].IsConstant()) return true;
    }
    return false;
  }

  // A value of `like`'s type that no op defines: the buffer an assemble
  // chain writes into (its GM buffer is allocated for it, or it is a
  // parameter's when the chain's result is bound to one).
  int NewValue(int like) {
    const int v = static_cast<int>(flat_.values.size());
    flat_.values.push_back(flat_.values[like]);
    alias_.push_back(v);
    dynamic_alias_.push_back(false);
    return v;
  }

  // concat(x0, x1, ...) along d whose offsets are symbolic (x0 [n, 8] then
  // x1 [m, 8]: x1 at row n) is one assemble per input at its offset, the
  // sum of the extents before it, into the result's buffer: the static
  // concat lowering needs constant offsets (expand_to_tiles.cc
  // ConcatOffsets), while an assemble's symbolic offset is a marker like a
  // view's, with a region check at launch labelled by the concat and the
  // input ("op #2 \"concat\" input 1"). Each assemble fuses after its
  // input's producer, or copies a parameter or view in a group of its own.
  absl::Status ConcatAsAssembles(const TensorOp& op, const std::string& where,
                                 const std::vector<int>& nest) {
    const int out = op.outputs[0];
    const int d = ConcatDim(op);
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      for (const SymExpr& e : g_.values[op.inputs[k]].sym_shape) {
        if (UsesIndex(e)) {
          return RegionsUnimplemented(where, absl::StrCat(
              "input ", k, " ", FormatSymShape(g_.values[op.inputs[k]].sym_shape),
              " has a dim that depends on a loop index, and the concat's offsets are "
              "symbolic (assemble each input into a view of the output)"));
        }
      }
    }
    int dst = NewValue(out);  // the result's buffer before any input is in it
    SymExpr at(0);
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      TensorOp a;
      a.info = FindOp("assemble");
      a.name = op.name;
      a.inputs = {Resolve(op.inputs[k]), dst};
      std::vector<SymExpr> offsets(g_.values[out].sym_shape.size(), SymExpr(0));
      offsets[d] = at;
      a.attrs["offsets"] = std::move(offsets);
      a.vec_tile = op.vec_tile;
      dst = k + 1 == op.inputs.size() ? out : NewValue(out);
      a.outputs = {dst};
      const std::string label = absl::StrCat(where, " input ", k);
      if (absl::Status s = LowerAttrs(label, nest, &a); !s.ok()) return s;
      flat_.ops.push_back(std::move(a));
      op_nest_.push_back(nest);
      labels_.push_back(label);
      fusion_class_.push_back(segment_);
      at = at + g_.values[op.inputs[k]].sym_shape[d];
    }
    return absl::OkStatus();
  }

  // A value's symbolic shape as the graph gives it (values the flattener
  // adds: as it made them).
  const SymShape& SymShapeOf(int v) const {
    return v < static_cast<int>(g_.values.size()) ? g_.values[v].sym_shape
                                                   : flat_.values[v].sym_shape;
  }

  const TensorOp* Definer(int v) const {
    for (auto it = flat_.ops.rbegin(); it != flat_.ops.rend(); ++it) {
      for (int o : it->outputs) {
        if (o == v) return &*it;
      }
    }
    return nullptr;
  }

  static SymExpr AttrExpr(const TensorOp& op, const std::string& name) {
    const AttrValue& a = op.attrs.at(name);
    if (const int64_t* i = std::get_if<int64_t>(&a)) return SymExpr(*i);
    return std::get<SymExpr>(a);
  }

  // Symbolic attributes become ints: loop-dependent view/assemble offsets
  // markers (and a region check), anything else refused.
  absl::Status LowerAttrs(const std::string& where, const std::vector<int>& nest,
                          TensorOp* op) {
    const std::string& kind = op->info->kind;
    bool dynamic_input = false;
    for (int v : op->inputs) dynamic_input = dynamic_input || dynamic_alias_[v];
    if (kind == "view") ComposeView(where, nest, op, &dynamic_input);
    bool dynamic = false, checked = false;
    for (const AttrSpec& spec : op->info->attrs) {
      // A scalar operand over symbols: a marker until it becomes a dynamic
      // arg of its group (bind_dynamic_args.h).
      auto it = op->attrs.find(spec.name);
      if (spec.type != AttrType::kFloat || it == op->attrs.end()) continue;
      if (const SymExpr* e = std::get_if<SymExpr>(&it->second)) {
        const int k = static_cast<int>(
            std::find(scalars_.begin(), scalars_.end(), *e) - scalars_.begin());
        if (k == static_cast<int>(scalars_.size())) scalars_.push_back(*e);
        it->second = ScalarMarker(k);
      } else if (const double* d = std::get_if<double>(&it->second);
                 d != nullptr && ScalarMarkerIndex(*d) >= 0) {
        return RegionsUnimplemented(where, absl::StrCat(
            "attrs[", Quote(spec.name), "] is ", absl::StrFormat("%a", *d),
            ", a value this compiler uses internally for scalars over symbols"));
      }
    }
    for (auto& [name, value] : op->attrs) {
      if (std::holds_alternative<SymExpr>(value) ||
          std::holds_alternative<CondExpr>(value)) {
        return RegionsUnimplemented(where, absl::StrCat("attrs[", Quote(name), "] is symbolic"));
      }
      const auto* list = std::get_if<std::vector<SymExpr>>(&value);
      if (list == nullptr) continue;
      if (name == "shape" && kind == "view") {
        // Its result's dims were bounded above: the view reads at the bound.
        // A dim that is a parameter's symbol (x[i:i+4, :] of x [n, k]) stays
        // symbolic: the lowering reads the result's shape, not this attr.
        std::vector<int64_t> ints;
        bool parameter_symbols = false;
        for (const SymExpr& e : *list) {
          std::optional<int64_t> c = e.AsConstant();
          if (!c && RuntimeExtent(e)) c = e.ConstantUpperBound();
          if (!c && !RuntimeExtent(e)) {
            parameter_symbols = true;
            c = 0;
          }
          if (!c) {
            return RegionsUnimplemented(where, absl::StrCat(
                "attrs[\"shape\"] ", FormatSymShape(*list),
                " depends on a loop index without a constant bound"));
          }
          ints.push_back(*c);
        }
        if (!parameter_symbols) value = std::move(ints);
        continue;
      }
      if (name == "shape" && kind == "reshape") {
        // [B, S, H] -> [B*S, H] of a parameter's symbolic S: the lowering
        // reads the result's shape; the load's strides come from it
        // (TileInstr::sym_view_shape). A reshape that only adds or drops
        // size-1 dims keeps its input's extents: those that are extents at
        // launch are read at their bounds, like a view's.
        bool runtime = false;
        for (const SymExpr& e : *list) runtime = runtime || RuntimeExtent(e);
        if (!runtime) continue;
        if (!SqueezeOnly(*list, SymShapeOf(op->inputs[0]))) {
          return RegionsUnimplemented(where, absl::StrCat(
              "attrs[\"shape\"] ", FormatSymShape(*list),
              " depends on a loop index or a run-time extent and merges or splits "
              "dims (reshape a view of static shape)"));
        }
        std::vector<int64_t> ints;
        for (const SymExpr& e : *list) {
          ints.push_back(e.AsConstant().value_or(e.ConstantUpperBound().value_or(0)));
        }
        value = std::move(ints);
        continue;
      }
      if (name == "shape" && kind == "full") {
        // full of a parameter's symbolic size: the lowering reads the
        // result's shape, as a reshape's.
        bool runtime = false;
        for (const SymExpr& e : *list) runtime = runtime || RuntimeExtent(e);
        if (!runtime) continue;
      }
      if (name != "offsets" || (kind != "view" && kind != "assemble")) {
        return RegionsUnimplemented(where, absl::StrCat(
            "attrs[", Quote(name), "] ", FormatSymShape(*list),
            " depends on symbols (extents that depend on loop indices are not "
            "lowered yet)"));
      }
      std::vector<int64_t> ints;
      for (const SymExpr& e : *list) {
        if (std::optional<int64_t> c = e.AsConstant()) {
          ints.push_back(*c);
          continue;
        }
        absl::StatusOr<int64_t> m = Marker(e, where, nest);
        if (!m.ok()) return m.status();
        ints.push_back(*m);
      }
      AddRegionCheck(where, nest, *op, *list);
      checked = true;
      value = std::move(ints);
      dynamic = true;
    }
    if (!checked && (kind == "view" || kind == "assemble")) {
      // Static offsets into a tensor with symbolic dims, or a symbolic
      // extent (x[:, 1:] of x [4, n]): checked at launch too.
      const int extent_of = kind == "view" ? op->outputs[0] : op->inputs[0];
      const int bound_of = kind == "view" ? op->inputs[0] : op->inputs[1];
      if (!StaticDims(SymShapeOf(extent_of)) || !StaticDims(SymShapeOf(bound_of))) {
        std::vector<SymExpr> offsets;
        const AttrValue& o = op->attrs.at("offsets");
        if (const auto* ints = std::get_if<std::vector<int64_t>>(&o)) {
          for (int64_t x : *ints) offsets.push_back(SymExpr(x));
        } else if (const auto* exprs = std::get_if<std::vector<SymExpr>>(&o)) {
          offsets = *exprs;
        }
        AddRegionCheck(where, nest, *op, offsets);
      }
    }
    if (dynamic && kind == "view" && dynamic_input) {
      return RegionsUnimplemented(where, "a view with loop-dependent offsets of a layout op "
                                  "(reshape, permute, ...) of a view with such offsets "
                                  "(take the view before the layout op)");
    }
    if ((dynamic && kind == "view") ||
        (dynamic_input && op->info->category == OpCategory::kLayout &&
         kind != "assemble" && kind != "concat")) {
      for (int o : op->outputs) dynamic_alias_[o] = true;
    }
    return absl::OkStatus();
  }

  // A check at launch that view/assemble `op` at `offsets` lies inside its
  // tensor, before the tasks of its loop body (or of the whole program, at
  // the top level).
  void AddRegionCheck(const std::string& where, const std::vector<int>& nest,
                      const TensorOp& op, const std::vector<SymExpr>& offsets) {
    const bool view = op.info->kind == "view";
    pto::v1::RegionCheck check;
    check.set_label(where);
    for (const SymExpr& e : offsets) *check.add_offsets() = e.ToProto();
    const int extent_of = view ? op.outputs[0] : op.inputs[0];
    const int bound_of = view ? op.inputs[0] : op.inputs[1];
    for (const SymExpr& d : SymShapeOf(extent_of)) *check.add_extent() = SymExprToDim(d);
    for (const SymExpr& d : SymShapeOf(bound_of)) *check.add_bound() = SymExprToDim(d);
    (nest.empty() ? top_checks_ : loops_[nest.back()].checks).push_back(std::move(check));
  }

  // A view with loop-dependent offsets of another such view would add two
  // markers in one access: it becomes one view of the inner view's input at
  // the summed offsets (both are affine in the indices), after a region
  // check of the outer view inside the inner one. Records where each view
  // with loop-dependent offsets (or of such a view) starts in its root.
  void ComposeView(const std::string& where, const std::vector<int>& nest, TensorOp* op,
                   bool* dynamic_input) {
    AttrValue& value = op->attrs.at("offsets");
    std::vector<SymExpr> own;
    if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
      for (int64_t x : *ints) own.push_back(SymExpr(x));
    } else if (const auto* exprs = std::get_if<std::vector<SymExpr>>(&value)) {
      own = *exprs;
    } else {
      return;
    }
    bool own_dynamic = false;
    for (const SymExpr& e : own) own_dynamic = own_dynamic || UsesIndex(e);
    const int in = op->inputs[0], out = op->outputs[0];
    auto it = view_root_.find(in);
    if (it == view_root_.end()) {
      if (own_dynamic) view_root_[out] = {in, own};
      return;
    }
    std::vector<SymExpr> sum = it->second.second;
    for (size_t d = 0; d < sum.size() && d < own.size(); ++d) sum[d] = sum[d] + own[d];
    const int root = it->second.first;
    view_root_[out] = {root, sum};
    if (!own_dynamic || !dynamic_alias_[in] || nest.empty()) return;
    pto::v1::RegionCheck check;
    check.set_label(absl::StrCat(where, " (inside the view it takes)"));
    for (const SymExpr& e : own) *check.add_offsets() = e.ToProto();
    for (const SymExpr& d : g_.values[out].sym_shape) *check.add_extent() = SymExprToDim(d);
    for (const SymExpr& d : g_.values[in].sym_shape) *check.add_bound() = SymExprToDim(d);
    loops_[nest.back()].checks.push_back(std::move(check));
    op->inputs[0] = root;
    value = std::move(sum);
    *dynamic_input = dynamic_alias_[root];
  }

  const TensorGraph& g_;
  TensorGraph flat_;
  std::map<int, std::pair<int, std::vector<SymExpr>>> view_root_;  // ComposeView
  std::vector<int> alias_;              // region arg / loop output -> value
  std::vector<bool> dynamic_alias_;     // views with loop-dependent offsets
  std::set<std::string> indices_;       // every loop index
  std::vector<std::vector<int>> op_nest_;  // per flat op: enclosing loops
  std::vector<int> fusion_class_;       // per flat op
  std::vector<std::string> labels_;     // per flat op
  int segment_ = 0;
  int next_if_ = 0;
  std::vector<LoopInfo> loops_;
  std::vector<pto::v1::RegionCheck> top_checks_;  // views outside loops
  std::vector<SymExpr> dynamic_;        // per dynamic offset
  std::vector<SymExpr> scalars_;        // per scalar marker
  std::vector<std::vector<int>> scope_;  // per dynamic offset (see kMarkerBits)
  std::vector<int> bit_;                // per dynamic offset: its marker bit
  // Values whose dims depend on loop indices: their shapes (lowered at the
  // bounds).
  std::map<int, SymShape> runtime_shape_;
};

}  // namespace

absl::StatusOr<std::pair<int, int64_t>> DecodeMarker(int64_t offset) {
  if (offset < (int64_t{1} << kMarkerShift)) return std::make_pair(-1, offset);
  const int64_t markers = offset >> kMarkerShift;
  if ((markers & (markers - 1)) != 0) {
    return absl::UnimplementedError(
        "two loop-dependent offsets add up in one access (a view of a view)");
  }
  return std::make_pair(__builtin_ctzll(static_cast<uint64_t>(markers)),
                        offset & kStaticMask);
}

absl::StatusOr<int> FlatGraph::MarkerAt(int bit, const std::vector<int>& nest) const {
  for (size_t k = 0; k < dynamic_offsets.size(); ++k) {
    if (offset_bit[k] == bit && IsPrefix(offset_scope[k], nest)) return static_cast<int>(k);
  }
  return absl::InternalError(absl::StrCat("no loop-dependent offset with marker bit ",
                                          bit, " in scope"));
}

absl::StatusOr<FlatGraph> FlattenRegions(const TensorGraph& graph) {
  Flattener flattener(graph);
  if (absl::Status s = flattener.Run(); !s.ok()) return s;
  return flattener.Take();
}

}  // namespace pto::compiler
