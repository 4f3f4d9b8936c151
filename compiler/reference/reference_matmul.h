// The reference evaluator's matmul: out[..., m, n] = sum_k a[..., m, k] *
// b[..., k, n] in double (a as [..., K, M] with attr a_trans, b as
// [..., N, K] with b_trans), leading batch dims broadcast as numpy's matmul
// does, the result rounded once to the output's dtype; its bound the
// products' bounds plus the kernel's K u sum_k |a_k b_k|.
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_MATMUL_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_MATMUL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pto/v1/graph.pb.h"
#include "compiler/reference/reference_eval.h"

namespace pto::reference {

absl::Status EvaluateMatmul(const pto::v1::Op& op, const std::string& where,
                            const std::vector<const RefTensor*>& in,
                            const ReferenceOptions& options,
                            RefTensor* out);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_MATMUL_H_
