#include "compiler/reference/reference_error.h"

#include "compiler/reference/reference_eval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

namespace pto::reference {
namespace {

using pto::v1::DataType;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Unit roundoff and half the smallest subnormal of storing into `dtype`.
double StorageUnit(DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32: return 0x1p-24;
    case pto::v1::DT_FP16: return 0x1p-11;
    case pto::v1::DT_BF16: return 0x1p-8;
    case pto::v1::DT_DOUBLE: return 0x1p-53;
    default: return 0;  // integers, BOOL: results are exact
  }
}
double StorageFloor(DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32: return 0x1p-150;
    case pto::v1::DT_FP16: return 0x1p-25;
    case pto::v1::DT_BF16: return 0x1p-134;
    case pto::v1::DT_DOUBLE: return 0x1p-1074;
    default: return 0;
  }
}

bool Narrow(DataType dtype) {
  return dtype == pto::v1::DT_FP16 || dtype == pto::v1::DT_BF16;
}

// Ops whose result is one of their inputs or an exact function of them:
// no rounding of their own.
bool IsExact(const std::string& kind) {
  static const std::set<std::string>* exact = new std::set<std::string>{
      "neg",      "abs",      "relu",        "sign",        "floor",      "ceil",
      "round",    "trunc",    "copy",        "clone",       "signbit",    "bitwise_not",
      "maximum",  "minimum",  "maximums",    "minimums",    "clip",       "where",
      "eq",       "ne",       "lt",          "le",          "gt",         "ge",
      "eqs",      "nes",      "lts",         "les",         "gts",        "ges",
      "amax",     "amin",     "argmax",      "argmin",      "full",       "gcd",
      "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
      "bitwise_right_shift", "fmod", "philox"};
  return exact->count(kind) > 0;
}

// The kernel's own error: {relative in u, absolute in u}.
struct OwnError {
  double relative;
  double absolute;
};
OwnError Own(const std::string& kind) {
  static const std::map<std::string, OwnError>* table = new std::map<std::string, OwnError>{
      {"add", {1, 0}},  {"sub", {1, 0}},  {"mul", {1, 0}},   {"adds", {1, 0}},
      {"subs", {1, 0}}, {"muls", {1, 0}}, {"rsubs", {1, 0}}, {"sqrt", {1, 0}},
      {"hypot", {2, 0}},
      {"div", {2, 0}},  {"divs", {2, 0}}, {"rdivs", {2, 0}}, {"reciprocal", {2, 0}},
      {"floor_divide", {0, 0}}, {"remainder", {2, 0}},
      {"cast", {0, 0}}, {"bitcast", {0, 0}}, {"arange", {0, 0}},
      {"philox", {0, 0}},
      // Box-Muller in f32: log's 4 ulp halved by sqrt, cos/sin's 4 ulp and
      // the product's rounding (relative); the angle's rounding (2 pi 2**-24
      // at most) times r <= 5.8 (absolute).
      {"philox_normal", {16, 48}},
      // The library's math functions: within 4 ulp (8 u) of the exact result.
      {"exp", {8, 0}},   {"exp2", {8, 0}},  {"expm1", {8, 0}}, {"log", {8, 0}},
      {"log2", {8, 0}},  {"log10", {8, 0}}, {"log1p", {8, 0}}, {"rsqrt", {8, 0}},
      {"tanh", {8, 0}},  {"sin", {8, 0}},   {"cos", {8, 0}},   {"tan", {8, 0}},
      {"asin", {8, 0}},  {"acos", {8, 0}},  {"atan", {8, 0}},  {"sinh", {8, 0}},
      {"cosh", {8, 0}},  {"asinh", {8, 0}}, {"acosh", {8, 0}}, {"atanh", {8, 0}},
      {"cbrt", {8, 0}},  {"atan2", {8, 0}}, {"pow", {8, 0}},   {"pows", {8, 0}},
      {"rpows", {8, 0}},
      // 1 / (1 + exp(-x)): exp's error and two roundings.
      {"sigmoid", {16, 0}},
      // Polynomial pieces: relative in the tails, absolute near erf = 1.
      {"erf", {8, 4}},   {"erfc", {8, 4}},
  };
  auto it = table->find(kind);
  return it == table->end() ? OwnError{8, 4} : it->second;  // unknown: as a math function
}

bool IsComparison(const std::string& kind) {
  static const std::set<std::string>* cmp = new std::set<std::string>{
      "eq", "ne", "lt", "le", "gt", "ge", "eqs", "nes", "lts", "les", "gts", "ges"};
  return cmp->count(kind) > 0;
}

bool IsIntegerOnly(const std::string& kind) {
  return kind == "gcd" || kind == "bitwise_and" || kind == "bitwise_or" ||
         kind == "bitwise_xor" || kind == "bitwise_left_shift" ||
         kind == "bitwise_right_shift" || kind == "bitwise_not";
}

