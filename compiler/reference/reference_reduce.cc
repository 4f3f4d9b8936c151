#include "compiler/reference/reference_reduce.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "compiler/reference/reference_error.h"
#include "compiler/reference/reference_family.h"

namespace pto::reference {

absl::Status EvaluateReduction(const pto::v1::Op& op, const std::string& where,
                               const std::vector<const RefTensor*>& in,
                               const ReferenceOptions& options,
                               RefTensor* out) {
  const std::string& kind = op.kind();
  const std::vector<int64_t>& shape = in[0]->shape;
  const int rank = static_cast<int>(shape.size());
  absl::StatusOr<int64_t> dim_or = DimAttr(op, where, rank);
  if (!dim_or.ok()) return dim_or.status();
  const int64_t dim = *dim_or;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  for (int d = static_cast<int>(dim) + 1; d < rank; ++d) inner *= shape[d];
  const int64_t len = shape[dim];
  if (static_cast<int64_t>(out->data.size()) != 0 ||
      outer * inner != [&] { int64_t n = 1; for (int64_t d : out->shape) n *= d; return n; }()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference: %s: output shape %s does not match the reduction of %s",
        where, ShapeString(out->shape), ShapeString(shape)));
  }
  out->data.resize(outer * inner);
  out->bound.resize(outer * inner);
  const double unit = ComputeUnit(out->dtype);
  // Integer sums and products (INT64 results) are exact in int64 and
  // wrap like torch's; a double would round them past 2**53.
  const bool wrapping = out->dtype == pto::v1::DT_INT64 &&
                        (kind == "sum" || kind == "prod");
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const double* p = in[0]->data.data() + o * len * inner + i;
      const double* pb = in[0]->bound.data() + o * len * inner + i;
      double& bound = out->bound[o * inner + i];
      if (wrapping) {
        bound = 0;
        for (int64_t k = 0; k < len; ++k) bound += pb[k * inner];
        if (bound > 0) bound = INFINITY;  // an inexact integer
        uint64_t acc = kind == "sum" ? 0 : 1;
        for (int64_t k = 0; k < len; ++k) {
          const double v = p[k * inner];  // an integer of the input's type
          const uint64_t x =
              static_cast<uint64_t>(v >= 0x1p63 ? INT64_MIN : static_cast<int64_t>(v));
          acc = kind == "sum" ? acc + x : acc * x;
        }
        out->data[o * inner + i] = static_cast<double>(static_cast<int64_t>(acc));
        continue;
      }
      double acc = kind == "sum" ? 0 : kind == "prod" ? 1 : p[0];
      int64_t at = 0;
      for (int64_t k = 0; k < len; ++k) {
        const double x = p[k * inner];
        if (kind == "sum") acc += x;
        else if (kind == "prod") acc *= x;
        else if (kind == "amax" || kind == "argmax") {
          // NaN wins (numpy amax, torch argmax), the first one.
          if (!std::isnan(acc) && (std::isnan(x) || x > acc)) { acc = x; at = k; }
        } else if (!std::isnan(acc) && (std::isnan(x) || x < acc)) {
          acc = x;
          at = k;
        }
      }
      out->data[o * inner + i] =
          kind == "argmax" || kind == "argmin" ? static_cast<double>(at) : acc;
      // The terms' bounds, and the kernel's summation error (any
      // order: (len - 1) u sum |x|) or product error.
      double terms = 0, magnitudes = 0, product_hi = 1, product = 1, widest = 0;
      for (int64_t k = 0; k < len; ++k) {
        const double x = p[k * inner], b = pb[k * inner];
        terms += b;
        magnitudes += std::fabs(x);
        product_hi *= std::fabs(x) + b;
        product *= std::fabs(x);
        widest = std::max(widest, b);
      }
      if (kind == "sum" && len <= 1 && terms == 0) {
        bound = ExactInputsError(acc, out->dtype);
      } else if (kind == "sum") {
        bound = terms + (len - 1) * unit * magnitudes + RoundingError(acc, out->dtype);
      } else if (kind == "prod") {
        bound = (product_hi - product) + (len - 1) * unit * std::fabs(acc) +
                RoundingError(acc, out->dtype);
      } else if (kind == "amax" || kind == "amin") {
        bound = widest;
      } else {
        // An index: exact unless another element may be the extreme.
        bound = 0;
        const double best = p[at * inner], best_b = pb[at * inner];
        for (int64_t k = 0; k < len && widest > 0; ++k) {
          if (k == at) continue;
          const double x = p[k * inner], b = pb[k * inner];
          const bool rival = kind == "argmax" ? x + b >= best - best_b
                                              : x - b <= best + best_b;
          if (rival) bound = INFINITY;
        }
      }
      if (std::isnan(bound) || !std::isfinite(acc)) bound = std::isfinite(acc) ? INFINITY : 0;
    }
  }
  switch (options.intermediates) {
    case ReferenceOptions::Intermediates::kDouble: break;
    default:
      for (double& x : out->data) x = RoundToDType(x, out->dtype);
  }
  return absl::OkStatus();
}

}  // namespace pto::reference
