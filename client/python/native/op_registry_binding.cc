#include "client/python/native/op_registry_binding.h"

#include <pybind11/stl.h>

#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ops/infer.h"
#include "compiler/ops/op_registry.h"
#include "pto/v1/graph.pb.h"

namespace py = pybind11;

namespace pto::python {
namespace {

using compiler::OperandTypes;

// The dtypes the compiler supports, in pto.v1.DataType order.
std::vector<pto::v1::DataType> SupportedDTypes() {
  std::vector<pto::v1::DataType> out;
  for (int d = pto::v1::DataType_MIN; d <= pto::v1::DataType_MAX; ++d) {
    if (pto::v1::DataType_IsValid(d) &&
        compiler::IsSupportedDType(static_cast<pto::v1::DataType>(d))) {
      out.push_back(static_cast<pto::v1::DataType>(d));
    }
  }
  return out;
}

py::list Accepted(OperandTypes types) {
  py::list out;
  for (pto::v1::DataType d : SupportedDTypes()) {
    if (compiler::AcceptsOperand(types, d)) out.append(static_cast<int>(d));
  }
  return out;
}

py::dict OpEntry(const compiler::OpInfo& info) {
  py::dict e;
  e["kind"] = info.kind;
  e["category"] = compiler::OpCategoryName(info.category);
  e["num_inputs"] = info.num_inputs;
  e["num_outputs"] = info.num_outputs;
  py::list attrs;
  for (const compiler::AttrSpec& a : info.attrs) {
    attrs.append(py::make_tuple(a.name, compiler::AttrTypeName(a.type), a.required,
                                a.symbolic));
  }
  e["attrs"] = attrs;
  e["needs_vec_tile"] = info.needs_vec_tile;
  e["operands"] = compiler::OperandTypesName(info.operands);
  e["operand_dtypes"] = Accepted(info.operands);
  e["bool_result"] = info.bool_result;
  py::dict result_dtypes;
  if (info.category == compiler::OpCategory::kReduce) {
    for (pto::v1::DataType d : SupportedDTypes()) {
      result_dtypes[py::int_(static_cast<int>(d))] =
          static_cast<int>(compiler::ReduceResultDType(info.kind, d));
    }
  }
  e["result_dtypes"] = result_dtypes;
  return e;
}

py::dict OpRegistry() {
  py::list ops;
  for (const compiler::OpInfo& info : compiler::AllOps()) ops.append(OpEntry(info));
  py::dict operand_types;
  for (OperandTypes t : {OperandTypes::kFloat, OperandTypes::kAny, OperandTypes::kNumeric,
                         OperandTypes::kFloatOrDouble, OperandTypes::kInteger}) {
    operand_types[compiler::OperandTypesName(t)] = Accepted(t);
  }
  py::dict out;
  out["ops"] = ops;
  out["operand_types"] = operand_types;
  return out;
}

}  // namespace

void BindOpRegistry(py::module_& m) {
  m.def("op_registry", &OpRegistry,
        "The compiler's op registry: {'ops': [one dict per kind], 'operand_types': "
        "{name: [dtype]}} (client/python/native/op_registry_binding.h).");
}

}  // namespace pto::python
