// What the reference evaluator's op families share. Each family is a file
// pair (reference_elementwise, reference_reduce, reference_matmul,
// reference_create, reference_index, reference_layout) whose Evaluate*
// fills an op's output, its dtype and shape already set from the op's
// declared value, with data and per-element bounds (reference_error.h), or
// returns INVALID_ARGUMENT naming `where` ("op 3 'add'").
// reference_eval.cc dispatches each op to its family by the compiler's op
// registry (compiler/ops/op_registry.h: the kind's category), after
// checking its number of inputs against the registry's.
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_FAMILY_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_FAMILY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pto/v1/graph.pb.h"

namespace pto::reference {

// "[2,3]", for error messages.
std::string ShapeString(const std::vector<int64_t>& shape);

// Whether scalars reach a kernel's instructions on values of `dtype` as
// doubles (int64 and double tiles: INT32, INT64, DOUBLE) rather than floats.
bool WideScalars(pto::v1::DataType dtype);

// The op's `dim` attribute (an int) for an input of `rank` dims, a negative
// one counted from the end: in [0, rank). INVALID_ARGUMENT naming `where`
// when it is missing or out of range.
absl::StatusOr<int64_t> DimAttr(const pto::v1::Op& op, const std::string& where, int rank);

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_FAMILY_H_
