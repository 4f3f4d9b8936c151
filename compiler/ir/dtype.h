// Facts about element types the compiler supports.
#ifndef PTO_COMPILER_IR_DTYPE_H_
#define PTO_COMPILER_IR_DTYPE_H_

#include <cstdint>
#include <string>

#include "pto/v1/graph.pb.h"

namespace pto::compiler {

// Whether this compiler can generate code for tensors of `dtype`: FP32,
// FP16, BF16, INT8, INT16, INT32, INT64, UINT8, BOOL, DOUBLE and the FP8
// storage types.
bool IsSupportedDType(pto::v1::DataType dtype);

// The one-byte float storage types: DT_FP8E4M3, DT_FP8E5M2, DT_FP8E8M0.
// Tensors of them move, view and cast; arithmetic takes them cast to FP32.
bool IsFp8DType(pto::v1::DataType dtype);

// The dtypes arithmetic and math ops take: FP32, FP16, BF16 (the 16-bit
// types compute in f32 and round every result to nearest even).
bool IsFloatComputeDType(pto::v1::DataType dtype);

// How a UB tile holding `dtype` values stores them: DT_FP32 (f32 holds
// FP32, FP16, BF16, BOOL, INT8, INT16, UINT8 and the FP8 types exactly), DT_INT64 (INT32,
// INT64) or DT_DOUBLE.
pto::v1::DataType UbStorageType(pto::v1::DataType dtype);

// Short IR name: "f32", "f16", ...; "dtype(<n>)" for unknown numbers.
std::string DTypeShortName(pto::v1::DataType dtype);

// Proto enum name, e.g. "DT_FP16", for error messages.
std::string DTypeEnumName(pto::v1::DataType dtype);

// Bytes per element in global memory; 0 for unsupported types.
int64_t DTypeBytes(pto::v1::DataType dtype);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_DTYPE_H_
