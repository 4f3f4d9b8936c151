// Result types of the layout ops (view, assemble, transpose, permute,
// unsqueeze, reshape, concat): shapes only; the dtype is the input's.
// Errors name the attribute (or input) and the valid range.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/dtype.h"
#include "compiler/ops/infer.h"
#include "compiler/util/checked_math.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(what);
}

// `dim` of attribute `attr` as an index in [0, rank).
absl::StatusOr<int> AttrDim(const char* attr, int64_t dim, int rank) {
  if (dim < -rank || dim >= rank) {
    return Bad(absl::StrCat("attrs[\"", attr, "\"]: dim ", dim,
                            " is out of range for rank ", rank, " (valid: ",
                            -rank, "..", rank - 1, ")"));
  }
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

// offsets[d] + extent[d] <= bound[d] for every d, offsets non-negative.
absl::Status CheckRegion(const std::string& what,
                         const std::vector<int64_t>& offsets,
                         const std::vector<int64_t>& extent,
                         const std::vector<int64_t>& bound,
                         const std::string& bound_name) {
  if (offsets.size() != bound.size()) {
    return Bad(absl::StrCat("attrs[\"offsets\"]: ", FormatDims(offsets),
                            " has ", offsets.size(), " dims; ", bound_name,
                            " ", FormatDims(bound), " has ", bound.size()));
  }
  for (size_t d = 0; d < bound.size(); ++d) {
    // bound and extent are sizes (positive, at most kMaxElements), so
    // bound - extent fits; offsets may be anything.
    if (offsets[d] < 0 || offsets[d] > bound[d] - extent[d]) {
      std::optional<int64_t> end = CheckedAdd(offsets[d], extent[d]);
      return Bad(absl::StrCat(
          what, " at offsets ", FormatDims(offsets), " does not fit in ",
          bound_name, " ", FormatDims(bound), ": dim ", d, " covers [",
          offsets[d], ", ", end ? absl::StrCat(*end) : std::string("beyond int64"),
          ") (valid offsets[", d, "]: 0..", std::max<int64_t>(0, bound[d] - extent[d]),
          ")"));
    }
  }
  return absl::OkStatus();
}

// The element count, or -1 when it overflows int64.
int64_t Elements(const std::vector<int64_t>& shape) {
  return CheckedProduct(shape).value_or(-1);
}

}  // namespace

