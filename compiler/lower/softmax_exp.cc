#include "compiler/lower/softmax_exp.h"

#include <cstdint>
#include <vector>

namespace pto::compiler {
namespace {

// The op of `g` before op `i` that defines value v, or -1 (a parameter's
// value, or one defined inside a region).
int Producer(const TensorGraph& g, int i, int v) {
  for (int k = i - 1; k >= 0; --k) {
    for (int out : g.ops[k].outputs) {
      if (out == v) return k;
    }
  }
  return -1;
}

bool IsFp32(const TensorGraph& g, int v) { return g.values[v].dtype == pto::v1::DT_FP32; }

}  // namespace

bool IsSoftmaxExp(const TensorGraph& g, int i) {
  const TensorOp& exp = g.ops[i];
  if (exp.info->kind != "exp" || exp.inputs.size() != 1 || exp.outputs.size() != 1 ||
      !IsFp32(g, exp.outputs[0])) {
    return false;
  }
  const int s = Producer(g, i, exp.inputs[0]);
  if (s < 0) return false;
  const TensorOp& sub = g.ops[s];
  if (sub.info->kind != "sub" || sub.inputs.size() != 2 || !IsFp32(g, sub.outputs[0])) {
    return false;
  }
  const int x = sub.inputs[0], m = sub.inputs[1];
  const int a = Producer(g, s, m);
  if (a < 0 || x == m || !IsFp32(g, x) || !IsFp32(g, m)) return false;
  const TensorOp& amax = g.ops[a];
  if (amax.info->kind != "amax" || amax.inputs.size() != 1 || amax.inputs[0] != x) return false;
  // keepdim: m is x's shape with the reduced dim 1, so x - m subtracts each
  // value's own maximum (without it numpy broadcasting would align m with
  // other dims of x).
  auto keepdim = amax.attrs.find("keepdim");
  if (keepdim == amax.attrs.end() || !std::get<bool>(keepdim->second)) return false;
  const std::vector<int64_t>& xs = g.values[x].shape;
  const std::vector<int64_t>& ms = g.values[m].shape;
  const int rank = static_cast<int>(xs.size());
  int64_t dim = 0;
  if (auto it = amax.attrs.find("dim"); it != amax.attrs.end()) dim = std::get<int64_t>(it->second);
  const int d = static_cast<int>(dim < 0 ? dim + rank : dim);
  if (d < 0 || d >= rank || static_cast<int>(ms.size()) != rank || ms[d] != 1) return false;
  for (int k = 0; k < rank; ++k) {
    if (k != d && ms[k] != xs[k]) return false;
  }
  return g.values[sub.outputs[0]].shape == xs;
}

}  // namespace pto::compiler
