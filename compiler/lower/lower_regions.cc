#include "compiler/lower/lower_regions.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/lower/expand_to_tiles.h"
#include "compiler/lower/lower_symbolic.h"
#include "compiler/util/checked_math.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

// A marker stands for a dynamic offset while the static passes run: bit
// 40 + b, far above any real offset (tensors have at most 2^40 elements),
// so a lowered offset is marker + a static part and a sum of two markers is
// recognisable. Bits are shared between offsets that no group can see both
// of: an offset's *scope* is the loop nest down to the deepest loop whose
// index it uses, and two offsets need different bits only when one scope is
// a prefix of the other (a group sees the offsets of the scopes along its
// own nest). So the limit is kMarkerBits per chain of nested scopes, not per
// kernel: sequential loops (loop_unroll's chunk loops, one loop per layer)
// reuse the bits.
constexpr int kMarkerShift = 40;
constexpr int kMarkerBits = 20;
constexpr int64_t kStaticMask = (int64_t{1} << kMarkerShift) - 1;
// Dynamic-arg slots from here on are interned expressions: GM strides, a
// cube's K, scalar operands (below: offsets).
constexpr int kStrideSlots = 1 << 24;

// A scalar operand over symbols (x * n, x * i: a float attribute holding an
// expr) stands for its dynamic arg while the static passes run as the
// double whose bits are kScalarMarker | k (k: its number), about 2^998: no
// graph's immediate (one equal to a marker is refused) and never folded.
constexpr uint64_t kScalarMarker = 0x7E5CA1A000000000ULL;
constexpr uint64_t kScalarMarkerMask = 0xFFFFFFFF00000000ULL;

double ScalarMarker(int k) {
  const uint64_t bits = kScalarMarker | static_cast<uint32_t>(k);
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// The number of the scalar operand marker `v` stands for, or -1.
int ScalarMarkerIndex(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits & kScalarMarkerMask) == kScalarMarker ? static_cast<int>(bits & ~kScalarMarkerMask)
                                                     : -1;
}

// Whether `prefix` is a prefix of `nest`.
bool IsPrefix(const std::vector<int>& prefix, const std::vector<int>& nest) {
  return prefix.size() <= nest.size() &&
         std::equal(prefix.begin(), prefix.end(), nest.begin());
}

absl::Status Unimplemented(const std::string& where, const std::string& what) {
  return absl::UnimplementedError(absl::StrCat(
      where, ": ", what, " (loops are lowered when their bodies have static "
      "shapes and loop-dependent view/assemble offsets)"));
}

