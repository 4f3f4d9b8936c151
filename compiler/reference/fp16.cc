#include "compiler/reference/fp16.h"

#include <cmath>
#include <cstdlib>

namespace pto::reference {

float HalfToFloat(uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

uint16_t DoubleToHalf(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return sign | 0x7e00;
  const double a = std::fabs(value);
  // 65520 is halfway between the largest half (65504) and 2^16: ties to even
  // round up, to infinity.
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) {
    // Zero or subnormal: units of 2^-24; a rounded 1024 is the smallest
    // normal, whose bit pattern is also 1024.
    return sign | static_cast<uint16_t>(std::nearbyint(a * std::ldexp(1.0, 24)));
  }
  int e = 0;
  const double f = std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  int exponent = e - 1;                // a = 1.m * 2^exponent
  double mantissa = std::nearbyint((f * 2.0 - 1.0) * 1024.0);  // ties to even
  if (mantissa == 1024.0) {
    mantissa = 0.0;
    ++exponent;
  }
  if (exponent > 15) return sign | 0x7c00;
  return sign | static_cast<uint16_t>((exponent + 15) << 10) |
         static_cast<uint16_t>(mantissa);
}

int64_t HalfUlpDistance(uint16_t a, uint16_t b) {
  // Map sign-magnitude to a monotonic integer line (-0 and +0 both to 0).
  auto ordered = [](uint16_t h) -> int64_t {
    const int64_t magnitude = h & 0x7fff;
    return (h & 0x8000) ? -magnitude : magnitude;
  };
  return std::llabs(ordered(a) - ordered(b));
}

}  // namespace pto::reference
