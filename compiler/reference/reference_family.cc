#include "compiler/reference/reference_family.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::reference {

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

bool WideScalars(pto::v1::DataType dtype) {
  return dtype == pto::v1::DT_INT32 || dtype == pto::v1::DT_INT64 ||
         dtype == pto::v1::DT_DOUBLE;
}

}  // namespace pto::reference
