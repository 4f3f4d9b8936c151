#include "compiler/ir/dtype.h"

#include "absl/strings/str_cat.h"

namespace pto::compiler {

bool IsSupportedDType(pto::v1::DataType dtype) {
  return DTypeBytes(dtype) > 0;
}

std::string DTypeShortName(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32: return "f32";
    case pto::v1::DT_FP16: return "f16";
    case pto::v1::DT_BF16: return "bf16";
    case pto::v1::DT_INT8: return "i8";
    case pto::v1::DT_INT16: return "i16";
    case pto::v1::DT_INT32: return "i32";
    case pto::v1::DT_INT64: return "i64";
    case pto::v1::DT_UINT8: return "u8";
    case pto::v1::DT_BOOL: return "bool";
    case pto::v1::DT_DOUBLE: return "f64";
    case pto::v1::DT_FP8E4M3: return "f8e4m3";
    case pto::v1::DT_FP8E5M2: return "f8e5m2";
    case pto::v1::DT_FP8E8M0: return "f8e8m0";
    default: return absl::StrCat("dtype(", static_cast<int>(dtype), ")");
  }
}

std::string DTypeEnumName(pto::v1::DataType dtype) {
  if (pto::v1::DataType_IsValid(dtype)) return pto::v1::DataType_Name(dtype);
  return absl::StrCat("dtype(", static_cast<int>(dtype), ")");
}

int64_t DTypeBytes(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32: return 4;
    case pto::v1::DT_FP16: return 2;
    case pto::v1::DT_BF16: return 2;
    case pto::v1::DT_INT8: return 1;
    case pto::v1::DT_INT16: return 2;
    case pto::v1::DT_INT32: return 4;
    case pto::v1::DT_INT64: return 8;
    case pto::v1::DT_UINT8: return 1;
    case pto::v1::DT_BOOL: return 1;  // 0 or 1, as numpy and torch store it
    case pto::v1::DT_DOUBLE: return 8;
    case pto::v1::DT_FP8E4M3:
    case pto::v1::DT_FP8E5M2:
    case pto::v1::DT_FP8E8M0: return 1;
    default: return 0;
  }
}

bool IsFp8DType(pto::v1::DataType dtype) {
  return dtype == pto::v1::DT_FP8E4M3 || dtype == pto::v1::DT_FP8E5M2 ||
         dtype == pto::v1::DT_FP8E8M0;
}

bool IsFloatComputeDType(pto::v1::DataType dtype) {
  return dtype == pto::v1::DT_FP32 || dtype == pto::v1::DT_FP16 ||
         dtype == pto::v1::DT_BF16;
}

pto::v1::DataType UbStorageType(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_INT32:
    case pto::v1::DT_INT64: return pto::v1::DT_INT64;
    case pto::v1::DT_DOUBLE: return pto::v1::DT_DOUBLE;
    default: return pto::v1::DT_FP32;
  }
}

}  // namespace pto::compiler