absl::StatusOr<ValueType> InferLayoutResult(const OpInfo& info,
                                            absl::Span<const ValueType> inputs,
                                            const InferAttrs& attrs) {
  const std::string& kind = info.kind;
  if (inputs.empty()) return Bad("inputs: expected at least one");
  const ValueType& x = inputs[0];
  const int rank = static_cast<int>(x.shape.size());
  ValueType out{x.dtype, x.shape};
  if (kind == "view") {
    if (attrs.shape.size() != x.shape.size()) {
      return Bad(absl::StrCat("attrs[\"shape\"]: ", FormatDims(attrs.shape),
                              " has rank ", attrs.shape.size(),
                              "; a view keeps the input's rank ", rank));
    }
    for (size_t d = 0; d < attrs.shape.size(); ++d) {
      if (attrs.shape[d] <= 0) {
        return Bad(absl::StrCat("attrs[\"shape\"]: ", FormatDims(attrs.shape),
                                " dim ", d, " is not positive"));
      }
    }
    if (absl::Status s = CheckRegion(absl::StrCat("view ", FormatDims(attrs.shape)),
                                     attrs.offsets, attrs.shape, x.shape, "input");
        !s.ok()) {
      return s;
    }
    out.shape = attrs.shape;
    return out;
  }
  if (kind == "assemble") {
    const ValueType& dst = inputs[1];
    if (x.dtype != dst.dtype) {
      return Bad(absl::StrCat("input 0 (src) has dtype ", DTypeEnumName(x.dtype),
                              " and input 1 (dst) ", DTypeEnumName(dst.dtype),
                              "; assemble needs equal dtypes (cast src)"));
    }
    if (x.shape.size() != dst.shape.size()) {
      return Bad(absl::StrCat("input 0 (src) ", FormatDims(x.shape),
                              " and input 1 (dst) ", FormatDims(dst.shape),
                              " have different ranks"));
    }
    if (absl::Status s = CheckRegion(absl::StrCat("src ", FormatDims(x.shape)),
                                     attrs.offsets, x.shape, dst.shape, "dst");
        !s.ok()) {
      return s;
    }
    return dst;
  }
  if (kind == "transpose") {
    absl::StatusOr<int> a = AttrDim("dim0", attrs.dim0, rank);
    if (!a.ok()) return a.status();
    absl::StatusOr<int> b = AttrDim("dim1", attrs.dim1, rank);
    if (!b.ok()) return b.status();
    std::swap(out.shape[*a], out.shape[*b]);
    return out;
  }
  if (kind == "permute") {
    if (static_cast<int>(attrs.dims.size()) != rank) {
      return Bad(absl::StrCat("attrs[\"dims\"]: ", FormatDims(attrs.dims),
                              " has ", attrs.dims.size(),
                              " entries; the input has rank ", rank,
                              " (valid: a permutation of 0..", rank - 1, ")"));
    }
    std::vector<bool> seen(rank, false);
    for (int k = 0; k < rank; ++k) {
      const int64_t d = attrs.dims[k] < 0 ? attrs.dims[k] + rank : attrs.dims[k];
      if (d < 0 || d >= rank || seen[d]) {
        return Bad(absl::StrCat("attrs[\"dims\"]: ", FormatDims(attrs.dims),
                                " is not a permutation of 0..", rank - 1,
                                " (entry ", k, " is ", attrs.dims[k],
                                d >= 0 && d < rank ? ", repeated)" : ")"));
      }
      seen[d] = true;
      out.shape[k] = x.shape[d];
    }
    return out;
  }
  if (kind == "unsqueeze") {
    absl::StatusOr<int> d = AttrDim("dim", attrs.dim, rank + 1);
    if (!d.ok()) return d.status();
    out.shape.insert(out.shape.begin() + *d, 1);
    return out;
  }
  if (kind == "reshape") {
    for (int64_t d : attrs.shape) {
      if (d <= 0) {
        return Bad(absl::StrCat("attrs[\"shape\"]: ", FormatDims(attrs.shape),
                                " has a dim that is not positive"));
      }
    }
    if (attrs.shape.empty() || Elements(attrs.shape) < 0 ||
        Elements(attrs.shape) != Elements(x.shape)) {
      const int64_t n = Elements(attrs.shape);
      return Bad(absl::StrCat("attrs[\"shape\"]: ", FormatDims(attrs.shape),
                              " has ", n < 0 ? std::string("more than 2^63") : absl::StrCat(n),
                              " elements; the input ", FormatDims(x.shape),
                              " has ", Elements(x.shape),
                              " (valid: any shape with as many)"));
    }
    out.shape = attrs.shape;
    return out;
  }
  if (kind == "concat") {
    absl::StatusOr<int> d = AttrDim("dim", attrs.dim, rank);
    if (!d.ok()) return d.status();
    out.shape[*d] = 0;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const ValueType& in = inputs[k];
      if (in.dtype != x.dtype) {
        return Bad(absl::StrCat("input ", k, " has dtype ", DTypeEnumName(in.dtype),
                                " and input 0 ", DTypeEnumName(x.dtype),
                                "; concat needs equal dtypes"));
      }
      bool same = in.shape.size() == x.shape.size();
      for (int j = 0; same && j < rank; ++j) {
        same = j == *d || in.shape[j] == x.shape[j];
      }
      if (!same) {
        return Bad(absl::StrCat("input ", k, " ", FormatDims(in.shape),
                                " and input 0 ", FormatDims(x.shape),
                                " differ outside the concat dim ", *d,
                                " (valid: equal ranks and sizes in every other "
                                "dim)"));
      }
      std::optional<int64_t> sum = CheckedAdd(out.shape[*d], in.shape[*d]);
      if (!sum) {
        return Bad(absl::StrCat("the concat dim ", *d, " of the inputs sums to more "
                                "than 2^63"));
      }
      out.shape[*d] = *sum;
    }
    return out;
  }
  return absl::InternalError(absl::StrCat("no layout inference for ", Quote(kind)));
}

}  // namespace pto::compiler
