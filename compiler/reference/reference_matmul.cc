#include "compiler/reference/reference_matmul.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "compiler/ops/img2col.h"
#include "compiler/reference/reference_error.h"
#include "compiler/reference/reference_family.h"

namespace pto::reference {
namespace {

// The im2col matrix [N, G, K, OH * OW] of feature map x [N, C, H, W] (or
// [N, C, W]: H = 1) for a
// [G, M, K] (compiler/ops/img2col.h), its bounds taken along: zero padding
// is exact.
absl::StatusOr<RefTensor> Img2ColMatrix(const std::string& where,
                                        const pto::v1::Attribute& attr,
                                        const std::vector<int64_t>& as, const RefTensor& x) {
  absl::StatusOr<compiler::Img2Col> geo = compiler::ParseImg2Col(
      std::vector<int64_t>(attr.ints().values().begin(), attr.ints().values().end()));
  if (!geo.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reference: %s: %s", where, geo.status().message()));
  }
  std::vector<int64_t> xs = x.shape;
  if (xs.size() == 3) xs.insert(xs.begin() + 2, 1);  // [N, C, W]: H = 1
  if (as.size() != 3 || xs.size() != 4 || as[2] % geo->Taps() != 0 ||
      as[0] * (as[2] / geo->Taps()) != xs[1] || geo->OutH(xs[2]) <= 0 ||
      geo->OutW(xs[3]) <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference: %s: img2col takes a [G, M, K] and a feature map [N, C, (H,) W] with K "
        "= kh * kw * C / G and an output of at least 1 x 1, got %s and %s",
        where, ShapeString(as), ShapeString(x.shape)));
  }
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], groups = as[0], k = as[2];
  const int64_t cg = c / groups, oh = geo->OutH(h), ow = geo->OutW(w);
  RefTensor cols;
  cols.dtype = x.dtype;
  cols.shape = {n, groups, k, oh * ow};
  cols.data.assign(n * groups * k * oh * ow, 0.0);
  cols.bound.assign(cols.data.size(), 0.0);
  int64_t e = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t tap = kk / cg, ch = g * cg + kk % cg;
        const int64_t i = tap / geo->kw, j = tap % geo->kw;
        for (int64_t p = 0; p < oh * ow; ++p, ++e) {
          const int64_t y = p / ow * geo->sh - geo->ph + i * geo->dh;
          const int64_t z = p % ow * geo->sw - geo->pw + j * geo->dw;
          if (y < 0 || y >= h || z < 0 || z >= w) continue;
          const int64_t src = ((b * c + ch) * h + y) * w + z;
          cols.data[e] = x.data[src];
          if (!x.bound.empty()) cols.bound[e] = x.bound[src];
        }
      }
    }
  }
  return cols;
}

}  // namespace

