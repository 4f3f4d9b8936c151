// The reference evaluator's layout ops (view, assemble, transpose, permute,
// unsqueeze, reshape, concat): element moves written directly from their
// definitions (numpy/torch indexing), independent of the compiler's
// index maps.
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_LAYOUT_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_LAYOUT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/reference/reference_eval.h"
#include "pto/v1/graph.pb.h"

namespace pto::reference {

// Fills `out` (dtype and shape already set from the op's declared output)
// from `in`. INVALID_ARGUMENT naming `where` for missing attributes or
// shapes that do not fit.
absl::Status EvaluateLayout(const pto::v1::Op& op, const std::string& where,
                            const std::vector<const RefTensor*>& in,
                            RefTensor* out);

// EvaluateLayout on the data and, moved the same way, the bounds: a layout
// op moves elements only, exact in every dtype.
absl::Status EvaluateLayoutWithBounds(const pto::v1::Op& op, const std::string& where,
                                      const std::vector<const RefTensor*>& in,
                                      RefTensor* out);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_LAYOUT_H_
