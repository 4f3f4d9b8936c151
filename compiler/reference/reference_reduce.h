// The reference evaluator's reductions over one dim (attr "dim", negative
// counts from the end; the output's shape says whether "keepdim" kept it):
// sum, prod, amax, amin, argmax, argmin (the first extreme; NaN wins, as
// numpy amax and torch argmax). Sums and products of an integer or BOOL
// input (INT64 results) are exact in int64 and wrap like torch's; float
// ones accumulate in double, their bound the terms' bounds plus the
// kernel's (n - 1) u sum |x| (any summation order) or product error.
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_REDUCE_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_REDUCE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pto/v1/graph.pb.h"
#include "compiler/reference/reference_eval.h"

namespace pto::reference {

absl::Status EvaluateReduction(const pto::v1::Op& op, const std::string& where,
                               const std::vector<const RefTensor*>& in,
                               const ReferenceOptions& options,
                               RefTensor* out);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_REDUCE_H_
