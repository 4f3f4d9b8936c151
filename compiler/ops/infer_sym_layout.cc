// Result types of transpose, permute, unsqueeze, reshape and concat of tensors with
// symbolic dims ([B, S, H] -> [B*S, H] of a DYNAMIC S, x.T of a
// DYNAMIC dim), outside and inside regions. The dims move as in
// InferLayoutResult; a reshape's element counts must be equal for every
// binding (the same canonical product), else an error printing both.
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/ops/infer.h"

namespace pto::compiler {
namespace {

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(what);
}

SymExpr Product(const SymShape& shape) {
  SymExpr n(1);
  for (const SymExpr& d : shape) n = n * d;
  return n;
}

}  // namespace

absl::StatusOr<SymValueType> InferSymLayoutResult(const OpInfo& info,
                                                  absl::Span<const SymValueType> inputs,
                                                  const InferAttrs& attrs) {
  const std::string& kind = info.kind;
  if (inputs.empty()) return Bad("inputs: expected at least one");
  const SymValueType& x = inputs[0];
  if (kind == "reshape") {
    const SymShape shape =
        attrs.sym_shape.empty() ? ToSymShape(attrs.shape) : attrs.sym_shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      std::optional<int64_t> c = shape[d].AsConstant();
      if (c && *c <= 0) {
        return Bad(absl::StrCat("attrs[\"shape\"]: ", FormatSymShape(shape), " dim ", d,
                                " is not positive"));
      }
    }
    if (shape.empty() || !Product(shape).Representable() ||
        Product(shape) != Product(x.shape)) {
      return Bad(absl::StrCat("attrs[\"shape\"]: ", FormatSymShape(shape), " has ",
                              Product(shape).ToString(), " elements; the input ",
                              FormatSymShape(x.shape), " has ", Product(x.shape).ToString(),
                              " (valid: a shape with as many for every size)"));
    }
    return SymValueType{x.dtype, shape};
  }
  if (kind == "transpose" || kind == "permute" || kind == "unsqueeze") {
    // The static rules on stand-ins: each symbolic dim becomes a size no
    // static dim has, mapped back after.
    constexpr int64_t kStandIn = int64_t{1} << 50;
    ValueType stand_in{x.dtype, {}};
    std::map<int64_t, SymExpr> back;
    for (size_t d = 0; d < x.shape.size(); ++d) {
      if (std::optional<int64_t> c = x.shape[d].AsConstant()) {
        stand_in.shape.push_back(*c);
        continue;
      }
      const int64_t s = kStandIn + static_cast<int64_t>(d);
      back[s] = x.shape[d];
      stand_in.shape.push_back(s);
    }
    absl::StatusOr<ValueType> out = InferLayoutResult(info, {stand_in}, attrs);
    if (!out.ok()) return out.status();
    SymValueType result{out->dtype, {}};
    for (int64_t d : out->shape) {
      auto it = back.find(d);
      result.shape.push_back(it != back.end() ? it->second : SymExpr(d));
    }
    return result;
  }
  if (kind == "concat") {
    // The static rules with symbolic sizes: the other dims equal as
    // expressions (the same canonical form), the concat dim their sum. (An
    // input after one with a symbolic extent there is at a symbolic offset:
    // lower_regions.cc lowers such a concat as assembles.)
    const int rank = static_cast<int>(x.shape.size());
    int64_t d = attrs.dim;
    if (d < -rank || d >= rank) {
      return Bad(absl::StrCat("attrs[\"dim\"]: dim ", d, " is out of range for rank ", rank,
                              " (valid: ", -rank, "..", rank - 1, ")"));
    }
    if (d < 0) d += rank;
    SymValueType out{x.dtype, x.shape};
    out.shape[d] = SymExpr(0);
    for (size_t k = 0; k < inputs.size(); ++k) {
      const SymValueType& in = inputs[k];
      if (in.dtype != x.dtype) {
        return Bad(absl::StrCat("input ", k, " has dtype ", DTypeEnumName(in.dtype),
                                " and input 0 ", DTypeEnumName(x.dtype),
                                "; concat needs equal dtypes"));
      }
      bool same = static_cast<int>(in.shape.size()) == rank;
      for (int j = 0; same && j < rank; ++j) same = j == d || in.shape[j] == x.shape[j];
      if (!same) {
        return Bad(absl::StrCat("input ", k, " ", FormatSymShape(in.shape), " and input 0 ",
                                FormatSymShape(x.shape), " differ outside the concat dim ", d,
                                " (valid: equal ranks and sizes in every other dim)"));
      }
      out.shape[d] = out.shape[d] + in.shape[d];
    }
    return out;
  }
  return absl::UnimplementedError(absl::StrCat(
      "input 0 ", FormatSymShape(x.shape), " has symbolic dims; ", kind,
      " takes static shapes for now (view, assemble, transpose, permute, unsqueeze, "
      "reshape and concat take symbolic ones)"));
}

}  // namespace pto::compiler
