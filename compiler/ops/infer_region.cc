// Result types of view and assemble inside regions, where
// offsets and shapes may be expressions over parameter symbols and loop
// indices: x[i*64 : min((i+1)*64, n)] is a view with offsets [i*64] and
// shape [min(64, n-i*64)]. What is decidable now is checked now (ranks,
// dtypes, a constant offset below 0, constant regions past a static dim);
// the rest is checked at launch, when the runtime knows the values.
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/ops/infer.h"

namespace pto::compiler {
namespace {

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(what);
}

// offsets[d] >= 0 and offsets[d] + extent[d] <= bound[d] where all three are
// constants (or the offset alone, for the lower bound).
absl::Status CheckSymRegion(const std::string& what, const SymShape& offsets,
                            const SymShape& extent, const SymShape& bound,
                            const std::string& bound_name) {
  if (offsets.size() != bound.size()) {
    return Bad(absl::StrCat("attrs[\"offsets\"]: ", FormatSymShape(offsets),
                            " has ", offsets.size(), " dims; ", bound_name, " ",
                            FormatSymShape(bound), " has ", bound.size()));
  }
  for (size_t d = 0; d < bound.size(); ++d) {
    std::optional<int64_t> off = offsets[d].AsConstant();
    if (off && *off < 0) {
      return Bad(absl::StrCat(what, " at offsets ", FormatSymShape(offsets),
                              ": offsets[", d, "] is ", *off, " (must be >= 0)"));
    }
    std::optional<int64_t> ext = extent[d].AsConstant();
    std::optional<int64_t> lim = bound[d].AsConstant();
    if (off && ext && lim && *off + *ext > *lim) {
      return Bad(absl::StrCat(what, " at offsets ", FormatSymShape(offsets),
                              " does not fit in ", bound_name, " ",
                              FormatSymShape(bound), ": dim ", d, " covers [",
                              *off, ", ", *off + *ext, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SymValueType> InferSymRegionResult(
    const OpInfo& info, absl::Span<const SymValueType> inputs,
    const InferAttrs& attrs) {
  const SymValueType& x = inputs[0];
  if (info.kind == "view") {
    const SymShape& shape = attrs.sym_shape;
    if (shape.size() != x.shape.size()) {
      return Bad(absl::StrCat("attrs[\"shape\"]: ", FormatSymShape(shape),
                              " has rank ", shape.size(),
                              "; a view keeps the input's rank ", x.shape.size()));
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      std::optional<int64_t> c = shape[d].AsConstant();
      if (c && *c <= 0) {
        return Bad(absl::StrCat("attrs[\"shape\"]: ", FormatSymShape(shape),
                                " dim ", d, " is not positive"));
      }
    }
    if (absl::Status s = CheckSymRegion(
            absl::StrCat("view ", FormatSymShape(shape)), attrs.sym_offsets,
            shape, x.shape, "input");
        !s.ok()) {
      return s;
    }
    return SymValueType{x.dtype, shape};
  }
  if (info.kind == "assemble") {
    const SymValueType& dst = inputs[1];
    if (x.dtype != dst.dtype) {
      return Bad(absl::StrCat("input 0 (src) has dtype ", DTypeEnumName(x.dtype),
                              " and input 1 (dst) ", DTypeEnumName(dst.dtype),
                              "; assemble needs equal dtypes (cast src)"));
    }
    if (x.shape.size() != dst.shape.size()) {
      return Bad(absl::StrCat("input 0 (src) ", FormatSymShape(x.shape),
                              " and input 1 (dst) ", FormatSymShape(dst.shape),
                              " have different ranks"));
    }
    if (absl::Status s = CheckSymRegion(
            absl::StrCat("src ", FormatSymShape(x.shape)), attrs.sym_offsets,
            x.shape, dst.shape, "dst");
        !s.ok()) {
      return s;
    }
    return dst;
  }
  return absl::UnimplementedError(absl::StrCat(
      info.kind, " with symbolic dims inside a region is not supported yet "
                 "(view and assemble are)"));
}

}  // namespace pto::compiler
