#include "compiler/reference/reference_family.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace pto::reference {

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

bool WideScalars(pto::v1::DataType dtype) {
  return dtype == pto::v1::DT_INT32 || dtype == pto::v1::DT_INT64 ||
         dtype == pto::v1::DT_DOUBLE;
}

absl::StatusOr<int64_t> DimAttr(const pto::v1::Op& op, const std::string& where, int rank) {
  auto dim_attr = op.attrs().find("dim");
  if (dim_attr == op.attrs().end() ||
      dim_attr->second.value_case() != pto::v1::Attribute::kI) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reference: %s: attribute 'dim' (i) is missing", where));
  }
  const int64_t dim = dim_attr->second.i();
  if (dim < -rank || dim >= rank) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference: %s: dim %d is out of range for rank %d", where, dim, rank));
  }
  return dim < 0 ? dim + rank : dim;
}

}  // namespace pto::reference
