// pypto._native.op_registry: the compiler's op registry
// (compiler/ops/op_registry.h) for Python. pypto reads it once, when it is
// imported (pypto/op_table.py), so the front end's type rules are the
// verifier's.
//
//   reg = op_registry()
//   reg["ops"]             # one dict per kind, in registry order:
//   # {"kind": "adds", "category": "elementwise_scalar", "num_inputs": 1,
//   #  "num_outputs": 1, "attrs": [("scalar", "f", True, True)],
//   #  "needs_vec_tile": True, "operands": "float_or_double",
//   #  "operand_dtypes": [1, 2, 3, 10], "bool_result": False,
//   #  "result_dtypes": {}}
//   reg["operand_types"]   # {"float": [1, 2, 3], "any": [...], ...}
//
// dtypes are pto.v1.DataType numbers of the dtypes the compiler supports;
// operand_dtypes are those AcceptsOperand admits for the kind's data
// operands, result_dtypes a reduction's ReduceResultDType per input dtype.
#ifndef PTO_CLIENT_PYTHON_NATIVE_OP_REGISTRY_BINDING_H_
#define PTO_CLIENT_PYTHON_NATIVE_OP_REGISTRY_BINDING_H_

#include <pybind11/pybind11.h>

namespace pto::python {

// Adds op_registry to module `m`.
void BindOpRegistry(pybind11::module_& m);

}  // namespace pto::python

#endif  // PTO_CLIENT_PYTHON_NATIVE_OP_REGISTRY_BINDING_H_
