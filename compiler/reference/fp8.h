// OCP FP8 conversions for reference evaluation and test data, written from
// the formats' definitions in double arithmetic (independently of the
// kernels' pto_tile_fp8.h). FP8 tensors travel as one byte per element.
//
//   DT_FP8E4M3  bias 7, 3 mantissa bits, no inf, NaN 0x7f/0xff, max 448.
//   DT_FP8E5M2  bias 15, 2 mantissa bits, inf 0x7c/0xfc, max 57344.
//   DT_FP8E8M0  2^(code - 127), codes 0..254; 0xff NaN; no sign, no zero.
//
// Conversions from wider values round to nearest even. E4M3: a result past
// 448 and +-inf give NaN; E5M2: past 57344, inf. E8M0: |value| rounds to the
// nearest power of two (ties to the even code), below 2^-127 (zero
// included) to 2^-127, past 2^127 (and inf, NaN) to NaN.
#ifndef PTO_COMPILER_REFERENCE_FP8_H_
#define PTO_COMPILER_REFERENCE_FP8_H_

#include <cstdint>

#include "pto/v1/graph.pb.h"

namespace pto::reference {

// The value of FP8 `code` of `dtype` (one of the three FP8 dtypes).
double Fp8ToDouble(uint8_t code, pto::v1::DataType dtype);

// `value` converted to `dtype`'s code, rounded as above.
uint8_t DoubleToFp8(double value, pto::v1::DataType dtype);

// `value` rounded to `dtype` and back (the value an FP8 tensor holds).
inline double RoundToFp8(double value, pto::v1::DataType dtype) {
  return Fp8ToDouble(DoubleToFp8(value, dtype), dtype);
}

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_FP8_H_
