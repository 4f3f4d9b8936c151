#include "reference/reference_eval.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "reference/fp16.h"
#include "reference/reference_error.h"
#include "reference/reference_index.h"
#include "reference/reference_layout.h"
#include "reference/reference_regions.h"

namespace pto::reference {
namespace {

using pto::v1::DataType;

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

// Where an error happened: "op 3 'add'".
std::string OpWhere(int index, const pto::v1::Op& op) {
  return absl::StrFormat("op %d '%s'", index, op.kind());
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

double RoundToBf16(double value) {
  if (!std::isfinite(value) || value == 0) return value;
  // bfloat16: 8 significant bits, f32's exponent range (subnormals down to
  // 2^-133); round to nearest even directly from double.
  int exp;
  std::frexp(value, &exp);  // value = m * 2^exp, 0.5 <= |m| < 1
  const int quantum_exp = std::max(exp - 8, -133);
  const double r = std::ldexp(std::nearbyint(std::ldexp(value, -quantum_exp)),
                              quantum_exp);
  // The largest finite bf16 is (2 - 2^-7) * 2^127; half an ulp above rounds
  // to infinity.
  if (std::fabs(r) >= std::ldexp(1.0, 128)) return std::copysign(INFINITY, value);
  return r;
}

namespace {

// Integer conversions as the kernels do them (torch on x86): truncate toward
// zero to int64 (NaN and out of range: INT64_MIN), wrap to the width.
double ToInteger(double value, DataType dtype) {
  const int64_t i =
      (std::isnan(value) || value >= 0x1p63 || value < -0x1p63)
          ? INT64_MIN
          : static_cast<int64_t>(std::trunc(value));
  const uint64_t u = static_cast<uint64_t>(i);
  switch (dtype) {
    case pto::v1::DT_INT8: return static_cast<int8_t>(u);
    case pto::v1::DT_INT16: return static_cast<int16_t>(u);
    case pto::v1::DT_INT32: return static_cast<int32_t>(u);
    case pto::v1::DT_UINT8: return static_cast<uint8_t>(u);
    default: return static_cast<double>(i);
  }
}

// Whether scalars reach a kernel's instructions on values of `dtype` as
// doubles (int64 and double tiles) rather than floats.
bool WideScalars(DataType dtype) {
  return dtype == pto::v1::DT_INT32 || dtype == pto::v1::DT_INT64 ||
         dtype == pto::v1::DT_DOUBLE;
}

}  // namespace

double RoundToDType(double value, DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_BF16:
      return RoundToBf16(value);
    case pto::v1::DT_INT8:
    case pto::v1::DT_INT16:
    case pto::v1::DT_INT32:
    case pto::v1::DT_INT64:
    case pto::v1::DT_UINT8:
      return ToInteger(value, dtype);
    case pto::v1::DT_FP32:
      return static_cast<double>(static_cast<float>(value));
    case pto::v1::DT_FP16:
      return RoundToHalf(value);
    case pto::v1::DT_BOOL:
      return value != 0 ? 1.0 : 0.0;  // NaN is true, as in numpy
    default:
      return value;
  }
}

absl::StatusOr<std::vector<int64_t>> StaticShape(const pto::v1::Shape& shape) {
  std::vector<int64_t> dims;
  for (int d = 0; d < shape.dims_size(); ++d) {
    if (shape.dims(d).kind_case() != pto::v1::Dim::kSize) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dim %d is symbolic ('%s'): the reference evaluator needs static "
          "shapes",
          d, shape.dims(d).symbol()));
    }
    dims.push_back(shape.dims(d).size());
  }
  return dims;
}

