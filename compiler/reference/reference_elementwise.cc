#include "compiler/reference/reference_elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "compiler/reference/fp16.h"
#include "compiler/reference/reference_error.h"
#include "compiler/reference/reference_family.h"

namespace pto::reference {
namespace {

using pto::v1::DataType;

// The bits of `v`, a value of `dtype`, as the kernel stores it (an FP16 NaN
// as the quiet NaN of its sign, a BF16 NaN quieted); integers in two's
// complement, to be cut to their width.
uint64_t BitsOf(double v, DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32: {
      const float f = static_cast<float>(v);
      uint32_t w;
      std::memcpy(&w, &f, sizeof w);
      return w;
    }
    case pto::v1::DT_FP16:
      return DoubleToHalf(v);
    case pto::v1::DT_BF16: {
      const float f = static_cast<float>(v);
      uint32_t w;
      std::memcpy(&w, &f, sizeof w);
      return std::isnan(f) ? (w >> 16) | 0x40u : w >> 16;
    }
    case pto::v1::DT_DOUBLE: {
      uint64_t w;
      std::memcpy(&w, &v, sizeof w);
      return w;
    }
    default:
      return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}

// The value of `dtype` whose bits are the low bytes of `bits` (bitcast).
double FromBits(uint64_t bits, DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32: {
      const uint32_t w = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &w, sizeof f);
      return f;
    }
    case pto::v1::DT_FP16:
      return HalfToFloat(static_cast<uint16_t>(bits));
    case pto::v1::DT_BF16: {
      const uint32_t w = static_cast<uint32_t>(static_cast<uint16_t>(bits)) << 16;
      float f;
      std::memcpy(&f, &w, sizeof f);
      return f;
    }
    case pto::v1::DT_DOUBLE: {
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    case pto::v1::DT_INT8: return static_cast<int8_t>(bits);
    case pto::v1::DT_UINT8: return static_cast<uint8_t>(bits);
    case pto::v1::DT_INT16: return static_cast<int16_t>(bits);
    case pto::v1::DT_INT32: return static_cast<int32_t>(bits);
    default: return static_cast<double>(static_cast<int64_t>(bits));
  }
}

using Unary = std::function<double(double)>;
using Binary = std::function<double(double, double)>;

// numpy maximum/minimum: NaN from either side propagates.
double Max(double a, double b) { return (std::isnan(a) || a > b) ? a : b; }
double Min(double a, double b) { return (std::isnan(a) || a < b) ? a : b; }

// torch.floor_divide / torch.remainder on floats, as torch computes them
// (c10 div_floor_floating: fmod plus a correction; the remainder takes the
// divisor's sign). A zero divisor: a / b and fmod's NaN.
double FloorDiv(double a, double b) {
  if (b == 0) return a / b;
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1;
  return floordiv;
}
double Remainder(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}

// The same on integers, exactly: a zero divisor gives 0 (torch raises) and
// MIN // -1 wraps to MIN (remainder 0), as the kernels do.
int64_t IntFloorDiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  const int64_t q = a / b, r = a % b;
  return r != 0 && (r < 0) != (b < 0) ? q - 1 : q;
}
int64_t IntRemainder(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  const int64_t r = a % b;
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

// Integer ops on int64 values (wrapped to the output's width below): C
// fmod (a zero divisor gives 0), gcd (torch's calc_gcd), bitwise ops and
// torch's shifts on x86 (the count modulo 32, or 64 for INT64).
int64_t IntegerOp(const std::string& kind, int64_t a, int64_t b, int bits) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (kind == "fmod") return b == 0 || b == -1 ? 0 : a % b;
  if (kind == "gcd") {
    uint64_t x = a < 0 ? 0 - ua : ua, y = b < 0 ? 0 - ub : ub;
    while (x != 0) {
      const uint64_t c = x;
      x = y % x;
      y = c;
    }
    return static_cast<int64_t>(y);
  }
  if (kind == "bitwise_and") return static_cast<int64_t>(ua & ub);
  if (kind == "bitwise_or") return static_cast<int64_t>(ua | ub);
  if (kind == "bitwise_xor") return static_cast<int64_t>(ua ^ ub);
  const int mask = bits <= 32 ? 31 : 63;
  if (kind == "bitwise_left_shift") return static_cast<int64_t>(ua << (b & mask));
  // bitwise_right_shift
  return a >> (b & mask);
}

