#include "compiler/reference/fp8.h"

#include <algorithm>
#include <cmath>

namespace pto::reference {
namespace {

struct Layout {
  int mantissa_bits;
  int bias;
  bool finite_only;  // E4M3 "fn": no inf, only S.1111.111 is NaN
};

Layout LayoutOf(pto::v1::DataType dtype) {
  return dtype == pto::v1::DT_FP8E4M3 ? Layout{3, 7, true} : Layout{2, 15, false};
}

double MaxFinite(const Layout& l) {
  const int max_exp = l.finite_only ? 15 - l.bias : 30 - l.bias;
  const double mantissa =
      l.finite_only ? 2.0 - 2.0 / (1 << l.mantissa_bits) : 2.0 - 1.0 / (1 << l.mantissa_bits);
  return std::ldexp(mantissa, max_exp);
}

}  // namespace

double Fp8ToDouble(uint8_t code, pto::v1::DataType dtype) {
  if (dtype == pto::v1::DT_FP8E8M0) {
    return code == 0xFF ? NAN : std::ldexp(1.0, code - 127);
  }
  const Layout l = LayoutOf(dtype);
  const double sign = (code & 0x80) != 0 ? -1.0 : 1.0;
  const int e = (code & 0x7F) >> l.mantissa_bits;
  const int m = code & ((1 << l.mantissa_bits) - 1);
  const int e_all_ones = (1 << (7 - l.mantissa_bits)) - 1;
  if (l.finite_only && (code & 0x7F) == 0x7F) return NAN;
  if (!l.finite_only && e == e_all_ones) return m == 0 ? sign * INFINITY : NAN;
  if (e == 0) return sign * std::ldexp(m, 1 - l.bias - l.mantissa_bits);
  return sign * std::ldexp(1.0 + std::ldexp(m, -l.mantissa_bits), e - l.bias);
}

uint8_t DoubleToFp8(double value, pto::v1::DataType dtype) {
  if (dtype == pto::v1::DT_FP8E8M0) {
    const double a = std::fabs(value);
    if (!std::isfinite(a)) return 0xFF;
    if (a <= std::ldexp(1.0, -127)) return 0;
    int exp;
    const double m = std::frexp(a, &exp);  // a = m * 2^exp, 0.5 <= m < 1
    int e = exp - 1 + 127;                 // a = (2m) * 2^(e - 127)
    const double frac = 2 * m - 1;         // in [0, 1)
    if (frac > 0.5 || (frac == 0.5 && e % 2 != 0)) ++e;
    return e > 254 ? 0xFF : static_cast<uint8_t>(e);
  }
  const Layout l = LayoutOf(dtype);
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  const uint8_t nan = l.finite_only ? 0x7F : 0x7E;
  const uint8_t inf = l.finite_only ? 0x7F : 0x7C;
  if (std::isnan(value)) return sign | nan;
  const double a = std::fabs(value);
  if (std::isinf(a)) return sign | inf;
  const int min_exp = 1 - l.bias;
  int exp = min_exp;
  if (a != 0) {
    std::frexp(a, &exp);
    exp = std::max(exp - 1, min_exp);
  }
  const double quantum = std::ldexp(1.0, exp - l.mantissa_bits);
  const double r = std::nearbyint(a / quantum) * quantum;
  if (r > MaxFinite(l)) return sign | inf;
  // Search the codes: every FP8 magnitude is exact in double.
  for (int c = 0; c <= 0x7F; ++c) {
    if (Fp8ToDouble(static_cast<uint8_t>(c), dtype) == r) return sign | static_cast<uint8_t>(c);
  }
  return sign | nan;  // unreachable: r is a value of the format
}

}  // namespace pto::reference
