// Result types of the ops addressed by an index tensor (gather,
// index_select, scatter, index_copy, index_add; op_registry.cc) and of sort,
// which makes one: torch's
// shape rules, checked where they can be at compile time. Index values are
// data: they are checked at launch (pypto) and guarded in the kernels.
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/dtype.h"
#include "compiler/ops/infer.h"
#include "compiler/util/strings.h"

namespace pto::compiler {
namespace {

absl::Status Bad(const std::string& what) { return absl::InvalidArgumentError(what); }

std::string TypeOf(const SymValueType& v) {
  return absl::StrCat(DTypeShortName(v.dtype), FormatSymShape(v.shape));
}

bool IsIndexDType(pto::v1::DataType t) {
  return t == pto::v1::DT_INT32 || t == pto::v1::DT_INT64;
}

// Whether `a` is provably no larger than `b` (equal expressions, or both
// constants in order).
bool NoLarger(const SymExpr& a, const SymExpr& b) {
  if (a == b) return true;
  std::optional<int64_t> x = a.AsConstant(), y = b.AsConstant();
  return x && y && *x <= *y;
}

// sort: x with dim's size k (1 <= k <= that size; k 0: all of it), INT64.
// Along a symbolic dim a k >= 1 cannot be checked here: the front end
// checks it at launch (past a row's end the positions are 0).
absl::StatusOr<SymValueType> SortResult(const SymValueType& x, const InferAttrs& attrs) {
  const int rank = static_cast<int>(x.shape.size());
  absl::StatusOr<int> d = NormalizeDim(attrs.dim, rank);
  if (!d.ok()) return d.status();
  if (x.dtype == pto::v1::DT_BOOL) {
    return Bad(absl::StrCat("input 0 is ", TypeOf(x), "; sort takes numbers, not DT_BOOL"));
  }
  std::optional<int64_t> n = x.shape[*d].AsConstant();
  if (attrs.k < 0 || (n && attrs.k > *n)) {
    return Bad(absl::StrCat("attrs[\"k\"]: ", attrs.k, " is out of range [0, ",
                            n ? absl::StrCat(*n) : x.shape[*d].ToString(), "] for dim ", *d,
                            " of ", TypeOf(x), " (0: all of it)"));
  }
  SymValueType out{pto::v1::DT_INT64, x.shape};
  if (attrs.k > 0) out.shape[*d] = SymExpr(attrs.k);
  return out;
}

}  // namespace

absl::StatusOr<SymValueType> InferIndexResult(const OpInfo& info,
                                              absl::Span<const SymValueType> inputs,
                                              const InferAttrs& attrs) {
  const SymValueType& x = inputs[0];
  const int rank = static_cast<int>(x.shape.size());
  if (!IsSupportedDType(x.dtype)) {
    return Bad(absl::StrCat("input 0 has dtype ", DTypeEnumName(x.dtype), "; ", info.kind,
                            " does not take it"));
  }
  if (rank == 0) {
    return Bad(absl::StrCat("input 0 is a rank-0 tensor; ", info.kind,
                            " needs a tensor with a dim to index"));
  }
  if (info.kind == "sort") return SortResult(x, attrs);
  const SymValueType& index = inputs[1];
  if (!IsIndexDType(index.dtype)) {
    return Bad(absl::StrCat("input 1 (the index) is ", TypeOf(index), "; ", info.kind,
                            " takes a DT_INT32 or DT_INT64 index"));
  }
  absl::StatusOr<int> d = NormalizeDim(attrs.dim, rank);
  if (!d.ok()) return d.status();
  const bool one_d = info.kind == "index_select" || info.kind == "index_copy" ||
                     info.kind == "index_add";
  if (one_d && index.shape.size() != 1) {
    return Bad(absl::StrCat("input 1 (the index) is ", TypeOf(index), "; ", info.kind,
                            " takes a rank-1 index"));
  }
  if (!one_d && static_cast<int>(index.shape.size()) != rank) {
    return Bad(absl::StrCat("input 1 (the index) is ", TypeOf(index), " and input 0 ",
                            TypeOf(x), "; ", info.kind,
                            " needs an index of the input's rank"));
  }
  if (info.kind == "index_select") {
    SymValueType out = x;
    out.shape[*d] = index.shape[0];
    return out;
  }
  if (info.kind == "gather") {
    for (int k = 0; k < rank; ++k) {
      if (k != *d && !NoLarger(index.shape[k], x.shape[k])) {
        return Bad(absl::StrCat("input 1 (the index) is ", TypeOf(index), " and input 0 ",
                                TypeOf(x), ": index dim ", k, " is larger than the input's "
                                "(gather needs index.size(d) <= input.size(d) for d != dim ",
                                *d, ")"));
      }
    }
    return SymValueType{x.dtype, index.shape};
  }
  // scatter, index_copy, index_add: out is x.
  const SymValueType& src = inputs[2];
  if (src.dtype != x.dtype) {
    return Bad(absl::StrCat("input 2 (src) is ", TypeOf(src), " and input 0 ", TypeOf(x),
                            "; ", info.kind, " needs src of the input's dtype"));
  }
  if (static_cast<int>(src.shape.size()) != rank) {
    return Bad(absl::StrCat("input 2 (src) is ", TypeOf(src), " and input 0 ", TypeOf(x),
                            "; ", info.kind, " needs src of the input's rank"));
  }
  if (one_d) {
    if (info.kind == "index_add" &&
        (x.dtype == pto::v1::DT_BOOL || x.dtype == pto::v1::DT_INT8 ||
         x.dtype == pto::v1::DT_INT16 || x.dtype == pto::v1::DT_UINT8)) {
      return Bad(absl::StrCat("input 0 is ", TypeOf(x),
                              "; index_add takes DT_FP32, DT_FP16, DT_BF16, DT_INT32, "
                              "DT_INT64 or DT_DOUBLE"));
    }
    for (int k = 0; k < rank; ++k) {
      const SymExpr& want = k == *d ? index.shape[0] : x.shape[k];
      if (!(src.shape[k] == want)) {
        return Bad(absl::StrCat("input 2 (src) is ", TypeOf(src), ", input 0 ", TypeOf(x),
                                " and the index ", TypeOf(index), "; ", info.kind,
                                " needs src of the input's shape with dim ", *d,
                                " of the index's length"));
      }
    }
    return x;
  }
  if (attrs.reduce != "" && attrs.reduce != "none" && attrs.reduce != "add" &&
      attrs.reduce != "multiply") {
    return Bad(absl::StrCat("attrs[\"reduce\"]: \"", attrs.reduce,
                            "\" (valid: \"none\", \"add\", \"multiply\")"));
  }
  if ((attrs.reduce == "add" || attrs.reduce == "multiply") &&
      (x.dtype == pto::v1::DT_BOOL || x.dtype == pto::v1::DT_INT8 ||
       x.dtype == pto::v1::DT_INT16 || x.dtype == pto::v1::DT_UINT8)) {
    return Bad(absl::StrCat("input 0 is ", TypeOf(x), "; scatter with reduce \"",
                            attrs.reduce,
                            "\" takes DT_FP32, DT_FP16, DT_BF16, DT_INT32, DT_INT64 or "
                            "DT_DOUBLE"));
  }
  for (int k = 0; k < rank; ++k) {
    if (!NoLarger(index.shape[k], src.shape[k])) {
      return Bad(absl::StrCat("input 1 (the index) is ", TypeOf(index), " and input 2 (src) ",
                              TypeOf(src), ": index dim ", k,
                              " is larger than src's (scatter needs index.size(d) <= "
                              "src.size(d))"));
    }
    if (k != *d && !NoLarger(index.shape[k], x.shape[k])) {
      return Bad(absl::StrCat("input 1 (the index) is ", TypeOf(index), " and input 0 ",
                              TypeOf(x), ": index dim ", k,
                              " is larger than the input's (scatter needs index.size(d) <= "
                              "input.size(d) for d != dim ", *d, ")"));
    }
  }
  return x;
}

}  // namespace pto::compiler
