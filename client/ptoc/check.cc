#include "client/ptoc/check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/reference/fp16.h"
#include "compiler/reference/fp8.h"

namespace pto::ptoc {
namespace {

std::string IndexString(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return absl::StrCat("[", absl::StrJoin(index, ","), "]");
}

bool SameSpecial(double got, double want) {
  if (std::isnan(got) || std::isnan(want)) {
    return std::isnan(got) && std::isnan(want);
  }
  return got == want;  // infinities
}

int64_t ElementBytes(pto::v1::DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32: case pto::v1::DT_INT32: return 4;
    case pto::v1::DT_FP16: case pto::v1::DT_BF16: case pto::v1::DT_INT16: return 2;
    case pto::v1::DT_INT8: case pto::v1::DT_UINT8: case pto::v1::DT_BOOL: return 1;
    case pto::v1::DT_FP8E4M3: case pto::v1::DT_FP8E5M2: case pto::v1::DT_FP8E8M0: return 1;
    case pto::v1::DT_INT64: case pto::v1::DT_DOUBLE: return 8;
    default: return 0;
  }
}

uint16_t Bf16Bits(double value) {
  const float f = static_cast<float>(reference::RoundToBf16(value));
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return static_cast<uint16_t>(w >> 16);
}

// Distance in bf16 steps (ordered like sign-magnitude integers).
int64_t Bf16UlpDistance(uint16_t a, uint16_t b) {
  auto ordered = [](uint16_t h) -> int64_t {
    return (h & 0x8000) ? -static_cast<int64_t>(h & 0x7fff) : h;
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

template <typename T>
T Read(const std::vector<uint8_t>& bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + sizeof(T) * i, sizeof(T));
  return v;
}

template <typename T>
void Write(std::vector<uint8_t>& bytes, int64_t i, T v) {
  std::memcpy(bytes.data() + sizeof(T) * i, &v, sizeof(T));
}

}  // namespace

absl::StatusOr<HostTensor> HostTensor::Create(pto::v1::DataType dtype,
                                              std::vector<int64_t> shape) {
  int64_t element_bytes = ElementBytes(dtype);
  if (element_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dtype ", pto::v1::DataType_IsValid(dtype) ? pto::v1::DataType_Name(dtype)
                                                   : std::string("?"),
        " is not supported for host tensors"));
  }
  HostTensor t;
  t.dtype_ = dtype;
  t.size_ = 1;
  for (int64_t d : shape) t.size_ *= d;
  t.shape_ = std::move(shape);
  t.bytes_.resize(t.size_ * element_bytes);
  return t;
}

double HostTensor::Get(int64_t i) const {
  switch (dtype_) {
    case pto::v1::DT_FP32: return Read<float>(bytes_, i);
    case pto::v1::DT_FP16: return reference::HalfToFloat(Read<uint16_t>(bytes_, i));
    case pto::v1::DT_BF16: {
      const uint32_t w = static_cast<uint32_t>(Read<uint16_t>(bytes_, i)) << 16;
      float f;
      std::memcpy(&f, &w, 4);
      return f;
    }
    case pto::v1::DT_INT8: return Read<int8_t>(bytes_, i);
    case pto::v1::DT_INT16: return Read<int16_t>(bytes_, i);
    case pto::v1::DT_INT32: return Read<int32_t>(bytes_, i);
    case pto::v1::DT_INT64: return static_cast<double>(Read<int64_t>(bytes_, i));
    case pto::v1::DT_UINT8: return Read<uint8_t>(bytes_, i);
    case pto::v1::DT_DOUBLE: return Read<double>(bytes_, i);
    case pto::v1::DT_FP8E4M3: case pto::v1::DT_FP8E5M2: case pto::v1::DT_FP8E8M0:
      return reference::Fp8ToDouble(bytes_[i], dtype_);
    default: return bytes_[i];  // BOOL (0xAA: never written)
  }
}

