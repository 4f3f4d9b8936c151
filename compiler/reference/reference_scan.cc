#include "compiler/reference/reference_scan.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "compiler/reference/reference_family.h"

namespace pto::reference {
namespace {

// One line along dim: n values from `x` (stride apart), written to `out`.
template <typename Acc>
void ScanLine(bool product, const double* x, const double* xb, int64_t n, int64_t stride,
              pto::v1::DataType dtype, double* out, double* bound) {
  Acc acc = static_cast<Acc>(product ? 1.0 : 0.0);
  double acc_bound = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t at = k * stride;
    const Acc v = static_cast<Acc>(x[at]);
    const double b = xb == nullptr ? 0.0 : xb[at];
    if (product) {
      acc_bound = std::fabs(static_cast<double>(acc)) * b +
                  std::fabs(x[at]) * acc_bound + acc_bound * b;
      acc = acc * v;
    } else {
      acc_bound += b;
      acc = acc + v;
    }
    out[at] = RoundToDType(static_cast<double>(acc), dtype);
    bound[at] = std::isnan(acc_bound) ? INFINITY : acc_bound;
  }
}

// The int64 running value wraps like torch's (two's complement).
struct WrappingInt {
  int64_t v;
  // (Out of int64's range, NaN: INT64_MIN, as RoundToDType converts.)
  explicit WrappingInt(double x)
      : v(x >= -0x1p63 && x < 0x1p63 ? static_cast<int64_t>(x) : INT64_MIN) {}
  WrappingInt(int64_t x) : v(x) {}  // NOLINT: products and sums
  WrappingInt operator+(WrappingInt o) const {
    return static_cast<int64_t>(static_cast<uint64_t>(v) + static_cast<uint64_t>(o.v));
  }
  WrappingInt operator*(WrappingInt o) const {
    return static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(o.v));
  }
  explicit operator double() const { return static_cast<double>(v); }
};

}  // namespace

absl::Status EvaluateScan(const pto::v1::Op& op, const std::string& where,
                          const std::vector<const RefTensor*>& in, RefTensor* out) {
  const RefTensor& x = *in[0];
  const int rank = static_cast<int>(x.shape.size());
  absl::StatusOr<int64_t> dim_or = DimAttr(op, where, rank);
  if (!dim_or.ok()) return dim_or.status();
  const int64_t dim = *dim_or;
  const bool product = op.kind() == "cumprod";
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < dim; ++k) outer *= x.shape[k];
  for (int k = static_cast<int>(dim) + 1; k < rank; ++k) inner *= x.shape[k];
  const int64_t n = x.shape[dim];
  out->data.assign(x.data.size(), 0.0);
  out->bound.assign(x.data.size(), 0.0);
  const double* xb = x.bound.size() == x.data.size() ? x.bound.data() : nullptr;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      const double* line_bound = xb == nullptr ? nullptr : xb + base;
      double* data = out->data.data() + base;
      double* bound = out->bound.data() + base;
      switch (x.dtype) {
        case pto::v1::DT_FP16:
        case pto::v1::DT_BF16:
          ScanLine<float>(product, x.data.data() + base, line_bound, n, inner, out->dtype,
                          data, bound);
          break;
        case pto::v1::DT_FP32:
        case pto::v1::DT_DOUBLE:
          ScanLine<double>(product, x.data.data() + base, line_bound, n, inner, out->dtype,
                           data, bound);
          break;
        default:  // the integer types and BOOL
          ScanLine<WrappingInt>(product, x.data.data() + base, line_bound, n, inner,
                                out->dtype, data, bound);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::reference
