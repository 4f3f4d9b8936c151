// Double-precision references and error bounds for the host tile library's
// unit tests (pto_tile.h, pto_cube.h, pto_amx.h).
//
// A test computes each output's exact value in double from the inputs it
// fed the instruction and a bound derived from what the instruction
// combines, then checks |got - want| <= bound with ReferenceCheck. The
// bounds (u = 2^-24, the f32 unit roundoff):
//
//   sum of n f32 terms, any order     Gamma(n - 1) * sum |x_i|  (Higham,
//                                     "Accuracy and Stability of Numerical
//                                     Algorithms", 4.2: every order of n - 1
//                                     rounded additions), SumBound
//   dot product of k pairs, f32 FMA   Gamma(k) * sum |a_i b_i|, plus k
//   or rounded multiply-add           subnormal steps (DotBound)
//   exp(x), within `ulps` ulps        exp(x) ulps 2^-23 + ulps 2^-149
//                                     (ExpBound)
//   exp(x - m), x - m rounded to f32  exp(d) * (expm1(u |d|) + ulps 2^-23)
//   first, exp within `ulps` ulps     + ulps 2^-149 (ExpOfDifferenceBound)
//   softmax e_i / sum e_j             the extremes of (e_i +- a_i) /
//                                     (s -+ E_s) with two roundings, from
//                                     the e_i's bounds a_i (SoftmaxBounds)
//   a value stored as f16 / bf16      the rounding of the f32 result's
//                                     interval [want - b, want + b] to the
//                                     type: rounding is monotone, so the
//                                     stored value lies between the
//                                     roundings of its ends (StoredBounds)
//
// Every ReferenceCheck also checks its own bounds: if an all-zero output,
// or every output scaled by 1.25 or 0.5, would have passed, the check
// fails, so a bound loose enough to accept a broken kernel is itself an
// error.
#ifndef COMPILER_TARGETS_HOST_TESTING_DOUBLE_REFERENCE_H_
#define COMPILER_TARGETS_HOST_TESTING_DOUBLE_REFERENCE_H_

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pto_tile_testing {

constexpr double kF32Unit = 0x1p-24;      // u: half an f32 ulp at 1
constexpr double kF32TrueMin = 0x1p-149;  // the smallest f32 subnormal
constexpr double kF16Max = 65504.0;
constexpr double kBf16Max = 0x1.fep127;

// n u / (1 - n u): the relative error of n rounded operations in a row.
inline double Gamma(int64_t n) {
  const double nu = static_cast<double>(n) * kF32Unit;
  return nu / (1.0 - nu);
}

// |fl(x_0 + ... + x_{n-1}) - sum| for f32 additions in any order, given
// sum |x_i|; sums of subnormals are exact, so there is no absolute term.
inline double SumBound(int64_t n, double sum_abs) {
  return n <= 1 ? 0.0 : Gamma(n - 1) * sum_abs;
}

// |fl(sum a_i b_i) - sum a_i b_i| over k steps of fused (or rounded)
// multiply-adds, given sum |a_i b_i|: Gamma(k) relative, and half a
// subnormal step per rounding where products or partial sums underflow.
inline double DotBound(int64_t k, double sum_abs) {
  return Gamma(k) * sum_abs + static_cast<double>(k) * kF32TrueMin;
}

// The spacing of f32 numbers at |v| (an ulp): 2^(e - 23) for a normal v of
// exponent e, 2^-149 below FLT_MIN.
inline double UlpF32(double v) {
  const double a = std::fabs(v);
  if (a < 0x1p-126) return kF32TrueMin;
  return std::ldexp(1.0, std::ilogb(a) - 23);
}

// v rounded to nearest even with `mantissa_bits` bits after the point and
// quantum 2^min_exp below 2^(min_exp + mantissa_bits) (subnormals), inf past
// `max` (at and above the midpoint between max and the next power of two).
inline double RoundTo(double v, int mantissa_bits, int min_exp, double max) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  const double a = std::fabs(v);
  const int e = std::ilogb(a);
  const int q = e - mantissa_bits < min_exp ? min_exp : e - mantissa_bits;
  const double r = std::nearbyint(std::ldexp(a, -q)) * std::ldexp(1.0, q);
  return std::copysign(r > max ? INFINITY : r, v);
}
// binary16: 10 mantissa bits, subnormal quantum 2^-24, largest 65504.
inline double RoundToF16(double v) { return RoundTo(v, 10, -24, kF16Max); }
// bfloat16: 7 mantissa bits, subnormal quantum 2^-133.
inline double RoundToBf16(double v) { return RoundTo(v, 7, -133, kBf16Max); }
// f32 (for values computed in double that an f32 instruction rounds once).
inline double RoundToF32(double v) { return RoundTo(v, 23, -149, 0x1.fffffep127); }

