// IEEE binary16 conversions for reference evaluation and test data. FP16
// tensors travel as uint16_t bit patterns (the kernel ABI's layout).
#ifndef PTO_COMPILER_REFERENCE_FP16_H_
#define PTO_COMPILER_REFERENCE_FP16_H_

#include <cstdint>

namespace pto::reference {

// Exact: every half is a float.
float HalfToFloat(uint16_t bits);

// Rounds `value` to the nearest half, ties to even (one rounding, straight
// from double); overflow gives infinity, NaN stays NaN.
uint16_t DoubleToHalf(double value);

// `value` rounded to FP16 and back (the value an FP16 store keeps).
inline double RoundToHalf(double value) {
  return HalfToFloat(DoubleToHalf(value));
}

// Distance in units in the last place between two finite halves (0 when
// equal, +0 and -0 are equal). Monotonic across zero.
int64_t HalfUlpDistance(uint16_t a, uint16_t b);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_FP16_H_
