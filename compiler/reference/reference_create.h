// The reference evaluator's creation ops (no inputs): full(shape, value,
// dtype) and arange (start + step * i along a rank-1 shape), each element
// rounded to the dtype, and philox (Philox4x32-10's 32-bit words, exact,
// from the generator's definition). full's value reaches the kernel as a
// float (as a double for INT32, INT64 and DOUBLE results), arange's start
// and step and philox's words as doubles; the reference takes them the same
// way.
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_CREATE_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_CREATE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pto/v1/graph.pb.h"
#include "compiler/reference/reference_eval.h"

namespace pto::reference {

absl::Status EvaluateCreation(const pto::v1::Op& op, const std::string& where,
                              RefTensor* out);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_CREATE_H_