absl::Status EvaluateMatmul(const pto::v1::Op& op, const std::string& where,
                            const std::vector<const RefTensor*>& in,
                            const ReferenceOptions& options,
                            RefTensor* out) {
  // out[..., m, n] = sum_k a[..., m, k] * b[..., k, n] in double (a or b
  // transposed by a_trans / b_trans); leading batch dims broadcast as
  // numpy's matmul does; the result rounded to the output's dtype.
  auto flag = [&](const char* name) {
    auto it = op.attrs().find(name);
    return it != op.attrs().end() &&
           it->second.value_case() == pto::v1::Attribute::kB &&
           it->second.b();
  };
  const bool a_trans = flag("a_trans"), b_trans = flag("b_trans");
  // With "img2col", b is a feature map read as its im2col matrix.
  RefTensor cols;
  if (auto it = op.attrs().find("img2col"); it != op.attrs().end()) {
    absl::StatusOr<RefTensor> m = Img2ColMatrix(where, it->second, in[0]->shape, *in[1]);
    if (!m.ok()) return m.status();
    cols = *std::move(m);
  }
  const RefTensor* b_in = cols.shape.empty() ? in[1] : &cols;
  const std::vector<int64_t>& as = in[0]->shape;
  const std::vector<int64_t>& bs = b_in->shape;
  if (as.size() < 2 || bs.size() < 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference: %s: operands must have rank >= 2, got %s and %s",
        where, ShapeString(as), ShapeString(bs)));
  }
  const size_t ar = as.size(), br = bs.size();
  const int64_t m = a_trans ? as[ar - 1] : as[ar - 2];
  const int64_t ka = a_trans ? as[ar - 2] : as[ar - 1];
  const int64_t kb = b_trans ? bs[br - 1] : bs[br - 2];
  const int64_t n = b_trans ? bs[br - 2] : bs[br - 1];
  if (ka != kb) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference: %s: K mismatch: a %s (a_trans=%d) has K=%d, b %s "
        "(b_trans=%d) has K=%d",
        where, ShapeString(as), a_trans, ka, ShapeString(bs), b_trans, kb));
  }
  // Broadcast batch dims, aligned from the right.
  const size_t batch_rank = std::max(ar, br) - 2;
  std::vector<int64_t> batch(batch_rank);
  for (size_t d = 0; d < batch_rank; ++d) {
    const int64_t x = d + ar >= batch_rank + 2 ? as[d + ar - 2 - batch_rank] : 1;
    const int64_t y = d + br >= batch_rank + 2 ? bs[d + br - 2 - batch_rank] : 1;
    if (x != y && x != 1 && y != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference: %s: batch dims of %s and %s do not broadcast", where,
          ShapeString(as), ShapeString(bs)));
    }
    batch[d] = x == 1 ? y : x;
  }
  std::vector<int64_t> want = batch;
  want.push_back(m);
  want.push_back(n);
  if (out->shape != want) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference: %s: output shape %s, expected %s", where,
        ShapeString(out->shape), ShapeString(want)));
  }
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  out->data.assign(batches * m * n, 0.0);
  out->bound.assign(batches * m * n, 0.0);
  const double unit = ComputeUnit(out->dtype);
  // Offset of batch index `t` (row-major over `batch`) in an operand.
  auto batch_offset = [&](const std::vector<int64_t>& shape, int64_t t) {
    const size_t r = shape.size();
    int64_t offset = 0, stride = shape[r - 1] * shape[r - 2];
    for (size_t d = batch_rank; d-- > 0;) {
      const int64_t idx = t % batch[d];
      t /= batch[d];
      if (d + r < batch_rank + 2) continue;  // dim absent in the operand
      const int64_t size = shape[d + r - 2 - batch_rank];
      if (size != 1) offset += idx * stride;
      stride *= size;
    }
    return offset;
  };
  for (int64_t t = 0; t < batches; ++t) {
    const double* a = in[0]->data.data() + batch_offset(as, t);
    const double* b = b_in->data.data() + batch_offset(bs, t);
    const double* ab = in[0]->bound.data() + batch_offset(as, t);
    const double* bb = b_in->bound.data() + batch_offset(bs, t);
    double* c = out->data.data() + t * m * n;
    double* cb = out->bound.data() + t * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0, propagated = 0, magnitudes = 0;
        for (int64_t k = 0; k < ka; ++k) {
          const int64_t ai = a_trans ? k * m + i : i * ka + k;
          const int64_t bi = b_trans ? j * ka + k : k * n + j;
          acc += a[ai] * b[bi];
          const double x = std::fabs(a[ai]), y = std::fabs(b[bi]);
          magnitudes += x * y;
          propagated += (x + ab[ai]) * (y + bb[bi]) - x * y;
        }
        c[i * n + j] = acc;
        // The products' bounds and the kernel's K u sum |a_k b_k|.
        double bound = propagated + ka * unit * magnitudes + RoundingError(acc, out->dtype);
        cb[i * n + j] = std::isfinite(acc) ? (std::isnan(bound) ? INFINITY : bound) : 0;
      }
    }
  }
  if (options.intermediates != ReferenceOptions::Intermediates::kDouble) {
    for (double& x : out->data) x = RoundToDType(x, out->dtype);
  }
  return absl::OkStatus();
}

}  // namespace pto::reference
