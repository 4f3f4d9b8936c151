// The reference evaluator's scans (cumsum, cumprod): the running value
// along "dim" in torch's order (out[i] = out[i - 1] (op) x[i]) in torch's
// CPU accumulator (at::acc_type): double for FP32 and DOUBLE, float for
// FP16 and BF16, int64 (wrapping) for the integer types and BOOL, each
// output rounded to the dtype. The same arithmetic as torch's, so its
// results are torch's bits (bound 0 for exact inputs; an input's bound
// carries forward to first order). Written from torch's definition,
// independent of the compiler's TCUMSUM/TCUMPROD.
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_SCAN_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_SCAN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/reference/reference_eval.h"
#include "pto/v1/graph.pb.h"

namespace pto::reference {

// Fills `out` (dtype and shape set from the op's declared output; data and
// bound) from `in`.
absl::Status EvaluateScan(const pto::v1::Op& op, const std::string& where,
                          const std::vector<const RefTensor*>& in, RefTensor* out);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_SCAN_H_
