// Binding dynamic args: a templating step of the pipeline's dynamic route
// (compiler/pipeline.cc), after LowerSymbolic (lower_symbolic.h).
//
// A loop-dependent offset (a marker of the flat graph) is decoded into a
// *dynamic arg* of the block function: the generated code adds
// args[rank + k] * stride, and the runtime evaluates the offset's
// expression per iteration and passes it. A GM stride that depends on
// symbols (a parameter with a symbolic inner dim) is one more dynamic arg of
// the functions accessing that buffer (TileInstr::stride_dynamic), declared
// per access in the template (TemplateAccess.stride_arg) so that the runtime
// checks it against the buffer's shape at launch (MGATHER/MSCATTER/MSORT
// too, whose buffer's extent along the indexed dim is one more dynamic arg
// when it depends on symbols: TileInstr::extent_dynamic); a load through a reshape
// of a tensor with symbolic dims reads the buffer as the reshape's shape,
// its strides that shape's (TileInstr::sym_view_shape), so a matmul of
// x.reshape(B*S, H) over a symbolic S compiles once. A scalar operand over
// symbols (the "scalar" of muls/divs/adds..., clip's bounds, full's value,
// arange's start given as an expr: x * n, x / x.shape[-1], x * i in a body)
// is one more dynamic arg of its group's functions (TileInstr::
// scalar_dynamic): the runtime evaluates the expression per template
// expansion and the code converts the int64 to the tiles' compute type, so
// one function serves every value. What each dynamic arg holds is kept for
// the dumps (TileGroup::dynamic_args: `d0 = n  ; stride(%0, 0)`).
//
// A matmul in a body is a cube group like any other: its operands' and its
// store's loop-dependent offsets are dynamic args (cube_codegen
// adds args[rank + k] * stride), an assemble of its result is stored by the
// cube. A tail of K (x[:, k:min(k+16, K)] @ w[k:min(k+16, K), :]) or a K
// that is a parameter's symbol is one more dynamic arg of the cube functions
// (CubeLoop::k_dynamic, TaskTemplate.cube_k_arg: the runtime checks it
// against the operands), which walk that much of K. An operand or result
// with a symbolic inner dim gives the cube its leading dimensions and batch
// strides as dynamic args (stride_dynamic). A view in a body may span a
// parameter's symbolic dim (x[i:i+4, :] of x [n, k]).
#ifndef PTO_COMPILER_LOWER_BIND_DYNAMIC_ARGS_H_
#define PTO_COMPILER_LOWER_BIND_DYNAMIC_ARGS_H_

#include "absl/status/status.h"
#include "compiler/ir/block_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/flatten_regions.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// Over LowerSymbolic's `tile`, `block` and `execute` of `flat.graph`: each
// group's markers, run-time GM strides, run-time K and scalar operands over
// symbols become its dynamic args (TileGroup::dynamic_args, the block
// functions' num_args, the templates' dynamic_args, stride_arg and
// cube_k_arg, the Execute Graph's dynamic_offsets).
absl::Status BindDynamicArgs(const FlatGraph& flat, TileGraph* tile, BlockGraph* block,
                             pto::v1::ExecuteGraph* execute);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_BIND_DYNAMIC_ARGS_H_
