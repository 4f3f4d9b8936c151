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
    std::string operator()(const SymExpr& e) const { return e.ToString(); }
    std::string operator()(const std::vector<SymExpr>& l) const {
      return FormatSymShape(l);
    }
    std::string operator()(const CondExpr& c) const {
      return absl::StrCat("(", c.ToString(), ")");
    }
  };
  return std::visit(Visitor{}, v);
}

// f32[16,64], or with a valid region: f32[16,64] valid [min(16, n-i*16),64].
std::string ValueType(const TensorValue& v) {
  if (v.static_shape.empty()) {
    return absl::StrCat(DTypeShortName(v.dtype), FormatSymShape(v.sym_shape));
  }
  return absl::StrCat(DTypeShortName(v.dtype), FormatSymShape(v.static_shape), " valid ",
                      FormatSymShape(v.sym_shape));
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

bool TensorGraph::HasRegions() const {
  for (const TensorOp& op : ops) {
    if (!op.regions.empty()) return true;
  }
  return false;
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

namespace {

const char* RegionName(const TensorOp& op, size_t r) {
  if (op.info->kind == "if") return r == 0 ? "then" : "else";
  return "body";
}

std::string Refs(const std::vector<int>& values) {
  std::vector<std::string> out;
  for (int v : values) out.push_back(absl::StrCat("%", v));
  return absl::StrJoin(out, ", ");
}

void PrintOps(const TensorGraph& g, const std::vector<TensorOp>& ops,
              int indent, std::string* out) {
  const std::string pad(indent, ' ');
  for (const TensorOp& op : ops) {
    std::vector<std::string> outs;
    for (int o : op.outputs) {
      outs.push_back(absl::StrCat("%", o, ":", ValueType(g.values[o])));
    }
    std::string line = absl::StrCat(pad, absl::StrJoin(outs, ", "), " = ",
                                    op.info->kind, " ", Refs(op.inputs));
    for (const auto& [name, value] : op.attrs) {
      absl::StrAppend(&line, " ", SanitizeIdentifier(name, 64, "attr"), "=",
                      FormatAttr(value));
    }
    if (!op.cube_tile.empty()) {
      const std::vector<int64_t>& c = op.cube_tile;
      absl::StrAppend(&line, "  cube_tile m=[", c[0], ",", c[1], "] k=[", c[2],
                      ",", c[3], "] n=[", c[4], ",", c[5], "]");
    } else if (op.info->category != OpCategory::kControl) {
      absl::StrAppend(&line, "  tile=", FormatDims(op.vec_tile));
    }
    absl::StrAppend(out, line, "\n");
    for (size_t r = 0; r < op.regions.size(); ++r) {
      const TensorRegion& region = op.regions[r];
      absl::StrAppend(out, pad, "  ", RegionName(op, r), " (", Refs(region.args),
                      "):\n");
      PrintOps(g, region.ops, indent + 4, out);
      absl::StrAppend(out, pad, "    yield ", Refs(region.results), "\n");
    }
  }
}

}  // namespace

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
  PrintOps(g, g.ops, 2, &out);
  return out;
}

}  // namespace pto::compiler
