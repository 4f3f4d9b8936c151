// The templating steps of the dynamic route (compiler/pipeline.cc): a
// Tensor Graph with loops or symbolic dims compiles once into task
// templates, and the Execute Graph holds a program tree (kernel.proto
// ExecNode: templates, loop nodes, if nodes, region checks) that the
// runtime expands at launch in program order (runtime/expand_regions.h).
//
// The route is the list of compiler/pipeline.cc (route "dynamic"):
// CheckTemplatable, FlattenRegions (flatten_regions.h), then LowerSymbolic
// (lower_symbolic.h), the driver over the static passes that makes the
// Tile, Block and Execute levels from two probe lowerings, tiled with
// TemplateOptions; then BindDynamicArgs, AddTailFunctions and BuildProgram.
// A graph without loops is a program of templates in order: every graph with
// symbolic dims takes this route.
//
// Dynamic args. A loop-dependent offset (a marker of the flat graph) is
// decoded into a *dynamic arg* of the block function: the generated code
// adds args[rank + k] * stride, and the runtime evaluates the offset's
// expression per iteration and passes it. A GM stride that depends on
// symbols (a parameter with a symbolic inner dim) is one more dynamic arg of
// the functions accessing that buffer (TileInstr::stride_dynamic), declared
// per access in the template (TemplateAccess.stride_arg) so that the runtime
// checks it against the buffer's shape at launch; a load through a reshape
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
// Matmuls. A matmul in a body is a cube group like any other: its operands'
// and its store's loop-dependent offsets are dynamic args (cube_codegen
// adds args[rank + k] * stride), an assemble of its result is stored by the
// cube. A tail of K (x[:, k:min(k+16, K)] @ w[k:min(k+16, K), :]) or a K
// that is a parameter's symbol is one more dynamic arg of the cube functions
// (CubeLoop::k_dynamic, TaskTemplate.cube_k_arg: the runtime checks it
// against the operands), which walk that much of K. An operand or result
// with a symbolic inner dim gives the cube its leading dimensions and batch
// strides as dynamic args (stride_dynamic). A view in a body may span a
// parameter's symbolic dim (x[i:i+4, :] of x [n, k]).
//
// Tails. A group over a dim whose extent is known only at launch (a dim of
// FlatGraph::runtime_shape, or a parameter's symbolic dim split into tiles
// of more than one element) gets a generic function (BlockFunction::
// runtime_extents) that reads its extents from the task's args, used for
// every tail; the template's space keeps the expression, and the full-tile
// function stays static. Tails along M or N of a cube group run the generic
// cube function (m and n from the args, tiles sized at the bounds). A
// reduction over a dim whose extent depends on a loop index takes the
// accumulating form (ExpandOptions::symbolic); any other reduction or
// gather/scatter over such a dim is UNIMPLEMENTED naming the op.
//
// The program. Templates in order, inside the loops and if branches they
// came from, each scope's region checks first; the checks of views and
// assembles outside loops at the top, before any task. Rows over a
// symbolic last dim (graphs without loops, symbolic_rows.h): the Tile Graph
// holds two forms, and the program is one IfNode: `n <= cap` for each such
// row length n runs the fused row groups, else the accumulating form. In
// loop bodies a reduction over a symbolic or loop-dependent last dim keeps
// the accumulating form.
//
// Temporaries of a body that land in a workspace get per-iteration
// instances at launch (runtime/workspace_instances.h).
#ifndef PTO_COMPILER_LOWER_LOWER_REGIONS_H_
#define PTO_COMPILER_LOWER_LOWER_REGIONS_H_

#include "absl/status/status.h"
#include "compiler/ir/block_graph.h"
#include "compiler/ir/tensor_graph.h"
#include "compiler/ir/tile_graph.h"
#include "compiler/lower/flatten_regions.h"
#include "compiler/lower/tiling.h"
#include "compiler/targets/memory_model.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

// UNIMPLEMENTED naming the op when a graph with symbolic dims holds an
// index op (expand_indexing.h: whole buffers with compile-time strides).
absl::Status CheckTemplatable(const TensorGraph& graph);

// The options LowerSymbolic tiles `flat` with: `fuse` and the target's
// `memory`, a fusion class per run of ops between loop boundaries, the
// dims whose extents are known only at launch marked symbolic, and
// symbolic_rows for a graph without loops.
ExpandOptions TemplateOptions(const FlatGraph& flat, bool fuse, const MemoryModel& memory);

// Over LowerSymbolic's `tile`, `block` and `execute` of `flat.graph`: each
// group's markers, run-time GM strides, run-time K and scalar operands over
// symbols become its dynamic args (TileGroup::dynamic_args, the block
// functions' num_args, the templates' dynamic_args, stride_arg and
// cube_k_arg, the Execute Graph's dynamic_offsets).
absl::Status BindDynamicArgs(const FlatGraph& flat, TileGraph* tile, BlockGraph* block,
                             pto::v1::ExecuteGraph* execute);

// Each group with run-time extents gets its generic function, its
// template's space the extents' expressions.
absl::Status AddTailFunctions(const FlatGraph& flat, TileGraph* tile, BlockGraph* block,
                              pto::v1::ExecuteGraph* execute);

// The Execute Graph's program tree.
absl::Status BuildProgram(const FlatGraph& flat, const TileGraph& tile,
                          pto::v1::ExecuteGraph* execute);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_LOWER_REGIONS_H_