void HostTensor::Set(int64_t i, double value) {
  // NaN marks "never written": an integer or BOOL output gets a value its
  // kernel would not write for these inputs.
  const bool unset = std::isnan(value);
  switch (dtype_) {
    case pto::v1::DT_FP32: Write<float>(bytes_, i, static_cast<float>(value)); return;
    case pto::v1::DT_FP16: Write<uint16_t>(bytes_, i, reference::DoubleToHalf(value)); return;
    case pto::v1::DT_BF16: Write<uint16_t>(bytes_, i, Bf16Bits(value)); return;
    case pto::v1::DT_DOUBLE: Write<double>(bytes_, i, value); return;
    case pto::v1::DT_FP8E4M3: case pto::v1::DT_FP8E5M2: case pto::v1::DT_FP8E8M0:
      bytes_[i] = reference::DoubleToFp8(value, dtype_);  // NaN: a NaN code
      return;
    case pto::v1::DT_BOOL:
      bytes_[i] = unset ? 0xAA : value != 0 ? 1 : 0;
      return;
    default: break;
  }
  const double v = unset ? 77 : reference::RoundToDType(value, dtype_);
  switch (dtype_) {
    case pto::v1::DT_INT8: Write<int8_t>(bytes_, i, static_cast<int8_t>(v)); return;
    case pto::v1::DT_INT16: Write<int16_t>(bytes_, i, static_cast<int16_t>(v)); return;
    case pto::v1::DT_INT32: Write<int32_t>(bytes_, i, static_cast<int32_t>(v)); return;
    case pto::v1::DT_INT64: Write<int64_t>(bytes_, i, static_cast<int64_t>(v)); return;
    case pto::v1::DT_UINT8: Write<uint8_t>(bytes_, i, static_cast<uint8_t>(v)); return;
    default: return;
  }
}

namespace {

// Accumulates one element's comparison into `c`.
void Record(Comparison& c, int64_t i, const HostTensor& got, double g, double w,
            double abs_error, bool ok, double bound) {
  c.max_abs_error = std::max(c.max_abs_error, abs_error);
  if (w != 0 && std::isfinite(w)) {
    c.max_rel_error = std::max(c.max_rel_error, abs_error / std::fabs(w));
  }
  if (ok) return;
  if (c.mismatches == 0) {
    c.first_mismatch = absl::StrFormat("index %d %s: got %.9g, want %.9g", i,
                                       IndexString(i, got.shape()), g, w);
    if (bound >= 0) absl::StrAppendFormat(&c.first_mismatch, " (bound %.3g)", bound);
  }
  ++c.mismatches;
}

// What a judge says of one finite element.
struct Verdict {
  bool ok;
  double bound;  // for the mismatch message; < 0: none
};

// Every element of `got` against `want`: special values (NaN, inf) must be
// the same special value; finite ones are judged by
// judge(i, got value, want value, |got - want|, c) -> Verdict.
template <typename Judge>
Comparison CompareElements(const std::string& name, const HostTensor& got,
                           const reference::RefTensor& want, Judge judge) {
  Comparison c;
  c.name = name;
  c.count = got.size();
  for (int64_t i = 0; i < got.size(); ++i) {
    const double g = got.Get(i);
    const double w = want.data[i];
    if (!std::isfinite(g) || !std::isfinite(w)) {
      const bool same = SameSpecial(g, w);
      Record(c, i, got, g, w, same ? 0 : std::numeric_limits<double>::infinity(), same, -1);
      continue;
    }
    const double abs_error = std::fabs(g - w);
    const Verdict v = judge(i, g, w, abs_error, c);
    Record(c, i, got, g, w, abs_error, v.ok, v.bound);
  }
  return c;
}

}  // namespace

Comparison Compare(const std::string& name, const HostTensor& got,
                   const reference::RefTensor& want) {
  return CompareElements(name, got, want,
                         [&](int64_t i, double, double, double abs_error, Comparison& c) {
    const double bound =
        i < static_cast<int64_t>(want.bound.size()) ? kBoundSafety * want.bound[i] : 0.0;
    if (!std::isfinite(bound)) {
      ++c.unchecked;  // undetermined by the inputs' bounds
      return Verdict{true, bound};
    }
    if (bound > 0) c.max_bound_fraction = std::max(c.max_bound_fraction, abs_error / bound);
    return Verdict{abs_error <= bound, bound};
  });
}

Comparison Compare(const std::string& name, const HostTensor& got,
                   const reference::RefTensor& want, const Tolerance& tolerance) {
  return CompareElements(name, got, want,
                         [&](int64_t, double g, double w, double abs_error, Comparison&) {
    bool ok;
    if (got.dtype() == pto::v1::DT_FP16) {
      ok = reference::HalfUlpDistance(reference::DoubleToHalf(g), reference::DoubleToHalf(w)) <=
               tolerance.fp16_ulps ||
           abs_error <= tolerance.atol;
    } else if (got.dtype() == pto::v1::DT_BF16) {
      ok = Bf16UlpDistance(Bf16Bits(g), Bf16Bits(w)) <= tolerance.fp16_ulps ||
           abs_error <= tolerance.atol;
    } else {
      ok = abs_error <= tolerance.atol + tolerance.rtol * std::fabs(w);
    }
    return Verdict{ok, -1};
  });
}

bool CheckReport::pass() const {
  for (const Comparison& c : outputs) {
    if (!c.ok()) return false;
  }
  return true;
}

