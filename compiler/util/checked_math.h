// Overflow-checked int64 arithmetic for sizes, tile counts, offsets and
// element counts computed from untrusted graphs. Each returns nullopt where
// the exact result does not fit in int64 (or a divisor is not positive), so
// a caller turns it into an INVALID_ARGUMENT naming the op and the field
// instead of wrapping around or trapping.
//
//   std::optional<int64_t> n = CheckedCeilDiv(size, tile);   // tiles of a dim
//   std::optional<int64_t> e = CheckedProduct(shape);         // elements
//   if (!n || !e) return Invalid(where, "...");
#ifndef PTO_COMPILER_UTIL_CHECKED_MATH_H_
#define PTO_COMPILER_UTIL_CHECKED_MATH_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"

namespace pto::compiler {

inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// ceil(a / b) for a >= 0 and b > 0, without forming a + b - 1.
inline std::optional<int64_t> CheckedCeilDiv(int64_t a, int64_t b) {
  if (a < 0 || b <= 0) return std::nullopt;
  return a / b + (a % b != 0 ? 1 : 0);
}

// The product of `dims` (1 for none).
inline std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> dims) {
  int64_t out = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(out, d, &out)) return std::nullopt;
  }
  return out;
}

}  // namespace pto::compiler

#endif  // PTO_COMPILER_UTIL_CHECKED_MATH_H_