// The interval's end points, and 0 when it lies inside (where |x|, hypot
// and cosh turn).
std::vector<double> Candidates(double x, double e) {
  std::vector<double> c = {x - e, x + e};
  if (x - e < 0 && x + e > 0) c.push_back(0.0);
  return c;
}

double Finite(double b) { return std::isnan(b) ? kInf : b; }

}  // namespace

double ComputeUnit(DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32: case pto::v1::DT_FP16: case pto::v1::DT_BF16: return 0x1p-24;
    case pto::v1::DT_DOUBLE: return 0x1p-53;
    default: return 0;
  }
}

double RoundingError(double z, DataType dtype) {
  const double once = StorageUnit(dtype) * std::fabs(z) + StorageFloor(dtype);
  return Narrow(dtype) ? 2 * once : once;
}

double ExactInputsError(double z, DataType dtype) {
  if (!std::isfinite(z)) return 0;
  const DataType compute = dtype == pto::v1::DT_DOUBLE ? dtype
                           : ComputeUnit(dtype) > 0    ? pto::v1::DT_FP32
                                                       : dtype;
  const double want = RoundToDType(z, dtype);
  const double computed = RoundToDType(z, compute);
  return std::max({std::fabs(z - want), std::fabs(computed - want),
                   std::fabs(RoundToDType(computed, dtype) - want)});
}

double OpError(const std::string& kind, double z, DataType dtype, bool exact_inputs) {
  if (!std::isfinite(z) || IsExact(kind)) return 0;
  const OwnError own = Own(kind);
  if (exact_inputs && own.relative <= 1 && own.absolute == 0) return ExactInputsError(z, dtype);
  const double u = ComputeUnit(dtype);
  const double compute_floor = u == 0 ? 0 : dtype == pto::v1::DT_DOUBLE ? 0x1p-1074 : 0x1p-149;
  return own.relative * u * std::fabs(z) + own.absolute * u +
         (own.relative > 0 ? 4 * compute_floor : 0) + RoundingError(z, dtype);
}

double PropagateUnary(const std::string& kind, const std::function<double(double)>& f,
                      double x, double ex, double z) {
  if (ex == 0 || !std::isfinite(z)) return 0;
  if (!std::isfinite(ex)) return kInf;
  if (kind == "neg" || kind == "abs" || kind == "copy" || kind == "clone") return ex;
  if (kind == "sin" || kind == "cos") return std::min(ex, 2.0);  // |f'| <= 1
  if (IsIntegerOnly(kind)) return kInf;
  if (kind == "signbit") return x - ex <= 0 && x + ex >= 0 ? kInf : 0;
  if (kind == "tan" && std::floor((x - ex) / M_PI - 0.5) != std::floor((x + ex) / M_PI - 0.5)) {
    return kInf;  // a pole inside
  }
  // Monotone (or turning at 0): the extremes are among the candidates.
  double b = 0;
  for (double c : Candidates(x, ex)) b = std::max(b, Finite(std::fabs(f(c) - z)));
  return b;
}

double PropagateBinary(const std::string& kind,
                       const std::function<double(double, double)>& f, double x,
                       double ex, double y, double ey, double z, bool integer) {
  if (!integer && (kind == "floor_divide" || kind == "remainder" || kind == "fmod")) {
    // The kernel's quotient may round across an integer: widen by 2 u.
    ex += 0x1p-23 * std::fabs(x);
    ey += 0x1p-23 * std::fabs(y);
  }
  if ((ex == 0 && ey == 0) || !std::isfinite(z)) return 0;
  if (!std::isfinite(ex) || !std::isfinite(ey)) return kInf;
  if (IsIntegerOnly(kind)) return kInf;
  if (kind == "eq" || kind == "ne" || kind == "eqs" || kind == "nes") {
    return std::fabs(x - y) <= ex + ey ? kInf : 0;  // may be equal
  }
  const bool wraps = kind == "remainder" || kind == "fmod";
  double b = 0;
  double quotient = std::nan("");
  for (double cx : Candidates(x, ex)) {
    for (double cy : Candidates(y, ey)) {
      const double v = f(cx, cy);
      if (IsComparison(kind)) {
        if (v != z) return kInf;  // may flip
        continue;
      }
      if (wraps) {
        // A remainder jumps by |y| where the quotient crosses an integer.
        const double q = kind == "fmod" ? std::trunc(cx / cy) : std::floor(cx / cy);
        if (std::isnan(q) || (!std::isnan(quotient) && q != quotient)) return kInf;
        quotient = q;
      }
      b = std::max(b, Finite(std::fabs(v - z)));
    }
  }
  if (kind == "div" || kind == "divs" || kind == "rdivs" || kind == "floor_divide" ||
      kind == "remainder" || kind == "fmod") {
    const bool zero_inside = kind == "rdivs" ? (x - ex <= 0 && x + ex >= 0)
                                             : (y - ey <= 0 && y + ey >= 0);
    if (zero_inside) return kInf;
  }
  return b;
}

}  // namespace pto::reference
