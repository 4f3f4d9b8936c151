#include "compiler/reference/reference_layout.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "runtime/dim_expr.h"

namespace pto::reference {
namespace {

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Row-major multi-index of element `linear` of `shape`.
std::vector<int64_t> Unravel(int64_t linear, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
  return idx;
}

// Linear element of `idx` in `shape`, or -1 when outside.
int64_t Ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (idx[d] < 0 || idx[d] >= shape[d]) return -1;
    linear = linear * shape[d] + idx[d];
  }
  return linear;
}

int64_t Norm(int64_t dim, size_t rank) {
  return dim < 0 ? dim + static_cast<int64_t>(rank) : dim;
}

}  // namespace

absl::Status EvaluateLayout(const pto::v1::Op& op, const std::string& where,
                            const std::vector<const RefTensor*>& in,
                            RefTensor* out) {
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("reference: ", where, ": ", what));
  };
  // (An `exprs` list here has constant entries: a graph built at a size.
  // An entry that does not evaluate leaves the list short: an error below.)
  auto ints = [&](const char* name) {
    std::vector<int64_t> v;
    auto it = op.attrs().find(name);
    if (it == op.attrs().end()) return v;
    if (it->second.value_case() == pto::v1::Attribute::kExprs) {
      for (const pto::v1::DimExpr& e : it->second.exprs().values()) {
        absl::StatusOr<int64_t> x = runtime::EvaluateDimExpr(e, {});
        if (!x.ok()) return std::vector<int64_t>{};
        v.push_back(*x);
      }
      return v;
    }
    v.assign(it->second.ints().values().begin(), it->second.ints().values().end());
    return v;
  };
  auto integer = [&](const char* name) -> int64_t {
    auto it = op.attrs().find(name);
    return it == op.attrs().end() ? 0 : it->second.i();
  };
  const std::string& kind = op.kind();
  if (in.empty()) return bad("no inputs");
  const RefTensor& x = *in[0];
  const int64_t n = Count(out->shape);
  out->data.assign(n, 0.0);
  if (kind == "reshape" || kind == "unsqueeze") {  // row-major order kept
    if (Count(x.shape) != n) return bad("element count changes");
    out->data = x.data;
    return absl::OkStatus();
  }
  if (kind == "assemble") {
    const RefTensor& dst = *in[1];
    const std::vector<int64_t> offsets = ints("offsets");
    if (dst.data.size() != static_cast<size_t>(n) || offsets.size() != x.shape.size()) {
      return bad("dst or offsets do not match");
    }
    out->data = dst.data;
    for (int64_t k = 0; k < Count(x.shape); ++k) {
      std::vector<int64_t> idx = Unravel(k, x.shape);
      for (size_t d = 0; d < idx.size(); ++d) idx[d] += offsets[d];
      const int64_t at = Ravel(idx, out->shape);
      if (at < 0) return bad("src does not fit in dst at offsets");
      out->data[at] = x.data[k];
    }
    return absl::OkStatus();
  }
  if (kind == "concat") {
    const int64_t dim = Norm(integer("dim"), out->shape.size());
    int64_t at = 0;
    for (const RefTensor* t : in) {
      for (int64_t k = 0; k < Count(t->shape); ++k) {
        std::vector<int64_t> idx = Unravel(k, t->shape);
        idx[dim] += at;
        const int64_t o = Ravel(idx, out->shape);
        if (o < 0) return bad("inputs do not fit the output");
        out->data[o] = t->data[k];
      }
      at += t->shape[dim];
    }
    return absl::OkStatus();
  }
  // view, transpose, permute: each output element reads one input element.
  const size_t rank = x.shape.size();
  std::vector<int64_t> perm(rank);  // output dim k reads input dim perm[k]
  for (size_t k = 0; k < rank; ++k) perm[k] = static_cast<int64_t>(k);
  std::vector<int64_t> offsets(rank, 0);
  if (kind == "view") {
    offsets = ints("offsets");
    if (offsets.size() != rank) return bad("offsets do not match the rank");
  } else if (kind == "transpose") {
    std::swap(perm[Norm(integer("dim0"), rank)], perm[Norm(integer("dim1"), rank)]);
  } else if (kind == "permute") {
    perm = ints("dims");
    if (perm.size() != rank) return bad("dims do not match the rank");
    for (int64_t& p : perm) p = Norm(p, rank);
  } else {
    return bad("not a layout op");
  }
  if (out->shape.size() != rank) return bad("output rank differs");
  for (int64_t k = 0; k < n; ++k) {
    const std::vector<int64_t> o = Unravel(k, out->shape);
    std::vector<int64_t> idx(rank);
    for (size_t d = 0; d < rank; ++d) idx[perm[d]] = o[d] + offsets[perm[d]];
    const int64_t at = Ravel(idx, x.shape);
    if (at < 0) return bad("reads outside the input");
    out->data[k] = x.data[at];
  }
  return absl::OkStatus();
}

absl::Status EvaluateLayoutWithBounds(const pto::v1::Op& op, const std::string& where,
                                      const std::vector<const RefTensor*>& in,
                                      RefTensor* out) {
  if (absl::Status s = EvaluateLayout(op, where, in, out); !s.ok()) return s;
  std::vector<RefTensor> in_bounds;
  for (const RefTensor* t : in) in_bounds.push_back(RefTensor{t->dtype, t->shape, t->bound, {}});
  std::vector<const RefTensor*> in_bound_ptrs;
  for (const RefTensor& t : in_bounds) in_bound_ptrs.push_back(&t);
  RefTensor out_bound{out->dtype, out->shape, {}, {}};
  if (absl::Status s = EvaluateLayout(op, where, in_bound_ptrs, &out_bound); !s.ok()) return s;
  out->bound = std::move(out_bound.data);
  return absl::OkStatus();
}

}  // namespace pto::reference
