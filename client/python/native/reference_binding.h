// pypto._native.reference_eval: the double-precision reference evaluator
// (compiler/reference/reference_eval.h) for Python, on whole graphs.
//
//   outs = reference_eval(graph_bytes, [a, b, None], [bound_a, None, None])
//   # per graph parameter (values, error bounds), float64 arrays: IN
//   # unchanged, OUT and INOUT their final contents; inputs[i] is parameter
//   # i's data as float64 (already the parameter's dtype's values), None for
//   # OUT; bounds (optional) per input the bound it carries in
//   # (reference_error.h), None for 0
//
// Each op's result is rounded to its value's dtype (--intermediates=storage),
// as the compiled kernels round it. pypto's eager mode (eager.py) runs one op
// at a time through it. Errors are ValueError carrying the evaluator's
// message (which names the op).
#ifndef PTO_CLIENT_PYTHON_NATIVE_REFERENCE_BINDING_H_
#define PTO_CLIENT_PYTHON_NATIVE_REFERENCE_BINDING_H_

#include <pybind11/pybind11.h>

namespace pto::python {

// Adds reference_eval to module `m`.
void BindReferenceEval(pybind11::module_& m);

}  // namespace pto::python

#endif  // PTO_CLIENT_PYTHON_NATIVE_REFERENCE_BINDING_H_