std::string CheckReport::Summary() const {
  std::string s;
  for (const Comparison& c : outputs) {
    absl::StrAppendFormat(&s, "%s: %d elements, max abs error %.3g, max rel "
                          "error %.3g, %.2g of the bound, %d mismatches%s%s\n",
                          c.name, c.count, c.max_abs_error, c.max_rel_error,
                          c.max_bound_fraction, c.mismatches,
                          c.unchecked == 0 ? "" : absl::StrCat(", ", c.unchecked, " unchecked"),
                          c.ok() ? "" : absl::StrCat(" (first: ",
                                                     c.first_mismatch, ")"));
  }
  s += pass() ? "PASS\n" : "FAIL\n";
  return s;
}

absl::StatusOr<CheckRun> RunWithReference(const pto::v1::Graph& graph,
                                          const runtime::Kernel& kernel,
                                          const CheckOptions& options) {
  std::map<uint32_t, const pto::v1::Value*> declared;
  for (const pto::v1::Value& v : graph.values()) declared[v.id()] = &v;
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> uniform(options.low, options.high);
  const double widest = std::max(std::fabs(options.low), std::fabs(options.high));
  const double tiniest = std::max(options.min_magnitude, 1e-30);
  std::uniform_real_distribution<double> log_magnitude(std::log(tiniest), std::log(widest));
  std::bernoulli_distribution negative(0.5);
  auto draw = [&]() {
    if (options.draw == InputDraw::kUniform) return uniform(rng);
    double x;
    do {
      x = std::exp(log_magnitude(rng));
      if (negative(rng)) x = -x;
    } while (x < options.low || x > options.high);
    return x;
  };

  std::vector<HostTensor> buffers;
  std::vector<reference::RefTensor> inputs;
  for (int p = 0; p < graph.params_size(); ++p) {
    const pto::v1::Parameter& param = graph.params(p);
    auto it = declared.find(param.value_id());
    if (it == declared.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "parameter %d '%s': value %d is not declared", p, param.name(),
          param.value_id()));
    }
    auto shape = reference::StaticShape(it->second->shape());
    if (!shape.ok()) return shape.status();
    auto buffer = HostTensor::Create(it->second->dtype(), *shape);
    if (!buffer.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "parameter %d '%s': %s", p, param.name(), buffer.status().message()));
    }
    reference::RefTensor input{buffer->dtype(), *shape, {}};
    if (param.role() == pto::v1::PARAM_ROLE_OUT) {
      for (int64_t i = 0; i < buffer->size(); ++i) buffer->Set(i, NAN);
    } else {
      input.data.resize(buffer->size());
      for (int64_t i = 0; i < buffer->size(); ++i) {
        double x;
        do {
          x = draw();
        } while (std::fabs(x) < options.min_magnitude);
        // BOOL: true and false about equally often; integers: whole
        // numbers across [-100, 100] (UINT8: [0, 255]) so casts wrap.
        const pto::v1::DataType dt = buffer->dtype();
        const double unit =
            std::clamp((x - options.low) / (options.high - options.low), 0.0, 1.0);
        if (dt == pto::v1::DT_BOOL) {
          x = x > (options.low + options.high) / 2 ? 1 : 0;
        } else if (dt == pto::v1::DT_UINT8) {
          x = std::floor(unit * 255.999);
        } else if (dt == pto::v1::DT_INT8 || dt == pto::v1::DT_INT16 ||
                   dt == pto::v1::DT_INT32 || dt == pto::v1::DT_INT64) {
          x = std::floor(unit * 200.999) - 100;
        }
        buffer->Set(i, x);
        input.data[i] = buffer->Get(i);  // the value the kernel sees
      }
    }
    buffers.push_back(*std::move(buffer));
    inputs.push_back(std::move(input));
  }

  auto reference = reference::EvaluateReference(graph, inputs, options.reference);
  if (!reference.ok()) return reference.status();

  std::vector<runtime::TensorArg> args;
  for (HostTensor& b : buffers) args.push_back(b.AsArg());
  absl::Status ran =
      options.run_options
          ? kernel.Run(args, nullptr, *options.run_options)
          : kernel.Run(args);
  if (!ran.ok()) return ran;
  return CheckRun{std::move(buffers), *std::move(reference)};
}

absl::StatusOr<CheckReport> RunAndCheck(const pto::v1::Graph& graph,
                                        const runtime::Kernel& kernel,
                                        const CheckOptions& options) {
  absl::StatusOr<CheckRun> run = RunWithReference(graph, kernel, options);
  if (!run.ok()) return run.status();
  CheckReport report;
  for (int p = 0; p < graph.params_size(); ++p) {
    if (graph.params(p).role() == pto::v1::PARAM_ROLE_IN) continue;
    const std::string& name = graph.params(p).name();
    report.outputs.push_back(
        options.tolerance
            ? Compare(name, run->buffers[p], run->reference[p], *options.tolerance)
            : Compare(name, run->buffers[p], run->reference[p]));
  }
  return report;
}

}  // namespace pto::ptoc
