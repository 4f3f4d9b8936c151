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
// A matmul with attr "img2col" (a conv: compiler/ops/img2col.h) loads B's
// blocks with TIMG2COL from its feature map instead: the im2col matrix is
// built block by block in L1, never in GM.
#ifndef PTO_COMPILER_LOWER_EXPAND_MATMUL_H_
#define PTO_COMPILER_LOWER_EXPAND_MATMUL_H_

#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/layout.h"
#include "compiler/targets/memory_model.h"

namespace pto::compiler {

// Where a matmul operand's elements are: the GM tensor of `root`, read
// through `dims` (per dim of root's buffer, or of `view_shape` when that is
// set: the operand dim it follows, -1 for a fixed index, and an offset).
// A plain operand is its own root through the identity; a view, transpose,
// permute, unsqueeze or reshape of a GM tensor is read in place
// (LayoutPlan::Root/RootDims/ViewShape): its offsets and strides go into
// the cube's TLOADs, and an operand whose rows lie contiguously in GM is
// read with the opposite a_trans/b_trans.
struct MatmulOperand {
  int value = -1;  // the operand itself (its shape is the matmul's view)
  int root = -1;
  std::vector<LayoutPlan::DimMap> dims;
  std::vector<int64_t> view_shape;
};

// Where a cube group stores its result when that is not its own GM tensor:
// a region of another (an assemble's or a concat's, whose op then belongs
// to the cube group).
struct MatmulStore {
  int gm = -1;                 // GmTensor
  std::vector<GmIndex> index;  // aligned with the output space, plus offsets
};

// Appends the cube group of matmul op `op` of `g`, with operands `a` and
// `b`, to `out`; `gm_of_value` gives each value's GmTensor (operand roots
// and the result all live in GM). An operand whose rows and columns are
// both strided in GM (a permute moving another dim last) is UNIMPLEMENTED
// naming the op and the operand. The cube tile's blocks must fit the
// target's `memory` (A [mL1 x kL1] + B [kL1 x nL1] of the input dtype in L1;
// [mL0 x kL0], [kL0 x nL0] and [mL0 x nL0] f32 in L0A, L0B and L0C), else
// INVALID_ARGUMENT naming the op, the cube tile, the buffer and both sizes.
// `into` (optional) redirects the TSTORE.
absl::Status AppendMatmul(const TensorGraph& g, int op, MatmulOperand a,
                          MatmulOperand b, const std::vector<int>& gm_of_value,
                          const MemoryModel& memory, TileGraph* out,
                          const MatmulStore* into = nullptr);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_EXPAND_MATMUL_H_
