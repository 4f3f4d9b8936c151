#include "compiler/ir/tensor_graph.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

std::string FormatAttr(const AttrValue& v) {
  struct Visitor {
    std::string operator()(int64_t i) const { return absl::StrCat(i); }
    std::string operator()(double f) const { return absl::StrFormat("%.17g", f); }
    std::string operator()(const std::string& s) const { return Quote(s); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(pto::v1::DataType t) const {
      return DTypeShortName(t);
    }
    std::string operator()(const std::vector<int64_t>& l) const {
      return FormatDims(l);
    }
  };
  return std::visit(Visitor{}, v);
}

std::string ValueType(const TensorValue& v) {
  return absl::StrCat(DTypeShortName(v.dtype), FormatSymShape(v.sym_shape));
}

}  // namespace

std::vector<double> TensorGraph::Scalars(const TensorOp& op) {
  std::vector<double> out;
  for (const AttrSpec& spec : op.info->attrs) {
    if (spec.type != AttrType::kFloat) continue;
    auto it = op.attrs.find(spec.name);
    const double* d =
        it == op.attrs.end() ? nullptr : std::get_if<double>(&it->second);
    out.push_back(d != nullptr ? *d : 0.0);
  }
  return out;
}

bool TensorGraph::HasSymbolicDims() const {
  for (const TensorValue& v : values) {
    for (int64_t d : v.shape) {
      if (d == kSymbolicDim) return true;
    }
  }
  return false;
}

const char* ParamRoleName(pto::v1::ParamRole role) {
  switch (role) {
    case pto::v1::PARAM_ROLE_IN: return "in";
    case pto::v1::PARAM_ROLE_OUT: return "out";
    case pto::v1::PARAM_ROLE_INOUT: return "inout";
    default: return "?";
  }
}

std::string PrintTensorGraph(const TensorGraph& g) {
  std::string out = absl::StrCat("tensor_graph ", Quote(g.name), "\n");
  for (size_t i = 0; i < g.params.size(); ++i) {
    const TensorParam& p = g.params[i];
    int shown = p.in_value >= 0 ? p.in_value : p.out_value;
    absl::StrAppend(&out, "  param #", i, " ",
                    absl::StrFormat("%-5s", ParamRoleName(p.role)), " ");
    if (p.in_value >= 0) absl::StrAppend(&out, "%", p.in_value);
    if (p.in_value >= 0 && p.out_value >= 0) absl::StrAppend(&out, "->");
    if (p.out_value >= 0) absl::StrAppend(&out, "%", p.out_value);
    absl::StrAppend(&out, " ", Quote(p.name), ": ",
                    ValueType(g.values[shown]), "\n");
  }
  for (const TensorOp& op : g.ops) {
    std::vector<std::string> outs, ins;
    for (int o : op.outputs) {
      outs.push_back(absl::StrCat("%", o, ":", ValueType(g.values[o])));
    }
    for (int i : op.inputs) ins.push_back(absl::StrCat("%", i));
    std::string line = absl::StrCat("  ", absl::StrJoin(outs, ", "), " = ",
                                    op.info->kind, " ", absl::StrJoin(ins, ", "));
    for (const auto& [name, value] : op.attrs) {
      absl::StrAppend(&line, " ", SanitizeIdentifier(name, 64, "attr"), "=",
                      FormatAttr(value));
    }
    if (!op.cube_tile.empty()) {
      const std::vector<int64_t>& c = op.cube_tile;
      absl::StrAppend(&line, "  cube_tile m=[", c[0], ",", c[1], "] k=[", c[2],
                      ",", c[3], "] n=[", c[4], ",", c[5], "]");
    } else {
      absl::StrAppend(&line, "  tile=", FormatDims(op.vec_tile));
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

}  // namespace pto::compiler
