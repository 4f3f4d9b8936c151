#include "client/python/native/reference_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/reference/reference_eval.h"
#include "pto/v1/graph.pb.h"

namespace py = pybind11;

namespace pto::python {
namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// The dtype of the value parameter `index` of `graph` binds.
pto::v1::DataType ParamDtype(const pto::v1::Graph& graph, int index) {
  const int64_t id = graph.params(index).value_id();
  for (const auto& v : graph.values()) {
    if (v.id() == id) return v.dtype();
  }
  return pto::v1::DT_UNSPECIFIED;
}

py::list ReferenceEval(const py::bytes& graph_bytes,
                       const std::vector<py::object>& inputs,
                       const std::vector<py::object>& bounds) {
  pto::v1::Graph graph;
  if (!graph.ParseFromString(std::string(graph_bytes))) {
    throw py::value_error("graph bytes do not parse as a pto.v1.Graph");
  }
  if (static_cast<int>(inputs.size()) != graph.params_size()) {
    throw py::value_error(absl::StrCat("reference_eval: ", inputs.size(),
                                       " inputs for ", graph.params_size(),
                                       " parameters"));
  }
  if (!bounds.empty() && bounds.size() != inputs.size()) {
    throw py::value_error("reference_eval: bounds must have one entry per input");
  }
  std::vector<reference::RefTensor> tensors(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    reference::RefTensor& t = tensors[i];
    t.dtype = ParamDtype(graph, static_cast<int>(i));
    if (inputs[i].is_none()) continue;
    Array a = Array::ensure(inputs[i]);
    if (!a) throw py::type_error(absl::StrCat("reference_eval: input ", i,
                                              " is not a float64 array"));
    for (py::ssize_t d = 0; d < a.ndim(); ++d) t.shape.push_back(a.shape(d));
    t.data.assign(a.data(), a.data() + a.size());
    if (!bounds.empty() && !bounds[i].is_none()) {
      Array b = Array::ensure(bounds[i]);
      if (!b || b.size() != a.size()) {
        throw py::value_error(absl::StrCat("reference_eval: bounds[", i,
                                           " ] must match input ", i));
      }
      t.bound.assign(b.data(), b.data() + b.size());
    }
  }
  absl::StatusOr<std::vector<reference::RefTensor>> out;
  {
    py::gil_scoped_release release;
    out = reference::EvaluateReference(graph, tensors);
  }
  if (!out.ok()) throw py::value_error(std::string(out.status().message()));
  py::list result;
  for (reference::RefTensor& t : *out) {
    std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
    Array a(shape);
    Array b(shape);
    if (!t.data.empty()) {
      std::memcpy(a.mutable_data(), t.data.data(), t.data.size() * sizeof(double));
    }
    if (t.bound.size() == t.data.size() && !t.bound.empty()) {
      std::memcpy(b.mutable_data(), t.bound.data(), t.bound.size() * sizeof(double));
    } else if (b.size() > 0) {
      std::fill(b.mutable_data(), b.mutable_data() + b.size(), 0.0);
    }
    result.append(py::make_tuple(std::move(a), std::move(b)));
  }
  return result;
}

}  // namespace

void BindReferenceEval(py::module_& m) {
  m.def("reference_eval", &ReferenceEval, py::arg("graph"), py::arg("inputs"),
        py::arg("bounds") = std::vector<py::object>{},
        "Evaluates serialized pto.v1.Graph bytes in double precision, each "
        "op's result rounded to its value's dtype: per parameter (values, "
        "error bounds), float64 arrays (inputs: one float64 array or None "
        "per parameter; bounds: empty, or per input its error bounds or "
        "None).");
}

}  // namespace pto::python
