#include "compiler/reference/reference_index.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "compiler/reference/reference_family.h"
#include "compiler/reference/reference_error.h"

namespace pto::reference {
namespace {

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int k = static_cast<int>(shape.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * shape[k + 1];
  return s;
}

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The coordinates of row-major element `flat` of `shape`.
std::vector<int64_t> Coords(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
    c[k] = flat % shape[k];
    flat /= shape[k];
  }
  return c;
}

int64_t Flat(const std::vector<int64_t>& c, const std::vector<int64_t>& strides) {
  int64_t at = 0;
  for (size_t k = 0; k < c.size(); ++k) at += c[k] * strides[k];
  return at;
}

// sort: along dim, the positions of the stable sort (NaN the largest,
// -0.0 tying 0.0 as == does), the first k of them (k 0: all); exact (bound 0).
absl::Status EvaluateSort(const pto::v1::Op& op, const std::string& where, const RefTensor& x,
                          int64_t dim, RefTensor* out) {
  auto k_attr = op.attrs().find("k");
  if (k_attr == op.attrs().end() || k_attr->second.value_case() != pto::v1::Attribute::kI) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reference: %s: attribute 'k' (i) is missing", where));
  }
  bool descending = false;
  if (auto it = op.attrs().find("descending"); it != op.attrs().end()) {
    descending = it->second.b();
  }
  const int64_t n = x.shape[dim], k = k_attr->second.i() == 0 ? n : k_attr->second.i();
  if (k < 1 || k > n) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reference: %s: k %d is out of range [1, %d] for dim %d (0: all of it)", where, k, n,
        dim));
  }
  const int64_t count = Count(out->shape);
  out->data.assign(count, 0.0);
  out->bound.assign(count, 0.0);
  const std::vector<int64_t> xs = Strides(x.shape), os = Strides(out->shape);
  auto before = [descending](double a, double b) {  // a sorts strictly before b
    const bool an = std::isnan(a), bn = std::isnan(b);
    if (descending) return an ? !bn : (!bn && a > b);
    return bn ? !an : (!an && a < b);
  };
  std::vector<int64_t> order(n);
  std::vector<int64_t> rows = x.shape;
  rows[dim] = 1;
  for (int64_t r = 0, nr = Count(rows); r < nr; ++r) {
    std::vector<int64_t> c = Coords(r, rows);
    const int64_t base = Flat(c, xs);
    for (int64_t j = 0; j < n; ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return before(x.data[base + a * xs[dim]], x.data[base + b * xs[dim]]);
    });
    const int64_t to = Flat(c, os);
    for (int64_t j = 0; j < k; ++j) out->data[to + j * os[dim]] = static_cast<double>(order[j]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status EvaluateIndex(const pto::v1::Op& op, const std::string& where,
                           const std::vector<const RefTensor*>& in, RefTensor* out) {
  const std::string& kind = op.kind();
  const bool scatters = kind == "scatter" || kind == "index_copy" || kind == "index_add";
  const RefTensor& x = *in[0];
  const int rank = static_cast<int>(x.shape.size());
  absl::StatusOr<int64_t> dim_or = DimAttr(op, where, rank);
  if (!dim_or.ok()) return dim_or.status();
  const int64_t dim = *dim_or;
  if (kind == "sort") return EvaluateSort(op, where, x, dim, out);
  const RefTensor& index = *in[1];
  const int64_t size = x.shape[dim];
  const bool one_d = kind == "index_select" || kind == "index_copy" || kind == "index_add";
  auto bound_of = [](const RefTensor& t, int64_t k) {
    return t.bound.size() == t.data.size() ? t.bound[k] : 0.0;
  };
  auto checked = [&](int64_t k) -> absl::StatusOr<int64_t> {
    const double v = index.data[k];
    if (!(v >= 0 && v < static_cast<double>(size))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "reference: %s: index %.17g (element %d of the index) is out of bounds for dim %d "
          "with size %d",
          where, v, k, dim, size));
    }
    return static_cast<int64_t>(v);
  };
  const std::vector<int64_t> xs = Strides(x.shape);
  if (!scatters) {
    const int64_t n = Count(out->shape);
    out->data.assign(n, 0.0);
    out->bound.assign(n, 0.0);
    for (int64_t k = 0; k < n; ++k) {
      std::vector<int64_t> c = Coords(k, out->shape);
      absl::StatusOr<int64_t> i = checked(one_d ? c[dim] : k);
      if (!i.ok()) return i.status();
      c[dim] = *i;
      const int64_t from = Flat(c, xs);
      out->data[k] = x.data[from];
      out->bound[k] = bound_of(x, from);
    }
    return absl::OkStatus();
  }
  const RefTensor& src = *in[2];
  std::string reduce = kind == "index_add" ? "add" : "none";
  if (auto it = op.attrs().find("reduce"); kind == "scatter" && it != op.attrs().end()) {
    reduce = it->second.s().empty() ? "none" : it->second.s();
  }
  out->data = x.data;
  out->bound.assign(x.data.size(), 0.0);
  for (size_t k = 0; k < x.data.size(); ++k) out->bound[k] = bound_of(x, k);
  const std::vector<int64_t>& space = one_d ? src.shape : index.shape;
  const std::vector<int64_t> ss = Strides(src.shape);
  const bool wide = out->dtype == pto::v1::DT_INT64;
  for (int64_t k = 0, n = Count(space); k < n; ++k) {
    std::vector<int64_t> c = Coords(k, space);
    const int64_t s = Flat(c, ss);
    absl::StatusOr<int64_t> i = checked(one_d ? c[dim] : k);
    if (!i.ok()) return i.status();
    c[dim] = *i;
    const int64_t to = Flat(c, xs);
    const double a = out->data[to], b = src.data[s];
    const double ea = out->bound[to], eb = bound_of(src, s);
    if (reduce == "none") {
      out->data[to] = b;
      out->bound[to] = eb;
      continue;
    }
    double z;
    if (wide) {  // int64 wraps, as torch's
      const uint64_t ua = static_cast<uint64_t>(static_cast<int64_t>(a));
      const uint64_t ub = static_cast<uint64_t>(static_cast<int64_t>(b));
      z = static_cast<double>(static_cast<int64_t>(reduce == "add" ? ua + ub : ua * ub));
    } else {
      z = RoundToDType(reduce == "add" ? a + b : a * b, out->dtype);
    }
    out->data[to] = z;
    out->bound[to] = reduce == "add"
                         ? ea + eb + OpError("add", z, out->dtype)
                         : std::fabs(a) * eb + std::fabs(b) * ea + ea * eb +
                               OpError("mul", z, out->dtype);
  }
  return absl::OkStatus();
}

}  // namespace pto::reference
