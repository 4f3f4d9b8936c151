// Lowering a Tensor Graph with loops: each loop body is
// lowered once into task templates, and the Execute Graph holds a program
// tree (kernel.proto ExecNode: templates, loop nodes, region checks) that the
// runtime expands at launch in program order (runtime/expand_regions.h).
//
// How: the graph is flattened — every body's ops inlined once in program
// order, a region arg standing for its loop's input (the carried tensor
// lives in one buffer, updated in place) and a loop output for its body's
// result — and lowered by LowerSymbolic (lower_symbolic.h) with one fusion
// class per run of ops between loop boundaries, so no group spans a body's
// edge. An offset that depends on loop indices (x[i], out[i*8:]) is lowered
// as a marker constant and then decoded into a *dynamic arg* of the block
// function: the generated code adds args[rank + k] * stride, and the
// runtime evaluates the offset's expression per iteration and passes it.
// Every view/assemble with such offsets also becomes a RegionCheck that the
// runtime evaluates before the tasks that access it.
//
// An `if` lowers both branches, each in place on the carried buffers, under
// one IfNode; a carried result that is a new value (acc = acc + x) is stored
// into the carried buffer at the end of its body.
//
// A dim that depends on a loop index (a tail, min(64, n - i)), or any
// symbolic dim with a constant bound (min(64, n) of a clipped view or a
// valid shape, a size chosen by a run-time branch), is lowered at its
// constant bound; the template's space keeps the expression, and the group
// gets a generic function (BlockFunction::runtime_extents) that reads its
// extents from the task's args, used for every tail. A reshape that only
// adds or drops size-1 dims of such a dim reads it at the bound too.
//
// A graph without loops is a program of templates in order: every graph
// with symbolic dims is lowered here. A group split into tiles along a
// parameter's symbolic dim gets the same generic function for its tails.
// A view or assemble outside loops whose offsets or extents are expressions
// of parameter symbols (x[:, 1:], x[:, :n//2], x[:, n-4:]) is lowered like a
// body's with no loop around it (symbolic offsets are markers, extents are
// symbolic dims: lower_symbolic.h), and its RegionCheck is at the top of the
// program, evaluated at launch before any task. A load through a reshape of
// a tensor with symbolic dims reads the buffer as the reshape's shape: its
// strides are that shape's, dynamic args where they depend on symbols
// (TileInstr::sym_view_shape), so a matmul of x.reshape(B*S, H) over a
// symbolic S compiles once. A concat whose offsets are symbolic (an input
// with a symbolic extent in the concat dim before another) is flattened into
// one assemble per input at its offset, into the result's buffer, with a
// region check each (op #k "concat" input j).
// Parameters may have symbolic inner dims: a GM stride that depends on
// symbols is one more dynamic arg of the functions accessing that buffer
// (TileInstr::stride_dynamic), declared per access in the template
// (TemplateAccess.stride_arg) so that the runtime checks it against the
// buffer's shape at launch. What each dynamic arg holds is kept for the
// dumps (TileGroup::dynamic_args: `d0 = n  ; stride(%0, 0)`).
//
// A matmul in a body is a cube group like any other: its operands' and its
// store's loop-dependent offsets are dynamic args (cube_codegen adds
// args[rank + k] * stride), an assemble of its result is stored by the
// cube, and a tail of M or N rows/columns runs a generic cube function
// (m and n from the args, tiles sized at the bounds). A tail of K
// (x[:, k:min(k+16, K)] @ w[k:min(k+16, K), :]) or a K that is a
// parameter's symbol is one more dynamic arg of the cube functions
// (CubeLoop::k_dynamic, TaskTemplate.cube_k_arg: the runtime checks it
// against the operands), which walk that much of K. Tails along a
// parameter's symbolic M or N run the generic cube function too, and an
// operand or result with a symbolic inner dim gives the cube its leading
// dimensions and batch strides as dynamic args (stride_dynamic). A view in
// a body may span a parameter's symbolic dim (x[i:i+4, :] of x [n, k]).
//
// A scalar operand over symbols (the "scalar" of muls/divs/adds..., clip's
// bounds, full's value, arange's start given as an expr: x * n,
// x / x.shape[-1], x * i in a body) is one more dynamic arg of its group's
// functions (TileInstr::scalar_dynamic): the runtime evaluates the
// expression per template expansion and the code converts the int64 to the
// tiles' compute type, so one function serves every value, in and outside
// loop bodies.
//
// A reduction over a dim whose extent depends on a loop index takes the
// accumulating form of reductions over symbolic dims (such dims are marked
// in ExpandOptions::symbolic; lower_symbolic.h).
//
// Rows over a symbolic last dim (graphs without loops): the Tile Graph
// holds two forms (expand_to_tiles.h ExpandOptions::symbolic_rows), and the
// program is one IfNode: `n <= cap` for each such row length n runs the
// fused row groups, else the accumulating form. In loop bodies a reduction
// over a symbolic or loop-dependent last dim keeps the accumulating form.
//
// Limits of this step (UNIMPLEMENTED naming the op or value): a reshape
// whose shape depends on a loop index; a view with loop-dependent offsets of a
// reshape, permute or other layout op of such a view (a view of such a view
// is one view at the summed offsets, checked inside the view it takes);
// more than 20 distinct loop-dependent offsets along one chain of nested
// loops (loops one after another share the markers' bits; measured: every
// loop kernel in test_loops, test_dynamic and examples/ has at most 3).
// Temporaries of a body that land in a workspace get per-iteration
// instances at launch (runtime/workspace_instances.h).
#ifndef PTO_COMPILER_LOWER_LOWER_REGIONS_H_
#define PTO_COMPILER_LOWER_LOWER_REGIONS_H_

#include "absl/status/status.h"
#include "compiler/ir/block_graph.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/targets/memory_model.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// Fills `tile`, `block` (block->tiles points at `tile`) and `execute`
// (templated: buffers, functions, symbols, templates, dynamic offsets and
// the program tree). `memory` is the target's (ExpandOptions::memory).
absl::Status LowerRegions(const TensorGraph& graph, bool fuse, const MemoryModel& memory,
                          TileGraph* tile, BlockGraph* block,
                          pto::v1::ExecuteGraph* execute);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_LOWER_REGIONS_H_
