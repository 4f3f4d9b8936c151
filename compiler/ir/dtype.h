// Facts about element types the compiler supports.
#ifndef PTO_COMPILER_IR_DTYPE_H_
#define PTO_COMPILER_IR_DTYPE_H_

#include <cstdint>
#include <string>

#include "pto/v1/graph.pb.h"

namespace pto::compiler {

// Whether this compiler can generate code for tensors of `dtype` (this
// version: DT_FP32, DT_FP16 and DT_BOOL).
bool IsSupportedDType(pto::v1::DataType dtype);

// Short IR name: "f32", "f16", ...; "dtype(<n>)" for unknown numbers.
std::string DTypeShortName(pto::v1::DataType dtype);

// Proto enum name, e.g. "DT_FP16", for error messages.
std::string DTypeEnumName(pto::v1::DataType dtype);

// Bytes per element in global memory; 0 for unsupported types.
int64_t DTypeBytes(pto::v1::DataType dtype);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_IR_DTYPE_H_
