// The reference evaluator's ops addressed by an index tensor (gather,
// index_select, scatter, index_copy, index_add) and sort (std::stable_sort
// of each row: the positions, NaN the largest, ties in input order), written
// directly from torch's definitions, independent of the compiler's
// MGATHER/MSCATTER/MSORT.
// Writes land in the index's row-major order (a repeated index: the last
// write wins; add/multiply combine in that order, each result rounded to
// the dtype). An index outside [0, size) is INVALID_ARGUMENT naming the op,
// the index and the dim, as torch raises.
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_INDEX_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_INDEX_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/reference/reference_eval.h"
#include "pto/v1/graph.pb.h"

namespace pto::reference {

// Fills `out` (dtype and shape set from the op's declared output; data and
// bound) from `in`.
absl::Status EvaluateIndex(const pto::v1::Op& op, const std::string& where,
                           const std::vector<const RefTensor*>& in, RefTensor* out);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_INDEX_H_