bool IsIntegerOp(const std::string& kind) {
  return kind == "fmod" || kind == "gcd" || kind == "bitwise_and" || kind == "bitwise_or" ||
         kind == "bitwise_xor" || kind == "bitwise_left_shift" ||
         kind == "bitwise_right_shift";
}

// Tensor-with-tensor ops (numpy broadcasting): f(a, b).
const std::map<std::string, Binary>& BinaryOps() {
  static const auto* ops = new std::map<std::string, Binary>{
      {"add", [](double a, double b) { return a + b; }},
      {"sub", [](double a, double b) { return a - b; }},
      {"mul", [](double a, double b) { return a * b; }},
      {"div", [](double a, double b) { return a / b; }},
      {"pow", [](double a, double b) { return std::pow(a, b); }},
      {"maximum", Max},
      {"minimum", Min},
      {"floor_divide", FloorDiv},
      {"remainder", Remainder},
      {"fmod", [](double a, double b) { return std::fmod(a, b); }},
      {"atan2", [](double a, double b) { return std::atan2(a, b); }},
      {"hypot", [](double a, double b) { return std::hypot(a, b); }},
      {"eq", [](double a, double b) { return a == b ? 1.0 : 0.0; }},
      {"ne", [](double a, double b) { return a != b ? 1.0 : 0.0; }},
      {"lt", [](double a, double b) { return a < b ? 1.0 : 0.0; }},
      {"le", [](double a, double b) { return a <= b ? 1.0 : 0.0; }},
      {"gt", [](double a, double b) { return a > b ? 1.0 : 0.0; }},
      {"ge", [](double a, double b) { return a >= b ? 1.0 : 0.0; }},
  };
  return *ops;
}

// Tensor-with-scalar ops: f(x, s).
const std::map<std::string, Binary>& ScalarOps() {
  static const auto* ops = new std::map<std::string, Binary>{
      {"adds", [](double x, double s) { return x + s; }},
      {"subs", [](double x, double s) { return x - s; }},
      {"muls", [](double x, double s) { return x * s; }},
      {"divs", [](double x, double s) { return x / s; }},
      {"rsubs", [](double x, double s) { return s - x; }},
      {"rdivs", [](double x, double s) { return s / x; }},
      {"pows", [](double x, double s) { return std::pow(x, s); }},
      {"rpows", [](double x, double s) { return std::pow(s, x); }},
      {"maximums", Max},
      {"minimums", Min},
      {"eqs", [](double x, double s) { return x == s ? 1.0 : 0.0; }},
      {"nes", [](double x, double s) { return x != s ? 1.0 : 0.0; }},
      {"lts", [](double x, double s) { return x < s ? 1.0 : 0.0; }},
      {"les", [](double x, double s) { return x <= s ? 1.0 : 0.0; }},
      {"gts", [](double x, double s) { return x > s ? 1.0 : 0.0; }},
      {"ges", [](double x, double s) { return x >= s ? 1.0 : 0.0; }},
  };
  return *ops;
}