// The binary16 bits of a double that is exactly an f16 value (inf, NaN
// -> the quiet NaN of its sign, 0x7E00).
inline uint16_t F16Bits(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return sign | 0x7E00;
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | 0x7C00;
  if (a < 0x1p-14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));
  const int e = std::ilogb(a);
  const uint16_t man = static_cast<uint16_t>(std::ldexp(a, 10 - e) - 1024);
  return sign | static_cast<uint16_t>((e + 15) << 10) | man;
}

// The value of binary16 bits h, by the definition of the format.
inline double F16Value(uint16_t h) {
  const int exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  double v;
  if (exp == 0) {
    v = std::ldexp(man, -24);
  } else if (exp == 31) {
    v = man != 0 ? NAN : INFINITY;
  } else {
    v = std::ldexp(1024 + man, exp - 25);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

// exp(d) with d = x - m (exact in double), where the instruction rounds
// x - m to f32 first (relative error expm1(u |d|) in the result) and its
// exp is within `ulps` ulps: the bound on |got - exp(d)|.
inline double ExpOfDifferenceBound(double d, double ulps) {
  const double e = std::exp(d);
  if (e == 0) return ulps * kF32TrueMin;  // d = -inf: exactly 0
  return e * (std::expm1(kF32Unit * std::fabs(d)) + ulps * 0x1p-23) + ulps * kF32TrueMin;
}

// exp(x) of an f32 x within `ulps` ulps: the bound on |got - exp(x)|.
inline double ExpBound(double x, double ulps) {
  return std::exp(x) * ulps * 0x1p-23 + ulps * kF32TrueMin;
}

// Softmax outputs y_i = e_i / s (s = sum e_j, e_j >= 0) computed as
// fl(e'_i * fl(1 / s')) or fl(e'_i / s'), where |e'_j - e_j| <= a_j and s'
// is an f32 sum of the e'_j: |y'_i - y_i| <= the larger distance of the
// extremes (e_i +- a_i)(1 +- 2u) / (s -+ E_s) from y_i, with E_s =
// sum a_j + SumBound over the e'_j, plus one subnormal step (y_i
// underflowing). want_y and bound_y get n values each.
inline void SoftmaxBounds(const std::vector<double>& e, const std::vector<double>& a,
                          std::vector<double>* want_y, std::vector<double>* bound_y) {
  const int64_t n = static_cast<int64_t>(e.size());
  double s = 0, sum_a = 0;
  for (int64_t j = 0; j < n; ++j) {
    s += e[j];
    sum_a += a[j];
  }
  const double es = sum_a + SumBound(n, s + sum_a) + 1e-15 * s;
  const double round2 = 2 * kF32Unit + kF32Unit * kF32Unit;
  want_y->resize(n);
  bound_y->resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const double y = e[i] / s;
    const double hi = (e[i] + a[i]) * (1 + round2) / (s - es);
    const double lo = s + es > 0 ? std::fmax(e[i] - a[i], 0.0) * (1 - round2) / (s + es) : 0;
    (*want_y)[i] = y;
    (*bound_y)[i] = std::fmax(hi - y, y - lo) * (1 + 1e-12) + 2 * kF32TrueMin;
  }
}

// The stored value's interval when an f32 result within `bound` of `want`
// is rounded to a narrower type by round (RoundToF16, RoundToBf16): the
// interval's ends widened by an f32 ulp (the result is an f32 first).
struct Interval {
  double lo, hi;
};
template <typename Round>
inline Interval StoredBounds(double want, double bound, Round round) {
  const double lo = want - bound, hi = want + bound;
  return {round(lo - UlpF32(lo)), round(hi + UlpF32(hi))};
}

// Compares outputs with their references and reports the first few
// mismatches with their context; at the end checks that its bounds
// discriminate (see the file comment).
class ReferenceCheck {
 public:
  explicit ReferenceCheck(std::string what) : what_(std::move(what)) {}
  ReferenceCheck(const ReferenceCheck&) = delete;
  ReferenceCheck& operator=(const ReferenceCheck&) = delete;

  // |got - want| <= bound; NaN where want is NaN; an infinite want
  // exactly; an f32 inf where the interval reaches the f32 overflow
  // threshold (2^128 - 2^103, half an ulp past FLT_MAX).
  template <typename Context>
  void Near(double got, double want, double bound, const Context& context) {
    ++count_;
    bool ok;
    if (std::isnan(want)) {
      ok = std::isnan(got);
    } else if (std::isinf(want)) {
      ok = got == want;
    } else if (std::isinf(got) && std::signbit(got) == std::signbit(want) &&
               std::fabs(want) + bound >= 0x1.ffffffp127) {
      ok = true;
    } else {
      ok = std::fabs(got - want) <= bound;
      Discriminates(want, bound);
    }
    if (!ok) Fail(got, want, bound, context);
  }

  // got within [in.lo, in.hi] (a stored value; want is the exact value).
  template <typename Context>
  void Between(double got, double want, Interval in, const Context& context) {
    ++count_;
    const bool ok = std::isnan(want) ? std::isnan(got) : got >= in.lo && got <= in.hi;
    if (!std::isnan(want) && std::isfinite(in.lo) && std::isfinite(in.hi)) {
      Discriminates(want, std::fmax(in.hi - want, want - in.lo));
    }
    if (!ok) Fail(got, want, std::fmax(in.hi - want, want - in.lo), context);
  }

  // Exactly want (bits of a correctly rounded conversion, exact max/min).
  template <typename Context>
  void Exact(double got, double want, const Context& context) {
    ++count_;
    const bool ok = std::isnan(want) ? std::isnan(got)
                                     : got == want && std::signbit(got) == std::signbit(want);
    if (!std::isnan(want) && want != 0) Discriminates(want, 0);
    if (!ok) Fail(got, want, 0, context);
  }

  int64_t failures() const { return failures_; }

  ~ReferenceCheck() {
    if (count_ == 0) return;
    EXPECT_TRUE(rejects_zero_) << what_ << ": every bound would accept an all-zero output";
    EXPECT_TRUE(rejects_scaled_up_)
        << what_ << ": every bound would accept the outputs scaled by 1.25";
    EXPECT_TRUE(rejects_scaled_down_)
        << what_ << ": every bound would accept the outputs scaled by 0.5";
  }

 private:
  void Discriminates(double want, double bound) {
    const double a = std::fabs(want);
    rejects_zero_ = rejects_zero_ || a > bound;
    rejects_scaled_up_ = rejects_scaled_up_ || 0.25 * a > bound;
    rejects_scaled_down_ = rejects_scaled_down_ || 0.5 * a > bound;
  }
  template <typename Context>
  void Fail(double got, double want, double bound, const Context& context) {
    if (failures_++ >= 8) return;
    std::ostringstream out;
    out.precision(9);
    out << what_ << ", " << context() << ": got " << got << ", want " << want << " +- " << bound;
    if (std::isfinite(got) && std::isfinite(want) && want != 0) {
      out << " (off by " << (got - want) / std::fabs(want) << " relative)";
    }
    ADD_FAILURE() << out.str();
  }

  std::string what_;
  int64_t count_ = 0, failures_ = 0;
  bool rejects_zero_ = false, rejects_scaled_up_ = false, rejects_scaled_down_ = false;
};

// The x86 features this translation unit was compiled to use (by -march)
// that this CPU lacks, each with a leading space; empty when the CPU runs
// this build.
inline std::string MissingCpuFeatures() {
  std::string missing;
#define PTO_TESTING_NEED(feature) \
  if (!__builtin_cpu_supports(feature)) missing += " " feature;
#if defined(__F16C__)
  PTO_TESTING_NEED("f16c")
#endif
#if defined(__AVX2__)
  PTO_TESTING_NEED("avx2")
#endif
#if defined(__FMA__)
  PTO_TESTING_NEED("fma")
#endif
#if defined(__AVX512F__)
  PTO_TESTING_NEED("avx512f")
#endif
#if defined(__AVX512BW__)
  PTO_TESTING_NEED("avx512bw")
#endif
#if defined(__AVX512DQ__)
  PTO_TESTING_NEED("avx512dq")
#endif
#if defined(__AVX512VL__)
  PTO_TESTING_NEED("avx512vl")
#endif
#undef PTO_TESTING_NEED
  return missing;
}

}  // namespace pto_tile_testing

// Skips the current test, naming the missing features, where the CPU lacks
// an x86 feature this build uses (the x86-64-v3 and _v4 test binaries).
#define PTO_SKIP_WITHOUT_BUILD_ISA()                                                  \
  do {                                                                                \
    const std::string pto_missing = ::pto_tile_testing::MissingCpuFeatures();         \
    if (!pto_missing.empty()) {                                                       \
      GTEST_SKIP() << "this CPU lacks" << pto_missing << ", which this build uses";   \
    }                                                                                 \
  } while (0)

#endif  // COMPILER_TARGETS_HOST_TESTING_DOUBLE_REFERENCE_H_