// A scope ops are lowered in: a loop's body, or one branch of an if.
struct LoopInfo {
  enum Kind { kLoop, kThen, kElse };
  Kind kind = kLoop;
  std::string index;         // kLoop
  SymExpr start, stop;
  int64_t step = 1;
  int if_id = -1;            // kThen, kElse: which if (both branches share it)
  pto::v1::DimExpr cond;     // kThen, kElse
  std::vector<pto::v1::RegionCheck> checks;
};

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

  TensorGraph& flat() { return flat_; }
  const std::vector<std::vector<int>>& op_nest() const { return op_nest_; }
  const std::vector<int>& fusion_class() const { return fusion_class_; }
  // Per flat op: where it is in the graph ("op #0 body op #3 \"matmul\""),
  // for errors (pypto maps it to the kernel line that recorded the op).
  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<LoopInfo>& loops() const { return loops_; }
  // Region checks of views and assembles outside loops and branches: the
  // program runs them before any task.
  const std::vector<pto::v1::RegionCheck>& top_checks() const { return top_checks_; }
  const std::vector<SymExpr>& dynamic_offsets() const { return dynamic_; }
  // Per scalar marker (ScalarMarker(k)): the scalar operand's expression.
  const std::vector<SymExpr>& dynamic_scalars() const { return scalars_; }

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
      return Unimplemented(where, absl::StrCat(
          "more than ", kMarkerBits, " distinct loop-dependent offsets in one nest "
          "of loops (loops one after another do not add up)"));
    }
    dynamic_.push_back(e);
    scope_.push_back(std::move(scope));
    bit_.push_back(bit);
    return int64_t{1} << (kMarkerShift + bit);
  }

 public:
  // The dynamic offset whose marker has bit `bit` in a group at `nest`.
  absl::StatusOr<int> MarkerAt(int bit, const std::vector<int>& nest) const {
    for (size_t k = 0; k < dynamic_.size(); ++k) {
      if (bit_[k] == bit && IsPrefix(scope_[k], nest)) return static_cast<int>(k);
    }
    return absl::InternalError(absl::StrCat("no loop-dependent offset with marker bit ",
                                            bit, " in scope"));
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
            return Unimplemented(where, absl::StrCat(
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
      return Unimplemented(where, "a body result that is neither the carried "
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
          return Unimplemented(where, absl::StrCat(
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
      // arg of its group (LowerRegions, below).
      auto it = op->attrs.find(spec.name);
      if (spec.type != AttrType::kFloat || it == op->attrs.end()) continue;
      if (const SymExpr* e = std::get_if<SymExpr>(&it->second)) {
        const int k = static_cast<int>(
            std::find(scalars_.begin(), scalars_.end(), *e) - scalars_.begin());
        if (k == static_cast<int>(scalars_.size())) scalars_.push_back(*e);
        it->second = ScalarMarker(k);
      } else if (const double* d = std::get_if<double>(&it->second);
                 d != nullptr && ScalarMarkerIndex(*d) >= 0) {
        return Unimplemented(where, absl::StrCat(
            "attrs[", Quote(spec.name), "] is ", absl::StrFormat("%a", *d),
            ", a value this compiler uses internally for scalars over symbols"));
      }
    }
    for (auto& [name, value] : op->attrs) {
      if (std::holds_alternative<SymExpr>(value) ||
          std::holds_alternative<CondExpr>(value)) {
        return Unimplemented(where, absl::StrCat("attrs[", Quote(name), "] is symbolic"));
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
            return Unimplemented(where, absl::StrCat(
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
          return Unimplemented(where, absl::StrCat(
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
      if (name != "offsets" || (kind != "view" && kind != "assemble")) {
        return Unimplemented(where, absl::StrCat(
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
      return Unimplemented(where, "a view with loop-dependent offsets of a layout op "
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

 public:
  const std::map<int, SymShape>& runtime_shape() const { return runtime_shape_; }
};

// Splits a lowered offset into (marker bit or -1, static part);
// UNIMPLEMENTED when it holds two markers.
absl::StatusOr<std::pair<int, int64_t>> Decode(int64_t offset) {
  if (offset < (int64_t{1} << kMarkerShift)) return std::make_pair(-1, offset);
  const int64_t markers = offset >> kMarkerShift;
  if ((markers & (markers - 1)) != 0) {
    return absl::UnimplementedError(
        "two loop-dependent offsets add up in one access (a view of a view)");
  }
  return std::make_pair(__builtin_ctzll(static_cast<uint64_t>(markers)),
                        offset & kStaticMask);
}

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
      return Unimplemented(where, absl::StrCat("its inputs' K dims are ", k_expr->ToString(),
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

absl::Status LowerRegions(const TensorGraph& graph, bool fuse, const MemoryModel& memory,
                          TileGraph* tile, BlockGraph* block,
                          pto::v1::ExecuteGraph* execute) {
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
  Flattener flat(graph);
  if (absl::Status s = flat.Run(); !s.ok()) return s;
  ExpandOptions options;
  options.fuse = fuse;
  options.memory = memory;
  options.fusion_class = flat.fusion_class();
  // Rows over a symbolic last dim as row groups when they fit (an if on
  // the row lengths at launch, below); graphs with loops keep the
  // accumulating form.
  options.symbolic_rows = flat.loops().empty();
  // Dims whose extents depend on loop indices: a reduction over one takes
  // the accumulating form (its tiles along the dim fold into one slot, the
  // tail through the generic function), never partial + combine over
  // slots that a short iteration would leave unwritten.
  options.symbolic.assign(flat.flat().values.size(), {});
  for (const auto& [v, shape] : flat.runtime_shape()) {
    for (const SymExpr& d : shape) options.symbolic[v].push_back(!d.IsConstant());
  }
  if (absl::Status s = LowerSymbolic(flat.flat(), options, tile, block, execute);
      !s.ok()) {
    return s;
  }
  // Dynamic offsets: the markers', then GM strides of buffers with dynamic
  // inner dims (added below).
  std::vector<SymExpr> dynamic = flat.dynamic_offsets();
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
    const std::vector<int>& nest = flat.op_nest()[group.ops.front()];
    for (int op : group.ops) {
      if (flat.op_nest()[op] != nest) {
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
        absl::StatusOr<std::pair<int, int64_t>> d = Decode(x.offset);
        if (!d.ok()) {
          return absl::UnimplementedError(absl::StrCat(
              flat.labels()[group.ops.front()], ": ", d.status().message()));
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
        if (k >= static_cast<int>(flat.dynamic_scalars().size())) {
          return absl::InternalError(absl::StrCat("scalar marker ", k, " out of range"));
        }
        // (One equal to a loop-dependent offset, x[i] * i, shares its arg.)
        const int e = intern(flat.dynamic_scalars()[k]);
        const bool offset = e < static_cast<int>(flat.dynamic_offsets().size());
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
      const std::string& where = flat.labels()[group.ops.front()];
      absl::StatusOr<std::optional<SymExpr>> k =
          CubeK(flat.flat().ops[group.ops.front()], flat.runtime_shape(),
                flat.flat().values, where);
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
        absl::StatusOr<std::pair<int, int64_t>> d = Decode(x.offset());
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

  // Groups over dims whose extents depend on loop indices: the template's
  // space is that expression, and a generic function (extents from the
  // task's args) runs the tails; the full-tile function stays static.
  const size_t num_groups = tile->groups.size();
  for (size_t g = 0; g < num_groups; ++g) {
    const TileGroup& group = tile->groups[g];
    const int rank = static_cast<int>(group.space.size());
    std::vector<std::optional<SymExpr>> extent(rank);
    const std::string& where = flat.labels()[group.ops.front()];
    if (group.is_cube) {
      // A cube group's space is its result's: rows and columns of a tail
      // are run-time extents (K, not a space dim, is a dynamic arg).
      absl::Status s =
          CubeExtents(flat.flat().ops[group.ops.front()], flat.runtime_shape(), &extent);
      if (!s.ok()) return s;
    }
    for (int op : group.is_cube ? std::vector<int>{} : group.ops) {
      const TensorOp& t = flat.flat().ops[op];
      std::vector<int> values = t.outputs;
      values.insert(values.end(), t.inputs.begin(), t.inputs.end());
      for (int v : values) {
        auto it = flat.runtime_shape().find(v);
        if (it == flat.runtime_shape().end() ||
            flat.flat().values[v].shape != group.space) {
          continue;
        }
        for (int d = 0; d < rank; ++d) {
          if (it->second[d].IsConstant()) continue;
          if (extent[d] && *extent[d] != it->second[d]) {
            return Unimplemented(where, absl::StrCat(
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
        return Unimplemented(where, "a gather/scatter over a dim whose extent depends on a "
                                    "loop index");
      }
      const bool rows = !group.ub_rows.empty() && extent[rank - 1].has_value();
      // (The accumulating form's tiles along its dim fold in order, tails
      // padded with the identity: any extent works.)
      if ((in.reduce_dim >= 0 && extent[in.reduce_dim].has_value() &&
           in.reduce_dim != group.serial_dim) ||
          rows) {
        return Unimplemented(where, "a reduction over a dim whose extent depends "
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

  // Views and assembles outside loops are checked before any task.
  for (const pto::v1::RegionCheck& c : flat.top_checks()) {
    *execute->add_program()->mutable_check() = c;
  }

  // Rows over symbolic last dims lowered both ways (no loops): the row
  // groups when every row is within its cap, else the accumulating form.
  if (!tile->row_caps.empty()) {
    std::map<std::string, std::pair<SymExpr, int64_t>> caps;  // per row length
    for (const RowCap& c : tile->row_caps) {
      const SymExpr& n = flat.flat().values[c.value].sym_shape.back();
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
    for (size_t g = 0; g < tile->groups.size(); ++g) {
      (tile->groups[g].branch == 1 ? node->mutable_then_body() : node->mutable_else_body())
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
  for (size_t g = 0; g < tile->groups.size(); ++g) {
    const std::vector<int>& nest = flat.op_nest()[tile->groups[g].ops.front()];
    size_t common = 0;
    while (common < path.size() && common < nest.size() && path[common] == nest[common]) {
      ++common;
    }
    path.resize(common);
    open.resize(common + 1);
    for (size_t k = common; k < nest.size(); ++k) {
      const LoopInfo& info = flat.loops()[nest[k]];
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
