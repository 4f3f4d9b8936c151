#include "compiler/verify/verify.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/cond_expr.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/ops/infer.h"
#include "compiler/ops/op_registry.h"
#include "compiler/util/checked_math.h"
#include "compiler/util/strings.h"
#include "compiler/verify/limits.h"

namespace pto::compiler {
namespace {

using pto::v1::Graph;
using pto::v1::Op;
using pto::v1::Value;

constexpr int kUndefined = -1000000;  // definer: not defined yet
constexpr int kByParam = -1;          // definer of params: -1 - param index

// Verification of one graph; members hold what has been seen so far.
class Verifier {
 public:
  explicit Verifier(const Graph& g) : g_(g) {}
  absl::Status Run();

 private:
  absl::Status CheckGraphBounds();
  absl::Status IndexValues();
  absl::Status CheckParams();
  // Checks op `op` labelled `where`; `seq` is its number in program order
  // (regions' ops included, after their op).
  absl::Status CheckOp(const Op& op, const std::string& where,
                       const std::string& short_label);
  // "loop" and "if": attributes, carried types, regions.
  absl::Status CheckControlOp(const Op& op, const std::string& where,
                              const OpInfo& info);
  absl::Status CheckRegion(const Op& op, const std::string& where,
                           const std::vector<int>& ins, int r,
                           const std::string& region_name);
  // A new value `id` (field `field` of `where`) standing for carried input
  // `in`: not defined before, well formed, with `in`'s dtype and shape.
  // `role` says what it is, for the error. Returns its index.
  // The indices of op's inputs, each defined, readable here and well formed.
  absl::StatusOr<std::vector<int>> CheckInputs(const Op& op,
                                               const std::string& where);
  absl::StatusOr<int> CheckCarried(const std::string& where,
                                   const std::string& field, uint32_t id,
                                   int in, int k, const char* role);
  // The expression of attribute `name` (an i or an expr; exprs for a list),
  // its symbols in scope.
  absl::StatusOr<SymExpr> AttrExpr(const std::string& where, const Op& op,
                                   const std::string& name);
  absl::StatusOr<SymShape> AttrExprs(const std::string& where, const Op& op,
                                     const std::string& name);
  // Every symbol of `symbols` is a parameter symbol or an enclosing loop's
  // index; else INVALID_ARGUMENT naming `what`.
  absl::Status CheckInScope(const std::string& where, const std::string& what,
                            const std::set<std::string>& symbols) const;
  bool InRegion() const { return !region_stack_.empty(); }
  // Input `v` may be read here: defined, not inside a region that has
  // ended, not a tensor an enclosing op carries (its region reads the arg).
  absl::Status CheckReadable(const std::string& where, const std::string& field,
                             int v) const;
  // Output `v` is defined here: records its region and checks the symbols
  // of its dims are in scope.
  absl::Status DefineInRegion(const std::string& where, const std::string& field,
                              int v);
  // view/assemble: "offsets" (and "shape") as ints or exprs; fills
  // attrs->sym_* and sets attrs->sym_region when they (or the inputs'
  // dims) are symbolic.
  absl::Status SymbolicRegionAttrs(const std::string& where, const Op& op,
                                   const OpInfo& info, const std::vector<int>& ins,
                                   InferAttrs* attrs);
  absl::Status CheckAttrs(const std::string& where, const Op& op,
                          const OpInfo& info);
  absl::Status CheckCubeTile(const std::string& where, const Op& op);
  absl::Status CheckVecTile(const std::string& where, const Op& op,
                            const Value& shape_source);
  absl::Status CheckParamOutputs();
  absl::Status CheckSymbolsBound();

  // Checks dtype, rank and dims of the value with index `v` (once).
  absl::Status CheckValue(const std::string& where, int v);
  // A value's valid_shape (labelled `at`) against its static `shape`:
  // returns the valid dims, which the ops compute on.
  absl::StatusOr<SymShape> CheckValidShape(const std::string& at, const Value& value,
                                           const SymShape& shape);
  // Looks up `id` for `field` of `where`: INVALID_ARGUMENT when undeclared.
  absl::StatusOr<int> Lookup(const std::string& where, const std::string& field,
                             uint32_t id);
  std::string ParamLabel(int p) const;
  std::string DefinerLabel(int definer) const;

  const Graph& g_;
  absl::flat_hash_map<uint32_t, int> index_of_id_;
  std::vector<int> definer_;        // per value index
  std::vector<bool> value_checked_;
  std::vector<int> last_reader_;    // per value index: last op reading it
  std::vector<SymShape> shape_;     // per value index, once checked
  int64_t total_tiles_ = 0;

