#include "compiler/reference/reference_eval.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_format.h"
#include "compiler/ops/op_registry.h"
#include "compiler/reference/fp16.h"
#include "compiler/reference/fp8.h"
#include "compiler/reference/reference_create.h"
#include "compiler/reference/reference_elementwise.h"
#include "compiler/reference/reference_family.h"
#include "compiler/reference/reference_index.h"
#include "compiler/reference/reference_layout.h"
#include "compiler/reference/reference_matmul.h"
#include "compiler/reference/reference_reduce.h"
#include "compiler/reference/reference_regions.h"
#include "compiler/reference/reference_scan.h"

namespace pto::reference {
namespace {

using pto::v1::DataType;

// Where an error happened: "op 3 'add'".
std::string OpWhere(int index, const pto::v1::Op& op) {
  return absl::StrFormat("op %d '%s'", index, op.kind());
}

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

// Fills `out` with `op`'s result: the compiler's op registry says which
// family (reference_family.h) computes it and how many inputs it takes.
absl::Status EvaluateOp(const pto::v1::Op& op, const std::string& where,
                        const std::vector<const RefTensor*>& in,
                        const ReferenceOptions& options, RefTensor* out) {
  using compiler::OpCategory;
  const compiler::OpInfo* info = compiler::FindOp(op.kind());
  if (info == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference: %s: op kind is not supported by the reference evaluator (not in the "
        "compiler's op registry)",
        where));
  }
  if (info->num_inputs >= 0 && in.size() != static_cast<size_t>(info->num_inputs)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reference: %s: expected %d input%s, got %d", where, info->num_inputs,
                        info->num_inputs == 1 ? "" : "s", in.size()));
  }
  switch (info->category) {
    case OpCategory::kElementwiseBinary:
    case OpCategory::kElementwiseScalar:
    case OpCategory::kElementwiseUnary:
    case OpCategory::kSelect:
    case OpCategory::kCast:
      return EvaluateElementwise(op, where, in, options, out);
    case OpCategory::kCreate:
      return EvaluateCreation(op, where, out);
    case OpCategory::kReduce:
      return EvaluateReduction(op, where, in, options, out);
    case OpCategory::kMatmul:
      return EvaluateMatmul(op, where, in, options, out);
    case OpCategory::kIndex:
      return EvaluateIndex(op, where, in, out);
    case OpCategory::kScan:
      return EvaluateScan(op, where, in, out);
    case OpCategory::kLayout:
      return EvaluateLayoutWithBounds(op, where, in, out);
    case OpCategory::kControl:
      break;  // written out by UnrollRegions before any op is evaluated
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "reference: %s: op kind is not supported by the reference evaluator", where));
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
    case pto::v1::DT_FP8E4M3:
    case pto::v1::DT_FP8E5M2:
    case pto::v1::DT_FP8E8M0:
      return RoundToFp8(value, dtype);
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
    if (absl::Status s = EvaluateOp(op, where, in, options, &*out); !s.ok()) return s;
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
