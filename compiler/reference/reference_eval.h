// A reference evaluator for Tensor graphs: runs a pto.v1.Graph's ops on whole
// tensors in double precision, independently of the compiler, so that a
// compiled kernel's results can be checked against it (ptoc --run, the
// kernel tests).
//
//   std::vector<RefTensor> inputs = ...;   // one per graph parameter
//   auto outputs = EvaluateReference(graph, inputs);
//   // (*outputs)[i]: parameter i's contents after the kernel
//
// Semantics: inputs are rounded to their dtype (the values the kernel sees);
// each op computes in double from its inputs and its result is rounded to
// its value's dtype (FP32: to float; FP16: to nearest-even half), as the
// compiler's kernels do (FP16 computes in FP32 and every op's result is
// rounded to FP16, so fusion and tile shapes never change results). Scalars
// of the tensor-with-scalar ops (and full's value) are rounded to FP32
// first, as the kernel sees them, except on INT32, INT64 and DOUBLE values
// (double immediates); one over a loop index meeting FP16/BF16 values is
// rounded to their dtype (reference_regions.h), as the kernel rounds it.
// ReferenceOptions selects other intermediate precisions.
// Ops: every elementwise kind of the compiler's registry (binary ops,
// comparisons and where with numpy broadcasting; tensor-with-scalar ops;
// unary math, clip, copy, cast); creation (full, arange); reductions over
// one dim (integer and BOOL sums/products exactly in int64, wrapping like
// torch's int64 results); matmul (2-D or batched with numpy-broadcast
// batch dims, attrs a_trans/b_trans, accumulated in double, rounded once to
// the output's dtype); every dtype of pto.v1 (see RoundToDType); static shapes.
// Each op family is a file of its own (reference_family.h).
#ifndef PTO_COMPILER_REFERENCE_REFERENCE_EVAL_H_
#define PTO_COMPILER_REFERENCE_REFERENCE_EVAL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "pto/v1/graph.pb.h"

namespace pto::reference {

// A dense row-major tensor of doubles.
struct RefTensor {
  pto::v1::DataType dtype = pto::v1::DT_UNSPECIFIED;
  std::vector<int64_t> shape;
  std::vector<double> data;
  // EvaluateReference's results: per element, a bound on |a correct
  // kernel's value - data[i]| (reference_error.h; infinity where the
  // result is undetermined). Empty for tensors built by hand: no bound.
  std::vector<double> bound;
};

// Rounds `value` to what a tensor of `dtype` holds: FP32, FP16, BF16 to
// nearest even; BOOL: 0 or 1 (NaN is 1); integers as the kernels convert
// (torch on x86): truncate to int64 (NaN, out of range: INT64_MIN), then
// wrap to the width; the FP8 types as fp8.h rounds; DOUBLE as is. This is
// also `cast`'s conversion.
double RoundToDType(double value, pto::v1::DataType dtype);

// value rounded to bfloat16 (nearest even), as a double.
double RoundToBf16(double value);

// The static shape of a value, or INVALID_ARGUMENT for a symbolic dim.
absl::StatusOr<std::vector<int64_t>> StaticShape(const pto::v1::Shape& shape);

struct ReferenceOptions {
  // What an op's result is rounded to before the next op reads it.
  enum class Intermediates {
    kStorage,  // the value's own dtype (default; what kernels do)
    kCompute,  // FP32 for every value (FP16 intermediates kept in FP32)
    kDouble,   // not rounded: the exact-as-possible answer
  };
  Intermediates intermediates = Intermediates::kStorage;
};

// Evaluates `graph`. `inputs` has one tensor per parameter, in order; OUT
// parameters' entries are ignored (may be empty). Returns one tensor per
// parameter: IN unchanged, OUT and INOUT their final contents, each with
// its error bound. An input's bound is its `bound` when that has one entry
// per element (values an earlier evaluation computed: pypto's eager runs
// evaluate one op at a time), else 0 (the kernel reads the same values). Errors name
// the op and what is wrong (unknown kind, missing value, shape mismatch).
absl::StatusOr<std::vector<RefTensor>> EvaluateReference(
    const pto::v1::Graph& graph, absl::Span<const RefTensor> inputs,
    const ReferenceOptions& options = {});

}  // namespace pto::reference

#endif  // PTO_COMPILER_REFERENCE_REFERENCE_EVAL_H_
