// The reference evaluator's loops and branches: a graph
// with "loop"/"if" ops becomes the equivalent graph without them, written
// out op by op — each body copied once per iteration with its index bound
// (new value ids for the copies; region args read the carried values, the
// op's outputs are the last results), each if replaced by the branch its
// condition picks, symbolic attributes and dims evaluated (a scalar operand
// or clip bound of FP16/BF16 values rounded to their dtype through FP32, as
// pypto rounds a Python number and the kernel the int64 it evaluates).
// Independent of the compiler's lowering: the semantics of graph.proto
// "Region", directly.
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_REGIONS_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_REGIONS_H_

#include "absl/status/statusor.h"
#include "pto/v1/graph.pb.h"

namespace pto::reference {

bool HasRegions(const pto::v1::Graph& graph);

// INVALID_ARGUMENT naming the op when a bound, condition or attribute cannot
// be evaluated (a symbol other than a loop index), or the unrolled graph
// would exceed 2^20 ops.
absl::StatusOr<pto::v1::Graph> UnrollRegions(const pto::v1::Graph& graph);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_REGIONS_H_
