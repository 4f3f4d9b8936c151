// Tensor Graph -> Tile Graph for matmul: the cube path.
//
// out[..., M, N] = op(A)[..., M, K] @ op(B)[..., K, N] becomes one cube group
// over the output's space with tile [1, ..., mL0, nL0] (cube_tile's L0 sizes,
// clamped to M and N): each task loads A [mL0 x kL1] and B [kL1 x nL0]
// blocks GM -> L1 (TLOAD; a_trans/b_trans read them as stored), moves kL0 of
// K at a time L1 -> L0A/L0B (TMOV, which un-transposes), multiplies into
// L0C (TMATMUL on the first step, TMATMUL_ACC after: FP32 accumulate) and
// stores L0C -> GM in the output dtype (TSTORE). Tails in M and N are tail
// tiles; a tail in K is a shorter last block and step. Batch dims are tiled
// by 1 and broadcast as numpy does (a size-1 batch dim reads index 0).
#ifndef PTO_COMPILER_LOWER_EXPAND_MATMUL_H_
#define PTO_COMPILER_LOWER_EXPAND_MATMUL_H_

#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"

namespace pto::compiler {

// Where a matmul operand's data is: `value` (which has a GM tensor), or its
// transpose over the last two dims (the operand is a transpose alias of
// `value`: the cube reads it with the opposite a_trans/b_trans).
struct MatmulOperand {
  int value = -1;
  bool transposed = false;
};

// Appends the cube group of matmul op `op` of `g`, with operands `a` and
// `b`, to `out`; `gm_of_value` gives each value's GmTensor (operands and
// result all live in GM).
absl::Status AppendMatmul(const TensorGraph& g, int op, MatmulOperand a,
                          MatmulOperand b, const std::vector<int>& gm_of_value,
                          TileGraph* out);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_EXPAND_MATMUL_H_