absl::StatusOr<std::vector<RefTensor>> EvaluateReference(
    const pto::v1::Graph& graph, absl::Span<const RefTensor> inputs,
    const ReferenceOptions& options) {
  if (HasRegions(graph)) {  // loops and ifs: the graph written out
    absl::StatusOr<pto::v1::Graph> flat = UnrollRegions(graph);
    if (!flat.ok()) return flat.status();
    return EvaluateReference(*flat, inputs, options);
  }
  if (inputs.size() != static_cast<size_t>(graph.params_size())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reference: graph has %d parameters, got %d inputs",
                        graph.params_size(), inputs.size()));
  }
  // Declared type and shape of every value.
  std::map<uint32_t, const pto::v1::Value*> declared;
  for (const pto::v1::Value& v : graph.values()) declared[v.id()] = &v;
  auto declared_tensor = [&](uint32_t id,
                             const std::string& where) -> absl::StatusOr<RefTensor> {
    auto it = declared.find(id);
    if (it == declared.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("reference: %s: value %d is not declared", where, id));
    }
    // Ops compute on a value's valid region (graph.proto Value.valid_shape).
    const pto::v1::Value& value = *it->second;
    auto shape = StaticShape(value.valid_shape().dims_size() > 0 ? value.valid_shape()
                                                                 : value.shape());
    if (!shape.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference: %s: value %d: %s", where, id, shape.status().message()));
    }
    RefTensor t;
    t.dtype = it->second->dtype();
    t.shape = *shape;
    return t;
  };

  std::map<uint32_t, RefTensor> values;
  for (int p = 0; p < graph.params_size(); ++p) {
    const pto::v1::Parameter& param = graph.params(p);
    if (param.role() == pto::v1::PARAM_ROLE_OUT) continue;
    const std::string where =
        absl::StrFormat("parameter %d '%s'", p, param.name());
    auto t = declared_tensor(param.value_id(), where);
    if (!t.ok()) return t.status();
    int64_t count = 1;
    for (int64_t d : t->shape) count *= d;
    if (inputs[p].shape != t->shape ||
        inputs[p].data.size() != static_cast<size_t>(count)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference: %s: expected shape %s, got %s with %d elements", where,
          ShapeString(t->shape), ShapeString(inputs[p].shape),
          inputs[p].data.size()));
    }
    t->data = inputs[p].data;
    for (double& x : t->data) x = RoundToDType(x, t->dtype);
    if (inputs[p].bound.size() == t->data.size()) {
      t->bound = inputs[p].bound;  // carried in (an earlier evaluation's)
    } else {
      t->bound.assign(t->data.size(), 0.0);
    }
    values[param.value_id()] = *std::move(t);
  }

  for (int i = 0; i < graph.ops_size(); ++i) {
    const pto::v1::Op& op = graph.ops(i);
    const std::string where = OpWhere(i, op);
    std::vector<const RefTensor*> in;
    for (uint32_t id : op.inputs()) {
      auto it = values.find(id);
      if (it == values.end()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: input value %d is not defined before it", where,
            id));
      }
      in.push_back(&it->second);
    }
    if (op.outputs_size() != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference: %s: expected 1 output, got %d", where,
          op.outputs_size()));
    }
    auto out = declared_tensor(op.outputs(0), where);
    if (!out.ok()) return out.status();
    const std::string& kind = op.kind();
    if (kind == "full" || kind == "arange") {
      // Float attributes reach the kernel as floats (full's value as a
      // double for INT32, INT64 and DOUBLE results; arange's start and step
      // always as doubles).
      auto attr = [&](const char* name) {
        auto it = op.attrs().find(name);
        if (it == op.attrs().end()) return 0.0;
        return kind == "arange" || WideScalars(out->dtype)
                   ? it->second.f()
                   : static_cast<double>(static_cast<float>(it->second.f()));
      };
      int64_t n = 1;
      for (int64_t d : out->shape) n *= d;
      out->data.resize(n);
      for (int64_t k = 0; k < n; ++k) {
        out->data[k] = kind == "full" ? attr("value")
                                      : attr("start") + attr("step") * static_cast<double>(k);
        out->data[k] = RoundToDType(out->data[k], out->dtype);
      }
      out->bound.resize(n);
      for (int64_t k = 0; k < n; ++k) out->bound[k] = OpError(kind, out->data[k], out->dtype);
      values[op.outputs(0)] = *std::move(out);
      continue;
    }
    if (kind == "sum" || kind == "prod" || kind == "amax" || kind == "amin" ||
        kind == "argmax" || kind == "argmin") {
      if (in.size() != 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: expected 1 input, got %d", where, in.size()));
      }
      auto dim_attr = op.attrs().find("dim");
      if (dim_attr == op.attrs().end() ||
          dim_attr->second.value_case() != pto::v1::Attribute::kI) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: attribute 'dim' (i) is missing", where));
      }
      const std::vector<int64_t>& shape = in[0]->shape;
      const int rank = static_cast<int>(shape.size());
      int64_t dim = dim_attr->second.i();
      if (dim < -rank || dim >= rank) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: dim %d out of range for rank %d", where, dim, rank));
      }
      if (dim < 0) dim += rank;
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < dim; ++d) outer *= shape[d];
      for (int d = static_cast<int>(dim) + 1; d < rank; ++d) inner *= shape[d];
      const int64_t len = shape[dim];
      if (static_cast<int64_t>(out->data.size()) != 0 ||
          outer * inner != [&] { int64_t n = 1; for (int64_t d : out->shape) n *= d; return n; }()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: output shape %s does not match the reduction of %s",
            where, ShapeString(out->shape), ShapeString(shape)));
      }
      out->data.resize(outer * inner);
      out->bound.resize(outer * inner);
      const double unit = ComputeUnit(out->dtype);
      // Integer sums and products (INT64 results) are exact in int64 and
      // wrap like torch's; a double would round them past 2**53.
      const bool wrapping = out->dtype == pto::v1::DT_INT64 &&
                            (kind == "sum" || kind == "prod");
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const double* p = in[0]->data.data() + o * len * inner + i;
          const double* pb = in[0]->bound.data() + o * len * inner + i;
          double& bound = out->bound[o * inner + i];
          if (wrapping) {
            bound = 0;
            for (int64_t k = 0; k < len; ++k) bound += pb[k * inner];
            if (bound > 0) bound = INFINITY;  // an inexact integer
            uint64_t acc = kind == "sum" ? 0 : 1;
            for (int64_t k = 0; k < len; ++k) {
              const double v = p[k * inner];  // an integer of the input's type
              const uint64_t x =
                  static_cast<uint64_t>(v >= 0x1p63 ? INT64_MIN : static_cast<int64_t>(v));
              acc = kind == "sum" ? acc + x : acc * x;
            }
            out->data[o * inner + i] = static_cast<double>(static_cast<int64_t>(acc));
            continue;
          }
          double acc = kind == "sum" ? 0 : kind == "prod" ? 1 : p[0];
          int64_t at = 0;
          for (int64_t k = 0; k < len; ++k) {
            const double x = p[k * inner];
            if (kind == "sum") acc += x;
            else if (kind == "prod") acc *= x;
            else if (kind == "amax" || kind == "argmax") {
              // NaN wins (numpy amax, torch argmax), the first one.
              if (!std::isnan(acc) && (std::isnan(x) || x > acc)) { acc = x; at = k; }
            } else if (!std::isnan(acc) && (std::isnan(x) || x < acc)) {
              acc = x;
              at = k;
            }
          }
          out->data[o * inner + i] =
              kind == "argmax" || kind == "argmin" ? static_cast<double>(at) : acc;
          // The terms' bounds, and the kernel's summation error (any
          // order: (len - 1) u sum |x|) or product error.
          double terms = 0, magnitudes = 0, product_hi = 1, product = 1, widest = 0;
          for (int64_t k = 0; k < len; ++k) {
            const double x = p[k * inner], b = pb[k * inner];
            terms += b;
            magnitudes += std::fabs(x);
            product_hi *= std::fabs(x) + b;
            product *= std::fabs(x);
            widest = std::max(widest, b);
          }
          if (kind == "sum" && len <= 1 && terms == 0) {
            bound = ExactInputsError(acc, out->dtype);
          } else if (kind == "sum") {
            bound = terms + (len - 1) * unit * magnitudes + RoundingError(acc, out->dtype);
          } else if (kind == "prod") {
            bound = (product_hi - product) + (len - 1) * unit * std::fabs(acc) +
                    RoundingError(acc, out->dtype);
          } else if (kind == "amax" || kind == "amin") {
            bound = widest;
          } else {
            // An index: exact unless another element may be the extreme.
            bound = 0;
            const double best = p[at * inner], best_b = pb[at * inner];
            for (int64_t k = 0; k < len && widest > 0; ++k) {
              if (k == at) continue;
              const double x = p[k * inner], b = pb[k * inner];
              const bool rival = kind == "argmax" ? x + b >= best - best_b
                                                  : x - b <= best + best_b;
              if (rival) bound = INFINITY;
            }
          }
          if (std::isnan(bound) || !std::isfinite(acc)) bound = std::isfinite(acc) ? INFINITY : 0;
        }
      }
      switch (options.intermediates) {
        case ReferenceOptions::Intermediates::kDouble: break;
        default:
          for (double& x : out->data) x = RoundToDType(x, out->dtype);
      }
      values[op.outputs(0)] = *std::move(out);
      continue;
    }
    if (kind == "matmul") {
      // out[..., m, n] = sum_k a[..., m, k] * b[..., k, n] in double (a or b
      // transposed by a_trans / b_trans); leading batch dims broadcast as
      // numpy's matmul does; the result rounded to the output's dtype.
      if (in.size() != 2) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: expected 2 inputs, got %d", where, in.size()));
      }
      auto flag = [&](const char* name) {
        auto it = op.attrs().find(name);
        return it != op.attrs().end() &&
               it->second.value_case() == pto::v1::Attribute::kB &&
               it->second.b();
      };
      const bool a_trans = flag("a_trans"), b_trans = flag("b_trans");
      const std::vector<int64_t>& as = in[0]->shape;
      const std::vector<int64_t>& bs = in[1]->shape;
      if (as.size() < 2 || bs.size() < 2) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: operands must have rank >= 2, got %s and %s",
            where, ShapeString(as), ShapeString(bs)));
      }
      const size_t ar = as.size(), br = bs.size();
      const int64_t m = a_trans ? as[ar - 1] : as[ar - 2];
      const int64_t ka = a_trans ? as[ar - 2] : as[ar - 1];
      const int64_t kb = b_trans ? bs[br - 1] : bs[br - 2];
      const int64_t n = b_trans ? bs[br - 2] : bs[br - 1];
      if (ka != kb) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: K mismatch: a %s (a_trans=%d) has K=%d, b %s "
            "(b_trans=%d) has K=%d",
            where, ShapeString(as), a_trans, ka, ShapeString(bs), b_trans, kb));
      }
      // Broadcast batch dims, aligned from the right.
      const size_t batch_rank = std::max(ar, br) - 2;
      std::vector<int64_t> batch(batch_rank);
      for (size_t d = 0; d < batch_rank; ++d) {
        const int64_t x = d + ar >= batch_rank + 2 ? as[d + ar - 2 - batch_rank] : 1;
        const int64_t y = d + br >= batch_rank + 2 ? bs[d + br - 2 - batch_rank] : 1;
        if (x != y && x != 1 && y != 1) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "reference: %s: batch dims of %s and %s do not broadcast", where,
              ShapeString(as), ShapeString(bs)));
        }
        batch[d] = x == 1 ? y : x;
      }
      std::vector<int64_t> want = batch;
      want.push_back(m);
      want.push_back(n);
      if (out->shape != want) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: output shape %s, expected %s", where,
            ShapeString(out->shape), ShapeString(want)));
      }
      int64_t batches = 1;
      for (int64_t d : batch) batches *= d;
      out->data.assign(batches * m * n, 0.0);
      out->bound.assign(batches * m * n, 0.0);
      const double unit = ComputeUnit(out->dtype);
      // Offset of batch index `t` (row-major over `batch`) in an operand.
      auto batch_offset = [&](const std::vector<int64_t>& shape, int64_t t) {
        const size_t r = shape.size();
        int64_t offset = 0, stride = shape[r - 1] * shape[r - 2];
        for (size_t d = batch_rank; d-- > 0;) {
          const int64_t idx = t % batch[d];
          t /= batch[d];
          if (d + r < batch_rank + 2) continue;  // dim absent in the operand
          const int64_t size = shape[d + r - 2 - batch_rank];
          if (size != 1) offset += idx * stride;
          stride *= size;
        }
        return offset;
      };
      for (int64_t t = 0; t < batches; ++t) {
        const double* a = in[0]->data.data() + batch_offset(as, t);
        const double* b = in[1]->data.data() + batch_offset(bs, t);
        const double* ab = in[0]->bound.data() + batch_offset(as, t);
        const double* bb = in[1]->bound.data() + batch_offset(bs, t);
        double* c = out->data.data() + t * m * n;
        double* cb = out->bound.data() + t * m * n;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double acc = 0, propagated = 0, magnitudes = 0;
            for (int64_t k = 0; k < ka; ++k) {
              const int64_t ai = a_trans ? k * m + i : i * ka + k;
              const int64_t bi = b_trans ? j * ka + k : k * n + j;
              acc += a[ai] * b[bi];
              const double x = std::fabs(a[ai]), y = std::fabs(b[bi]);
              magnitudes += x * y;
              propagated += (x + ab[ai]) * (y + bb[bi]) - x * y;
            }
            c[i * n + j] = acc;
            // The products' bounds and the kernel's K u sum |a_k b_k|.
            double bound = propagated + ka * unit * magnitudes + RoundingError(acc, out->dtype);
            cb[i * n + j] = std::isfinite(acc) ? (std::isnan(bound) ? INFINITY : bound) : 0;
          }
        }
      }
      if (options.intermediates != ReferenceOptions::Intermediates::kDouble) {
        for (double& x : out->data) x = RoundToDType(x, out->dtype);
      }
      values[op.outputs(0)] = *std::move(out);
      continue;
    }
    if (IsIndexKind(kind)) {
      if (absl::Status s = EvaluateIndex(op, where, in, &*out); !s.ok()) return s;
      values[op.outputs(0)] = *std::move(out);
      continue;
    }
    if (IsLayoutKind(kind)) {
      // Moves elements only: exact in every dtype.
      if (absl::Status s = EvaluateLayout(op, where, in, &*out); !s.ok()) return s;
      // The bounds move with their elements.
      std::vector<RefTensor> in_bounds;
      for (const RefTensor* t : in) in_bounds.push_back(RefTensor{t->dtype, t->shape, t->bound, {}});
      std::vector<const RefTensor*> in_bound_ptrs;
      for (const RefTensor& t : in_bounds) in_bound_ptrs.push_back(&t);
      RefTensor out_bound{out->dtype, out->shape, {}, {}};
      if (absl::Status s = EvaluateLayout(op, where, in_bound_ptrs, &out_bound); !s.ok()) {
        return s;
      }
      out->bound = std::move(out_bound.data);
      values[op.outputs(0)] = *std::move(out);
      continue;
    }
    const bool is_where = kind == "where", is_clip = kind == "clip";
    const bool is_cast = kind == "cast";
    const size_t arity_expected =
        is_where                      ? 3
        : is_cast                     ? 1
        : BinaryOps().count(kind) || IsIntegerOp(kind) ? 2
        : (is_clip || ScalarOps().count(kind) || UnaryOps().count(kind)) ? 1
                                                                         : 0;
    if (arity_expected == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference: %s: op kind is not supported by the reference evaluator",
          where));
    }
    if (in.size() != arity_expected) {
      return absl::InvalidArgumentError(
          absl::StrFormat("reference: %s: expected %d inputs, got %d", where,
                          arity_expected, in.size()));
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
      if (is_where) {
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
      } else if (arity_expected == 2) {
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
    values[op.outputs(0)] = *std::move(out);
  }

  std::vector<RefTensor> results;
  for (int p = 0; p < graph.params_size(); ++p) {
    const pto::v1::Parameter& param = graph.params(p);
    const uint32_t id = param.role() == pto::v1::PARAM_ROLE_IN
                            ? param.value_id()
                        : param.role() == pto::v1::PARAM_ROLE_INOUT
                            ? param.result_value_id()
                            : param.value_id();
    auto it = values.find(id);
    if (it == values.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference: parameter %d '%s': value %d is never written", p,
          param.name(), id));
    }
    results.push_back(it->second);
    // What the kernel's store to the caller's buffer keeps.
    for (double& x : results.back().data) x = RoundToDType(x, results.back().dtype);
    results.back().bound.resize(results.back().data.size(), 0.0);
  }
  return results;
}

}  // namespace pto::reference
