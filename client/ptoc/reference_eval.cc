#include "client/ptoc/reference_eval.h"

#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/ptoc/fp16.h"

namespace pto::ptoc {
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

const std::map<std::string, Binary>& BinaryOps() {
  static const auto* ops = new std::map<std::string, Binary>{
      {"add", [](double a, double b) { return a + b; }},
      {"sub", [](double a, double b) { return a - b; }},
      {"mul", [](double a, double b) { return a * b; }},
      {"div", [](double a, double b) { return a / b; }},
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
  };
  return *ops;
}

const std::map<std::string, Unary>& UnaryOps() {
  static const auto* ops = new std::map<std::string, Unary>{
      {"exp", [](double x) { return std::exp(x); }},
      {"neg", [](double x) { return -x; }},
      {"abs", [](double x) { return std::fabs(x); }},
      {"copy", [](double x) { return x; }},
  };
  return *ops;
}

}  // namespace

double RoundToDType(double value, DataType dtype) {
  switch (dtype) {
    case pto::v1::DT_FP32:
      return static_cast<double>(static_cast<float>(value));
    case pto::v1::DT_FP16:
      return RoundToHalf(value);
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
    auto shape = StaticShape(it->second->shape());
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
    const size_t arity_expected =
        BinaryOps().count(op.kind()) ? 2
        : (ScalarOps().count(op.kind()) || UnaryOps().count(op.kind())) ? 1
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
    for (const RefTensor* t : in) {
      if (t->shape != out->shape) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: input shape %s differs from output shape %s", where,
            ShapeString(t->shape), ShapeString(out->shape)));
      }
    }
    const size_t n = in[0]->data.size();
    out->data.resize(n);
    if (auto b = BinaryOps().find(op.kind()); b != BinaryOps().end()) {
      for (size_t k = 0; k < n; ++k) {
        out->data[k] = b->second(in[0]->data[k], in[1]->data[k]);
      }
    } else if (auto s = ScalarOps().find(op.kind()); s != ScalarOps().end()) {
      auto attr = op.attrs().find("scalar");
      if (attr == op.attrs().end() ||
          attr->second.value_case() != pto::v1::Attribute::kF) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "reference: %s: attribute 'scalar' (f) is missing", where));
      }
      // The kernel computes in FP32 with the scalar as a float.
      const double scalar = static_cast<float>(attr->second.f());
      for (size_t k = 0; k < n; ++k) {
        out->data[k] = s->second(in[0]->data[k], scalar);
      }
    } else {
      const Unary& f = UnaryOps().at(op.kind());
      for (size_t k = 0; k < n; ++k) out->data[k] = f(in[0]->data[k]);
    }
    switch (options.intermediates) {
      case ReferenceOptions::Intermediates::kCompute:
        for (double& x : out->data) x = RoundToDType(x, pto::v1::DT_FP32);
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
  }
  return results;
}

}  // namespace pto::ptoc