const std::map<std::string, Unary>& UnaryOps() {
  static const auto* ops = new std::map<std::string, Unary>{
      {"exp", [](double x) { return std::exp(x); }},
      {"exp2", [](double x) { return std::exp2(x); }},
      {"expm1", [](double x) { return std::expm1(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"log2", [](double x) { return std::log2(x); }},
      {"log10", [](double x) { return std::log10(x); }},
      {"log1p", [](double x) { return std::log1p(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"reciprocal", [](double x) { return 1.0 / x; }},
      {"neg", [](double x) { return -x; }},
      {"abs", [](double x) { return std::fabs(x); }},
      // torch: relu(-0.0) = -0.0, relu(NaN) = NaN.
      {"relu", [](double x) { return x < 0 ? 0.0 : x; }},
      {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"erf", [](double x) { return std::erf(x); }},
      {"erfc", [](double x) { return std::erfc(x); }},
      {"sign", [](double x) {
         return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x;
       }},
      {"floor", [](double x) { return std::floor(x); }},
      {"ceil", [](double x) { return std::ceil(x); }},
      {"round", [](double x) { return std::nearbyint(x); }},  // half to even
      {"trunc", [](double x) { return std::trunc(x); }},
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"tan", [](double x) { return std::tan(x); }},
      {"asin", [](double x) { return std::asin(x); }},
      {"acos", [](double x) { return std::acos(x); }},
      {"atan", [](double x) { return std::atan(x); }},
      {"sinh", [](double x) { return std::sinh(x); }},
      {"cosh", [](double x) { return std::cosh(x); }},
      {"asinh", [](double x) { return std::asinh(x); }},
      {"acosh", [](double x) { return std::acosh(x); }},
      {"atanh", [](double x) { return std::atanh(x); }},
      {"cbrt", [](double x) { return std::cbrt(x); }},
      {"signbit", [](double x) { return std::signbit(x) ? 1.0 : 0.0; }},
      {"bitwise_not", [](double x) { return static_cast<double>(~static_cast<int64_t>(x)); }},
      {"copy", [](double x) { return x; }},
      {"clone", [](double x) { return x; }},
  };
  return *ops;
}

}  // namespace

absl::Status EvaluateElementwise(const pto::v1::Op& op, const std::string& where,
                                 const std::vector<const RefTensor*>& in,
                                 const ReferenceOptions& options,
                                 RefTensor* out) {
  const std::string& kind = op.kind();
  const bool is_where = kind == "where", is_clip = kind == "clip";
  const bool is_cast = kind == "cast", is_bitcast = kind == "bitcast";
  if (!is_where && !is_clip && !is_cast && !is_bitcast && !BinaryOps().count(kind) && !IsIntegerOp(kind) &&
      !ScalarOps().count(kind) && !UnaryOps().count(kind)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference: %s: op kind is not supported by the reference evaluator",
        where));
  }
  // numpy broadcasting: each input aligned to the output's last dims, with
  // size-1 dims repeated. Index maps from output elements to input ones.
  const int rank = static_cast<int>(out->shape.size());
  int64_t n = 1;
  for (int64_t d : out->shape) n *= d;
  std::vector<std::vector<int64_t>> in_strides;  // per output dim
  for (const RefTensor* t : in) {
    const int lead = rank - static_cast<int>(t->shape.size());
    bool ok = lead >= 0;
    std::vector<int64_t> strides(rank, 0);
    int64_t stride = 1;
    for (int d = rank - 1; ok && d >= lead; --d) {
      const int64_t size = t->shape[d - lead];
      if (size != out->shape[d] && size != 1) ok = false;
      if (size != 1) strides[d] = stride;
      stride *= size;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference: %s: input shape %s does not broadcast to output shape "
          "%s",
          where, ShapeString(t->shape), ShapeString(out->shape)));
    }
    in_strides.push_back(std::move(strides));
  }
  auto offset_of = [&](size_t k, int64_t linear) {
    int64_t offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      offset += (linear % out->shape[d]) * in_strides[k][d];
      linear /= out->shape[d];
    }
    return offset;
  };
  auto operand = [&](size_t k, int64_t linear) { return in[k]->data[offset_of(k, linear)]; };
  auto operand_bound = [&](size_t k, int64_t linear) {
    return in[k]->bound[offset_of(k, linear)];
  };
  // The kernel computes in FP32 with float attributes as floats.
  auto float_attr = [&](const char* name) -> absl::StatusOr<double> {
    auto attr = op.attrs().find(name);
    if (attr == op.attrs().end() ||
        attr->second.value_case() != pto::v1::Attribute::kF) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference: %s: attribute '%s' (f) is missing", where, name));
    }
    return in.empty() || !WideScalars(in[0]->dtype)
               ? static_cast<double>(static_cast<float>(attr->second.f()))
               : attr->second.f();
  };
  out->data.resize(n);
  if (is_where) {
    for (int64_t k = 0; k < n; ++k) {
      out->data[k] = operand(0, k) != 0 ? operand(1, k) : operand(2, k);
    }
  } else if (kind == "mul" && (out->dtype == pto::v1::DT_INT32 ||
                               out->dtype == pto::v1::DT_INT64)) {
    // Exact two's complement product (a double would round it); the
    // rounding to the dtype below wraps it to the width.
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t p = static_cast<uint64_t>(static_cast<int64_t>(operand(0, k))) *
                         static_cast<uint64_t>(static_cast<int64_t>(operand(1, k)));
      out->data[k] = static_cast<double>(
          out->dtype == pto::v1::DT_INT32 ? static_cast<int32_t>(p)
                                          : static_cast<int64_t>(p));
    }
  } else if ((kind == "floor_divide" || kind == "remainder") &&
             (out->dtype == pto::v1::DT_INT32 || out->dtype == pto::v1::DT_INT64)) {
    // Exact in int64 (the values are integers; wrapped to the width below).
    for (int64_t k = 0; k < n; ++k) {
      const int64_t x = static_cast<int64_t>(operand(0, k));
      const int64_t y = static_cast<int64_t>(operand(1, k));
      out->data[k] = static_cast<double>(kind == "floor_divide" ? IntFloorDiv(x, y)
                                                                : IntRemainder(x, y));
    }
  } else if (IsIntegerOp(kind) &&
             (out->dtype == pto::v1::DT_INT32 || out->dtype == pto::v1::DT_INT64)) {
    const int bits = out->dtype == pto::v1::DT_INT32 ? 32 : 64;
    for (int64_t k = 0; k < n; ++k) {
      out->data[k] = static_cast<double>(IntegerOp(
          kind, static_cast<int64_t>(operand(0, k)), static_cast<int64_t>(operand(1, k)), bits));
    }
  } else if (auto b = BinaryOps().find(kind); b != BinaryOps().end()) {
    for (int64_t k = 0; k < n; ++k) {
      out->data[k] = b->second(operand(0, k), operand(1, k));
    }
  } else if (is_cast) {
    // The conversion is the rounding to the output's dtype below; with
    // other intermediate options it still converts (an int stays int).
    // A float into INT8/INT16/INT32 truncates to 32 bits first (torch on
    // x86: NaN and values outside int32 give INT32_MIN, then wrap).
    const bool float_in = in[0]->dtype == pto::v1::DT_FP32 ||
                          in[0]->dtype == pto::v1::DT_FP16 ||
                          in[0]->dtype == pto::v1::DT_BF16 ||
                          in[0]->dtype == pto::v1::DT_DOUBLE;
    const bool narrow_int = out->dtype == pto::v1::DT_INT8 ||
                            out->dtype == pto::v1::DT_INT16 ||
                            out->dtype == pto::v1::DT_INT32;
    for (int64_t k = 0; k < n; ++k) {
      double v = operand(0, k);
      if (float_in && narrow_int &&
          (std::isnan(v) || v >= 0x1p31 || v < -0x1p31)) {
        v = -0x1p31;
      }
      out->data[k] = RoundToDType(v, out->dtype);
    }
  } else if (is_bitcast) {
    for (int64_t k = 0; k < n; ++k) {
      out->data[k] = FromBits(BitsOf(operand(0, k), in[0]->dtype), out->dtype);
    }
  } else if (is_clip) {
    absl::StatusOr<double> lo = float_attr("min"), hi = float_attr("max");
    if (!lo.ok()) return lo.status();
    if (!hi.ok()) return hi.status();
    for (int64_t k = 0; k < n; ++k) {
      out->data[k] = Min(Max(operand(0, k), *lo), *hi);
    }
  } else if (auto s = ScalarOps().find(kind); s != ScalarOps().end()) {
    absl::StatusOr<double> scalar = float_attr("scalar");
    if (!scalar.ok()) return scalar.status();
    for (int64_t k = 0; k < n; ++k) {
      out->data[k] = s->second(operand(0, k), *scalar);
    }
  } else {
    const Unary& f = UnaryOps().at(kind);
    for (int64_t k = 0; k < n; ++k) out->data[k] = f(operand(0, k));
  }
  // Each element's bound (reference_error.h), from the unrounded result.
  double clip_lo = 0, clip_hi = 0, scalar = 0;
  if (is_clip) {
    clip_lo = *float_attr("min");
    clip_hi = *float_attr("max");
  }
  if (ScalarOps().count(kind)) scalar = *float_attr("scalar");
  out->bound.resize(n);
  for (int64_t k = 0; k < n; ++k) {
    const double z = out->data[k];
    double propagated;
    if (is_bitcast) {
      // Exact bits give exact bits; any error in them, any value.
      propagated = operand_bound(0, k) > 0 ? HUGE_VAL : 0;
    } else if (is_where) {
      const double t = operand(1, k), f = operand(2, k);
      const double bt = operand_bound(1, k), bf = operand_bound(2, k);
      propagated = operand_bound(0, k) > 0 ? std::fabs(t - f) + std::max(bt, bf)
                   : operand(0, k) != 0   ? bt
                                          : bf;
    } else if (is_cast || is_clip) {
      const DataType to = out->dtype;
      propagated = PropagateUnary(
          kind,
          [&](double v) { return is_clip ? Min(Max(v, clip_lo), clip_hi) : RoundToDType(v, to); },
          operand(0, k), operand_bound(0, k), z);
    } else if (in.size() == 2) {
      auto b = BinaryOps().find(kind);
      const Binary f = b != BinaryOps().end() ? b->second : Binary([](double, double) {
        return std::nan("");
      });
      propagated = PropagateBinary(kind, f, operand(0, k), operand_bound(0, k), operand(1, k),
                                   operand_bound(1, k), z, ComputeUnit(out->dtype) == 0);
    } else if (auto sc = ScalarOps().find(kind); sc != ScalarOps().end()) {
      propagated = PropagateBinary(kind, sc->second, operand(0, k), operand_bound(0, k), scalar,
                                   0, z, ComputeUnit(out->dtype) == 0);
    } else {
      propagated = PropagateUnary(kind, UnaryOps().at(kind), operand(0, k), operand_bound(0, k), z);
    }
    bool exact_inputs = propagated == 0;
    for (size_t i = 0; i < in.size() && exact_inputs; ++i) exact_inputs = operand_bound(i, k) == 0;
    out->bound[k] = propagated + OpError(kind, z, out->dtype, exact_inputs);
  }
  switch (options.intermediates) {
    case ReferenceOptions::Intermediates::kCompute:
      // Only FP16/BF16 results stay in FP32; other types are exact.
      for (double& x : out->data) {
        const bool narrow = out->dtype == pto::v1::DT_FP16 ||
                            out->dtype == pto::v1::DT_BF16;
        x = RoundToDType(x, narrow ? pto::v1::DT_FP32 : out->dtype);
      }
      break;
    case ReferenceOptions::Intermediates::kStorage:
      for (double& x : out->data) x = RoundToDType(x, out->dtype);
      break;
    case ReferenceOptions::Intermediates::kDouble:
      break;
  }
  return absl::OkStatus();
}

}  // namespace pto::reference
