#include "compiler/ir/import.h"

#include "absl/container/flat_hash_map.h"

namespace pto::compiler {
namespace {

// The verifier checked every expression parses; a failure here is still an
// error, never a crash.
absl::StatusOr<AttrValue> ConvertAttr(const OpInfo& info, const std::string& name,
                                      const pto::v1::Attribute& a) {
  switch (a.value_case()) {
    case pto::v1::Attribute::kI: return a.i();
    case pto::v1::Attribute::kF: return a.f();
    case pto::v1::Attribute::kS: return a.s();
    case pto::v1::Attribute::kB: return a.b();
    case pto::v1::Attribute::kDtype: return a.dtype();
    case pto::v1::Attribute::kInts:
      return std::vector<int64_t>(a.ints().values().begin(),
                                  a.ints().values().end());
    case pto::v1::Attribute::kExpr: {
      // The verifier checked it parses. An expression that folds to a
      // constant is stored as the int, so both spellings lower and key alike.
      if (name == "cond") {
        absl::StatusOr<CondExpr> c = CondExprFromProto(a.expr());
        if (!c.ok()) return c.status();
        if (c->kind() == CondExpr::kValue && c->Symbols().empty()) {
          absl::StatusOr<bool> value = c->Evaluate({});
          if (!value.ok()) return value.status();
          return static_cast<int64_t>(*value);
        }
        return *std::move(c);
      }
      absl::StatusOr<SymExpr> parsed = SymExprFromProto(a.expr());
      if (!parsed.ok()) return parsed.status();
      SymExpr e = *std::move(parsed);
      if (std::optional<int64_t> c = e.AsConstant()) {
        // A float attribute (a scalar operand) folds to the double.
        for (const AttrSpec& spec : info.attrs) {
          if (spec.name == name && spec.type == AttrType::kFloat) {
            return static_cast<double>(*c);
          }
        }
        return *c;
      }
      return e;
    }
    case pto::v1::Attribute::kExprs: {
      std::vector<SymExpr> list;
      for (const pto::v1::DimExpr& x : a.exprs().values()) {
        absl::StatusOr<SymExpr> e = SymExprFromProto(x);
        if (!e.ok()) return e.status();
        list.push_back(*std::move(e));
      }
      if (std::optional<std::vector<int64_t>> c = StaticDims(list)) return *c;
      return list;
    }
    default: return int64_t{0};  // unreachable: the verifier checked types
  }
}

// Assigns canonical indices as values are defined.
class Importer {
 public:
  explicit Importer(const pto::v1::Graph& g) : g_(g) {
    for (int i = 0; i < g.values_size(); ++i) proto_index_[g.values(i).id()] = i;
  }

  absl::StatusOr<TensorGraph> Run() {
    TensorGraph out;
    out.name = g_.name();
    for (const pto::v1::Parameter& p : g_.params()) {
      TensorParam param;
      param.name = p.name();
      param.role = p.role();
      if (p.role() != pto::v1::PARAM_ROLE_OUT) {
        absl::StatusOr<int> v = Define(p.value_id(), &out);
        if (!v.ok()) return v.status();
        param.in_value = *v;
      }
      out.params.push_back(std::move(param));
    }
    for (const pto::v1::Op& op : g_.ops()) {
      absl::StatusOr<TensorOp> t = ImportOp(op, &out);
      if (!t.ok()) return t.status();
      out.ops.push_back(*std::move(t));
    }
    for (int p = 0; p < g_.params_size(); ++p) {
      const pto::v1::Parameter& param = g_.params(p);
      if (param.role() == pto::v1::PARAM_ROLE_OUT) {
        out.params[p].out_value = canonical_.at(param.value_id());
      } else if (param.role() == pto::v1::PARAM_ROLE_INOUT) {
        out.params[p].out_value = canonical_.at(param.result_value_id());
      }
    }
    return out;
  }

 private:
  absl::StatusOr<TensorOp> ImportOp(const pto::v1::Op& op, TensorGraph* out) {
    TensorOp t;
    t.info = FindOp(op.kind());
    t.name = op.name();
    for (uint32_t id : op.inputs()) t.inputs.push_back(canonical_.at(id));
    for (const pto::v1::Region& r : op.regions()) {
      TensorRegion region;
      for (uint32_t id : r.args()) {
        absl::StatusOr<int> v = Define(id, out);
        if (!v.ok()) return v.status();
        region.args.push_back(*v);
      }
      for (const pto::v1::Op& inner : r.ops()) {
        absl::StatusOr<TensorOp> imported = ImportOp(inner, out);
        if (!imported.ok()) return imported.status();
        region.ops.push_back(*std::move(imported));
      }
      for (uint32_t id : r.results()) region.results.push_back(canonical_.at(id));
      t.regions.push_back(std::move(region));
    }
    for (uint32_t id : op.outputs()) {
      absl::StatusOr<int> v = Define(id, out);
      if (!v.ok()) return v.status();
      t.outputs.push_back(*v);
    }
    for (const auto& [name, attr] : op.attrs()) {
      absl::StatusOr<AttrValue> value = ConvertAttr(*t.info, name, attr);
      if (!value.ok()) return value.status();
      t.attrs[name] = *std::move(value);
    }
    // Only vector ops have a vec_tile (the verifier checked theirs); one sent
    // with a matmul or a loop (pypto attaches the current tile to every op)
    // is not verified, so it is left out rather than read.
    if (t.info->needs_vec_tile) {
      t.vec_tile.assign(op.vec_tile().dims().begin(), op.vec_tile().dims().end());
    }
    if (t.info->category == OpCategory::kMatmul) {
      for (const auto* dims : {&op.cube_tile().m(), &op.cube_tile().k(),
                               &op.cube_tile().n()}) {
        t.cube_tile.insert(t.cube_tile.end(), dims->begin(), dims->end());
      }
    }
    return t;
  }

  absl::StatusOr<int> Define(uint32_t id, TensorGraph* out) {
    const pto::v1::Value& v = g_.values(proto_index_.at(id));
    TensorValue value;
    value.dtype = v.dtype();
    value.name = v.name();
    // Ops compute on the valid region: its dims are the value's shape here;
    // the static shape is kept for the printer.
    const bool partial = v.valid_shape().dims_size() > 0;
    for (const pto::v1::Dim& d : (partial ? v.valid_shape() : v.shape()).dims()) {
      absl::StatusOr<SymExpr> parsed = SymExprFromDim(d);  // the verifier checked it
      if (!parsed.ok()) return parsed.status();
      SymExpr dim = *std::move(parsed);
      value.shape.push_back(dim.AsConstant().value_or(kSymbolicDim));
      value.sym_shape.push_back(std::move(dim));
    }
    if (partial) {
      for (const pto::v1::Dim& d : v.shape().dims()) {
        absl::StatusOr<SymExpr> parsed = SymExprFromDim(d);
        if (!parsed.ok()) return parsed.status();
        value.static_shape.push_back(*std::move(parsed));
      }
    }
    int index = static_cast<int>(out->values.size());
    out->values.push_back(std::move(value));
    canonical_[id] = index;
    return index;
  }

  const pto::v1::Graph& g_;
  absl::flat_hash_map<uint32_t, int> proto_index_;
  absl::flat_hash_map<uint32_t, int> canonical_;
};

}  // namespace

absl::StatusOr<TensorGraph> ImportGraph(const VerifiedGraph& graph) {
  return Importer(graph.proto()).Run();
}

}  // namespace pto::compiler