  // Regions.
  int num_ops_ = 0;                      // all ops seen, in program order
  std::vector<std::string> op_labels_;   // per op number: "op #3 body op #1"
  std::vector<std::string> op_full_labels_;  // the same with kind and name
  std::vector<int> region_of_;           // per value: defining region (0 = top)
  std::vector<bool> closed_;             // per value: its region has ended
  int next_region_ = 1;
  struct OpenRegion {
    int id;
    std::vector<int> defined;            // values defined in it
    std::vector<int> carried;            // the enclosing op's inputs
    std::string op_label;                // the enclosing op
  };
  std::vector<OpenRegion> region_stack_;
  std::set<std::string> param_symbols_;  // bound by parameter shapes
  std::vector<std::string> indices_;     // enclosing loops' index symbols
  std::set<std::string> all_indices_;    // every loop index in the graph
};

// "op #3 'exp' (name 'x')"; `short_label` is "op #3", or for an op in a
// region "op #2 body op #0".
std::string OpLabel(const std::string& short_label, const Op& op) {
  std::string label = absl::StrCat(short_label, " ", Quote(op.kind(), 32));
  if (!op.name().empty()) absl::StrAppend(&label, " (name ", Quote(op.name()), ")");
  return label;
}

std::string OpLabel(int index, const Op& op) {
  return OpLabel(absl::StrCat("op #", index), op);
}

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

std::string ValueLabel(uint32_t id) { return absl::StrCat("value id ", id); }

absl::Status Verifier::Run() {
  if (absl::Status s = CheckGraphBounds(); !s.ok()) return s;
  if (absl::Status s = IndexValues(); !s.ok()) return s;
  if (absl::Status s = CheckParams(); !s.ok()) return s;
  for (const pto::v1::Parameter& p : g_.params()) {
    for (const SymExpr& d : shape_[index_of_id_.at(p.value_id())]) {
      if (std::optional<std::string> name = d.AsSymbol()) param_symbols_.insert(*name);
    }
  }
  for (int i = 0; i < g_.ops_size(); ++i) {
    if (absl::Status s = CheckOp(g_.ops(i), OpLabel(i, g_.ops(i)),
                                 absl::StrCat("op #", i));
        !s.ok()) {
      return s;
    }
  }
  if (total_tiles_ > kMaxTilesPerGraph) {
    return Invalid("graph", absl::StrCat("the ops split into ", total_tiles_,
                                         " tiles in total (limit ",
                                         kMaxTilesPerGraph, ")"));
  }
  if (absl::Status s = CheckSymbolsBound(); !s.ok()) return s;
  return CheckParamOutputs();
}

// The runtime binds a symbol from a parameter dim that is exactly that
// symbol; a symbol only ever used inside expressions could not be bound.
absl::Status Verifier::CheckSymbolsBound() {
  std::set<std::string> bound;
  for (const pto::v1::Parameter& p : g_.params()) {
    for (const SymExpr& d : shape_[index_of_id_.at(p.value_id())]) {
      if (std::optional<std::string> name = d.AsSymbol()) bound.insert(*name);
    }
  }
  for (int v = 0; v < g_.values_size(); ++v) {
    // Values of regions were checked against their scope when defined.
    if (!value_checked_[v] || region_of_[v] != 0) continue;
    for (size_t d = 0; d < shape_[v].size(); ++d) {
      for (const std::string& name : shape_[v][d].Symbols()) {
        if (bound.count(name) == 0) {
          return Invalid(ValueLabel(g_.values(v).id()), absl::StrCat(
              "shape dim ", d, " (", shape_[v][d].ToString(), ") uses symbol ",
              name, ", which no parameter binds (some parameter's dim must be "
              "exactly ", name, ")"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::CheckGraphBounds() {
  if (g_.schema_version() != pto::v1::SCHEMA_VERSION_1 &&
      g_.schema_version() != pto::v1::SCHEMA_VERSION_2 &&
      g_.schema_version() != pto::v1::SCHEMA_VERSION_3) {
    return Invalid("graph", absl::StrCat("schema_version ",
                                         static_cast<int>(g_.schema_version()),
                                         " is not supported (this compiler "
                                         "reads SCHEMA_VERSION_1 = 1, "
                                         "SCHEMA_VERSION_2 = 2 and "
                                         "SCHEMA_VERSION_3 = 3)"));
  }
  if (g_.name().size() > kMaxNameLength) {
    return Invalid("graph", absl::StrCat("name is ", g_.name().size(),
                                         " chars (limit ", kMaxNameLength, ")"));
  }
  if (g_.ops_size() > kMaxOps) {
    return Invalid("graph", absl::StrCat("ops: ", g_.ops_size(),
                                         " ops (limit ", kMaxOps, ")"));
  }
  if (g_.values_size() > kMaxValues) {
    return Invalid("graph", absl::StrCat("values: ", g_.values_size(),
                                         " values (limit ", kMaxValues, ")"));
  }
  if (g_.params_size() > kMaxParams) {
    return Invalid("graph", absl::StrCat("params: ", g_.params_size(),
                                         " params (limit ", kMaxParams, ")"));
  }
  if (g_.ops_size() == 0) {
    return Invalid("graph", "ops: the graph has no ops");
  }
  return absl::OkStatus();
}

absl::Status Verifier::IndexValues() {
  const int n = g_.values_size();
  definer_.assign(n, kUndefined);
  value_checked_.assign(n, false);
  last_reader_.assign(n, -1);
  shape_.assign(n, {});
  region_of_.assign(n, 0);
  closed_.assign(n, false);
  index_of_id_.reserve(n);
  for (int i = 0; i < n; ++i) {
    const Value& v = g_.values(i);
    auto [it, inserted] = index_of_id_.emplace(v.id(), i);
    if (!inserted) {
      return Invalid(absl::StrCat("values[#", i, "]"),
                     absl::StrCat("id ", v.id(), " is declared twice (also values[#",
                                  it->second, "])"));
    }
    if (v.name().size() > kMaxNameLength) {
      return Invalid(absl::StrCat("values[#", i, "] (id ", v.id(), ")"),
                     absl::StrCat("name is ", v.name().size(), " chars (limit ",
                                  kMaxNameLength, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> Verifier::Lookup(const std::string& where,
                                     const std::string& field, uint32_t id) {
  auto it = index_of_id_.find(id);
  if (it == index_of_id_.end()) {
    return Invalid(where, absl::StrCat(field, ": dangling value id ", id,
                                       " (not declared in graph.values)"));
  }
  return it->second;
}

absl::Status Verifier::CheckValue(const std::string& where, int v) {
  if (value_checked_[v]) return absl::OkStatus();
  const Value& value = g_.values(v);
  const std::string at = absl::StrCat(where, ": ", ValueLabel(value.id()));
  if (!IsSupportedDType(value.dtype())) {
    return Invalid(at, absl::StrCat("dtype ", DTypeEnumName(value.dtype()),
                                    " is not supported (supported: DT_FP32, "
                                    "DT_FP16, DT_BF16, DT_INT8, DT_INT16, "
                                    "DT_INT32, DT_INT64, DT_UINT8, DT_BOOL, "
                                    "DT_DOUBLE, DT_FP8E4M3, DT_FP8E5M2, "
                                    "DT_FP8E8M0)"));
  }
  if (IsFp8DType(value.dtype()) && g_.schema_version() < pto::v1::SCHEMA_VERSION_3) {
    return Invalid(at, absl::StrCat("dtype ", DTypeEnumName(value.dtype()),
                                    " needs schema_version SCHEMA_VERSION_3 = 3"));
  }
  const int rank = value.shape().dims_size();
  if (rank > kMaxRankBound) {
    return Invalid(at, absl::StrCat("shape has rank ", rank, " (limit ",
                                    kMaxRankBound, ")"));
  }
  if (rank < kMinSupportedRank || rank > kMaxSupportedRank) {
    return Invalid(at, absl::StrCat("shape has rank ", rank, "; supported ranks are ",
                                    kMinSupportedRank, "..", kMaxSupportedRank));
  }
  SymShape dims;
  int64_t elements = 1;  // of the static dims; symbolic ones are checked at launch
  for (int d = 0; d < rank; ++d) {
    absl::StatusOr<SymExpr> dim = SymExprFromDim(value.shape().dims(d));
    if (!dim.ok()) {
      return Invalid(at, absl::StrCat("shape dim ", d, " ", dim.status().message()));
    }
    if (std::optional<int64_t> size = dim->AsConstant()) {
      if (*size > kMaxElements || elements > kMaxElements / *size) {
        return Invalid(at, absl::StrCat("shape has more than ", kMaxElements,
                                        " elements (the limit)"));
      }
      elements *= *size;
    }
    dims.push_back(*std::move(dim));
  }
  if (value.valid_shape().dims_size() > 0) {
    absl::StatusOr<SymShape> valid = CheckValidShape(at, value, dims);
    if (!valid.ok()) return valid.status();
    dims = *std::move(valid);
  }
  shape_[v] = std::move(dims);
  value_checked_[v] = true;
  return absl::OkStatus();
}

absl::StatusOr<SymShape> Verifier::CheckValidShape(const std::string& at,
                                                   const Value& value,
                                                   const SymShape& shape) {
  if (g_.schema_version() < pto::v1::SCHEMA_VERSION_2) {
    return Invalid(at, "valid_shape needs schema_version SCHEMA_VERSION_2 = 2");
  }
  const int rank = value.valid_shape().dims_size();
  if (rank != static_cast<int>(shape.size())) {
    return Invalid(at, absl::StrCat("valid_shape has rank ", rank, ", shape ",
                                    FormatSymShape(shape), " has rank ", shape.size()));
  }
  SymShape valid;
  for (int d = 0; d < rank; ++d) {
    absl::StatusOr<SymExpr> dim = SymExprFromDim(value.valid_shape().dims(d));
    if (!dim.ok()) {
      return Invalid(at, absl::StrCat("valid_shape dim ", d, " ", dim.status().message()));
    }
    // At most the static dim, provably: equal, or a constant (or an
    // expression with a constant bound, min(16, n - i*16)) within a static
    // dim. The runtime then only checks it is positive.
    const std::optional<int64_t> size = shape[d].AsConstant();
    const std::optional<int64_t> bound = dim->ConstantUpperBound();
    if (!(*dim == shape[d]) && !(size && bound && *bound <= *size)) {
      return Invalid(at, absl::StrCat(
          "valid_shape dim ", d, " (", dim->ToString(), ") is not provably at most "
          "shape dim ", d, " (", shape[d].ToString(), "); bound it: min(",
          shape[d].ToString(), ", ...)"));
    }
    valid.push_back(*std::move(dim));
  }
  return valid;
}

std::string Verifier::ParamLabel(int p) const {
  const pto::v1::Parameter& param = g_.params(p);
  return absl::StrCat("param #", p, " ", Quote(param.name()));
}

std::string Verifier::DefinerLabel(int definer) const {
  if (definer >= 0) return op_labels_[definer];
  return ParamLabel(kByParam - definer);
}

absl::Status Verifier::CheckParams() {
  // Values the caller's buffers receive: value index -> param index.
  absl::flat_hash_map<int, int> written_by_param;
  for (int p = 0; p < g_.params_size(); ++p) {
    const pto::v1::Parameter& param = g_.params(p);
    const std::string where = ParamLabel(p);
    if (param.name().size() > kMaxNameLength) {
      return Invalid(where, absl::StrCat("name is ", param.name().size(),
                                         " chars (limit ", kMaxNameLength, ")"));
    }
    const auto role = param.role();
    if (role != pto::v1::PARAM_ROLE_IN && role != pto::v1::PARAM_ROLE_OUT &&
        role != pto::v1::PARAM_ROLE_INOUT) {
      return Invalid(where, absl::StrCat("role ", static_cast<int>(role),
                                         " is not in, out or inout"));
    }
    absl::StatusOr<int> v = Lookup(where, "value_id", param.value_id());
    if (!v.ok()) return v.status();
    if (absl::Status s = CheckValue(where + ": value_id", *v); !s.ok()) return s;
    if (g_.values(*v).valid_shape().dims_size() > 0) {
      return Invalid(where, absl::StrCat("value_id: ", ValueLabel(param.value_id()),
                                         " has a valid_shape; a parameter's data is "
                                         "its whole shape"));
    }
    int out = -1;
    if (role == pto::v1::PARAM_ROLE_IN || role == pto::v1::PARAM_ROLE_INOUT) {
      if (definer_[*v] != kUndefined) {
        return Invalid(where, absl::StrCat("value_id: ", ValueLabel(param.value_id()),
                                           " is also the value of ",
                                           DefinerLabel(definer_[*v])));
      }
      definer_[*v] = kByParam - p;
    }
    if (role == pto::v1::PARAM_ROLE_OUT) out = *v;
    if (role == pto::v1::PARAM_ROLE_INOUT) {
      absl::StatusOr<int> r =
          Lookup(where, "result_value_id", param.result_value_id());
      if (!r.ok()) return r.status();
      if (*r == *v) {
        return Invalid(where, "result_value_id equals value_id (the final "
                              "contents must be a new value written by an op)");
      }
      if (absl::Status s = CheckValue(where + ": result_value_id", *r); !s.ok()) {
        return s;
      }
      if (g_.values(*r).valid_shape().dims_size() > 0) {
        return Invalid(where, absl::StrCat(
            "result_value_id: ", ValueLabel(param.result_value_id()),
            " has a valid_shape; a parameter's data is its whole shape"));
      }
      const Value& in = g_.values(*v);
      const Value& res = g_.values(*r);
      if (in.dtype() != res.dtype() || shape_[*v] != shape_[*r]) {
        return Invalid(where, absl::StrCat(
            "result_value_id: ", DTypeShortName(res.dtype()),
            FormatSymShape(shape_[*r]), " does not match value_id's ",
            DTypeShortName(in.dtype()), FormatSymShape(shape_[*v])));
      }
      out = *r;
    }
    if (out >= 0) {
      auto [it, inserted] = written_by_param.emplace(out, p);
      if (!inserted) {
        return Invalid(where, absl::StrCat(ValueLabel(g_.values(out).id()),
                                           " is also written back by ",
                                           ParamLabel(it->second)));
      }
    }
  }
  if (written_by_param.empty()) {
    return Invalid("graph", "params: no out or inout parameter (the kernel "
                            "would compute nothing)");
  }
  // An output value must come from an op, not be some parameter's input.
  for (const auto& [v, p] : written_by_param) {
    if (definer_[v] != kUndefined) {
      return Invalid(ParamLabel(p),
                     absl::StrCat(ValueLabel(g_.values(v).id()),
                                  " is the input of ", DefinerLabel(definer_[v]),
                                  "; an out value must be written by an op"));
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::CheckAttrs(const std::string& where, const Op& op,
                                  const OpInfo& info) {
  if (op.attrs_size() > kMaxAttrsPerOp) {
    return Invalid(where, absl::StrCat("attrs: ", op.attrs_size(),
                                       " attributes (limit ", kMaxAttrsPerOp, ")"));
  }
  for (const auto& [name, value] : op.attrs()) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : info.attrs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      std::vector<std::string> known;
      for (const AttrSpec& s : info.attrs) known.push_back(s.name);
      return Invalid(where, absl::StrCat(
          "attrs: unknown attribute ", Quote(name), " (", info.kind,
          known.empty() ? " takes none"
                        : absl::StrCat(" takes: ", absl::StrJoin(known, ", ")),
          ")"));
    }
    const int got = static_cast<int>(value.value_case());
    const bool symbolic_form =
        spec->symbolic &&
        ((spec->type == AttrType::kInt && got == pto::v1::Attribute::kExpr) ||
         (spec->type == AttrType::kFloat && got == pto::v1::Attribute::kExpr) ||
         (spec->type == AttrType::kInts && got == pto::v1::Attribute::kExprs));
    if (got != static_cast<int>(spec->type) + 1 && !symbolic_form) {
      return Invalid(where, absl::StrCat(
          "attrs[", Quote(name), "]: expected type ", AttrTypeName(spec->type),
          spec->symbolic ? (spec->type == AttrType::kInts ? " or exprs" : " or expr")
                         : "",
          ", got oneof case ", got));
    }
    // A scalar operand over symbols (x * n, x * i in a loop body): it must
    // parse and use only symbols in scope here.
    if (spec->type == AttrType::kFloat && symbolic_form) {
      if (absl::StatusOr<SymExpr> e = AttrExpr(where, op, name); !e.ok()) return e.status();
    }
  }
  for (const AttrSpec& s : info.attrs) {
    if (s.required && op.attrs().count(s.name) == 0) {
      return Invalid(where, absl::StrCat("attrs: missing required attribute ",
                                         Quote(s.name), " (type ",
                                         AttrTypeName(s.type), ")"));
    }
  }
  if (info.kind == "philox" || info.kind == "philox_normal") {  // key and counter words
    for (const AttrSpec& s : info.attrs) {
      if (s.type != AttrType::kFloat) continue;
      const double w = op.attrs().at(s.name).f();
      if (!(w >= 0 && w < 0x1p32) || w != static_cast<double>(static_cast<int64_t>(w))) {
        return Invalid(where, absl::StrCat("attrs[", Quote(s.name), "]: ", w,
                                           " is not a 32-bit word (an integer in [0, 2**32))"));
      }
    }
  }
  return absl::OkStatus();
}

// cube_tile: m, k, n each [L0, L1], positive, L0 <= L1, L1 % L0 == 0.
// Whether its blocks fit L1 and L0 depends on the target's buffers, which
// the lowering checks (expand_matmul.h AppendMatmul, memory_model.h).
absl::Status Verifier::CheckCubeTile(const std::string& where, const Op& op) {
  if (!op.has_cube_tile()) {
    return Invalid(where, "cube_tile: missing (cube ops need a tile shape, "
                          "see pypto.set_cube_tile_shapes)");
  }
  const pto::v1::CubeTileShape& t = op.cube_tile();
  const std::string shown = absl::StrCat(
      "m=", FormatDims({t.m().begin(), t.m().end()}),
      " k=", FormatDims({t.k().begin(), t.k().end()}),
      " n=", FormatDims({t.n().begin(), t.n().end()}));
  int64_t l0[3], l1[3];
  const char* names[3] = {"m", "k", "n"};
  const google::protobuf::RepeatedField<int64_t>* dims[3] = {&t.m(), &t.k(),
                                                             &t.n()};
  for (int i = 0; i < 3; ++i) {
    if (dims[i]->size() != 2 || (*dims[i])[0] <= 0 || (*dims[i])[1] <= 0) {
      return Invalid(where, absl::StrCat("cube_tile ", shown, ": ", names[i],
                                         " must be two positive sizes [",
                                         names[i], "L0, ", names[i], "L1]"));
    }
    l0[i] = (*dims[i])[0];
    l1[i] = (*dims[i])[1];
    if (l1[i] > kMaxElements) {
      return Invalid(where, absl::StrCat("cube_tile ", names[i], " dim 1 is ", l1[i],
                                         ", more than ", kMaxElements,
                                         " (the limit of elements per tensor)"));
    }
    if (l0[i] > l1[i]) {
      return Invalid(where, absl::StrCat(
          "cube_tile ", shown, ": constraint ", names[i], "L0 <= ", names[i],
          "L1 violated (", l0[i], " > ", l1[i], ")"));
    }
    if (l1[i] % l0[i] != 0) {
      return Invalid(where, absl::StrCat(
          "cube_tile ", shown, ": constraint ", names[i], "L1 % ", names[i],
          "L0 == 0 violated (", l1[i], " % ", l0[i], " = ", l1[i] % l0[i],
          ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::CheckVecTile(const std::string& where, const Op& op,
                                    const Value& shape_source) {
  const auto& tile = op.vec_tile().dims();
  const SymShape& shape = shape_[index_of_id_.at(shape_source.id())];
  // A rank-0 op (a one-element value) has the empty tile.
  if (tile.empty() && !shape.empty()) {
    return Invalid(where, "vec_tile: missing (vector ops need a tile shape, "
                          "see pypto.set_vec_tile_shapes)");
  }
  if (tile.size() != static_cast<int>(shape.size())) {
    return Invalid(where, absl::StrCat("vec_tile: rank ", tile.size(),
                                       " does not match the op's rank ",
                                       shape.size()));
  }
  // Every dim is in (0, kMaxElements] before any arithmetic uses it, and
  // so is the tile's element count as clamped to the static dims (the
  // lowering multiplies the dims).
  for (int d = 0; d < tile.size(); ++d) {
    if (tile[d] <= 0) {
      return Invalid(where, absl::StrCat("vec_tile dim ", d, " is ", tile[d],
                                         " (must be positive)"));
    }
    if (tile[d] > kMaxElements) {
      return Invalid(where, absl::StrCat("vec_tile dim ", d, " is ", tile[d],
                                         ", more than ", kMaxElements,
                                         " (the limit of elements per tensor)"));
    }
  }
  int64_t tile_elements = 1;
  for (int d = 0; d < tile.size(); ++d) {
    std::optional<int64_t> size = shape[d].AsConstant();
    std::optional<int64_t> product =
        CheckedMul(tile_elements, size ? std::min(*size, tile[d]) : tile[d]);
    if (!product || *product > kMaxElements) {
      return Invalid(where, absl::StrCat(
          "vec_tile ", FormatDims({tile.begin(), tile.end()}), " has more than ",
          kMaxElements, " elements (the limit of elements per tensor)"));
    }
    tile_elements = *product;
  }
  int64_t tiles = 1;
  for (int d = 0; d < tile.size(); ++d) {
    // A symbolic dim's tile count is known at launch, where the runtime
    // bounds the tasks it expands; here it counts as one.
    std::optional<int64_t> size = shape[d].AsConstant();
    const int64_t n = size ? CheckedCeilDiv(*size, tile[d]).value_or(0) : 1;
    if (n <= 0 || n > kMaxTilesPerOp || tiles > kMaxTilesPerOp / n) {
      return Invalid(where, absl::StrCat(
          "vec_tile: ", FormatDims({tile.begin(), tile.end()}), " splits ",
          FormatSymShape(shape), " into more than ", kMaxTilesPerOp,
          " tiles (the limit)"));
    }
    tiles *= n;
  }
  total_tiles_ += tiles;
  return absl::OkStatus();
}

absl::Status Verifier::CheckOp(const Op& op, const std::string& where,
                               const std::string& short_label) {
  if (++num_ops_ > kMaxOps) {
    return Invalid(where, absl::StrCat("the graph has more than ", kMaxOps,
                                       " ops, those in regions included (the "
                                       "limit)"));
  }
  const int index = num_ops_ - 1;
  op_labels_.push_back(short_label);
  op_full_labels_.push_back(where);
  const OpInfo* info = FindOp(op.kind());
  if (info == nullptr) {
    std::vector<std::string> known;
    for (const OpInfo& o : AllOps()) known.push_back(o.kind);
    return Invalid(short_label,
                   absl::StrCat("unknown op kind ", Quote(op.kind(), 32),
                                " (known: ", absl::StrJoin(known, " "), ")"));
  }
  if (op.name().size() > kMaxNameLength) {
    return Invalid(where, absl::StrCat("name is ", op.name().size(),
                                       " chars (limit ", kMaxNameLength, ")"));
  }
  if (info->category == OpCategory::kControl) {
    return CheckControlOp(op, where, *info);
  }
  if (op.regions_size() > 0) {
    return Invalid(where, absl::StrCat("regions: ", op.kind(), " has no regions "
                                       "(only loop and if do), got ",
                                       op.regions_size()));
  }
  if (info->num_inputs >= 0 ? op.inputs_size() != info->num_inputs
                            : op.inputs_size() < 1) {
    return Invalid(where, absl::StrCat("inputs: expected ",
                                       info->num_inputs >= 0
                                           ? absl::StrCat(info->num_inputs)
                                           : std::string("one or more"),
                                       ", got ", op.inputs_size()));
  }
  if (op.outputs_size() != info->num_outputs) {
    return Invalid(where, absl::StrCat("outputs: expected ", info->num_outputs,
                                       ", got ", op.outputs_size()));
  }
  if (absl::Status s = CheckAttrs(where, op, *info); !s.ok()) return s;

  absl::StatusOr<std::vector<int>> checked_ins = CheckInputs(op, where);
  if (!checked_ins.ok()) return checked_ins.status();
  std::vector<int> ins = *std::move(checked_ins);
  if (InRegion() && info->kind == "assemble" &&
      region_of_[ins[1]] != region_stack_.back().id) {
    return Invalid(where, absl::StrCat(
        "input 1 (dst): ", ValueLabel(op.inputs(1)), " is defined outside ",
        region_stack_.back().op_label, "'s region; a region assembles only "
        "into its args (carry the tensor: make it an input of ",
        region_stack_.back().op_label, ")"));
  }
  std::vector<SymValueType> in_types;
  for (int v : ins) in_types.push_back({g_.values(v).dtype(), shape_[v]});
  InferAttrs attrs;
  if (auto it = op.attrs().find("dtype"); it != op.attrs().end()) {
    attrs.cast_to = it->second.dtype();
  }
  if (auto it = op.attrs().find("dim"); it != op.attrs().end()) {
    attrs.dim = it->second.i();
  }
  if (auto it = op.attrs().find("keepdim"); it != op.attrs().end()) {
    attrs.keepdim = it->second.b();
  }
  if (auto it = op.attrs().find("reduce"); it != op.attrs().end()) {
    attrs.reduce = it->second.s();
  }
  if (auto it = op.attrs().find("k"); it != op.attrs().end()) {
    attrs.k = it->second.i();
  }
  if (info->kind == "view" || info->kind == "assemble") {
    absl::Status s = SymbolicRegionAttrs(where, op, *info, ins, &attrs);
    if (!s.ok()) return s;
  }
  if (auto it = op.attrs().find("shape");
      (info->kind == "reshape" || info->kind == "full") && it != op.attrs().end() &&
      it->second.value_case() == pto::v1::Attribute::kExprs) {
    // [B, S, H] -> [B*S, H] of a symbolic S (infer_sym_layout.cc); full
    // of a symbolic size.
    absl::StatusOr<SymShape> s = AttrExprs(where, op, "shape");
    if (!s.ok()) return s.status();
    attrs.sym_shape = *std::move(s);
  }
  if (auto it = op.attrs().find("shape");
      it != op.attrs().end() && it->second.value_case() == pto::v1::Attribute::kInts) {
    const auto& dims = it->second.ints().values();
    if (dims.size() > kMaxRankBound) {
      return Invalid(where, absl::StrCat("attrs[\"shape\"]: rank ", dims.size(),
                                         " (limit ", kMaxRankBound, ")"));
    }
    for (int d = 0; d < dims.size(); ++d) {
      if (dims[d] > kMaxElements) {
        return Invalid(where, absl::StrCat("attrs[\"shape\"] dim ", d, " is ", dims[d],
                                           ", more than ", kMaxElements,
                                           " (the limit of elements per tensor)"));
      }
    }
    attrs.shape.assign(dims.begin(), dims.end());
  }
  if (auto it = op.attrs().find("out_dtype"); it != op.attrs().end()) {
    attrs.out_dtype = it->second.dtype();
  }
  if (auto it = op.attrs().find("a_trans"); it != op.attrs().end()) {
    attrs.a_trans = it->second.b();
  }
  if (auto it = op.attrs().find("b_trans"); it != op.attrs().end()) {
    attrs.b_trans = it->second.b();
  }
  if (auto it = op.attrs().find("img2col");
      it != op.attrs().end() && it->second.value_case() == pto::v1::Attribute::kInts) {
    const auto& ints = it->second.ints().values();
    attrs.img2col.assign(ints.begin(), ints.end());
  }
  for (const char* name : {"offsets", "dims"}) {
    auto it = op.attrs().find(name);
    if (it == op.attrs().end() ||
        it->second.value_case() != pto::v1::Attribute::kInts) {
      continue;
    }
    const auto& dims = it->second.ints().values();
    if (dims.size() > kMaxRankBound) {
      return Invalid(where, absl::StrCat("attrs[\"", name, "\"]: ", dims.size(),
                                         " entries (limit ", kMaxRankBound, ")"));
    }
    for (int d = 0; d < dims.size(); ++d) {
      if (dims[d] >= kMaxElements || dims[d] <= -kMaxElements) {
        return Invalid(where, absl::StrCat("attrs[\"", name, "\"] entry ", d, " is ",
                                           dims[d], ", more than ", kMaxElements - 1,
                                           " in magnitude (the limit of elements per "
                                           "tensor)"));
      }
    }
    (name[0] == 'o' ? attrs.offsets : attrs.dims).assign(dims.begin(), dims.end());
  }
  if (auto it = op.attrs().find("dim0"); it != op.attrs().end()) {
    attrs.dim0 = it->second.i();
  }
  if (auto it = op.attrs().find("dim1"); it != op.attrs().end()) {
    attrs.dim1 = it->second.i();
  }
  absl::StatusOr<SymValueType> inferred = InferSymResult(*info, in_types, attrs);
  if (!inferred.ok()) {
    if (inferred.status().code() == absl::StatusCode::kUnimplemented) {
      return absl::UnimplementedError(
          absl::StrCat(where, ": ", inferred.status().message()));
    }
    return Invalid(where, std::string(inferred.status().message()));
  }
  int out_value = -1;
  for (int k = 0; k < op.outputs_size(); ++k) {
    const std::string field = absl::StrCat("output ", k);
    absl::StatusOr<int> v = Lookup(where, field, op.outputs(k));
    if (!v.ok()) return v.status();
    if (definer_[*v] != kUndefined) {
      return Invalid(where, absl::StrCat(field, ": ", ValueLabel(op.outputs(k)),
                                         " is already defined by ",
                                         DefinerLabel(definer_[*v])));
    }
    if (absl::Status s = CheckValue(absl::StrCat(where, ": ", field), *v);
        !s.ok()) {
      return s;
    }
    const Value& out = g_.values(*v);
    if (out.dtype() != inferred->dtype) {
      return Invalid(where, absl::StrCat(field, ": dtype ",
                                         DTypeEnumName(out.dtype()),
                                         " does not match the inferred ",
                                         DTypeEnumName(inferred->dtype)));
    }
    if (shape_[*v] != inferred->shape) {
      return Invalid(where, absl::StrCat(field, ": shape ",
                                         FormatSymShape(shape_[*v]),
                                         " does not match the inferred ",
                                         FormatSymShape(inferred->shape)));
    }
    if (absl::Status s = DefineInRegion(where, field, *v); !s.ok()) return s;
    definer_[*v] = index;
    out_value = *v;
  }
  if (info->needs_vec_tile) {
    // A reduction's tile covers its input (the space it iterates), an
    // assemble's its source (the region written).
    const Value& space = info->category == OpCategory::kReduce ||
                                 info->kind == "assemble"
                             ? g_.values(ins[0])
                             : g_.values(out_value);
    if (absl::Status s = CheckVecTile(where, op, space); !s.ok()) return s;
  }
  if (info->category == OpCategory::kMatmul) {
    if (absl::Status s = CheckCubeTile(where, op);
        !s.ok()) {
      return s;
    }
  }
  for (int v : ins) last_reader_[v] = index;
  return absl::OkStatus();
}

absl::Status Verifier::CheckParamOutputs() {
  for (int p = 0; p < g_.params_size(); ++p) {
    const pto::v1::Parameter& param = g_.params(p);
    uint32_t out_id;
    if (param.role() == pto::v1::PARAM_ROLE_OUT) {
      out_id = param.value_id();
    } else if (param.role() == pto::v1::PARAM_ROLE_INOUT) {
      out_id = param.result_value_id();
    } else {
      continue;
    }
    const int v = index_of_id_.at(out_id);
    if (definer_[v] >= 0 && region_of_[v] != 0) {
      return Invalid(ParamLabel(p), absl::StrCat(
          ValueLabel(out_id), " is defined inside a region of ",
          DefinerLabel(definer_[v]), "; an out value must be written at the "
          "top level (carry it out as the loop's or if's output)"));
    }
    if (definer_[v] < 0) {
      return Invalid(ParamLabel(p), absl::StrCat(
          param.role() == pto::v1::PARAM_ROLE_OUT ? "value_id: "
                                                  : "result_value_id: ",
          ValueLabel(out_id), " is never written by any op"));
    }
    if (param.role() == pto::v1::PARAM_ROLE_INOUT) {
      // The incoming and final contents share the caller's buffer: a read of
      // the incoming value after the final one is written would see the
      // new data.
      const int in = index_of_id_.at(param.value_id());
      const int writer = definer_[v];
      if (last_reader_[in] > writer) {
        const int reader = last_reader_[in];
        return absl::UnimplementedError(absl::StrCat(
            op_full_labels_[reader], ": reads ", ParamLabel(p),
            " (inout) after ", op_labels_[writer],
            " overwrote it; reading an inout parameter after its final "
            "value is written is not supported yet"));
      }
    }
  }
  return absl::OkStatus();
}


// --- Regions (graph.proto "Region") ----------------------

std::string TypeText(const Value& v, const SymShape& shape) {
  return absl::StrCat(DTypeShortName(v.dtype()), FormatSymShape(shape));
}

absl::Status Verifier::CheckReadable(const std::string& where,
                                     const std::string& field, int v) const {
  const uint32_t id = g_.values(v).id();
  if (definer_[v] == kUndefined) {
    return Invalid(where, absl::StrCat(
        field, ": ", ValueLabel(id),
        " is used before any op defines it (a cycle, or a value that is "
        "never defined)"));
  }
  if (closed_[v]) {
    return Invalid(where, absl::StrCat(
        field, ": ", ValueLabel(id), " is defined inside a region of ",
        DefinerLabel(definer_[v]), " that has ended (read that op's outputs "
        "instead)"));
  }
  for (const OpenRegion& r : region_stack_) {
    for (size_t k = 0; k < r.carried.size(); ++k) {
      if (r.carried[k] == v) {
        return Invalid(where, absl::StrCat(
            field, ": ", ValueLabel(id), " is input ", k, " of ", r.op_label,
            ", which carries it into this region; read the region's arg ", k,
            " instead"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::CheckInScope(const std::string& where,
                                    const std::string& what,
                                    const std::set<std::string>& symbols) const {
  for (const std::string& name : symbols) {
    if (param_symbols_.count(name) > 0) continue;
    if (std::find(indices_.begin(), indices_.end(), name) != indices_.end()) continue;
    return Invalid(where, absl::StrCat(
        what, " uses symbol ", name, ", which is not in scope here (symbols "
        "in scope: those bound by parameter shapes and the indices of the "
        "enclosing loops)"));
  }
  return absl::OkStatus();
}

absl::Status Verifier::DefineInRegion(const std::string& where,
                                      const std::string& field, int v) {
  if (!InRegion()) return absl::OkStatus();
  for (size_t d = 0; d < shape_[v].size(); ++d) {
    if (absl::Status s = CheckInScope(
            where, absl::StrCat(field, ": ", ValueLabel(g_.values(v).id()),
                                " shape dim ", d, " (", shape_[v][d].ToString(), ")"),
            shape_[v][d].Symbols());
        !s.ok()) {
      return s;
    }
  }
  region_of_[v] = region_stack_.back().id;
  region_stack_.back().defined.push_back(v);
  return absl::OkStatus();
}

absl::StatusOr<SymExpr> Verifier::AttrExpr(const std::string& where,
                                           const Op& op, const std::string& name) {
  const pto::v1::Attribute& a = op.attrs().at(name);
  if (a.value_case() == pto::v1::Attribute::kI) return SymExpr(a.i());
  absl::StatusOr<SymExpr> e = SymExprFromProto(a.expr());
  const std::string field = absl::StrCat("attrs[", Quote(name), "]");
  if (!e.ok()) return Invalid(where, absl::StrCat(field, ": ", e.status().message()));
  if (absl::Status s = CheckInScope(where, absl::StrCat(field, " (", e->ToString(), ")"),
                                    e->Symbols());
      !s.ok()) {
    return s;
  }
  return e;
}

absl::StatusOr<SymShape> Verifier::AttrExprs(const std::string& where,
                                             const Op& op, const std::string& name) {
  const pto::v1::Attribute& a = op.attrs().at(name);
  const std::string field = absl::StrCat("attrs[", Quote(name), "]");
  SymShape out;
  if (a.value_case() == pto::v1::Attribute::kInts) {
    for (int64_t x : a.ints().values()) out.push_back(SymExpr(x));
  } else {
    for (int k = 0; k < a.exprs().values_size(); ++k) {
      if (k >= kMaxRankBound) break;
      absl::StatusOr<SymExpr> e = SymExprFromProto(a.exprs().values(k));
      if (!e.ok()) {
        return Invalid(where, absl::StrCat(field, "[", k, "]: ", e.status().message()));
      }
      if (absl::Status s = CheckInScope(
              where, absl::StrCat(field, "[", k, "] (", e->ToString(), ")"),
              e->Symbols());
          !s.ok()) {
        return s;
      }
      out.push_back(*std::move(e));
    }
  }
  const int n = a.value_case() == pto::v1::Attribute::kInts ? a.ints().values_size()
                                                            : a.exprs().values_size();
  if (n > kMaxRankBound) {
    return Invalid(where, absl::StrCat(field, ": ", n, " entries (limit ",
                                       kMaxRankBound, ")"));
  }
  return out;
}

absl::Status Verifier::SymbolicRegionAttrs(const std::string& where,
                                           const Op& op, const OpInfo& info,
                                           const std::vector<int>& ins,
                                           InferAttrs* attrs) {
  absl::StatusOr<SymShape> offsets = AttrExprs(where, op, "offsets");
  if (!offsets.ok()) return offsets.status();
  SymShape shape;
  if (info.kind == "view") {
    absl::StatusOr<SymShape> s = AttrExprs(where, op, "shape");
    if (!s.ok()) return s.status();
    shape = *std::move(s);
  }
  // Constant entries are held to the limits of ints before either path
  // uses them (the symbolic path packs them beside loop-offset markers).
  for (size_t d = 0; d < offsets->size(); ++d) {
    std::optional<int64_t> c = (*offsets)[d].AsConstant();
    if (c && (*c >= kMaxElements || *c <= -kMaxElements)) {
      return Invalid(where, absl::StrCat("attrs[\"offsets\"] entry ", d, " is ", *c,
                                         ", more than ", kMaxElements - 1, " in magnitude",
                                         " (the limit of elements per tensor)"));
    }
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    std::optional<int64_t> c = shape[d].AsConstant();
    if (c && *c > kMaxElements) {
      return Invalid(where, absl::StrCat("attrs[\"shape\"] dim ", d, " is ", *c,
                                         ", more than ", kMaxElements,
                                         " (the limit of elements per tensor)"));
    }
  }
  bool symbolic = !StaticDims(*offsets) || !StaticDims(shape);
  for (int v : ins) symbolic = symbolic || !StaticDims(shape_[v]);
  if (symbolic) {
    // In a region or not: outside one, the offsets and extents are
    // expressions of the parameters' symbols, checked at launch like a
    // body's (lower_regions.h).
    attrs->sym_region = true;
    attrs->sym_offsets = *std::move(offsets);
    attrs->sym_shape = std::move(shape);
    return absl::OkStatus();
  }
  // Constant expressions: the static path, as if written as ints.
  attrs->offsets = *StaticDims(*offsets);
  if (info.kind == "view") attrs->shape = *StaticDims(shape);
  return absl::OkStatus();
}

absl::Status Verifier::CheckControlOp(const Op& op, const std::string& where,
                                      const OpInfo& info) {
  const int index = num_ops_ - 1;
  const bool is_loop = info.kind == "loop";
  if (absl::Status s = CheckAttrs(where, op, info); !s.ok()) return s;
  if (static_cast<int>(region_stack_.size()) >= kMaxRegionDepth) {
    return Invalid(where, absl::StrCat("regions nest more than ",
                                       kMaxRegionDepth, " deep (the limit)"));
  }
  const int want_regions = is_loop ? 1 : 2;
  if (op.regions_size() != want_regions) {
    return Invalid(where, absl::StrCat(
        "regions: expected ", want_regions,
        is_loop ? " (the body)" : " (then, else)", ", got ", op.regions_size()));
  }
  if (op.outputs_size() != op.inputs_size()) {
    return Invalid(where, absl::StrCat(
        "outputs: expected one per input (the carried tensors), got ",
        op.outputs_size(), " outputs for ", op.inputs_size(), " inputs"));
  }
  absl::StatusOr<std::vector<int>> checked_ins = CheckInputs(op, where);
  if (!checked_ins.ok()) return checked_ins.status();
  std::vector<int> ins = *std::move(checked_ins);
  std::string index_symbol;
  if (is_loop) {
    index_symbol = op.attrs().at("index").s();
    if (!IsSymbolName(index_symbol)) {
      return Invalid(where, absl::StrCat(
          "attrs[\"index\"]: ", Quote(index_symbol, 80), " is not an identifier "
          "([A-Za-z_][A-Za-z0-9_]*, at most ", kMaxSymbolLength, " chars)"));
    }
    if (param_symbols_.count(index_symbol) > 0 ||
        all_indices_.count(index_symbol) > 0) {
      return Invalid(where, absl::StrCat(
          "attrs[\"index\"]: ", index_symbol, " is already ",
          param_symbols_.count(index_symbol) > 0 ? "a symbol of the parameters"
                                                 : "another loop's index",
          " (a loop index must be unique in the graph)"));
    }
    for (const char* bound : {"start", "stop"}) {
      absl::StatusOr<SymExpr> e = AttrExpr(where, op, bound);
      if (!e.ok()) return e.status();
    }
    const int64_t step = op.attrs().at("step").i();
    if (step == 0) {
      return Invalid(where, "attrs[\"step\"]: the step is 0 (a loop's step "
                            "must be a nonzero int)");
    }
    if (auto it = op.attrs().find("unroll");
        it != op.attrs().end() && it->second.i() < 1) {
      return Invalid(where, absl::StrCat("attrs[\"unroll\"]: ", it->second.i(),
                                         " (must be >= 1)"));
    }
  } else {
    const pto::v1::Attribute& a = op.attrs().at("cond");
    if (a.value_case() == pto::v1::Attribute::kExpr) {
      absl::StatusOr<CondExpr> c = CondExprFromProto(a.expr());
      if (!c.ok()) {
        return Invalid(where, absl::StrCat("attrs[\"cond\"]: ", c.status().message()));
      }
      if (absl::Status s = CheckInScope(
              where, absl::StrCat("attrs[\"cond\"] (", c->ToString(), ")"),
              c->Symbols());
          !s.ok()) {
        return s;
      }
    }
  }
  if (is_loop) {
    all_indices_.insert(index_symbol);
    indices_.push_back(index_symbol);
  }
  for (int r = 0; r < want_regions; ++r) {
    const char* name = is_loop ? "body" : (r == 0 ? "then" : "else");
    absl::Status s = CheckRegion(op, where, ins, r, name);
    if (!s.ok()) return s;
  }
  if (is_loop) indices_.pop_back();
  for (int k = 0; k < op.outputs_size(); ++k) {
    const std::string field = absl::StrCat("output ", k);
    absl::StatusOr<int> v =
        CheckCarried(where, field, op.outputs(k), ins[k], k,
                     "the outputs are the carried tensors after the op");
    if (!v.ok()) return v.status();
    if (absl::Status s = DefineInRegion(where, field, *v); !s.ok()) return s;
    definer_[*v] = index;
  }
  for (int v : ins) last_reader_[v] = index;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> Verifier::CheckInputs(
    const Op& op, const std::string& where) {
  std::vector<int> ins;
  for (int k = 0; k < op.inputs_size(); ++k) {
    const std::string field = absl::StrCat("input ", k);
    absl::StatusOr<int> v = Lookup(where, field, op.inputs(k));
    if (!v.ok()) return v.status();
    if (absl::Status s = CheckReadable(where, field, *v); !s.ok()) return s;
    if (absl::Status s = CheckValue(absl::StrCat(where, ": ", field), *v);
        !s.ok()) {
      return s;
    }
    ins.push_back(*v);
  }
  return ins;
}

absl::StatusOr<int> Verifier::CheckCarried(const std::string& where,
                                           const std::string& field,
                                           uint32_t id, int in, int k,
                                           const char* role) {
  absl::StatusOr<int> v = Lookup(where, field, id);
  if (!v.ok()) return v.status();
  if (definer_[*v] != kUndefined) {
    return Invalid(where, absl::StrCat(field, ": ", ValueLabel(id),
                                       " is already defined by ",
                                       DefinerLabel(definer_[*v])));
  }
  if (absl::Status s = CheckValue(absl::StrCat(where, ": ", field), *v);
      !s.ok()) {
    return s;
  }
  const Value& value = g_.values(*v);
  const Value& input = g_.values(in);
  if (value.dtype() != input.dtype() || shape_[*v] != shape_[in]) {
    return Invalid(where, absl::StrCat(
        field, ": ", TypeText(value, shape_[*v]), " does not match input ", k,
        "'s ", TypeText(input, shape_[in]), " (", role, ")"));
  }
  return *v;
}

absl::Status Verifier::CheckRegion(const Op& op, const std::string& where,
                                   const std::vector<int>& ins, int r,
                                   const std::string& region_name) {
  const int index = num_ops_ - 1;
  const pto::v1::Region& region = op.regions(r);
  const std::string rwhere = absl::StrCat(where, " ", region_name);
  if (region.args_size() != op.inputs_size()) {
    return Invalid(rwhere, absl::StrCat("args: expected ", op.inputs_size(),
                                        " (one per input of the op), got ",
                                        region.args_size()));
  }
  if (region.results_size() != region.args_size()) {
    return Invalid(rwhere, absl::StrCat("results: expected ", region.args_size(),
                                        " (one per arg), got ",
                                        region.results_size()));
  }
  OpenRegion open;
  open.id = next_region_++;
  open.carried = ins;
  open.op_label = op_labels_[index];
  region_stack_.push_back(std::move(open));
  for (int k = 0; k < region.args_size(); ++k) {
    const std::string field = absl::StrCat("arg ", k);
    absl::StatusOr<int> v =
        CheckCarried(rwhere, field, region.args(k), ins[k], k,
                     "an arg is the carried tensor on entry");
    if (!v.ok()) return v.status();
    definer_[*v] = index;
    region_of_[*v] = region_stack_.back().id;
    region_stack_.back().defined.push_back(*v);
  }
  const std::string short_base =
      absl::StrCat(op_labels_[index], " ", region_name, " op #");
  for (int i = 0; i < region.ops_size(); ++i) {
    const std::string short_label = absl::StrCat(short_base, i);
    if (absl::Status s = CheckOp(region.ops(i), OpLabel(short_label, region.ops(i)),
                                 short_label);
        !s.ok()) {
      return s;
    }
  }
  for (int k = 0; k < region.results_size(); ++k) {
    const std::string field = absl::StrCat("result ", k);
    absl::StatusOr<int> v = Lookup(rwhere, field, region.results(k));
    if (!v.ok()) return v.status();
    if (definer_[*v] == kUndefined || closed_[*v] ||
        region_of_[*v] != region_stack_.back().id) {
      return Invalid(rwhere, absl::StrCat(
          field, ": ", ValueLabel(region.results(k)), " is not defined in this "
          "region (a result is the arg or a value the region computes)"));
    }
    const Value& res = g_.values(*v);
    const Value& arg = g_.values(index_of_id_.at(region.args(k)));
    const SymShape& arg_shape = shape_[index_of_id_.at(region.args(k))];
    if (res.dtype() != arg.dtype() || shape_[*v] != arg_shape) {
      return Invalid(rwhere, absl::StrCat(
          field, ": ", TypeText(res, shape_[*v]), " does not match arg ", k,
          "'s ", TypeText(arg, arg_shape),
          " (a carried tensor keeps its type)"));
    }
  }
  for (int v : region_stack_.back().defined) closed_[v] = true;
  region_stack_.pop_back();
  return absl::OkStatus();
}
}  // namespace

absl::Status VerifyGraph(const pto::v1::Graph& graph) {
  return Verifier(graph).Run();
}

absl::StatusOr<VerifiedGraph> Verified(const pto::v1::Graph& graph) {
  if (absl::Status s = VerifyGraph(graph); !s.ok()) return s;
  return VerifiedGraph(graph);
}

}  // namespace pto::compiler
