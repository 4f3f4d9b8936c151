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
#include "client/ptoc/reference_eval.h"
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

// When an output element is close enough to the reference.
struct Tolerance {
  // FP32: |got - want| <= atol + rtol * |want|.
  double rtol = 1e-6;
  double atol = 0.0;
  // FP16, BF16: got within this many ulps of the reference rounded to the
  // type, or within atol (a sum's or matmul's FP32 error bound: a result
  // that cancels to near 0 may be many ulps of a tiny value off).
  int64_t fp16_ulps = 1;
};

// For parameter `param` (an output): FP32 rtol 1e-6, or 2e-6 when a
// transcendental (exp, log, sin, pow, ...) feeds it (they are not correctly
// rounded), plus atol 1e-6 when erf or erfc does; sum over dim d and matmul:
// rtol 1e-5 plus atol 1e-5 times the sum of magnitudes for inputs within
// [-4, 4] (4 * len(d), 16 * K); FP16 1 ulp; BOOL exact.
Tolerance DefaultTolerance(const pto::v1::Graph& graph, int param);

// How one output compares.
struct Comparison {
  std::string name;          // parameter name
  int64_t count = 0;         // elements compared
  int64_t mismatches = 0;    // elements outside the tolerance
  double max_abs_error = 0;  // over all elements
  double max_rel_error = 0;  // over elements whose reference is non-zero
  std::string first_mismatch;  // "index 17 [0,17]: got 1.5, want 1.25"
  bool ok() const { return mismatches == 0; }
};

Comparison Compare(const std::string& name, const HostTensor& got,
                   const RefTensor& want, const Tolerance& tolerance);

struct CheckOptions {
  uint64_t seed = 1;
  // Inputs are uniform in [low, high] with |x| >= min_magnitude, so that
  // divisions stay well conditioned.
  double low = -2.0;
  double high = 2.0;
  double min_magnitude = 0.125;
  // Default: DefaultTolerance(graph, output).
  const Tolerance* tolerance = nullptr;
  // How the reference rounds intermediates.
  ReferenceOptions reference;
  // Passed to Kernel::Run (e.g. to trace the run); null for none.
  const runtime::RunOptions* run_options = nullptr;
};

struct CheckReport {
  std::vector<Comparison> outputs;  // one per OUT/INOUT parameter
  bool pass() const;
  // One line per output with max abs/rel error, then "PASS" or "FAIL".
  std::string Summary() const;
};

// Random inputs from the graph's parameters, the kernel run once on them
// (outputs pre-filled with NaN so unwritten elements show), the reference
// evaluated on the same inputs, every OUT/INOUT parameter compared.
absl::StatusOr<CheckReport> RunAndCheck(const pto::v1::Graph& graph,
                                        const runtime::Kernel& kernel,
                                        const CheckOptions& options);

}  // namespace pto::ptoc

#endif  // PTO_CLIENT_PTOC_CHECK_H_
