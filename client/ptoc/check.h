// Checking a compiled kernel against the reference evaluator: random inputs,
// one run, an element-by-element comparison of every output.
//
//   auto report = RunAndCheck(graph, *kernel, CheckOptions());
//   if (report.ok()) std::cout << report->Summary();   // "... PASS"
#ifndef PTO_CLIENT_PTOC_CHECK_H_
#define PTO_CLIENT_PTOC_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/reference/reference_eval.h"
#include "pto/v1/graph.pb.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

namespace pto::ptoc {

// A tensor in the layout a kernel reads and writes: FP32 as float, FP16 as
// uint16_t bit patterns, BF16 as the upper halves of floats, BOOL as bytes 0
// or 1, integers and DOUBLE natively.
class HostTensor {
 public:
  // INVALID_ARGUMENT for DT_UNSPECIFIED and unknown dtypes.
  static absl::StatusOr<HostTensor> Create(pto::v1::DataType dtype,
                                           std::vector<int64_t> shape);

  pto::v1::DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t size() const { return size_; }
  void* data() { return bytes_.data(); }

  double Get(int64_t i) const;
  // Stores `value` rounded to the dtype.
  void Set(int64_t i, double value);

  runtime::TensorArg AsArg() {
    return runtime::TensorArg{bytes_.data(), dtype_, shape_};
  }

 private:
  pto::v1::DataType dtype_ = pto::v1::DT_UNSPECIFIED;
  std::vector<int64_t> shape_;
  int64_t size_ = 0;
  std::vector<uint8_t> bytes_;
};

// When an output element is close enough to the reference: by default,
//
//   |got - want| <= kBoundSafety * bound
//
// with `bound` the reference's per-element error bound (reference::RefTensor::bound;
// the model is in reference_error.h): the error each op's inputs carry,
// propagated through the op, plus the op's own error from the magnitudes it
// combines (one rounding, u |z|, for +, -, *; 4 ulp for library math
// functions; (n - 1) u sum |x_k| for a sum of n terms, K u sum |a_k b_k|
// for a matmul) plus the rounding of each result to its dtype (by the
// reference; for FP16, BF16 by the kernel too: half an ulp each). u is the
// unit roundoff of the compute dtype (FP32 for FP32, FP16, BF16); on exact
// inputs a correctly rounded op's error is known exactly (0 when its result
// is representable). The bound scales with
// the values actually combined, so a difference of nearly equal terms is
// judged by its terms' magnitudes and a softmax output by its own size:
// none is met by a zeroed, scaled or permuted output. kBoundSafety covers
// what the model takes at the reference's values instead of the kernel's
// (|z|, a sum's terms) and the library functions' accuracy, measured over
// samples rather than proven. Non-finite
// values must match exactly (NaN with NaN, inf with the same inf); an
// element whose bound is infinite (the result is undetermined, e.g. a
// division by a value whose bound reaches zero) is counted as unchecked.
inline constexpr double kBoundSafety = 2.0;

// An explicit tolerance, in place of the bound (CheckOptions::tolerance).
struct Tolerance {
  // FP32: |got - want| <= atol + rtol * |want|.
  double rtol = 1e-6;
  double atol = 0.0;
  // FP16, BF16: got within this many ulps of the reference rounded to the
  // type, or within atol.
  int64_t fp16_ulps = 1;
};

// How one output compares.
struct Comparison {
  std::string name;          // parameter name
  int64_t count = 0;         // elements compared
  int64_t mismatches = 0;    // elements outside the tolerance
  int64_t unchecked = 0;     // elements whose bound is infinite
  double max_abs_error = 0;  // over all elements
  double max_rel_error = 0;  // over elements whose reference is non-zero
  // Largest |got - want| / (kBoundSafety * bound) over elements with a
  // non-zero finite bound (by the bound only): <= 1 passes.
  double max_bound_fraction = 0;
  std::string first_mismatch;  // "index 17 [0,17]: got 1.5, want 1.25 (bound 1e-07)"
  bool ok() const { return mismatches == 0; }
};

// By want.bound (as above; an element without a bound must be exact).
Comparison Compare(const std::string& name, const HostTensor& got,
                   const reference::RefTensor& want);

// By an explicit tolerance.
Comparison Compare(const std::string& name, const HostTensor& got,
                   const reference::RefTensor& want, const Tolerance& tolerance);

// How RunAndCheck draws inputs.
enum class InputDraw {
  kUniform,      // uniform in [low, high], |x| >= min_magnitude
  kMixedScales,  // |x| log-uniform in [min_magnitude, max(|low|, |high|)],
                 // either sign, kept within [low, high]: tiny and large
                 // magnitudes side by side
};

struct CheckOptions {
  uint64_t seed = 1;
  // Inputs are drawn (by `draw`) within [low, high] with |x| >=
  // min_magnitude, so that divisions stay well conditioned. Integer inputs
  // are whole numbers across [-100, 100] (UINT8: [0, 255]), BOOL about half
  // true.
  double low = -2.0;
  double high = 2.0;
  double min_magnitude = 0.125;
  InputDraw draw = InputDraw::kUniform;
  // Null: the reference's error bound (above).
  const Tolerance* tolerance = nullptr;
  // How the reference rounds intermediates.
  reference::ReferenceOptions reference;
  // Passed to Kernel::Run (e.g. to trace the run); null for none.
  const runtime::RunOptions* run_options = nullptr;
};

struct CheckReport {
  std::vector<Comparison> outputs;  // one per OUT/INOUT parameter
  bool pass() const;
  // One line per output with max abs/rel error and the largest fraction of
  // the bound used, then "PASS" or "FAIL".
  std::string Summary() const;
};

// One run as RunAndCheck makes it: `buffers` (one per parameter) hold the
// inputs and the kernel's outputs, `reference` the reference's results
// with their bounds.
struct CheckRun {
  std::vector<HostTensor> buffers;
  std::vector<reference::RefTensor> reference;
};
absl::StatusOr<CheckRun> RunWithReference(const pto::v1::Graph& graph,
                                          const runtime::Kernel& kernel,
                                          const CheckOptions& options);

// Random inputs from the graph's parameters, the kernel run once on them
// (outputs pre-filled with NaN so unwritten elements show), the reference
// evaluated on the same inputs, every OUT/INOUT parameter compared.
absl::StatusOr<CheckReport> RunAndCheck(const pto::v1::Graph& graph,
                                        const runtime::Kernel& kernel,
                                        const CheckOptions& options);

}  // namespace pto::ptoc

#endif  // PTO_CLIENT_PTOC_CHECK_H_
