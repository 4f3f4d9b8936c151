// Softmax's exp: the exps whose input is provably x - max(x).
//
// pypto.softmax computes exp(x - amax(x, dim, keepdim=True)): every input
// of that exp is <= 0 or NaN (x's maximum over the reduced dim is at least
// x, a NaN in x makes the difference NaN), the domain of the host target's
// cheaper softmax exp (pto_tile.h Exp16Softmax at x86-64-v4). The lowering
// emits such an exp as TEXPSOFTMAX, whatever form it takes later (one row
// at a time, a whole tile at a time, per-tile partials of a row spanning
// several tiles, a symbolic row), so the same softmax gives the same exp
// bits at every tile shape. Decided on the Tensor Graph, where the proof
// is one look at the exp's producers; any other exp stays TEXP.
#ifndef PTO_COMPILER_LOWER_SOFTMAX_EXP_H_
#define PTO_COMPILER_LOWER_SOFTMAX_EXP_H_

#include "compiler/ir/tensor_graph.h"

namespace pto::compiler {

// Whether op `i` of `g` is exp(sub(x, amax(x, dim, keepdim=True))), the
// exp, the sub, the amax and x all FP32 (the host's softmax exp is an f32
// one; an FP16 softmax casts to FP32 first, as pypto's does).
bool IsSoftmaxExp(const TensorGraph& g, int i);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_SOFTMAX_EXP_H_
