#include "compiler/reference/reference_regions.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/reference/reference_eval.h"
#include "runtime/dim_expr.h"

namespace pto::reference {
namespace {

constexpr int64_t kMaxOps = int64_t{1} << 20;

class Unroller {
 public:
  explicit Unroller(const pto::v1::Graph& g) : g_(g) {
    for (const pto::v1::Value& v : g.values()) {
      declared_[v.id()] = &v;
      next_id_ = std::max(next_id_, v.id() + 1);
    }
  }

  absl::StatusOr<pto::v1::Graph> Run() {
    out_.set_schema_version(g_.schema_version());
    out_.set_name(g_.name());
    *out_.mutable_values() = g_.values();
    for (const pto::v1::Op& op : g_.ops()) {
      if (absl::Status s = Op(op, "op"); !s.ok()) return s;
    }
    for (pto::v1::Parameter p : g_.params()) {
      p.set_value_id(Get(p.value_id()));
      if (p.role() == pto::v1::PARAM_ROLE_INOUT) {
        p.set_result_value_id(Get(p.result_value_id()));
      }
      *out_.add_params() = p;
    }
    return out_;
  }

 private:
  uint32_t Get(uint32_t id) const {
    auto it = subst_.find(id);
    return it == subst_.end() ? id : it->second;
  }

  // The dtype of op's first input, or DT_UNSPECIFIED.
  pto::v1::DataType InputType(const pto::v1::Op& op) const {
    if (op.inputs_size() == 0) return pto::v1::DT_UNSPECIFIED;
    auto it = declared_.find(op.inputs(0));
    return it == declared_.end() ? pto::v1::DT_UNSPECIFIED : it->second->dtype();
  }

  absl::StatusOr<int64_t> Eval(const pto::v1::Attribute& a, const std::string& where) {
    if (a.value_case() == pto::v1::Attribute::kI) return a.i();
    absl::StatusOr<int64_t> v = runtime::EvaluateDimExpr(a.expr(), indices_);
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("reference: ", where, ": ", v.status().message()));
    }
    return v;
  }

  absl::Status Region(const pto::v1::Region& r, const std::vector<uint32_t>& carried,
                      const std::string& where, std::vector<uint32_t>* results) {
    for (int k = 0; k < r.args_size(); ++k) subst_[r.args(k)] = carried[k];
    for (const pto::v1::Op& op : r.ops()) {
      if (absl::Status s = Op(op, where); !s.ok()) return s;
    }
    results->clear();
    for (uint32_t id : r.results()) results->push_back(Get(id));
    return absl::OkStatus();
  }

  absl::Status Op(const pto::v1::Op& op, const std::string& where_prefix) {
    const std::string where = absl::StrCat(where_prefix, " '", op.kind(), "'");
    std::vector<uint32_t> carried;
    for (uint32_t id : op.inputs()) carried.push_back(Get(id));
    if (op.kind() == "loop") {
      auto at = [&](const char* name) { return op.attrs().at(name); };
      absl::StatusOr<int64_t> start = Eval(at("start"), where);
      if (!start.ok()) return start.status();
      absl::StatusOr<int64_t> stop = Eval(at("stop"), where);
      if (!stop.ok()) return stop.status();
      const int64_t step = at("step").i();
      const std::string index = at("index").s();
      if (step == 0) return absl::InvalidArgumentError("reference: loop step 0");
      for (int64_t i = *start; step > 0 ? i < *stop : i > *stop; i += step) {
        indices_[index] = i;
        std::vector<uint32_t> results;
        absl::Status s = Region(op.regions(0), carried, where, &results);
        if (!s.ok()) return s;
        carried = results;
      }
      indices_.erase(index);
      for (int k = 0; k < op.outputs_size(); ++k) subst_[op.outputs(k)] = carried[k];
      return absl::OkStatus();
    }
    if (op.kind() == "if") {
      absl::StatusOr<int64_t> cond = Eval(op.attrs().at("cond"), where);
      if (!cond.ok()) return cond.status();
      std::vector<uint32_t> results;
      absl::Status s = Region(op.regions(*cond != 0 ? 0 : 1), carried, where, &results);
      if (!s.ok()) return s;
      for (int k = 0; k < op.outputs_size(); ++k) subst_[op.outputs(k)] = results[k];
      return absl::OkStatus();
    }
    if (out_.ops_size() >= kMaxOps) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reference: unrolling the loops makes more than ", kMaxOps, " ops"));
    }
    pto::v1::Op copy = op;
    copy.clear_inputs();
    for (uint32_t id : carried) copy.add_inputs(id);
    for (auto& [name, a] : *copy.mutable_attrs()) {
      if (a.value_case() == pto::v1::Attribute::kExpr) {
        absl::StatusOr<int64_t> v = Eval(a, where);
        if (!v.ok()) return v.status();
        // A scalar operand over the index (x * i; clip's bounds, full's
        // value) is a float attribute; the others are ints.
        // (arange's "start" too: a loop's own attrs never reach here.)
        if (name == "scalar" || name == "min" || name == "max") {
          // Meeting FP16/BF16 values, rounded to their type through f32,
          // as the kernels round the int64 (host codegen's ScalarOperand).
          const pto::v1::DataType t = InputType(op);
          const bool half = t == pto::v1::DT_FP16 || t == pto::v1::DT_BF16;
          a.set_f(half ? RoundToDType(static_cast<float>(*v), t) : static_cast<double>(*v));
        } else if (name == "value" || name == "start") {
          a.set_f(static_cast<double>(*v));
        } else {
          a.set_i(*v);
        }
      } else if (a.value_case() == pto::v1::Attribute::kExprs) {
        pto::v1::IntList ints;
        for (const pto::v1::DimExpr& e : a.exprs().values()) {
          absl::StatusOr<int64_t> v = runtime::EvaluateDimExpr(e, indices_);
          if (!v.ok()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "reference: ", where, ": attrs[", name, "]: ", v.status().message()));
          }
          ints.add_values(*v);
        }
        *a.mutable_ints() = ints;
      }
    }
    copy.clear_outputs();
    for (uint32_t id : op.outputs()) {
      pto::v1::Value v = *declared_.at(id);
      const uint32_t fresh = next_id_++;
      v.set_id(fresh);
      if (v.valid_shape().dims_size() > 0) {  // the region ops compute on
        *v.mutable_shape() = v.valid_shape();
        v.clear_valid_shape();
      }
      for (pto::v1::Dim& d : *v.mutable_shape()->mutable_dims()) {
        if (d.kind_case() != pto::v1::Dim::kExpr) continue;
        absl::StatusOr<int64_t> n = runtime::EvaluateDim(d, indices_);
        if (!n.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("reference: ", where, ": ", n.status().message()));
        }
        d.set_size(*n);
      }
      *out_.add_values() = std::move(v);
      subst_[id] = fresh;
      copy.add_outputs(fresh);
    }
    *out_.add_ops() = std::move(copy);
    return absl::OkStatus();
  }

  const pto::v1::Graph& g_;
  pto::v1::Graph out_;
  std::map<uint32_t, const pto::v1::Value*> declared_;
  std::map<uint32_t, uint32_t> subst_;
  runtime::SymbolValues indices_;
  uint32_t next_id_ = 1;
};

}  // namespace

bool HasRegions(const pto::v1::Graph& graph) {
  for (const pto::v1::Op& op : graph.ops()) {
    if (op.regions_size() > 0) return true;
  }
  return false;
}

absl::StatusOr<pto::v1::Graph> UnrollRegions(const pto::v1::Graph& graph) {
  return Unroller(graph).Run();
}

}  // namespace pto::reference
