// The reference evaluator's elementwise ops: tensor-with-tensor ops and
// comparisons and where (numpy broadcasting), tensor-with-scalar ops (attr
// "scalar", a float as the kernel sees it: rounded to FP32 except on INT32,
// INT64 and DOUBLE values), unary math, clip, copy, clone and cast (torch's
// conversions on x86). Each computes in double; integer mul, floor_divide,
// remainder, fmod, gcd, bitwise ops and shifts exactly in int64, wrapped to
// the width. The result is rounded as ReferenceOptions says, each element's
// bound propagated from its operands' (reference_error.h).
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_ELEMENTWISE_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_ELEMENTWISE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pto/v1/graph.pb.h"
#include "compiler/reference/reference_eval.h"

namespace pto::reference {

absl::Status EvaluateElementwise(const pto::v1::Op& op, const std::string& where,
                                 const std::vector<const RefTensor*>& in,
                                 const ReferenceOptions& options,
                                 RefTensor* out);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_ELEMENTWISE_H_
