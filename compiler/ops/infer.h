// Result types of Tensor-graph ops: what the verifier checks a graph's
// declared output values against, and the one place that knows numpy
// broadcasting and each op kind's dtype rules.
//
//   auto r = InferResult(*FindOp("add"), {{DT_FP32, {4, 1}}, {DT_FP32, {3}}});
//   // r->dtype == DT_FP32, r->shape == {4, 3}
#ifndef PTO_COMPILER_OPS_INFER_H_
#define PTO_COMPILER_OPS_INFER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/ops/op_registry.h"
#include "pto/v1/graph.pb.h"

namespace pto::compiler {

struct ValueType {
  pto::v1::DataType dtype = pto::v1::DT_UNSPECIFIED;
  std::vector<int64_t> shape;
};

// A value type whose dims may be symbolic (static dims are constants).
struct SymValueType {
  pto::v1::DataType dtype = pto::v1::DT_UNSPECIFIED;
  SymShape shape;
};

// numpy broadcasting of `shapes`: ranks are aligned at the last dim (missing
// leading dims count as 1), and in every dim the sizes are equal or 1.
// INVALID_ARGUMENT naming the first dim that disagrees and both operands.
absl::StatusOr<std::vector<int64_t>> BroadcastShapes(
    absl::Span<const std::vector<int64_t>> shapes);
// The same with symbolic dims: in every dim the expressions are equal
// (canonical forms) or one of them is the constant 1. A symbol is never
// taken to be 1: [bs] and [4] do not broadcast even though bs may be 4.
absl::StatusOr<SymShape> BroadcastSymShapes(absl::Span<const SymShape> shapes);

// The output type of `info` applied to `inputs` (in the kind's input order).
// Errors (INVALID_ARGUMENT) say which input is wrong and what would be valid;
// the caller prefixes the op's label.
// The attributes inference reads.
struct InferAttrs {
  pto::v1::DataType cast_to = pto::v1::DT_UNSPECIFIED;  // cast: "dtype"
  int64_t dim = 0;                                      // reductions: "dim"
  bool keepdim = false;                                 // reductions
  std::vector<int64_t> shape;                           // creation: "shape"
  pto::v1::DataType out_dtype = pto::v1::DT_UNSPECIFIED;  // matmul
  bool a_trans = false, b_trans = false;                  // matmul
  std::vector<int64_t> img2col;  // matmul: "img2col" (ops/img2col.h); empty: none
  std::vector<int64_t> offsets;  // view, assemble: "offsets"
  std::vector<int64_t> dims;     // permute: "dims"
  int64_t dim0 = 0, dim1 = 0;    // transpose
  std::string reduce;            // scatter: "reduce" ("" is "none")
  int64_t k = 0;                 // sort: "k"
  // view, assemble inside a region: offsets (and a
  // view's shape) as expressions over symbols and loop indices; when set,
  // `offsets` and `shape` above are unused (infer_region.cc).
  bool sym_region = false;
  SymShape sym_offsets, sym_shape;  // (sym_shape: also a reshape's exprs)
};

absl::StatusOr<ValueType> InferResult(const OpInfo& info,
                                      absl::Span<const ValueType> inputs,
                                      const InferAttrs& attrs = {});
// The same with symbolic dims: dims compare by canonical form, and errors
// print the expressions.
absl::StatusOr<SymValueType> InferSymResult(const OpInfo& info,
                                            absl::Span<const SymValueType> inputs,
                                            const InferAttrs& attrs = {});

// view and assemble with symbolic offsets, shape or input dims
// (infer_region.cc): the rules of InferLayoutResult where they can be
// decided at compile time; a region that may leave its tensor is checked at
// launch instead.
absl::StatusOr<SymValueType> InferSymRegionResult(
    const OpInfo& info, absl::Span<const SymValueType> inputs,
    const InferAttrs& attrs);

// transpose, permute, unsqueeze and reshape (its shape in `sym_shape`, or
// `shape`) of inputs with symbolic dims (infer_sym_layout.cc); other kinds
// UNIMPLEMENTED.
absl::StatusOr<SymValueType> InferSymLayoutResult(
    const OpInfo& info, absl::Span<const SymValueType> inputs,
    const InferAttrs& attrs);

// InferSymResult for OpCategory::kIndex (infer_index.cc): gather,
// index_select, scatter, index_copy, index_add, sort (op_registry.cc).
absl::StatusOr<SymValueType> InferIndexResult(const OpInfo& info,
                                              absl::Span<const SymValueType> inputs,
                                              const InferAttrs& attrs);

// InferResult for OpCategory::kLayout (infer_layout.cc).
absl::StatusOr<ValueType> InferLayoutResult(const OpInfo& info,
                                            absl::Span<const ValueType> inputs,
                                            const InferAttrs& attrs);

// The dtype of reduction `kind` over `input` values (torch's): argmax and
// argmin give DT_INT64; sum and prod of an integer or DT_BOOL tensor give
// DT_INT64 (torch promotes, and the sum accumulates in int64); otherwise the
// input's dtype (amax of BOOL is BOOL).
pto::v1::DataType ReduceResultDType(absl::string_view kind,
                                    pto::v1::DataType input);

// A reduction's dim as an index in [0, rank), or INVALID_ARGUMENT naming the
// valid range.
absl::StatusOr<int> NormalizeDim(int64_t dim, int rank);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_OPS_INFER_H_
